"""Several tool calls in one reply run at the same time (proved by a barrier and the recorded offsets, not by
timing), step mode still pauses before each call, and envelope=True hands the model a fixed JSON shape."""
import json
import sys
import threading
import time

import pytest

import examples_weather
from function_calling_loop import plain_call, run_function_calling, side_by_side
from json_loop import run_json_from_text
from llm_clients import make_client
from react_loop import run_react
from tool_outcome import RESULT_LIMIT, as_envelope, failure, success
from tool_registry import ToolRegistry

QUESTION = "北京和上海今天天气怎么样？"


def slow_registry(parties=2):
    """get_weather waits until `parties` calls are inside it at once: run one after another, the barrier breaks."""
    registry = ToolRegistry()
    barrier = threading.Barrier(parties, timeout=10)

    @registry.tool("查询指定城市今天的天气")
    def get_weather(city: str) -> str:
        barrier.wait()
        return f"{city}：晴"

    return registry


def kinds(events, kind):
    return [e for e in events if e["type"] == kind]


def test_parallel_calls_overlap():
    events = list(run_function_calling(make_client("offline"), QUESTION, None, slow_registry()))
    calls, results = kinds(events, "tool_call"), kinds(events, "tool_result")
    assert [c["arguments"]["city"] for c in calls] == ["北京", "上海"]
    assert all(r["ok"] for r in results), [r["content"] for r in results]
    # all calls first, then the results in the order of the calls
    first_round = [e["type"] for e in events if e["turn"] == 1 and e["type"] in ("tool_call", "tool_result")]
    assert first_round == ["tool_call", "tool_call", "tool_result", "tool_result"]
    assert [r["id"] for r in results] == [c["id"] for c in calls]
    a, b = results
    assert a["started_ms"] < b["finished_ms"] and b["started_ms"] < a["finished_ms"]      # the two overlapped
    assert a["round_ms"] == b["round_ms"] >= max(a["finished_ms"], b["finished_ms"]) and a["concurrent"] == 2
    history = events[-1]["messages"]
    assert [m["tool_call_id"] for m in history if m["role"] == "tool"] == [c["id"] for c in calls]
    assert "北京：晴" in events[-1]["content"] and "上海：晴" in events[-1]["content"]


def pausing_before(city: str, seconds: float):
    """A run_call that spends `seconds` before the call for `city` runs (as a check before a tool does)."""
    def run_call(call, execute, names):
        step = plain_call(call, execute, names)
        override = yield next(step)
        if (call.arguments or {}).get("city") == city:
            time.sleep(seconds)
        result = step.send(override)
        yield result
        return result
    return run_call


def test_a_call_ends_when_the_loop_has_its_result():
    """What a call's step does around its tool is time the loop waited for that call: its bar ends when the
    result came back, not at its start plus the tool's own time (which put the end before the result)."""
    events = run_function_calling(make_client("offline"), QUESTION, None, examples_weather.registry,
                                  run_call=pausing_before("北京", 0.2))
    beijing, shanghai = kinds(list(events), "tool_result")
    assert beijing["finished_ms"] >= 200 and beijing["round_ms"] >= beijing["finished_ms"]
    for result in (beijing, shanghai):
        assert result["duration_ms"] == pytest.approx(result["finished_ms"] - result["started_ms"], abs=0.01)
    assert shanghai["finished_ms"] < beijing["finished_ms"]


def test_calls_let_go_together_overlap_even_when_one_waits_for_the_cpu():
    """Once let go, which thread runs first is the machine's choice. Here the interpreter hands the CPU to another
    thread only every 10 s and each tool keeps it busy for 0.1 s, so one call runs wholly before the other gets
    the CPU (as a loaded machine can do with calls of a few milliseconds). Both were under way from the same
    moment: their bars overlap, and each call's time is from that moment to its result."""
    ran = []
    registry = ToolRegistry()

    @registry.tool("查询指定城市今天的天气")
    def get_weather(city: str) -> str:
        began = time.perf_counter()
        while time.perf_counter() < began + 0.1:
            pass
        ran.append((began, time.perf_counter()))
        return f"{city}：晴"

    switching = sys.getswitchinterval()
    sys.setswitchinterval(10)
    try:
        events = list(run_function_calling(make_client("offline"), QUESTION, None, registry))
    finally:
        sys.setswitchinterval(switching)
    (_, first_ended), (second_began, _) = sorted(ran)
    assert first_ended <= second_began                      # the tools themselves ran one after the other
    a, b = kinds(events, "tool_result")
    assert a["started_ms"] == b["started_ms"] < min(a["finished_ms"], b["finished_ms"])
    assert max(a["finished_ms"], b["finished_ms"]) >= 200 and a["round_ms"] >= max(a["finished_ms"], b["finished_ms"])


def test_a_call_takes_the_time_the_loop_waited_for_it():
    """An executor may report its own duration_ms (the sandbox's registry times the function alone): the
    loop's own measurement of the call is the one kept: its offsets in the batch, and the time between them."""
    def execute(name, args):
        return success(f"{args['city']}：晴", duration_ms=10**6)      # claims a million ms, returns at once

    tools = examples_weather.registry.to_schemas()
    results = kinds(list(run_function_calling(make_client("offline"), QUESTION, tools, execute)), "tool_result")
    assert len(results) == 2
    for result in results:
        assert 0 <= result["duration_ms"] < 10**6
        assert result["finished_ms"] - result["started_ms"] == pytest.approx(result["duration_ms"], abs=0.01)
        assert result["round_ms"] >= result["finished_ms"]


