"""When a running loop's views are redrawn (run_driver.Pace): quick steps arrive as one update,
a slow step shows what came before it, a step-mode pause is always shown."""
from __future__ import annotations

import time

from runs import backend, run_driver
from runs.run_driver import RunState


def loop_of(*events, slow_before: str | None = None, seconds: float = 0.0):
    """A stand-in loop: yields `events` (dicts with a "type"); waits `seconds` before the one named `slow_before`."""
    def loop():
        for event in events:
            if event["type"] == slow_before:
                time.sleep(seconds)
            yield event
    return loop()


EVENTS = ({"type": "request", "turn": 1}, {"type": "tool_call", "turn": 1, "id": "a", "name": "f"},
          {"type": "tool_result", "turn": 1, "id": "a"}, {"type": "final", "turn": 2, "content": "好"})


def drawn(state: RunState) -> list[tuple[list[str], str]]:
    """(the event types shown, the note) of every update drive() sends."""
    return [([e["type"] for e in shown.run.events], note) for shown, note in run_driver.drive(state)]


def test_quick_steps_arrive_as_one_update():
    state = RunState(run=backend.Run(loop=loop_of(*EVENTS)))
    assert drawn(state) == [(["request", "tool_call", "tool_result", "final"], "")]


def test_a_slow_step_shows_what_came_before_it():
    pause = run_driver.REFRESH_S * 4
    state = RunState(run=backend.Run(loop=loop_of(*EVENTS, slow_before="tool_result", seconds=pause)))
    updates = drawn(state)
    assert updates[0] == (["request", "tool_call"], "⏳ 运行中…")
    assert updates[-1] == (["request", "tool_call", "tool_result", "final"], "")
    # What follows the slow step comes quickly, but how it is grouped depends on the machine's load.
    assert all(len(before) < len(after) for (before, _), (after, _) in zip(updates, updates[1:]))


def test_a_stream_is_redrawn_while_it_comes():
    deltas = [{"type": "delta", "turn": 1, "content": "字"} for _ in range(6)]

    def slow_stream():
        for delta in deltas:
            time.sleep(run_driver.REFRESH_S)
            yield delta
        yield {"type": "final", "turn": 1, "content": "字" * 6}

    updates = drawn(RunState(run=backend.Run(loop=slow_stream())))
    assert any(note == "⏳ 正在接收流式输出…" for _, note in updates[:-1])
    assert updates[-1][1] == ""


def test_step_mode_pauses_on_the_call_even_when_quick():
    state = RunState(run=backend.Run(loop=loop_of(*EVENTS)), step=True)
    updates = drawn(state)
    assert updates == [(["request", "tool_call"], "")]
    assert state.paused_on["id"] == "a"
