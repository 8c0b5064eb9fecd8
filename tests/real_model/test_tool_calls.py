"""A real model that really calls tools: SmolLM2-135M-Instruct on llama-server with the lane's own
chat template (chatml_json_calls.jinja, whose header says what it does and why).

The success path: the model calls get_weather, the tool answers, the model answers from the result;
✅ on the page and in the named API, streaming and not, and in the MCP lesson once; in the workspace
lesson once (the title of notes.md, answered from the file it read), and a read whose answer never
ends, where the verdict says so. And the ways
the same model fails like real models do, each with what the page says about it: an argument copied from the template's examples (the note on the call), the wrong tool for the
question, a call when none is due. ✅ only where a tool really answered."""
from __future__ import annotations

import html
import json
import re
import time

import pytest

from lessons import timeline
from lessons.editor_panel import EXAMPLE_SETS, example_text
from lessons.evaluation.evaluation_view import percent
from tests.app.harness import LessonPage, choose, code_text, paste_code, pick_provider, screenshot, set_code

pytestmark = pytest.mark.real_model

MODEL = "smollm2-135m"
KEY = "sk-local-llama"
MAX_TOKENS = 64            # a call in its ```json block is about 25 tokens; an answer from a result about 20
WEATHER = example_text(EXAMPLE_SETS["天气"])       # the lesson's own tools: Chinese cities only
# Tools an English-speaking 135M model can use: its cities are the ones it is asked about.
ENGLISH_WEATHER = '''from tool_registry import ToolRegistry

registry = ToolRegistry()
WEATHER = {"Paris": "sunny, 21°C", "London": "light rain, 14°C", "Berlin": "cloudy, 17°C"}


@registry.tool("Get the current weather for a city")
def get_weather(city: str) -> str:
    if city not in WEATHER:
        raise ValueError(f"no weather for {city}; known cities: {', '.join(WEATHER)}")
    return f"{city}: {WEATHER[city]}"
'''
GET_WEATHER = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
PARIS = "What's the weather in Paris?"


def of(result, kind: str) -> list[dict]:
    return [e for e in result["events"] if e["type"] == kind]


def assert_verdict_tells_the_truth(result):
    """✅ (ok) exactly when a tool answered and the run ended with an answer."""
    answered_by_tool = any(e["ok"] for e in of(result, "tool_result"))
    verdict = result["verdict"]
    assert result["ok"] is (verdict["state"] in ("answered", "recovered"))
    if not answered_by_tool:
        assert not result["ok"] and verdict["icon"] != "✅", verdict
    return verdict


def assert_answered_from_the_tool(result, streamed=False):
    """The run a real model really answered from a tool: one call, the tool's result, an answer that
    carries the result's figure, ✅."""
    assert_verdict_tells_the_truth(result)
    [call] = of(result, "tool_call")
    [done] = of(result, "tool_result")
    assert call["name"] == "get_weather" and call["arguments"] == {"city": "Paris"}, call
    assert done["ok"] and done["content"] == "Paris: sunny, 21°C", done
    assert "21" in result["final"], result["final"]
    assert result["ok"] and result["verdict"]["state"] == "answered" and result["verdict"]["icon"] == "✅"
    first, last = of(result, "response")[0], of(result, "response")[-1]
    assert first["finish_reason"] == "tool_calls" and last["finish_reason"] == "stop"
    assert isinstance(first["raw"], list) is streamed


# ------------------------------------------------------------------ the server through the SDK

