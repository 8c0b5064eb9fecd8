"""The lessons against a real model on a real server: SmolLM2-135M-Instruct on llama.cpp's
llama-server (see conftest.py), through the real openai and zhipuai SDKs and the app's named API.

What is asserted are facts of the server, the shape of what the app hands back, and that the
verdict tells the truth: with a template that only describes the tools (chatml_tools.jinja) a 135M
model answers in text, invents data, repeats itself and is cut off, and a run in which no tool
answered is never `ok` and never ✅, on the page or in the API. (With a template that shows it how,
the same model calls tools and answers from them, and fails in other ways: test_tool_calls.py.)"""
from __future__ import annotations
from runs import starters

import time

import examples_weather
import openai
import pytest
import zhipuai

from function_calling_loop import run_function_calling
from llm_clients import make_client
from runs import backend, headline
from lessons.editor_panel import EXAMPLE_SETS, example_text
from access.clients import Settings
from tests.app.harness import LessonPage, pick_provider, screenshot, start_app

pytestmark = pytest.mark.real_model

WEATHER = example_text(EXAMPLE_SETS["天气"])
CALCULATOR = example_text(EXAMPLE_SETS["计算器"])
MODEL = "smollm2-135m"          # llama-server serves its one model whatever name it is sent
KEY = "sk-local-llama"         # llama-server without --api-key accepts any
APP_MAX_TOKENS = 24
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
GET_WEATHER = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def sdk(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0, timeout=60)


def chat(server, max_tokens=16, **extra):
    return sdk(server).chat.completions.create(model=MODEL, messages=QUESTION, temperature=0,
                                               max_tokens=max_tokens, **extra)


# ------------------------------------------------------------------ the server through the SDKs

def test_openai_sdk_chats_with_the_real_model(tools_server):
    started = time.perf_counter()
    reply = chat(tools_server, max_tokens=16)
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.content.strip()
    assert choice.finish_reason in ("stop", "length")
    assert 0 < reply.usage.completion_tokens <= 16
    timings = reply.model_extra["timings"]               # llama.cpp's own: this is the real server
    assert timings["predicted_n"] == reply.usage.completion_tokens
    print(f"\n{reply.usage.completion_tokens} tokens at {timings['predicted_per_second']:.1f}/s generated, "
          f"{timings['prompt_per_second']:.1f}/s prompt, {time.perf_counter() - started:.2f} s: "
          f"{choice.message.content!r}")


def test_zhipuai_sdk_chats_with_the_real_model(tools_server):
    client = zhipuai.ZhipuAI(api_key=KEY, base_url=tools_server.url + "/v1", max_retries=0, timeout=60,
                             disable_token_cache=True)
    reply = client.chat.completions.create(model=MODEL, messages=QUESTION, temperature=0, max_tokens=16)
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.content.strip()
    assert choice.finish_reason in ("stop", "length") and 0 < reply.usage.completion_tokens <= 16


def test_props_say_whether_the_template_renders_tools(tools_server, own_server):
    assert tools_server.props()["chat_template_caps"]["supports_tools"] is True
    assert own_server.props()["chat_template_caps"]["supports_tools"] is False


def test_tools_reach_the_prompt_only_through_a_template_that_renders_them(tools_server, own_server):
    """The model's own template has no tools: the server drops them without a word."""
    counts = {}
    for name, server in (("tools", tools_server), ("own", own_server)):
        without = chat(server, max_tokens=1).usage.prompt_tokens
        with_tools = chat(server, max_tokens=1, tools=GET_WEATHER).usage.prompt_tokens
        counts[name] = (without, with_tools)
    print(f"\nprompt_tokens (without tools, with one tool): {counts}")
    assert counts["tools"][1] > counts["tools"][0] + 100      # the tool's JSON and the instructions
    assert counts["own"][1] == counts["own"][0]               # silently dropped


def test_a_small_max_tokens_ends_with_length(tools_server):
    reply = chat(tools_server, max_tokens=4)
    assert reply.choices[0].finish_reason == "length" and reply.usage.completion_tokens == 4


def test_the_model_answers_in_text_instead_of_calling_the_tool(tools_server):
    """What the 135M model does with a tool it could call when the template only describes the call
    format (Hermes style): it writes an answer instead (test_tool_calls.py shows it how)."""
    reply = chat(tools_server, max_tokens=40, tools=GET_WEATHER)
    message = reply.choices[0].message
    print(f"\nwith get_weather offered: tool_calls={message.tool_calls!r}, content={message.content!r}")
    assert message.tool_calls or message.content.strip()


# ------------------------------------------------------------------ the app against the server

@pytest.fixture(scope="module")
def secrets(tools_server):
    """The server's configuration: an OpenAI-compatible key and base URL (and the same for GLM).
    Runs on a server key ask for at most TOOL_WORKSHOP_KEY_MAX_TOKENS (the app's only max_tokens)."""
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": tools_server.url + "/v1",
            "ZHIPUAI_API_KEY": KEY, "ZHIPUAI_BASE_URL": tools_server.url + "/v1",
            "TOOL_WORKSHOP_KEY_MAX_TOKENS": str(APP_MAX_TOKENS)}


