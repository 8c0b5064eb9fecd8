"""The course's loops are a staircase: minimal_loop.py → basic_loop.py (errors fed back as results, a turn
limit, nothing else) → function_calling_loop.py (the skeleton) → the lessons' loops, which extend the
skeleton through its two extension points instead of copying it. Each step does what its header says and
no more; the hooks and sub-agent loops get tool_choice, temperature and stream from the skeleton, as the
raw requests the SDK sent show."""
import ast
import json
import pathlib
import threading

import pytest

import basic_loop
import hooks
import minimal_loop
import subagents
from examples_weather import registry as weather

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
FORCED = {"type": "function", "function": {"name": "get_weather"}}


def scripted_call(name, arguments, call_id="call_1"):
    return {"message": {"content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}}


def tool_messages(server):
    """The role "tool" messages of the last request the server received."""
    return [m for m in server.requests[-1]["body"]["messages"] if m["role"] == "tool"]


# ---- step 1: minimal_loop.py has no error handling

@pytest.mark.parametrize("name, arguments, error", [("get_wether", '{"city": "北京"}', KeyError),
                                                     ("get_weather", '{"city": 北京}', json.JSONDecodeError),
                                                     ("get_weather", '{"town": "北京"}', TypeError)])
def test_the_minimal_loop_stops_at_the_first_mistake_the_model_makes(connect, server, name, arguments, error):
    server.queue(scripted_call(name, arguments))
    with pytest.raises(error):
        minimal_loop.agent_loop(connect("openai"), "北京天气怎么样？")


# ---- step 2: basic_loop.py feeds errors back and stops after max_turns, nothing else

@pytest.mark.parametrize("name, arguments, said", [
    ("get_wether", '{"city": "北京"}', "❌ 没有叫 get_wether 的工具。可用的工具：get_weather"),
    ("get_weather", '{"city": 北京}', "❌ 参数不是合法的 JSON"),
    ("get_weather", '{"town": "北京"}', "❌ get_weather 执行出错：TypeError")])
def test_the_basic_loop_tells_the_model_what_went_wrong_and_the_model_recovers(connect, server, name, arguments, said):
    server.queue(scripted_call(name, arguments))
    answer = basic_loop.agent_loop(connect("openai"), "北京天气怎么样？")
    first, second = [m["content"] for m in tool_messages(server)]
    assert first.startswith(said) and second == "北京：晴，25℃"
    assert "北京：晴，25℃" in answer


def test_the_basic_loop_stops_after_max_turns_with_a_sentence(connect, server):
    server.queue(*[scripted_call("get_wether", "{}", f"call_{n}") for n in range(3)])
    answer = basic_loop.agent_loop(connect("openai"), "北京天气怎么样？", max_turns=3)
    assert answer == "已经用完 3 轮，还没有得到最终回答。" and len(server.requests) == 3


def test_the_basic_loop_adds_nothing_else(connect, server, monkeypatch):
    """No events (an answer, not a generator), no stream / tool_choice / parallel flag in the request,
    calls one after another on the caller's thread, and a long result goes back whole (no clipping yet)."""
    threads = []

    def long_weather(city):
        threads.append(threading.get_ident())
        return city * 3000

    monkeypatch.setitem(basic_loop.HANDLERS, "get_weather", long_weather)
    answer = basic_loop.agent_loop(connect("openai"), "北京和上海的天气怎么样？")
    assert isinstance(answer, str)
    first = server.requests[0]["body"]
    assert {"tool_choice", "parallel_tool_calls", "temperature"}.isdisjoint(first) and not first.get("stream")
    assert threads == [threading.get_ident()] * 2
    assert [m["content"] for m in tool_messages(server)] == ["北京" * 3000, "上海" * 3000]


# ---- the lessons' loops reuse the skeleton: what the skeleton sends, they send

def test_the_hooks_loop_sends_tool_choice_temperature_and_stream(connect, server):
    audited = []
    registered = hooks.Hooks()
    registered.add(hooks.POST, lambda call: audited.append(call["tool_name"]))
    events = list(hooks.run_with_hooks(connect("openai"), "北京天气怎么样？", weather.to_schemas(), weather, registered,
                                       tool_choice=FORCED, temperature=0.3, stream=True))
    first, second = (r["body"] for r in server.requests)
    assert first["tool_choice"] == FORCED and first["temperature"] == 0.3 and first["stream"] is True
    assert "tool_choice" not in second and second["stream"] is True         # forcing only on the first turn
    assert any(e["type"] == "delta" for e in events) and audited == ["get_weather"]
    assert [e["type"] for e in events if e["type"] in ("tool_call", "hook", "tool_result")] == [
        "tool_call", "hook", "tool_result"]
    assert events[-1]["type"] == "final"


def test_the_hooks_loop_still_runs_calls_one_at_a_time(connect, server):
    seen = []
    registered = hooks.Hooks()
    registered.add(hooks.PRE, lambda call: seen.append(("pre", call["tool_input"]["city"])))
    registered.add(hooks.POST, lambda call: seen.append(("post", call["tool_input"]["city"])))
    events = list(hooks.run_with_hooks(connect("openai"), "北京和上海的天气怎么样？", None, weather, registered))
    assert seen == [("pre", "北京"), ("post", "北京"), ("pre", "上海"), ("post", "上海")]
    assert not any("started_ms" in e for e in events if e["type"] == "tool_result")


def test_the_sub_agent_loop_sends_them_and_its_children_keep_temperature_and_stream(connect, server):
    question = "派一个子代理去查北京今天的天气，告诉我结论"
    events = list(subagents.run_with_subagents(connect("openai"), question, weather.to_schemas(), weather,
                                               tool_choice="auto", temperature=0.2, stream=True))
    bodies = [r["body"] for r in server.requests]
    parent = [b for b in bodies if b["messages"][0].get("content") != subagents.CHILD_SYSTEM]
    child = [b for b in bodies if b["messages"][0].get("content") == subagents.CHILD_SYSTEM]
    assert parent and child
    assert all(b["tool_choice"] == "auto" and b["temperature"] == 0.2 and b["stream"] is True for b in parent)
    assert all("tool_choice" not in b and b["temperature"] == 0.2 and b["stream"] is True for b in child)
    assert [t["function"]["name"] for t in parent[0]["tools"]][-1] == "task"
    assert events[-1]["type"] == "final" and "北京今天晴" in events[-1]["content"]


# ---- the shape of the code: one turn loop, the lessons extend it

def defines_a_turn_loop(path):
    """Whether a file has a loop of its own over the model's turns: `for turn in range(...)` or `while True`
    around a model call (client.complete / ask_model)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)):
            calls = {getattr(n.func, "attr", getattr(n.func, "id", None)) for statement in node.body
                     for n in ast.walk(statement) if isinstance(n, ast.Call)}
            if calls & {"complete", "ask_model", "stream"}:
                return True
    return False


def test_only_the_loops_of_the_staircase_ask_the_model_in_a_loop():
    looping = sorted(p.name for p in CODE.glob("*.py") if defines_a_turn_loop(p))
    # the skeleton, the two small steps before it, and the text protocols' loop (no tools= at all)
    assert looping == ["basic_loop.py", "function_calling_loop.py", "minimal_loop.py", "text_protocol_loop.py"]


@pytest.mark.parametrize("name", ["hooks.py", "subagents.py", "context.py", "skills.py", "sessions.py",
                                  "mini_agent.py"])
def test_the_lessons_loops_run_on_the_skeleton(name):
    source = (CODE / name).read_text(encoding="utf-8")
    assert "run_function_calling(" in source and "ask_model" not in source