def test_the_template_renders_the_tools_the_examples_and_past_calls(calling_server):
    """/apply-template shows the prompt this llama-server builds from the template (its own Jinja
    engine, not Python's): the tools, the worked examples, a past call as a ```json block, a tool's
    result in a user turn and the words that start the answer."""
    import urllib.request

    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    body = {"messages": [{"role": "user", "content": PARIS}, {"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "c1", "content": "Paris: sunny, 21°C"}], "tools": GET_WEATHER}
    request = urllib.request.Request(calling_server.url + "/apply-template", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        prompt = json.loads(answer.read())["prompt"]
    assert calling_server.props()["chat_template_caps"]["supports_tools"] is True
    assert "get_weather" in prompt and "Get the current weather for a city" in prompt
    assert '```json\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n```' in prompt      # an example
    past = re.findall(r'<\|im_start\|>assistant\n```json\n\{"name": "get_weather", "arguments": (\{.*?\})\}\n```\n<\|im_end\|>',
                     prompt)
    assert past and json.loads(past[-1]) == {"city": "Paris"}, prompt      # the last one is the past call
    assert prompt.endswith("<|im_start|>user\nThe tool's result: Paris: sunny, 21°C<|im_end|>\n"
                           "<|im_start|>assistant\nAccording to the tool,"), prompt[-200:]


@pytest.mark.parametrize("stream", [False, True])
def test_the_template_makes_the_model_call_the_tool_and_answer_from_its_result(calling_server, stream):
    import openai

    sdk = openai.OpenAI(base_url=calling_server.url + "/v1", api_key=KEY, max_retries=0, timeout=120)
    ask = [{"role": "user", "content": PARIS}]

    def complete(messages):
        started = time.perf_counter()
        reply = sdk.chat.completions.create(model=MODEL, messages=messages, tools=GET_WEATHER, temperature=0,
                                            max_tokens=MAX_TOKENS, stream=stream)
        if not stream:
            timings = reply.model_extra["timings"]          # llama.cpp's own figures for this request
            print(f"\n{timings['predicted_n']} tokens at {timings['predicted_per_second']:.1f}/s, "
                  f"prompt {timings['prompt_n']} at {timings['prompt_per_second']:.1f}/s")
            return reply.choices[0].message, reply.choices[0].finish_reason, time.perf_counter() - started
        content, calls, finish = "", {}, None
        for chunk in reply:
            for choice in chunk.choices:
                content += choice.delta.content or ""
                for part in choice.delta.tool_calls or []:
                    call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.id or call["id"]
                    call["name"] += part.function.name or ""
                    call["arguments"] += part.function.arguments or ""
                finish = choice.finish_reason or finish
        message = openai.types.chat.ChatCompletionMessage(
            role="assistant", content=content or None,
            tool_calls=[{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                        for c in calls.values()] or None)
        return message, finish, time.perf_counter() - started

    message, finish, took = complete(ask)
    assert finish == "tool_calls" and len(message.tool_calls) == 1, (finish, message)
    call = message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    followed = ask + [message.model_dump(exclude_none=True),
                      {"role": "tool", "tool_call_id": call.id, "content": "Paris: sunny, 21°C"}]
    answer, finish, took_answer = complete(followed)
    assert finish == "stop" and not answer.tool_calls and "21" in answer.content, answer
    print(f"\n{'streamed' if stream else 'whole'}: call {took:.2f} s, answer {took_answer:.2f} s: {answer.content!r}")


# ------------------------------------------------------------------ the app against the server

@pytest.fixture(scope="module")
def secrets(calling_server):
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": calling_server.url + "/v1",
            "TOOL_WORKSHOP_KEY_MAX_TOKENS": str(MAX_TOKENS)}


def run_function_calling(client, source, question, stream=False):
    started = time.perf_counter()
    result = client.predict(source, question, "auto", True, "", "openai", MODEL, "", False, MAX_TOKENS, stream,
                            api_name="/run_function_calling")
    print(f"\n{question!r} stream={stream}: {time.perf_counter() - started:.2f} s, "
          f"verdict {result['verdict']['icon']} {result['verdict']['state']}, "
          f"calls {[(e['name'], e['raw_arguments']) for e in of(result, 'tool_call')]}, final {result['final']!r}")
    return result


@pytest.mark.parametrize("stream", [False, True])
def test_run_function_calling_answered_from_a_tool_is_a_success(client, stream):
    assert_answered_from_the_tool(run_function_calling(client, ENGLISH_WEATHER, PARIS, stream), streamed=stream)


def test_run_mcp_answered_from_a_tool_is_a_success(client):
    result = client.predict(ENGLISH_WEATHER, PARIS, "auto", True, "", "openai", MODEL, "", False, MAX_TOKENS, False,
                            api_name="/run_mcp")
    assert_answered_from_the_tool(result)
    assert [e["method"] for e in of(result, "rpc") if e["kind"] == "request"][-1] == "tools/call"


NOTED = '''from hooks import POST, PRE, Hooks

hooks = Hooks()


@hooks.on(PRE, fail="open")
def audit(call):
    print("audit:", call["tool_name"], call["tool_input"])


@hooks.on(POST)
def stamp(call):
    return {"updatedToolOutput": call["tool_response"] + " (checked)"}
'''


def test_run_hooks_around_a_real_model_s_call_and_its_verdict_stays_true(client):
    """The hooks lesson once on the real model: the audit hook prints the call it saw, the post hook
    replaces the result, and the model gets the replaced one; the verdict says what happened."""
    result = client.predict(ENGLISH_WEATHER, NOTED, PARIS, "", "openai", MODEL, "", MAX_TOKENS, api_name="/run_hooks")
    assert_verdict_tells_the_truth(result)
    calls, hooks = of(result, "tool_call"), of(result, "hook")
    print(f"\nhooks: verdict {result['verdict']['icon']} {result['verdict']['state']}, "
          f"calls {[(c['name'], c['raw_arguments']) for c in calls]}, final {result['final']!r}")
    for call, done in zip(calls, of(result, "tool_result")):
        around = [h for h in hooks if (h["turn"], h["id"]) == (call["turn"], call["id"])]
        assert [h["name"] for h in around] == (["audit", "stamp"] if done["ok"] else ["audit"])
        assert around[0]["printed"] == f"audit: {call['name']} {call['arguments']}\n"
        if done["ok"]:      # the model gets the stamped result, never the tool's own
            assert done["content"] == around[1]["payload"]["tool_response"] + " (checked)"
            assert around[1]["answer"] == {"updatedToolOutput": done["content"]}


def test_run_workspace_the_model_answers_from_the_file_it_read(client):
    """The workspace lesson's success path on a real model: asked for the title of notes.md, the 135M
    model reads it, answers from what the tool returned and stops (measured: «the title of the note is
    "修一个 bug" …», 8 words of the file's first line): ✅."""
    result = client.predict("Read the file notes.md and tell me its title.", None, None, "openai", MODEL, "",
                            MAX_TOKENS, False, api_name="/run_workspace")
    assert_verdict_tells_the_truth(result)
    [call] = of(result, "tool_call")
    assert call["name"] == "read" and call["arguments"] == {"path": "notes.md"}, call
    [done] = of(result, "tool_result")
    assert done["ok"] and "修一个 bug" in done["content"]
    print(f"\nworkspace: {result['final'][:100]!r}")
    assert of(result, "response")[-1]["finish_reason"] == "stop"
    assert result["ok"] and result["verdict"]["icon"] == "✅", result["verdict"]
    assert "修一个 bug" in result["final"]         # from the tool's result: the question never said it


def test_run_workspace_a_read_the_tool_answered_and_the_verdict_says_how_it_ended(client):
    """The workspace lesson's read, called by the real model and answered by the tool. The 135M model
    then repeats its answer until max_tokens (measured: "The error is in the `src/calc.py` file." over
    and over): the verdict must say so (✂️ truncated), never ✅; an answer that ends is ✅."""
    result = client.predict("Read the file notes.md.", None, None, "openai", MODEL, "", MAX_TOKENS, False,
                            api_name="/run_workspace")
    assert_verdict_tells_the_truth(result)
    [call] = of(result, "tool_call")
    assert call["name"] == "read" and call["arguments"] == {"path": "notes.md"}, call
    assert of(result, "tool_result")[0]["ok"]
    ended = of(result, "response")[-1]["finish_reason"]
    print(f"\nworkspace: read answered by the tool; the answer ended with {ended!r}: {result['final'][:80]!r}")
    if ended == "length":
        assert not result["ok"] and result["verdict"]["state"] == "truncated" and result["verdict"]["icon"] == "✂️"
    else:
        assert result["ok"] and result["verdict"]["icon"] == "✅", result["verdict"]


# ------------------------------------------------------------------ how the same model fails

def unsaid_on_the_page(result) -> list[str]:
    """The notes the page's timeline draws on the calls of this run (the same drawing code), unescaped."""
    drawn = timeline.render_protocol(result["events"])
    return [html.unescape(part.split("</div>")[0]) for part in drawn.split('<div class="tw-unsaid">🔎 ')[1:]]


def assert_notes_name_exactly_the_arguments_nobody_said(result, template: str = "") -> list[str]:
    """Each call's string arguments either appear in what its round's request sent (messages and tools),
    or the page says they never did, beside the question, and where the server's chat template (its
    /props, `template`) holds the value, that it came from there. Checked against the requests and the
    template themselves, not against the note's own code; -> the values nobody said."""
    requests = {e["turn"]: e for e in of(result, "request")}
    question = requests[1]["messages"][-1]["content"]
    unsaid = []
    for call in of(result, "tool_call"):
        request = requests[call["turn"]]
        sent = json.dumps([request["messages"], request["tools"]], ensure_ascii=False)
        unsaid += [f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in (call["arguments"] or {}).items()
                   if isinstance(value, str) and value.casefold() not in sent.casefold()]
    notes = unsaid_on_the_page(result)
    assert len(notes) == len(unsaid), (unsaid, notes)
    for expected, note in zip(unsaid, notes):
        assert note.startswith(f"{expected} 在对话里没有出现过"), (expected, note)
        value = json.loads(expected.split("=", 1)[1])
        assert ("却在服务端的聊天模板里：模型照抄了模板里示范调用的例子" in note) is (value in template), (template, note)
        assert f"问题是「{question}」" in note, note
    return unsaid


@pytest.mark.parametrize("question", ["北京今天天气怎么样？", "广州冷不冷？"])
def test_a_city_nobody_said_gets_the_note_on_the_call_and_the_verdict_names_it(client, calling_server, question):
    """Asked about Beijing (or Guangzhou) in Chinese, the 135M model copies the city of the template's
    example (measured: Tokyo), which nobody in the conversation said: the note says it is the template's
    example (the app read the template from /props), and the verdict, checked against what the preset
    question wants (runs/purposes.py), says which city was wanted and which ran; never ✅."""
    result = run_function_calling(client, WEATHER, question)
    assert of(result, "tool_call"), result["events"]
    unsaid = assert_notes_name_exactly_the_arguments_nobody_said(result, calling_server.props().get("chat_template", ""))
    print(f"arguments nobody said: {unsaid}")
    verdict = assert_verdict_tells_the_truth(result)
    assert of(result, "purpose") and result["events"][0]["type"] == "purpose"
    cities = {(c["arguments"] or {}).get("city") for c in of(result, "tool_call") if c["name"] == "get_weather"}
    wanted = question[:2]
    answered = of(result, "final") and verdict["state"] not in ("truncated", "repetition")     # judged on its purpose
    if cities and wanted not in cities and answered:
        assert not result["ok"] and "这个问题要的是 get_weather(city=" in verdict["title"], verdict
        assert f'实际执行的是 get_weather(city="{sorted(cities - {wanted})[0]}"' in verdict["title"], verdict


def test_the_wrong_tool_for_the_question_is_shown_beside_the_question(client, calling_server):
    """An arithmetic question, and get_weather the only tool: the model calls it anyway (measured).
    The page shows the call's arguments right under the question (the chat view)."""
    result = run_function_calling(client, ENGLISH_WEATHER, "What is 37*91?")
    assert_said_beside_the_question(result, "What is 37*91?", calling_server.props().get("chat_template", ""))


def test_a_call_when_none_is_due_is_shown_beside_the_question(client, calling_server):
    result = run_function_calling(client, ENGLISH_WEATHER, "Hello!")
    assert_said_beside_the_question(result, "Hello!", calling_server.props().get("chat_template", ""))


def assert_said_beside_the_question(result, question: str, template: str):
    """A call (the model's, measured for both questions) is drawn under the question with its
    arguments, and the verdict is ✅ only if the tool answered; no call at all is 💬."""
    verdict = assert_verdict_tells_the_truth(result)
    calls = of(result, "tool_call")
    chat = timeline.render_chat(result["events"])
    assert chat[0] == {"role": "user", "content": question}
    if not calls:
        assert verdict["state"] == "no_tool_call" and verdict["icon"] == "💬", verdict
        return
    step = next(m for m in chat if str(m.get("metadata", {}).get("title", "")).startswith("🛠️"))
    assert step["metadata"]["title"] == f"🛠️ 调用 {calls[0]['name']}" and chat.index(step) <= 3   # the question's next steps
    assert all(json.dumps(value, ensure_ascii=False) in step["content"] for value in calls[0]["arguments"].values())
    assert_notes_name_exactly_the_arguments_nobody_said(result, template)


# ------------------------------------------------------------------ the page against the server

@pytest.mark.browser
def test_the_page_shows_a_success_and_the_note(browser, app, secrets):
    with LessonPage(browser, app, "function_calling") as lesson:
        lesson.WAIT = 150_000                     # a real model's run on two cores: 12-36 s measured
        page, panel = lesson.page, lesson.panel
        page.get_by_text("⚙️ 模型设置").click()
        pick_provider(page, "openai", secrets)      # its default model shown: typed before, MODEL would be replaced
        page.locator("#key-status").filter(has_text="已使用服务器配置的密钥").wait_for(timeout=30_000)
        model = page.locator("#model input")
        model.fill(MODEL)
        model.press("Enter")
        panel.get_by_role("tab", name="协议时间线").click()

        set_code(page, panel.locator(".tw-editor"), ENGLISH_WEATHER)
        panel.locator(".tw-schema-json").filter(has_text="Get the current weather").first.wait_for(timeout=30_000)
        shown = lesson.run(PARIS)
        assert shown.startswith("✅"), shown
        assert "21" in panel.locator(".tw-protocol .tw-final").first.inner_text()
        screenshot(page, "real-model-answered-from-a-tool-1280x800")

        panel.locator(".tw-reset").click()
        panel.locator(".tw-schema-json").filter(has_text="城市名").first.wait_for(timeout=30_000)
        question = "北京今天天气怎么样？"
        shown = lesson.run(question)
        answered_by_tool = panel.locator(".tw-protocol .tw-call .tw-ok").count() > 0     # a result marked 成功
        assert answered_by_tool or not shown.startswith("✅"), shown
        # Every round open, as a student unfolds them: the calls sit in the rounds, the older ones folded.
        panel.locator(".tw-protocol details").evaluate_all("els => els.forEach(e => e.open = true)")
        call = panel.locator(".tw-protocol .tw-call").first
        call.wait_for(timeout=30_000)
        city = json.loads(call.locator("pre").first.inner_text())["city"]     # the arguments as the model wrote them
        said = city in question or city in code_text(panel.locator(".tw-schema-json"))    # the question or the tools sent
        print(f"\non the page: {question} -> get_weather(city={city!r}); {shown[:80]!r}")
        if said:
            assert call.locator(".tw-unsaid").count() == 0
        else:     # measured: the template example's Tokyo
            note = call.locator(".tw-unsaid")
            assert note.inner_text().startswith(f'🔎 city="{city}" 在对话里没有出现过，却在服务端的聊天模板里')
            assert f"问题是「{question}」" in note.inner_text()
            assert not shown.startswith("✅") and f'city="{city}"' in shown, shown      # the headline names it too
            note.scroll_into_view_if_needed()
        screenshot(page, "real-model-copied-argument-1280x800")
        assert lesson.watched.foreign_requests() == []


def test_run_context_on_a_real_model_the_summary_is_its_own_and_the_verdict_stays_true(client):
    """The context lesson once on the real model: the window drops the first turn before the model is
    asked; /compact asks the model itself for the summary, which then stands in the request in place
    of the turns it replaced. No tools are offered: a finished answer is ✅ (⚠️ when the context sent was over
    its budget), a cut one ✂️, a looping one 🔁."""
    import context

    history = [{"role": "system", "content": "You are a build assistant."},
               {"role": "user", "content": "My name is Lin. Why did the build fail?"},
               context.asked("call_1", "read_log", {"name": "build"}),
               {"role": "tool", "tool_call_id": "call_1", "content": context.BUILD_LOG},
               {"role": "assistant", "content": "test_calc failed."}]
    for strategy in ("window", "compact"):
        result = client.predict(json.dumps(history), "What is my name?", strategy, 200, "openai", MODEL, "",
                                MAX_TOKENS, api_name="/run_context")
        shrunk = of(result, "context")[0]
        [request] = of(result, "request")
        assert request["messages"][0] == history[0] and request["tools"] is None
        if strategy == "window":
            assert "My name is Lin" not in json.dumps(request["messages"]) and shrunk["model_call"] is None
        else:
            summary = shrunk["model_call"]["answer"]
            assert summary.strip() and request["messages"][1]["content"] == f"{context.SUMMARY_HEAD}\n{summary}"
        responses = of(result, "response")
        if not responses:
            # The server's own parser may refuse what the model wrote (HTTP 500, "does not match the
            # expected ... format"; seen once in three runs at temperature 0): a failure the headline names.
            verdict = result["verdict"]
            assert verdict["state"] == "error" and result["ok"] is False, verdict
            assert "HTTP 500" in verdict["detail"] and "does not match" in verdict["detail"], verdict
            continue
        ended = responses[-1]["finish_reason"]
        state = result["verdict"]["state"]
        # A looping answer (measured: "I'm glad you're here." over and over) is 🔁 first, cut or not; a finished
        # one is ✅ only when the context sent kept to the budget (measured: the window over 200 is not).
        finished = "answered" if shrunk["after_tokens"] <= shrunk["budget"] else "doubtful"
        assert state in (("truncated", "repetition") if ended == "length" else (finished, "repetition")), result["verdict"]
        assert result["ok"] is (state == "answered")
        if state == "doubtful":
            assert f"超出预算 {shrunk['budget']}" in result["verdict"]["title"]
        print(f"\ncontext {strategy}: {shrunk['before_tokens']} → {shrunk['after_tokens']} tokens, "
              f"{result['verdict']['icon']} {state}, final {result['final'][:80]!r}")


def test_run_subagent_on_a_real_model_the_headline_looks_inside_every_child(client):
    """The sub-agent lesson once on the real model, with the task tool beside get_weather. Whatever the
    135M model does (delegate, call the tool itself, answer without a tool), the verdict is ✅ only
    when the parent's answer rests on a tool that answered and every child it started succeeded."""
    from runs import headline

    result = client.predict(ENGLISH_WEATHER, "Use a subagent to find the weather in Paris.", 2, 30, "openai", MODEL,
                            "", MAX_TOKENS, api_name="/run_subagent")
    parent = [e for e in result["events"] if "child" not in e]
    children = {e["child"] for e in result["events"] if "child" in e}
    state = result["verdict"]["state"]
    assert result["ok"] is (state in headline.SUCCESS)
    if not any(e["type"] == "tool_result" and e["ok"] for e in parent):
        assert not result["ok"], result["verdict"]
    for child in children:
        judged = headline.verdict([{k: v for k, v in e.items() if k != "child"} for e in result["events"]
                                   if e.get("child") == child])
        if judged is None or judged["state"] not in headline.SUCCESS:
            assert not result["ok"] and "子代理" in result["verdict"]["title"], result["verdict"]
    calls = [(e["name"], e["raw_arguments"]) for e in parent if e["type"] == "tool_call"]
    print(f"\nsubagent: calls {calls}, {len(children)} child(ren), verdict {result['verdict']['icon']} {state}, "
          f"final {result['final'][:80]!r}")
    # The question asks for a sub-agent (runs/purposes.py): a parent that never called task is said so.
    assert result["events"][0]["type"] == "purpose"
    if not any(name == "task" for name, _ in calls) and state in ("answered", "recovered", "no_tool_call", "missed"):
        assert state == "missed" and "这个问题要调用 task" in result["verdict"]["title"], result["verdict"]


def test_run_skills_on_a_real_model_the_verdict_says_what_it_read(client):
    """The skills lesson once on the real model: the catalogue of two English skills and load_skill.
    A skill read by a name that exists is a tool that answered; a made-up name is a failed call; no
    call at all is 💬. The verdict follows whichever happened."""
    from runs import headline

    english = {"release-notes": "---\nname: release-notes\ndescription: Write release notes from a list of commits. "
                                "Use when the user asks for release notes or a changelog.\n---\nGroup the commits "
                                "into New, Fixed and Other, one line each.\n",
               "sql-style": "---\nname: sql-style\ndescription: The team's rules for writing SQL queries.\n---\n"
                            "Keywords in capitals; no SELECT *.\n"}
    result = client.predict(english, "Write release notes for these commits: fix login, add dark mode.",
                            "catalogue", "openai", MODEL, "", MAX_TOKENS, api_name="/run_skills")
    assert result["events"][0]["type"] == "skills" and not result["events"][0]["problems"]
    loads = [(e["arguments"], r["ok"]) for e, r in zip(of(result, "tool_call"), of(result, "tool_result"))]
    state = result["verdict"]["state"]
    assert result["ok"] is (state in headline.SUCCESS)
    if not loads:
        assert state in ("no_tool_call", "truncated", "repetition"), result["verdict"]
    elif not any(ok for _, ok in loads):
        assert not result["ok"], result["verdict"]
    print(f"\nskills: load_skill calls {loads}, verdict {result['verdict']['icon']} {state} {result['verdict']['title'][:90]}, "
          f"final {result['final'][:80]!r}")


def model_broke(run: dict) -> bool:
    """The run stopped on the loop's guard, or on the server's HTTP 500 (llama-server failing on what the model
    wrote): the model's doing, by the run's own record."""
    stop = run["stopped_by"] or {}
    return stop.get("code") in ("max_turns", "too_many_failures") or (stop.get("code"), stop.get("status")) == ("server", 500)


def test_run_eval_on_a_real_model_scores_say_what_the_events_say(client):
    """The evaluation lesson once on the real model: three cases, one trial each. The 135M model fails
    some or all of them; each run's score must agree with the calls it made, and its tokens are the
    server's usage, not an estimate."""
    cases = [{"name": "Paris", "question": PARIS, "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
             {"name": "London", "question": "What's the weather in London?",
              "calls": [{"name": "get_weather", "arguments": {"city": "London"}}]},
             {"name": "hello", "question": "Say hello to me.", "calls": []}]
    result = client.predict(ENGLISH_WEATHER, cases, [{"provider": "openai", "model": MODEL}], 1, "", MAX_TOKENS,
                            api_name="/run_eval")
    [model] = result["models"]
    assert result["ok"] and result["done"] == 3 and model["error"] is None
    wanted = {"Paris": "Paris", "London": "London", "hello": None}
    for run in model["runs"]:
        if model_broke(run):             # out of rounds, or the server failing on what the model wrote: counted
            assert run["scored"] and not run["passed"], run
        if not run["scored"]:            # the request never reached the model: said, not counted
            assert run["problem"].startswith("没有评分：") and not run["passed"], run
            continue
        called = [c for c in run["calls"] if c["name"] == "get_weather"]
        city = wanted[run["case"]]
        if city is None:
            assert run["passed"] is (not run["calls"] and run["finished"]), run
        else:
            names = {c["name"] for c in run["calls"]}
            if run["tool"]:
                assert names == {"get_weather"}, run
            if names != {"get_weather"}:
                assert not run["tool"] and not run["passed"], run
            if run["passed"]:
                assert [c["arguments"] for c in called] == [{"city": city}], run
            if not any((c.get("arguments") or {}).get("city") == city for c in called):
                assert not run["passed"], run
    totals = model["totals"]
    assert totals["passed"] == sum(run["passed"] for run in model["runs"])
    assert totals["runs"] + totals["unscored"] == 3
    assert not totals["estimated"] and totals["unreported"] == 0 and totals["prompt_tokens"] > 0
    print(f"\neval: {totals['passed']}/{totals['runs']} passed, p50 {totals['p50_ms']:.0f} ms, "
          f"tokens {totals['prompt_tokens']} + {totals['completion_tokens']}, "
          f"problems {[run['problem'] for run in model['runs']]}")


# The evaluation's progress line once an evaluation other than `before` has ended.
EVALUATED = r"""([root, before]) => { const p = root.querySelector('.tw-eval-progress');
  return !!p && p.dataset.started !== before && /^(✅|⏹|❌|⚠️)/u.test(p.innerText.trim()); }"""
EVAL_CASES = [{"name": "Paris", "question": PARIS, "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
              {"name": "London", "question": "What's the weather in London?",
               "calls": [{"name": "get_weather", "arguments": {"city": "London"}}]},
              {"name": "hello", "question": "Say hello to me.", "calls": []}]


def evaluate_on_the_page(lesson, max_tokens: int) -> tuple[list[str], list[dict]]:
    """Sets every round's max_tokens (B's too), runs the evaluation, waits for it to end: -> the progress
    line's lines, and the models of the exported JSON."""
    page, panel = lesson.page, lesson.panel
    limit = page.locator("#max-tokens input[type=number]")
    limit.fill(str(max_tokens))
    limit.press("Enter")
    mark = panel.locator(".tw-eval-progress")
    before = mark.first.get_attribute("data-started") if mark.count() else ""
    panel.locator(".tw-eval-run").click()
    page.wait_for_function(EVALUATED, arg=[panel.element_handle(), before], timeout=lesson.WAIT)
    said = [line.strip() for line in mark.first.inner_text().splitlines() if line.strip()]
    box = panel.locator(".tw-eval-download").first
    shown = box.inner_text()
    panel.locator(".tw-eval-json").click()
    page.wait_for_function("([el, shown]) => el.innerText !== shown && el.innerText.includes('.json')",
                           arg=[box.element_handle(), shown], timeout=30_000)
    with page.expect_download() as done:
        box.locator("a").first.click()
    return said, json.loads(open(done.value.path(), encoding="utf-8").read())["models"]


@pytest.mark.browser
def test_the_evaluation_page_compares_model_b_on_a_local_llama_cpp(browser, app, calling_server):
    """Model B on the llama.cpp preset, no key, at the lane's llama-server (typed as localhost: the server's key,
    configured for 127.0.0.1, is not sent there), the 135M model. With room to write a call (64 tokens a round),
    it calls the tool with the template example's Tokyo for «Say hello to me.», again and again until the loop
    stops it: a failed run, and the summary says the tool failed on an argument the model made up. With 16
    tokens a round every call is cut off, llama-server answers the cut-off call sent back with HTTP 500
    (measured: «Failed to parse tool call arguments as JSON»), and those runs are failed runs of B, counted in
    its pass rate: none left out as unscored."""
    address = calling_server.url.replace("127.0.0.1", "localhost") + "/v1"
    with LessonPage(browser, app, "evaluation", height=2600) as lesson:
        lesson.WAIT = 300_000                     # B's runs on two cores: a few seconds a request
        page, panel = lesson.page, lesson.panel
        page.get_by_text("⚙️ 模型设置").click()
        set_code(page, panel.locator(".tw-editor"), ENGLISH_WEATHER)
        panel.locator(".tw-schema-json").filter(has_text="Get the current weather").first.wait_for(timeout=30_000)
        paste_code(page, panel.locator(".tw-eval-cases"), json.dumps({"cases": EVAL_CASES}))
        trials = panel.locator(".tw-eval-trials input[type=number]")
        trials.fill("1")
        trials.press("Enter")
        panel.locator(".tw-eval-compare input").check()
        choose(page, panel.locator(".tw-eval-b-preset"), "本机 · llama.cpp（llama-server，本机）")
        base_url = panel.locator(".tw-eval-b-base-url textarea, .tw-eval-b-base-url input").first
        page.wait_for_function("el => el.value === 'http://localhost:8080/v1'", arg=base_url.element_handle(),
                               timeout=30_000)
        base_url.fill(address)
        base_url.press("Enter")
        panel.locator(".tw-eval-b-model textarea, .tw-eval-b-model input").first.fill(MODEL)
        panel.locator(".tw-eval-b-key-status").filter(has_text="本机服务不需要密钥：运行时用占位 Key「llama」").first.wait_for(
            timeout=30_000)

        said, (a, b) = evaluate_on_the_page(lesson, 64)
        print(f"\nevaluation, 64 tokens a round: {said}; "
              f"B's runs {[(r['case'], r['passed'], r['stopped_by'], r['calls']) for r in b['runs']]}")
        assert b["error"] is None and b["not_run"] == 0 and len(b["runs"]) == 3 and not any("模型 B" in line for line in said)
        assert said[0].endswith(f"B 通过 {percent(b['totals']['rate'])}（{b['totals']['passed']}/{b['totals']['runs']}）")
        every_run_passed = all(m["totals"]["passed"] == m["totals"]["runs"] == 3 for m in (a, b))
        assert said[0].startswith("✅") is every_run_passed
        # measured: «Say hello to me.» calls get_weather(Tokyo) round after round until the loop's guard stops it
        assert all(r["scored"] and not r["passed"] for r in b["runs"] if model_broke(r))
        invented = [c for r in b["runs"] for c in r["calls"] if (c.get("arguments") or {}).get("city") not in
                    (None, "Paris", "London")]
        summary = panel.locator(".tw-eval-summary").first.inner_text()
        if invented:                              # measured: Tokyo, for «Say hello to me.»
            assert "工具在模型编的参数上失败了" in summary and "可能是工具要修" not in summary, summary
        screenshot(page, "real-model-evaluation-model-b-1280")

        said, (_, b) = evaluate_on_the_page(lesson, 16)
        print(f"evaluation, 16 tokens a round: {said}; B's runs {[(r['case'], r['passed'], r['stopped_by']) for r in b['runs']]}")
        broke = [r for r in b["runs"] if model_broke(r)]
        assert broke, b["runs"]                   # measured: all three, each cut off and then HTTP 500
        assert all(r["scored"] and not r["passed"] for r in broke)
        assert b["totals"]["unscored"] == sum(not r["scored"] for r in b["runs"])
        assert b["totals"]["runs"] == 3 - b["totals"]["unscored"] and said[0].startswith("❌")
        assert f"B 通过 {percent(b['totals']['rate'])}（{b['totals']['passed']}/{b['totals']['runs']}）" in said[0]
        spent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in b["runs"])
        assert b["totals"]["prompt_tokens"] + b["totals"]["completion_tokens"] == spent