def responses(result) -> list[dict]:
    return [e for e in result["events"] if e["type"] == "response"]


def assert_real_run(result, streamed=False):
    """A run that reached the real server and ended with the shape the API documents: the
    model's real text in its responses (and in `final` when the run ended with one), and a verdict
    that is a success only when a tool answered."""
    assert set(result) >= {"ok", "final", "error", "verdict", "tools", "events"}, result
    verdict = result["verdict"]
    assert set(verdict) == {"state", "icon", "title", "detail"}
    assert result["ok"] is (verdict["state"] in ("answered", "recovered")), result
    if result["error"] is not None:
        assert not result["ok"]
    tool_answered = any(e["type"] == "tool_result" and e["ok"] for e in result["events"])
    if not tool_answered:      # what the issue saw: ✅ over an answer no tool gave
        assert not result["ok"] and verdict["icon"] != "✅", verdict
    answered = responses(result)
    assert answered, result
    for event in answered:
        raw = event["raw"]
        chunks = raw if streamed else [raw]
        assert isinstance(raw, list) is streamed
        assert all(isinstance(chunk, dict) and chunk.get("object", "").startswith("chat.completion") for chunk in chunks)
        if not streamed:     # llama.cpp's own timings: the real server answered, as it answered
            assert "timings" in raw and raw["choices"][0]["message"].get("content") == event["message"].get("content")
        assert (event["usage"] or {}).get("completion_tokens", 0) <= APP_MAX_TOKENS   # the app's cap reached it
        assert event["finish_reason"] in ("stop", "length", "tool_calls")
        assert event["text"] or event["message"].get("tool_calls")
    finals = [e for e in result["events"] if e["type"] == "final"]
    if finals:
        assert result["final"] == finals[-1]["content"] and result["error"] is None
    else:
        assert result["error"]["message"]
    print(f"\nverdict={verdict['state']} {verdict['icon']} ok={result['ok']} turns={len(answered)} texts={[e['text'][:80] for e in answered]!r} "
          f"error={(result['error'] or {}).get('code')!r}")


def test_run_function_calling(client):
    result = client.predict(WEATHER, "What is the weather in Hangzhou?", "auto", True, "", "openai", MODEL,
                            api_name="/run_function_calling")
    assert_real_run(result)
    request = next(e for e in result["events"] if e["type"] == "request")
    assert [t["function"]["name"] for t in request["tools"]] == ["get_weather", "get_forecast"]


def test_run_function_calling_streamed(secrets):
    """The named API does not stream: the same backend call with the page's stream setting on."""
    settings = Settings(provider="openai", model=MODEL, stream=True)
    run = backend.run_to_end(backend.start_run(
        starters.function_calling, WEATHER, "What is the weather in Hangzhou?", settings,
        {"tool_choice": "auto", "parallel_tool_calls": True}, secrets=secrets, session_id="real-model-stream"))
    assert run.error is None, run.error
    deltas = [e for e in run.events if e["type"] == "delta"]
    events = [e for e in run.events if e["type"] != "delta"]
    assert_real_run({**headline.summary(events), "tools": run.tools, "events": events}, streamed=True)
    assert deltas                                          # the text came in pieces


def test_run_function_calling_streamed_through_the_api(client):
    result = client.predict(WEATHER, "What is the weather in Hangzhou?", stream=True, provider="openai", model=MODEL,
                            api_name="/run_function_calling")
    assert_real_run(result, streamed=True)
    assert next(e for e in result["events"] if e["type"] == "request")["params"]["stream"] is True


def test_a_max_tokens_from_the_api_cuts_the_answer_and_the_verdict_says_so(client):
    result = client.predict(WEATHER, "What is the weather in Hangzhou?", max_tokens=6, provider="openai",
                            model=MODEL, api_name="/run_function_calling")
    assert_real_run(result)
    last = responses(result)[-1]
    assert last["finish_reason"] == "length" and last["usage"]["completion_tokens"] <= 6
    assert "length" in [a["code"] for a in last["accents"]]
    assert result["verdict"]["state"] == "truncated" and result["verdict"]["icon"] == "✂️"


def accents(done) -> list[str]:
    return [a["code"] for a in done.accents]


def test_the_client_names_a_template_that_drops_the_tools(own_server, tools_server):
    ask = [{"role": "user", "content": "What is the weather in Paris?"}]
    dropped = make_client("openai", model=MODEL, api_key=KEY, base_url=own_server.url + "/v1", max_tokens=4)
    note = next(a for a in dropped.complete(ask, tools=GET_WEATHER).accents if a["code"] == "tools_not_delivered")
    assert "supports_tools 为 false" in note["message"] and "--chat-template-file" in note["message"]
    carried = make_client("openai", model=MODEL, api_key=KEY, base_url=tools_server.url + "/v1", max_tokens=4)
    assert "tools_not_delivered" not in accents(carried.complete(ask, tools=GET_WEATHER))


