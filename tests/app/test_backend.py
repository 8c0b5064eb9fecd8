"""The lessons backend against the real sandbox: one shared cache of extractions (a hit
runs nothing and charges nobody), failures in the one outcome shape, and a run that is
the same events whether the page steps it or the named API runs it to the end."""
from __future__ import annotations
from runs import starters

import pytest

import sandbox
import tool_outcome
from runs import backend
from lessons.editor_panel import EXAMPLE_SETS, example_text
from access.clients import Settings

WEATHER = example_text(EXAMPLE_SETS["天气"])


def fresh(tag: str) -> str:
    """A source no test has extracted before in this process."""
    return WEATHER + f"\n# {tag}\n"


def test_a_known_source_is_answered_without_running_anything():
    source = fresh("cache-hit")
    first = backend.extract(source, session_id="backend-a")
    assert first["ok"] and sandbox.session_usage("backend-a")["known"]
    again = backend.extract(source, session_id="backend-b")
    assert again == first
    assert not sandbox.session_usage("backend-b")["known"]     # nothing ran, nothing charged
    strict = backend.extract(source, strict=True, session_id="backend-c")
    assert strict["tools"] != first["tools"] and sandbox.session_usage("backend-c")["known"]
    again["tools"].clear()                                       # a caller's change stays its own
    assert backend.extract(source)["tools"] == first["tools"]


def test_the_cache_keeps_only_the_most_recent_sources(monkeypatch):
    monkeypatch.setattr(backend, "CACHE_SIZE", 2)
    sources = [fresh(f"lru-{i}") for i in range(3)]
    for source in sources:
        assert backend.extract(source)["ok"]
    backend.extract(sources[2], session_id="backend-lru-kept")
    assert not sandbox.session_usage("backend-lru-kept")["known"]
    backend.extract(sources[0], session_id="backend-lru-dropped")
    assert sandbox.session_usage("backend-lru-dropped")["known"]


def test_a_broken_source_is_not_remembered():
    broken = "from tool_registry import ToolRegistry\nregistry = ToolRegistry()\nx = (\n"
    report = backend.extract(broken, session_id="backend-broken-1")
    assert not report["ok"] and report["error"]["line"] == 3
    backend.extract(broken, session_id="backend-broken-2")
    assert sandbox.session_usage("backend-broken-2")["known"]


def test_a_run_extracts_once_after_the_panel_did():
    source = fresh("one-run")
    backend.extract(source, session_id="backend-panel")
    run = backend.start_run(starters.function_calling, source, "广州冷不冷？", Settings(), {},
                            session_id="backend-run")
    assert run.error is None and run.tools and not sandbox.session_usage("backend-run")["known"]
    backend.run_to_end(run)
    assert run.events[-1]["type"] == "final" and not run.running
    assert sandbox.session_usage("backend-run")["runs_last_minute"] >= 1      # the tool itself did run


def test_a_hand_written_result_is_marked_and_the_tool_does_not_run():
    run = backend.start_run(starters.function_calling, WEATHER, "广州冷不冷？", Settings(), {})
    while backend.advance(run)["type"] != "tool_call":
        pass
    result = backend.advance(run, {"result": "手写：晴"})
    assert result["type"] == "tool_result" and result["overridden"] and "手写：晴" in result["message"]["content"]
    backend.run_to_end(run)
    assert run.events[-1]["type"] == "final"


def test_failures_the_page_makes_have_the_outcome_shape(monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("no worker")

    monkeypatch.setattr(sandbox, "run_tool", broken)
    failed = backend.call_tool(WEATHER, "get_weather", {"city": "北京"})
    assert set(tool_outcome.FIELDS) <= set(failed) and not failed["ok"]
    assert failed["error_code"] == "sandbox" and failed["content"].startswith("❌ [沙箱错误]")
    unnamed = backend.call_tool(WEATHER, "", "{}")
    assert unnamed["error_code"] == "invalid_request" and "选一个工具" in unnamed["content"]


def test_a_client_that_cannot_be_made_is_said_plainly():
    run = backend.start_run(starters.function_calling, WEATHER, "广州冷不冷？", Settings(provider="openai"), {})
    assert run.error and "API Key" in run.error["message"] and not run.source_error and not run.running
    bad = backend.start_run(starters.function_calling, "x = (", "广州冷不冷？", Settings(), {})
    assert bad.source_error and bad.error["code"] == "syntax_error"


def test_a_served_lesson_starts_on_a_source_that_does_not_load_and_its_server_says_why():
    """The MCP lesson's server loads the source itself: its failure is the run's to show (lesson step 8)."""
    broken = "from tool_registry import ToolRegistry\nregistry = ToolRegistry()\nraise RuntimeError('服务器不想启动')\n"
    run = backend.start_run(starters.mcp, broken, "你好", Settings(), {}, served=True)
    assert run.error is None and run.running and run.tools == []
    events = backend.run_to_end(run).events
    assert events[-1]["code"] == "mcp_connect" and "第 3 行" in events[-1]["message"]
    assert not any(event["type"] == "request" for event in events)       # the model was never asked
    refused = backend.start_run(starters.mcp, broken, "你好", Settings(), {})
    assert refused.source_error and not refused.running


@pytest.fixture(autouse=True, scope="module")
def _sessions_forgotten():
    yield
    for sid in ("backend-a", "backend-b", "backend-c", "backend-lru-kept", "backend-lru-dropped",
                "backend-broken-1", "backend-broken-2", "backend-panel", "backend-run"):
        backend.forget_session(sid)
