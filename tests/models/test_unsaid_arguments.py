"""An argument nobody said (accents.unsaid_arguments): a string argument whose value appears nowhere
in what the model was sent. The timeline shows it on the call, beside the question; the headline
doubts a run built on one (never a plain ✅), and says so when the server's chat template was the
source. It must stay quiet on the offline model's correct runs of every example set's presets, or
students learn to ignore it."""
import importlib
from pathlib import Path

from accents import example_values, template_examples, unsaid_arguments
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from lessons import timeline
from lessons.editor_panel import EXAMPLE_SETS
from lessons.presets import PRESETS
from llm_clients import make_client
from react_loop import run_react
from runs import headline
from i18n import using

LOOPS = {"native": run_function_calling, "react": run_react, "json": run_json_from_text}
WEATHER_TOOL = [{"type": "function", "function": {
    "name": "get_weather", "description": "查询城市天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                   "required": ["city"]}}}]
ASKED = [{"role": "system", "content": "你是助手"}, {"role": "user", "content": "北京今天天气怎么样？"}]


def test_a_value_nobody_said_is_named_with_its_path():
    assert unsaid_arguments({"city": "Tokyo"}, ASKED, WEATHER_TOOL) == [("city", "Tokyo")]
    assert unsaid_arguments({"city": "北京"}, ASKED, WEATHER_TOOL) == []
    nested = {"trip": {"stops": ["北京", "Tokyo"]}, "city": "北京"}
    assert unsaid_arguments(nested, ASKED, WEATHER_TOOL) == [("trip.stops[1]", "Tokyo")]


def test_what_counts_as_said():
    asked = [{"role": "user", "content": "帮我算一下 (3 + 5)*12，用ＡＢＣ公司的汇率"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "1", "type": "function", "function": {"name": "lookup", "arguments": '{"code": "X-9"}'}}]},
             {"role": "tool", "tool_call_id": "1", "content": "上海：多云"},
             {"role": "user", "content": [{"type": "text", "text": "Paris too"}]}]
    said = {"expression": "(3+5)*12", "company": "abc", "earlier": "x-9", "result": "上海", "part": "paris",
            "enum": "f", "tool_name": "get_weather"}
    assert unsaid_arguments(said, asked, WEATHER_TOOL) == []        # spacing, case, full width, every message, tools
    assert unsaid_arguments({"expression": "(3+5)*13"}, asked, WEATHER_TOOL) == [("expression", "(3+5)*13")]


def test_only_strings_are_checked_and_a_translation_is_listed_too():
    assert unsaid_arguments({"days": 12000, "ok": True, "none": None, "blank": "  "}, ASKED, WEATHER_TOOL) == []
    assert unsaid_arguments({"city": "Beijing"}, ASKED, WEATHER_TOOL) == [("city", "Beijing")]


def runs_of_every_preset():
    for label, file in EXAMPLE_SETS.items():
        registry = importlib.import_module(file.removesuffix(".py")).registry
        for question in PRESETS[label]:
            for loop, run in LOOPS.items():
                yield label, question, loop, list(run(make_client("offline"), question, None, registry))


def test_it_fires_on_none_of_the_offline_models_correct_runs_of_the_example_sets():
    runs = calls = 0
    fired = []
    for label, question, loop, events in runs_of_every_preset():
        runs += 1
        request = None
        for event in events:
            if event["type"] == "request":
                request = event
            elif event["type"] == "tool_call" and event["arguments"] is not None:
                calls += 1
                found = unsaid_arguments(event["arguments"], request["messages"], request["tools"])
                if found:
                    fired.append((label, loop, question, event["name"], found))
        assert "🔎" not in timeline.render_protocol(events, "react" if loop != "native" else "function_calling")
    print(f"\n{runs} runs ({len(EXAMPLE_SETS)} example sets × their presets × {len(LOOPS)} loops), "
          f"{calls} calls, {len(fired)} with an argument nobody said")
    assert runs == sum(len(PRESETS[label]) for label in EXAMPLE_SETS) * len(LOOPS) and calls >= runs
    assert fired == []


def invented_run(question="北京今天天气怎么样？"):
    """A native run whose model calls get_weather with a city nobody said, then answers from the tool."""
    from llm_clients import Completion

    class Copying:
        model, provider = "copying", "test"

        def __init__(self):
            self.turn = 0

        def complete(self, messages, tools=None, **_):
            self.turn += 1
            if self.turn == 1:
                call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tokyo"}'}}
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                return Completion(message=message, raw={}, text="", finish_reason="tool_calls")
            return Completion(message={"role": "assistant", "content": "Tokyo is sunny."}, raw={}, text="Tokyo is sunny.",
                              finish_reason="stop")

    return list(run_function_calling(Copying(), question, WEATHER_TOOL, lambda name, args: "Tokyo: sunny, 21°C"))


def test_the_timeline_and_the_chat_view_say_it_on_the_call_beside_the_question():
    events = invented_run()
    shown = timeline.render_protocol(events)
    assert shown.count('class="tw-unsaid"') == 1
    assert ('city=&quot;Tokyo&quot; 在对话里没有出现过（问题、系统提示、之前的消息、工具结果和工具清单里都没有）：'
            '可能是模型编的，或从服务端加进提示词的文字（比如聊天模板里的例子）里抄来的' in shown
            and "问题是「北京今天天气怎么样？」" in shown)
    call_step = next(m for m in timeline.render_chat(events) if "🛠️" in str(m.get("metadata", {}).get("title")))
    assert 'city="Tokyo" 在对话里没有出现过' in call_step["content"] and '"city": "Tokyo"' in call_step["content"]
    with using("en"):
        english = timeline.render_protocol(events)
    assert "city=&quot;Tokyo&quot; appears nowhere in the conversation (not in the question" in english
    assert "the question was «北京今天天气怎么样？»" in english


def test_where_the_server_says_it_came_from_its_chat_template_the_note_says_so():
    events = invented_run()
    response = next(e for e in events if e["type"] == "response")
    response["accents"] = [{"code": "template_example", "message": "…", "values": ["Tokyo"]}]
    shown = timeline.render_protocol(events)
    assert "city=&quot;Tokyo&quot; 在对话里没有出现过，却在服务端的聊天模板里：模型照抄了模板里示范调用的例子" in shown
    found = headline.verdict(events)
    assert found["state"] == "doubtful" and "它在服务端聊天模板的示例里：模型照抄了模板的例子" in found["title"]


def test_on_the_headline_it_is_a_doubt_not_a_success_and_the_workspace_lessons_leave_the_note_out():
    events = invented_run()
    found = headline.verdict(events)      # a tool answered, with a value nobody said: not a plain ✅
    assert found["state"] == "doubtful" and found["icon"] == "⚠️"
    assert found["title"].startswith('get_weather 的参数 city="Tokyo" 在对话里没有出现过（问题是「北京今天天气怎么样？」）：'
                                     "下面的回答用的是它，核对一下")
    assert not headline.summary(events)["ok"]
    assert "tw-unsaid" not in timeline.render_protocol(events, check_arguments=False)
    assert all("🔎" not in str(m["content"]) for m in timeline.render_chat(events, check_arguments=False))


def test_a_tab_draws_it_unless_its_tools_are_the_workspaces():
    import gradio as gr

    from lessons.function_calling import page as function_calling_page
    from lessons.workspace import page as workspace_page
    from lessons.settings_panel import SettingsPanel
    from runs.run_driver import RunState

    with gr.Blocks():
        settings = SettingsPanel({})
        tabs = [function_calling_page.build(settings), workspace_page.build(settings)]
    state = RunState()
    state.replay, state.pos = invented_run(), 99
    drawn = {tab.name: tab.run.views.render(state)[tab.run.views.protocol] for tab in tabs}
    assert "tw-unsaid" in drawn["function_calling"] and "tw-unsaid" not in drawn["workspace"]


TEMPLATE = (Path(__file__).resolve().parents[1] / "real_model" / "chatml_json_calls.jinja").read_text(encoding="utf-8")


def test_the_template_s_worked_examples_are_read_from_it():
    assert example_values(TEMPLATE) == ["Tokyo", "Anna Schmidt"]      # not the "<value>" placeholder


def test_a_value_copied_from_the_chat_template_is_said_in_the_call_and_in_the_answer():
    asked = [{"role": "user", "content": "北京今天天气怎么样？"}]
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tokyo"}'}}
    found = template_examples({"role": "assistant", "content": None, "tool_calls": [call]}, asked, WEATHER_TOOL, TEMPLATE)
    assert found["code"] == "template_example" and found["values"] == ["Tokyo"] and not found["answer_values"]
    # Measured on SmolLM2-135M: get_weather(city="北京") ran, and the answer spoke of Tokyo.
    answer = {"role": "assistant", "content": "the weather in Tokyo is 25°C, 30% of the time"}
    found = template_examples(answer, asked, WEATHER_TOOL, TEMPLATE)
    assert found["answer_values"] == ["Tokyo"] and "回答里的 \"Tokyo\" 不在对话里" in found["message"]
    assert template_examples(answer, [{"role": "user", "content": "Tokyo weather?"}], WEATHER_TOOL, TEMPLATE) is None
    assert template_examples(answer, asked, WEATHER_TOOL, None) is None          # no template known: nothing said
    events = [{"type": "request", "turn": 1, "messages": asked, "tools": WEATHER_TOOL},
              {"type": "response", "turn": 1, "accents": [found]},
              {"type": "final", "turn": 1, "content": answer["content"]}]
    verdict = headline.verdict(events)
    assert verdict["state"] == "doubtful" and verdict["title"].startswith(
        '回答里的 "Tokyo" 在对话里没有出现过，却是服务端聊天模板里示范调用的参数：模型照抄了模板的例子')