def test_the_client_sees_the_tools_dropped_from_the_usage_alone(own_server):
    """Without /props (a client that never asks, as for a remote host), usage.prompt_tokens tells."""
    client = make_client("openai", model=MODEL, api_key=KEY, base_url=own_server.url + "/v1", max_tokens=4)
    client.template_checked = True
    tools = examples_weather.registry.to_schemas()       # the lesson's two tools, as the page sends them
    done = client.complete([{"role": "user", "content": "What is the weather in Paris?"}], tools=tools)
    note = next(a for a in done.accents if a["code"] == "tools_not_delivered")
    assert str(done.usage["prompt_tokens"]) in note["message"]


def test_a_required_tool_choice_the_server_ignores_is_named(tools_server):
    client = make_client("openai", model=MODEL, api_key=KEY, base_url=tools_server.url + "/v1", max_tokens=16)
    done = client.complete([{"role": "user", "content": "What is the weather in Paris?"}], tools=GET_WEATHER,
                           tool_choice="required", temperature=0)
    assert ("tool_choice_ignored" in accents(done)) is (not done.message.get("tool_calls"))


def test_a_model_repeating_itself_is_named_and_is_not_a_success(tools_server):
    # SmolLM2-135M at temperature 0 answers this with "Hello, hello, hello, …" until max_tokens.
    client = make_client("openai", model=MODEL, api_key=KEY, base_url=tools_server.url + "/v1", max_tokens=64)
    events = list(run_function_calling(client, "Write the word hello 50 times.", [], None, temperature=0))
    last = [e for e in events if e["type"] == "response"][-1]
    print(f"\nrepeated: {last['text'][:100]!r}")
    note = next(a["message"] for a in last["accents"] if a["code"] == "repetition")
    assert "「hello,」" in note.lower() and last["finish_reason"] == "length"
    found = headline.verdict(events)
    assert found["state"] == "repetition" and found["icon"] == "🔁" and not headline.summary(events)["ok"]


def test_run_react(client):
    result = client.predict(CALCULATOR, "What is (3+5)*12?", "react", "", "openai", MODEL, api_name="/run_react")
    assert_real_run(result)
    assert any(e["type"] == "parse" for e in result["events"])   # every reply went through the parser


def test_run_json_from_text_through_zhipuai(client):
    result = client.predict(CALCULATOR, "What is (3+5)*12?", "json", "", "glm", MODEL, api_name="/run_react")
    assert_real_run(result)
    assert any(e["type"] == "parse" for e in result["events"])


def test_run_workspace(client):
    result = client.predict("List the files in the project.", None, None, "openai", MODEL, "",
                            api_name="/run_workspace")
    assert set(result) >= {"ok", "final", "error", "events", "files"}, result
    assert_real_run({**result, "tools": []})
    assert "src/calc.py" in result["files"]                # the starter project came back


# ------------------------------------------------------------------ the page against the server

class Recorder:
    """A pass-through in front of the real server that keeps each chat answer's text: what the
    page must show is known from the wire, not from the page."""

    def __init__(self, target: str):
        import http.server
        import json
        import threading
        import urllib.request

        recorder = self
        self.answers: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                forward = urllib.request.Request(target + self.path, data=body, method="POST",
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(forward, timeout=120) as answer:
                    data, status, kind = answer.read(), answer.status, answer.headers.get("Content-Type")
                try:
                    recorder.answers.append(json.loads(data)["choices"][0]["message"].get("content") or "")
                except (ValueError, KeyError, IndexError):
                    pass
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def recorded_app(tools_server, secrets):
    recorder = Recorder(tools_server.url)
    demo, url = start_app({**secrets, "OPENAI_BASE_URL": recorder.url + "/v1"})
    yield url, recorder
    demo.close()
    recorder.stop()


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.browser
def test_function_calling_on_the_page_shows_the_model_answer(browser, recorded_app, secrets):
    url, recorder = recorded_app
    with LessonPage(browser, url, "function_calling") as lesson:
        page, panel = lesson.page, lesson.panel
        page.get_by_text("⚙️ 模型设置").click()
        pick_provider(page, "openai", secrets)      # its default model shown: typed before, MODEL would be replaced
        page.locator("#key-status").filter(has_text="已使用服务器配置的密钥").wait_for(timeout=30_000)
        model = page.locator("#model input")
        model.fill(MODEL)
        model.press("Enter")
        panel.get_by_role("tab", name="协议时间线").click()
        panel.locator(".tw-run").click()
        panel.locator(".tw-protocol .tw-final, .tw-protocol .tw-error").first.wait_for(timeout=150_000)
        status = panel.locator(".tw-status").first
        status.filter(has_text="轮，").wait_for(timeout=30_000)
        assert not status.inner_text().startswith("✅"), status.inner_text()   # no tool answered it
        screenshot(page, "real-model-function-calling-1280x800")
        shown = words(panel.locator(".tw-protocol").text_content())
        assert recorder.answers, "the page's run never reached the real server"
        answer = words(recorder.answers[0])
        print(f"\non the page, the model's answer: {answer!r}")
        assert answer and answer[:40] in shown
        assert lesson.watched.foreign_requests() == []
