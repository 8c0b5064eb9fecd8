"""A run of the four atomic tools on a session's workspace, behind a permission gate.

The loop is the lessons' own (Function Calling, or ReAct for comparison), the client
comes from access.clients.make_client and the run is a backend.Run advanced with
backend.advance: only the tools and the executor differ. The executor is
workspace.run_workspace_tool on the session's folder; what a step changed (its diff)
is attached to the tool_result event it belongs to, so the timeline can show it.

The gate: before a call runs, permissions.decide(rules, name, args) says allow, deny
or ask. `ruling()` turns that into what the driver sends back to the loop; an "ask"
is left to a human (the page pauses), or refused when nobody is there (the named API).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import permissions
import workspace

from i18n import tr
from runs import backend
from access.clients import Settings, make_client
from runs import starters

APPROACHES = [(tr("Function Calling（原生 tool_calls）", "Function Calling (native tool_calls)"), "function_calling"),
              (tr("正则 ReAct（对比）", "Regex ReAct (to compare)"), "react")]
UNATTENDED = "需要用户批准，但这是无人值守的 API 调用，没有人可以批准"
STEP_KEYS = ("diff", "changed", "layers")


def changed(value: Any) -> bool:
    """A step's diff / changed paths / layers worth attaching (a read changes nothing)."""
    return any(value.values()) if isinstance(value, dict) and "added" in value else bool(value)


@dataclasses.dataclass
class WorkspaceRun(backend.Run):
    """A backend.Run plus what the executor's last step changed (until its tool_result)."""
    session_id: str = ""
    last_step: dict | None = None


def start_run(session_id: str, question: str, settings: Settings, approach: str = "function_calling", *,
              session_key: str = "", secrets: Mapping[str, str] | None = None, request: Any = None,
              class_code: str = "", start: backend.Starter | None = None, options: Mapping | None = None,
              purpose: dict | None = None) -> WorkspaceRun:
    """Makes the client and starts the loop; nothing has run yet (advance() for each event).
    `start` is the lesson's loop over the workspace's tools (starters.workspace when None, with
    `approach`), given `options`; `purpose` (runs/purposes.py's event) is the run's first event."""
    run = WorkspaceRun(tools=workspace.tool_schemas(), session_id=session_id, events=[purpose] if purpose else [])

    def execute(name: str, args: Any) -> dict:
        step = workspace.run_workspace_tool(session_id, name, args)
        run.last_step = {key: step[key] for key in STEP_KEYS if changed(step.get(key))}
        return step

    execute.session_id = session_id       # a loop that reads the workspace's own files (its skills/) finds them
    try:
        client = make_client(settings, session_key, secrets or {}, request=request, class_code=class_code)
        if start is None:
            run.loop = starters.workspace(client, question, run.tools, execute, settings, {"approach": approach})
        else:
            run.loop = start(client, question, run.tools, execute, settings, dict(options or {}))
    except Exception as exc:  # a missing key, an unknown provider: said plainly, nothing started
        run.error = {"code": getattr(exc, "code", "client"), "message": str(exc) or exc.__class__.__name__,
                     "line": None}
    return run


def advance(run: WorkspaceRun, override: Any = backend.NEXT) -> dict | None:
    """backend.advance, with the step's diff put on its tool_result event."""
    event = backend.advance(run, override)
    if event is None:
        return None
    if event.get("type") == "tool_call":          # a denied or hand-written call runs nothing
        run.last_step = None
    elif event.get("type") == "tool_result":
        step, run.last_step = run.last_step, None
        if step:
            event.update(backend.jsonable(step))
    return event


def decide(rules: Mapping | None, event: dict) -> permissions.Decision:
    """The rule that applies to a tool_call event (its parsed arguments, or {} if they did not parse)."""
    args = event.get("arguments") if isinstance(event.get("arguments"), dict) else {}
    return permissions.decide(dict(rules or {}), str(event.get("name") or ""), args)


def denial(decision: permissions.Decision, reason: str = "") -> dict:
    """What the loop is sent for a call a rule refuses: the model is told a rule refused it, not a person."""
    return {"deny": reason or decision.reason, "rule": decision.rule}


def ruling(rules: Mapping | None, event: dict) -> tuple[Any, permissions.Decision | None]:
    """What to send back to the loop after `event` under `rules` (None: no gate): backend.NEXT
    (the call runs) or a denial, and the decision when a rule's "ask" leaves the call to a human."""
    if rules is None or event.get("type") != "tool_call":
        return backend.NEXT, None
    decision = decide(rules, event)
    if decision.verdict == "deny":
        return denial(decision), None
    return backend.NEXT, decision if decision.verdict == "ask" else None


def preview(session_id: str, event: dict) -> str:
    """Exactly what an approved call would do: the command, or the diff of a write / edit."""
    args = event.get("arguments") if isinstance(event.get("arguments"), dict) else {}
    try:
        return workspace.preview(session_id, str(event.get("name") or ""), args)
    except Exception as exc:  # a preview that cannot be made is said, the question still stands
        return f"（无法预览：{exc}）"


def run_unattended(session_id: str, question: str, settings: Settings, rules: Mapping | None,
                   approach: str = "function_calling", *, secrets: Mapping[str, str] | None = None,
                   request: Any = None, class_code: str = "", start: backend.Starter | None = None,
                   options: Mapping | None = None) -> WorkspaceRun:
    """A whole run with nobody to ask: "ask" is answered as a denial (fails closed).
    `rules` None: no gate, every call runs (the 原子工具 lesson). A lesson's own loop (`start`, given
    `options`: MiniAgent) gates its calls itself: its "ask" gets no answer, which it takes as a refusal."""
    run = start_run(session_id, question, settings, approach, secrets=secrets, request=request,
                    class_code=class_code, start=start, options=options)
    override: Any = backend.NEXT
    while (event := advance(run, override)) is not None:
        override, asking = ruling(rules, event)
        if asking is not None:
            override = denial(asking, f"{UNATTENDED}：{asking.reason}")
    return run
