"""Parallel calls through the lessons backend and the real sandbox: at most as many at once as the sandbox
allows one tab, and a hand-written result is marked on its own call even when results come after all calls."""
from __future__ import annotations
from runs import starters

import sandbox
from runs import backend
from lessons.editor_panel import EXAMPLE_SETS, example_text
from access.clients import Settings

WEATHER = example_text(EXAMPLE_SETS["天气"])
OPTIONS = {"parallel_tool_calls": True}


def test_the_executor_says_how_many_calls_the_sandbox_takes_at_once():
    assert backend.executor(WEATHER).max_parallel == sandbox.current_settings().tool.per_session_concurrent


def test_three_parallel_calls_all_succeed_within_the_tab_limit():
    run = backend.start_run(starters.function_calling, WEATHER, "北京、上海和广州今天天气怎么样？", Settings(), OPTIONS,
                            session_id="backend-parallel-three")
    backend.run_to_end(run)
    results = [e for e in run.events if e["type"] == "tool_result"]
    assert len(results) == 3 and all(r["ok"] for r in results), [r["content"] for r in results]
    assert results[0]["concurrent"] == sandbox.current_settings().tool.per_session_concurrent
    assert run.events[-1]["type"] == "final"


def test_a_hand_written_second_call_is_the_one_marked():
    run = backend.start_run(starters.function_calling, WEATHER, "北京和上海今天天气怎么样？", Settings(), OPTIONS)
    while backend.advance(run)["type"] != "tool_call":
        pass
    second = backend.advance(run)                       # the first call goes on as it was
    assert second["type"] == "tool_call"
    first_result = backend.advance(run, {"result": "手写：上海晴"})
    second_result = backend.advance(run)
    assert first_result["type"] == second_result["type"] == "tool_result"
    assert "overridden" not in first_result and first_result["content"].startswith("北京今天")
    assert second_result["overridden"] and second_result["content"] == "手写：上海晴"
    backend.run_to_end(run)
    assert run.events[-1]["type"] == "final"
