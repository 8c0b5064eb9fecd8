"""The new example sets as the page runs them, in the real sandbox: an async tool works there, the registry's
timeout answers before the sandbox's hard wall limit, a refusal keeps its error code, a long result is clipped."""
from __future__ import annotations
from runs import starters

import pytest

import sandbox
from runs import backend
from lessons.editor_panel import EXAMPLE_SETS, example_text
from access.clients import Settings

CASES = [("异步工具（async def）", "北京和上海的空气质量怎么样？", [True, True], [None, None]),
         ("会超时的工具（timeout）", "北京现在的路况怎么样？", [False], ["timeout"]),
         ("转账与删除用户（Schema ≠ 授权）", "删除用户 1", [False], ["forbidden"]),
         ("超长结果（截断）", "列出上海的全部门店", [True], [None])]


@pytest.mark.parametrize("label, question, oks, codes", CASES, ids=[c[0] for c in CASES])
def test_example_set_in_the_sandbox(label, question, oks, codes):
    source = example_text(EXAMPLE_SETS[label])
    assert backend.extract(source)["ok"]
    run = backend.start_run(starters.function_calling, source, question, Settings(), {"parallel_tool_calls": True},
                            session_id=f"example-set-{label}")
    assert run.error is None
    backend.run_to_end(run)
    results = [e for e in run.events if e["type"] == "tool_result"]
    assert [r["ok"] for r in results] == oks and [r["error_code"] for r in results] == codes, results
    assert run.events[-1]["type"] == "final"
    if label.startswith("会超时"):
        assert "超过 0.8 秒没有返回" in results[0]["content"]            # the registry's limit, not the sandbox's
        assert sandbox.current_settings().limits.wall_seconds > 0.8
    if label.startswith("超长"):
        assert results[0]["clipped_from"] and "结果过长已截断" in results[0]["content"]