def test_without_parallel_tool_calls_one_call_per_round_and_no_timing():
    registry = examples_weather.registry
    events = list(run_function_calling(make_client("offline"), QUESTION, None, registry, parallel_tool_calls=False))
    results = kinds(events, "tool_result")
    assert len(results) == 2 and results[0]["turn"] == 1 and results[1]["turn"] == 2
    assert not any("started_ms" in r for r in results)


def test_an_executor_that_takes_one_at_a_time_is_respected():
    seen, inside = [], []

    def execute(name, arguments):
        inside.append(1)
        seen.append(len(inside))
        inside.pop()
        return f"{arguments['city']}：晴"

    execute.max_parallel = 1
    events = list(run_function_calling(make_client("offline"), QUESTION, examples_weather.registry.to_schemas(),
                                       execute))
    results = kinds(events, "tool_result")
    assert seen == [1, 1] and len(results) == 2 and not any("started_ms" in r for r in results)


def step_through(loop, overrides):
    """Drives a loop like the page's step mode: after every tool_call, send the next override."""
    events, event = [], next(loop)
    try:
        while True:
            events.append(event)
            event = loop.send(overrides.pop(0) if event["type"] == "tool_call" and overrides else None)
    except StopIteration:
        return events


def test_step_mode_pauses_before_each_parallel_call_and_uses_the_edits():
    loop = run_function_calling(make_client("offline"), QUESTION, None, examples_weather.registry)
    events = step_through(loop, [{"arguments": {"city": "广州"}}, {"result": "上海：手写的结果"}])
    first_round = [e["type"] for e in events if e["turn"] == 1 and e["type"] in ("tool_call", "tool_result")]
    assert first_round == ["tool_call", "tool_call", "tool_result", "tool_result"]
    results = kinds(events, "tool_result")
    assert results[0]["arguments"]["city"] == "广州" and results[0]["edited"] == ['city："北京" → "广州"']
    assert results[0]["content"].startswith('（执行前，用户修改了你写的参数：city："北京" → "广州"。')   # the model is told
    assert "\n广州今天" in results[0]["content"]
    assert results[1]["content"] == "上海：手写的结果" and results[1]["ok"]
    assert "广州今天" in events[-1]["content"] and "上海：手写的结果" in events[-1]["content"]


# ---- the envelope

def test_envelope_shapes():
    ok = json.loads(as_envelope(success('{"city": "北京", "temp": 25}')))
    assert ok == {"status": "ok", "data": {"city": "北京", "temp": 25}, "error_code": None, "message": None}
    assert json.loads(as_envelope(success("北京今天晴")))["data"] == "北京今天晴"
    bad = json.loads(as_envelope(failure("timeout", "get_weather 超过 2 秒没有返回", "请稍后重试")))
    assert bad == {"status": "error", "data": None, "error_code": "timeout",
                   "message": "❌ [超时] get_weather 超过 2 秒没有返回。请稍后重试。"}


@pytest.mark.parametrize("text", ["x" * 5000, "\"\n" * 3000, json.dumps(list(range(2000)))])
def test_a_long_result_still_fits_and_says_so(text):
    envelope = as_envelope(success(text))
    assert len(envelope) <= RESULT_LIMIT
    found = json.loads(envelope)
    assert found["status"] == "ok" and found["message"].startswith(f"结果过长已截断：共 {len(text)} 个字符")
    assert isinstance(found["data"], str) and text.startswith(found["data"]) and found["data"]


LOOPS = {"function_calling": run_function_calling, "react": run_react, "json": run_json_from_text}


@pytest.mark.parametrize("loop", list(LOOPS))
def test_envelope_reaches_the_model_in_every_loop_and_the_model_reads_it(loop):
    events = list(LOOPS[loop](make_client("offline", mistake="wrong_type"), "上海未来3天的天气预报", None,
                              examples_weather.registry, envelope=True))
    results = kinds(events, "tool_result")
    first, last = json.loads(results[0]["content"]), json.loads(results[-1]["content"])
    assert not results[0]["ok"] and first["status"] == "error" and first["error_code"] == "invalid_arguments"
    assert first["data"] is None and first["message"].startswith("❌ [参数错误]")
    assert results[-1]["ok"] and last["status"] == "ok" and isinstance(last["data"], list)
    sent = results[0]["message"]["content"]
    assert results[0]["content"] in sent            # what the model reads is the envelope
    assert events[-1]["type"] == "final" and "第几天" in events[-1]["content"] and '"status"' not in events[-1]["content"]


def test_without_envelope_the_text_is_plain():
    events = list(run_function_calling(make_client("offline"), "北京今天天气怎么样", None, examples_weather.registry))
    assert kinds(events, "tool_result")[0]["content"].startswith("北京今天")


def test_quick_calls_still_start_on_threads_of_their_own_on_a_busy_machine():
    """Items that take no time at all, with three threads keeping the interpreter busy: a plain thread
    pool then runs both on its first thread (the second has not started when the first is free again),
    and the timeline would show two calls one after the other. Each of the first `limit` gets its own."""
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            sum(range(1000))

    hogs = [threading.Thread(target=busy) for _ in range(3)]
    for hog in hogs:
        hog.start()
    try:
        runs = [side_by_side(lambda item, let_go: threading.get_ident(), ["北京", "上海", "广州"], 2) for _ in range(30)]
    finally:
        stop.set()
        for hog in hogs:
            hog.join()
    assert all(first != second for first, second, _ in runs)
    assert all(len(run) == 3 for run in runs)
