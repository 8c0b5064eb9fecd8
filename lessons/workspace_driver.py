"""What the workspace tabs' run area drives, without any component: starting a run on the
session's workspace, the permission gate between the model's call and the tool (a rule's
"ask" pauses the run until the student answers), export and import with the workspace's
files. Every action yields the tab's state and a one-line note; workspace_panel.py draws them.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Iterator, Mapping

import workspace

from lessons import backend, run_driver, session_io, workspace_backend
from lessons.run_driver import RunState
from lessons.settings_panel import Settings

APPROVE, EDIT, DENY = "approve", "edit", "deny"
DEFAULT_DENIAL = "用户没有说明理由"


@dataclasses.dataclass
class WorkspaceRunState(RunState):
    """A RunState whose run works on the workspace; `asking` is the call a rule's "ask" holds
    back: {"call": tool_call event, "rule", "reason", "preview"}. `rules` None: no gate."""
    run: workspace_backend.WorkspaceRun = dataclasses.field(default_factory=workspace_backend.WorkspaceRun)
    rules: dict | None = None
    asking: dict | None = None

    @property
    def waiting(self) -> dict | None:
        return self.asking if self.run.running else None


def drive(state: WorkspaceRunState, override: Any = backend.NEXT) -> Iterator[tuple[WorkspaceRunState, str]]:
    """Advances the run through the gate until a call needs the student's answer, or the end
    (redrawn as run_driver.Pace decides)."""
    pace = run_driver.Pace(state)
    while (event := (yield from pace.step(workspace_backend.advance, state.run, override))) is not None:
        override = backend.NEXT
        if event.get("type") == "tool_call" and state.rules is not None:
            decision = workspace_backend.decide(state.rules, event)
            if decision.verdict == "deny":
                override = workspace_backend.denial(decision)
            elif decision.verdict == "ask":
                state.asking = {"call": event, "rule": decision.rule, "reason": decision.reason,
                                "preview": workspace_backend.preview(state.run.session_id, event)}
                yield state, f"⏸ 等待你的确认：模型要调用 {event.get('name')}（见确认框）。"
                return
    state.asking = None
    yield state, ""


def begin(question: str, settings: Settings, approach: str, rules: Mapping | None, old: RunState | None, *,
          session_key: str, secrets: Mapping[str, str], session_id: str | None,
          request: Any = None) -> Iterator[tuple[WorkspaceRunState, str]]:
    if old is not None:
        old.close()
    state = WorkspaceRunState(question=(question or "").strip(), settings=settings.public(),
                              options={"approach": approach}, rules=None if rules is None else dict(rules))
    if not state.question:
        yield state, "请先输入一个问题，或从预设问题里选一个。"
        return
    if not session_id:
        yield state, "❌ 无法开始：这个页面没有会话标识，请刷新页面。"
        return
    state.run = workspace_backend.start_run(session_id, state.question, settings, approach,
                                            session_key=session_key, secrets=secrets, request=request)
    if state.run.error is not None:
        yield state, f"❌ 无法开始：{state.run.error['message']}"
        return
    yield from drive(state)


def answer(state: WorkspaceRunState | None, choice: str, args_text: str = "",
           reason: str = "") -> Iterator[tuple[WorkspaceRunState, str]]:
    """The student's answer to an "ask": approve as shown, approve with edited arguments, or deny."""
    if state is None or state.waiting is None:
        yield state or WorkspaceRunState(), "没有等待批准的调用。"
        return
    override: Any = backend.NEXT
    if choice == EDIT:
        try:
            edited = json.loads(args_text or "")
        except json.JSONDecodeError as exc:
            yield state, f"参数不是合法 JSON（第 {exc.lineno} 行第 {exc.colno} 列：{exc.msg}），改好再批准。"
            return
        if not isinstance(edited, dict):
            yield state, "参数应是一个 JSON 对象，例如 {\"command\": \"ls\"}。"
            return
        override = {"arguments": edited}
    elif choice == DENY:
        override = {"deny": (reason or "").strip() or DEFAULT_DENIAL}
    state.asking = None
    yield from drive(state, override)


def export(lesson: str, state: RunState | None, session_key: str, session_id: str | None) -> tuple[str | None, str]:
    """(file path or None, note): the run plus the workspace's files as they are now."""
    state = state or WorkspaceRunState()
    events = state.replay if state.replay is not None else state.run.events
    if not events:
        return None, "还没有可以导出的运行。"
    try:
        files = workspace.export_files(session_id) if session_id else None
    except workspace.WorkspaceError:
        files = None
    document = session_io.session_document(lesson, "", state.run.tools, state.question, events,
                                           state.settings, state.options, workspace=files)
    return session_io.export_file(document, secret=session_key), "已生成会话文件（含工作区文件），点上面的文件名下载。"


def load(lesson: str, path: str, session_id: str | None) -> tuple[WorkspaceRunState, str]:
    """(replay state, note); the workspace takes the file's files. Raises session_io.ImportProblem."""
    document = session_io.load_document(path)
    files = document.get("workspace")
    restored = ""
    if files is not None and session_id:
        try:
            workspace.import_files(session_id, files)
        except workspace.WorkspaceError as exc:
            raise session_io.ImportProblem(f"工作区文件没有导入：{exc}") from None
        restored = "工作区已换成导出时的文件；"
    state = replay(document)
    other = "" if document.get("lesson") == lesson else f"（这是「{document.get('lesson')}」课的记录）"
    return state, f"已导入录制的运行{other}：{restored}点「下一步」逐步回放，不调用模型。"


def replay(document: Any) -> WorkspaceRunState:
    """The replay state of a session document (checked here), leaving the workspace's files alone:
    a run kept in the browser comes back this way, its files having been put back once for both tabs."""
    document = session_io.load_document(document)
    return WorkspaceRunState(run=workspace_backend.WorkspaceRun(tools=document.get("tools", [])),
                             replay=document["events"], pos=0, question=document.get("question", ""),
                             settings=document.get("settings", {}), options=document.get("options", {}))
