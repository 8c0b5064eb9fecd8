"""The timeline's registry: every kind of event the loops can emit is drawn by a renderer registered for
it (or says where it shows instead), a lesson's own kinds are drawn beside that lesson, and a timeline
drawn without any page (a replay, a test) still has every renderer."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import typing

import events as loop_events
from catalogue import LESSONS
from lessons import timeline

ROOT = pathlib.Path(__file__).resolve().parents[2]


def event_kinds() -> set[str]:
    """Every `type` code/events.py can give an event: the Literal of each of its event TypedDicts."""
    shapes = [shape for shape in vars(loop_events).values() if typing.is_typeddict(shape)]
    hints = (typing.get_type_hints(shape) for shape in shapes)
    return {value for hint in hints if "type" in hint for value in typing.get_args(hint["type"])}


def test_every_kind_of_event_has_a_renderer_or_says_where_it_shows():
    timeline.lesson_renderers()
    kinds = event_kinds()
    assert {"request", "tool_call", "hook", "rpc", "permission", "plan"} <= kinds      # the union is read
    assert kinds - set(timeline.RENDERERS) == set(timeline.SHOWN_ELSEWHERE)
    assert set(timeline.RENDERERS) - kinds == {"child", "body"}   # the keys that are fields: a sub-agent's run, a body


def test_a_lessons_own_kinds_are_drawn_from_its_folder():
    """Each lessons/<id>/timeline.py belongs to a lesson of the catalogue and is loaded; the core draws
    only the kinds every loop has."""
    folders = sorted(path.parent.name for path in (ROOT / "lessons").glob("*/timeline.py"))
    assert folders and set(folders) <= set(LESSONS)
    assert [module.__name__ for module in timeline.lesson_renderers()] == [
        f"lessons.{lesson}.timeline" for lesson in LESSONS if lesson in folders]
    drawn_by = {kind: renderer.__module__ for kind, renderer in timeline.RENDERERS.items()}
    assert {kind for kind, module in drawn_by.items() if module == "lessons.timeline"} == {
        "request", "response", "tool_call", "tool_result", "final", "error"}
    assert drawn_by["hook"] == "lessons.hooks.timeline" and drawn_by["rpc"] == "lessons.mcp.timeline"


def test_a_timeline_drawn_without_any_page_draws_a_lessons_kinds():
    """A fresh process imports the timeline alone and draws a hook run and a JSON-RPC message inside their
    call, as the hooks and MCP pages show them; no page was built (every page needs gradio, never imported)."""
    script = """
import sys
from import_paths import use_project_paths
use_project_paths()
import events
from lessons import timeline
call = events.tool_call(1, "c1", "read_config", '{"service": "payments"}', {"service": "payments"}, [])
hook = events.hook(1, "c1", "PreToolUse", "block_secrets", {"tool_name": "read_config"}, None, None, "closed", 0.4)
rpc = events.rpc(1, "send", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                             "params": {"name": "read_config", "arguments": {"service": "payments"}}})
request = events.request(1, [{"role": "user", "content": "读一下 payments 服务的配置"}], [], {})
page = timeline.render_protocol([request, call, hook, rpc], "mcp")
print("gradio" in sys.modules, page.count('class="tw-hook"'), page.count('class="tw-rpc"'), "block_secrets" in page)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": f"{ROOT / 'code'}:{ROOT}", "GRADIO_ANALYTICS_ENABLED": "False",
                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "1", "1", "True"]
