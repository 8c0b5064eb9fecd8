"""What a tab's run area drives, without any component: starting a run (运行 / 单步),
stepping it past a paused tool call, exporting it, importing a recorded one and
replaying it step by step. Every action yields (or returns) the tab's RunState and a
one-line note; run_views.py draws them.

A lesson with a workspace (catalogue.Lesson.workspace) runs the four tools on the session's
workspace instead of a tool source, behind the permission gate when it has rules: a
rule's "ask" pauses the run until the student answers (`answer`), and its session files
carry the workspace's files.

A paused loop stays inside the state's backend.Run; gr.State keeps it on the server.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import re
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import workspace

from i18n import tr
from runs import backend, mcp_backend, purposes, session_io, starters, workspace_backend
from access.clients import Settings
from runs.backend import error_text

# What a session file may name as its lesson to be quoted on the page (the file is anyone's).
LESSON_ID = re.compile(r"[a-z0-9_]{1,40}")

if TYPE_CHECKING:   # a lesson is handed in; the catalogue is above this module
    from catalogue import Lesson

REFRESH_S = 0.15   # while a run goes on, its views are redrawn at most this often
APPROVE, EDIT, DENY = "approve", "edit", "deny"     # the answers to a rule's "ask"
DEFAULT_DENIAL = "用户没有说明理由"


@dataclasses.dataclass
class RunState:
    """One tab's run, live or replayed, plus what an export writes next to its events."""
    run: backend.Run = dataclasses.field(default_factory=backend.Run)
    step: bool = False                 # pause before every tool call
    pending: dict | None = None        # the tool_call a paused run waits on
    source: str = ""
    question: str = ""
    settings: dict = dataclasses.field(default_factory=dict)    # Settings.public(): never a key
    options: dict = dataclasses.field(default_factory=dict)
    replay: list | None = None         # recorded events of an imported session
    pos: int = 0                       # events of `replay` shown so far
    rules: dict | None = None          # a workspace run's permission rules (None: no gate)
    # The call a rule's "ask" holds back: {"call": tool_call event, "rule", "reason", "preview"}.
    asking: dict | None = None

    @property
    def shown_events(self) -> list[dict]:
        return self.run.events if self.replay is None else self.replay[: self.pos]

    @property
    def paused_on(self) -> dict | None:
        return self.pending if self.run.running else None

    @property
    def waiting(self) -> dict | None:
        return self.asking if self.run.running else None

    def close(self) -> None:
        self.run.close()


@dataclasses.dataclass
class RunInputs:
    """What 运行 / 单步 read from the page."""
    source: str
    question: str
    settings: Settings
    session_key: str = ""
    strict: bool = False
    options: dict = dataclasses.field(default_factory=dict)
    rules: dict | None = None          # a workspace lesson's permission rules (None: no gate)
    rules_problem: str = ""            # why the rules on the page cannot be used, if they cannot


class Pace:
    """When a running loop's views are redrawn. Each step of the loop (the next event) runs in a
    helper thread; the views are redrawn when something not yet shown has waited REFRESH_S, so
    a slow model call or tool shows what came before it and a stream shows a few times a
    second. Quick steps (the offline model, most tools) are not redrawn one by one: the
    browser's work grows with every update of a dozen views, and a run of quick steps arrives
    as one update."""

    # Each step waited on holds one of Gradio's worker threads (launch's max_threads, 40): at most
    # that many steps run at once, so the helpers need be no more.
    STEPS = concurrent.futures.ThreadPoolExecutor(max_workers=40, thread_name_prefix="run-step")

    def __init__(self, state: RunState):
        self.state = state
        self.unshown_since = time.monotonic()   # the click: from then on the views are out of date

    def step(self, call: Callable, *args) -> Iterator[tuple[RunState, str]]:
        """Returns call(*args); meanwhile yields (state, running note) once what is not shown yet has waited REFRESH_S."""
        future = self.STEPS.submit(call, *args)
        try:
            return future.result(timeout=max(0.0, self.unshown_since + REFRESH_S - time.monotonic()))
        except concurrent.futures.TimeoutError:
            yield self.state, running_note(self.state)
        result = future.result()
        self.unshown_since = time.monotonic()
        return result


def running_note(state: RunState) -> str:
    last = state.run.events[-1] if state.run.events else {}
    return (tr("⏳ 正在接收流式输出…", "⏳ Receiving the streamed output…") if last.get("type") == "delta"
            else tr("⏳ 运行中…", "⏳ Running…"))


def advance(run: backend.Run, override: Any = backend.NEXT) -> dict | None:
    """The run's next event (a workspace run's tool_result also carries what its step changed)."""
    if isinstance(run, workspace_backend.WorkspaceRun):
        return workspace_backend.advance(run, override)
    return backend.advance(run, override)


def preview(state: RunState, event: dict) -> str:
    """What approving the call would do: a workspace's command or diff; over MCP, the tools/call to be sent."""
    if isinstance(state.run, workspace_backend.WorkspaceRun):
        return workspace_backend.preview(state.run.session_id, event)
    return mcp_backend.call_preview(event)


def drive(state: RunState, override: Any = backend.NEXT) -> Iterator[tuple[RunState, str]]:
    """Advances the run until it pauses (step mode before a tool runs, or a rule's "ask") or ends."""
    pace = Pace(state)
    while (event := (yield from pace.step(advance, state.run, override))) is not None:
        if event.get("type") == "hook" and event.get("asking"):     # a hook (code/hooks.py) asks a person
            state.asking = hook_asking(state, event)
            yield state, tr("⏸ 等待你的确认：钩子 {hook} 要先问你，模型要调用 {name}（见确认框）。",
                            "⏸ Waiting for you: the hook {hook} asks you first; the model wants to call {name} "
                            "(see the box).").format(hook=event.get("name"), name=state.asking["call"].get("name"))
            return
        if event.get("type") == "permission" and event.get("asking"):   # a loop's own gate (code/mini_agent.py) asks
            state.asking = gate_asking(state, event)
            yield state, tr("⏸ 等待你的确认：模型要调用 {name}（见确认框）。",
                            "⏸ Waiting for you: the model wants to call {name} (see the box).").format(
                                name=event.get("name"))
            return
        override, asking = workspace_backend.ruling(state.rules, event)
        if asking is not None:
            state.asking = {"call": event, "rule": asking.rule, "reason": asking.reason,
                            "preview": preview(state, event)}
            yield state, tr("⏸ 等待你的确认：模型要调用 {name}（见确认框）。",
                               "⏸ Waiting for you: the model wants to call {name} (see the box).").format(
                                   name=event.get("name"))
            return
        if event.get("type") == "tool_call" and state.step and override is backend.NEXT:
            state.pending = event
            yield state, ""
            return
        state.pending = None
    state.pending = state.asking = None
    yield state, ""


def hook_asking(state: RunState, event: dict) -> dict:
    """What the ask box shows for a hook's "ask": the call it holds back (as the hook saw it), whose
    hook asks and why. Only approve or deny answer it (hooks.hooked_call)."""
    call = next((e for e in reversed(state.run.events) if e.get("type") == "tool_call"
                 and (e.get("turn"), e.get("id")) == (event.get("turn"), event.get("id"))), {})
    arguments = (event.get("payload") or {}).get("tool_input")
    return {"call": {**call, "arguments": arguments}, "rule": "", "hook": event.get("name"),
            "reason": str(event.get("asking") or ""),
            "preview": json.dumps({"tool": call.get("name"), "arguments": arguments}, ensure_ascii=False, indent=2)}


def workspace_purpose(lesson: Lesson, question: str, options: Mapping) -> dict | None:
    """The purpose event of a workspace run: only a lesson with its own loop (MiniAgent) records one; the
    two workspace lessons judge their runs on the events alone, as they always have."""
    return purposes.event(purposes.purpose_for(lesson.id, question, options)) if lesson.start else None


def gate_asking(state: RunState, event: dict) -> dict:
    """What the ask box shows for a permission event that asks (the loop's own gate, not the driver's
    rules): the call it holds back, exactly what approving it would do, the rule and its reason.
    Its answers go back into the loop (answer(): {"allow": True}, {"arguments": …}, {"deny": …})."""
    call = next((e for e in reversed(state.run.events) if e.get("type") == "tool_call"
                 and (e.get("turn"), e.get("id"), e.get("child")) == (event.get("turn"), event.get("id"),
                                                                      event.get("child"))),
                {"turn": event.get("turn"), "id": event.get("id"), "name": event.get("name")})   # (its call comes first)
    call = {**call, "arguments": event.get("arguments")}
    return {"call": call, "rule": event.get("rule") or "", "reason": str(event.get("reason") or ""),
            "preview": preview(state, call), "gate": True}


def begin(lesson: Lesson, inputs: RunInputs, old: RunState | None, *, secrets: Mapping[str, str],
          session_id: str | None, step: bool, request: Any = None) -> Iterator[tuple[RunState, str]]:
    if inputs.rules_problem:
        yield old or RunState(), tr("❌ 规则有问题，先改好再运行：", "❌ The rules have a problem; fix them, then run: ") + str(
            inputs.rules_problem)
        return
    if old is not None:
        old.close()
    state = RunState(step=step, source=inputs.source or "", question=(inputs.question or "").strip(),
                     settings=inputs.settings.public(), options=dict(inputs.options),
                     rules=None if inputs.rules is None else dict(inputs.rules))
    if not state.question:
        yield state, tr("请先输入一个问题，或从预设问题里选一个。", "Type a question first, or pick a preset one.")
        return
    if lesson.workspace:
        if not session_id:
            yield state, tr("❌ 无法开始：这个页面没有会话标识，请刷新页面。", "❌ Cannot start: this page has no session id; reload it.")
            return
        state.run = workspace_backend.start_run(session_id, state.question, inputs.settings,
                                                inputs.options.get("approach") or "function_calling",
                                                session_key=inputs.session_key, secrets=secrets, request=request,
                                                start=starters.of(lesson) if lesson.start else None,
                                                options=inputs.options,
                                                purpose=workspace_purpose(lesson, state.question, inputs.options))
    else:
        mistake = inputs.options.get(lesson.mistake_option) if lesson.mistake_option else None
        state.run = backend.start_run(starters.of(lesson), state.source, state.question, inputs.settings, inputs.options,
                                      session_key=inputs.session_key, secrets=secrets, mistake=mistake,
                                      strict=inputs.strict, session_id=session_id, request=request,
                                      served=lesson.served, tools=lesson.tools,
                                      purpose=purposes.event(purposes.purpose_for(lesson.id, state.question,
                                                                                  inputs.options)))
    if state.run.error is not None:
        if state.run.source_error:
            yield state, error_text(state.run.error) + tr("运行没有开始：先修好工具源码。",
                                                          " The run did not start: fix the tool source first.")
        else:
            yield state, tr("❌ 无法开始：", "❌ Cannot start: ") + str(state.run.error["message"])
        return
    yield from drive(state)


def resume(state: RunState | None, args_text: str, result_text: str,
           keep_stepping: bool) -> Iterator[tuple[RunState, str]]:
    """Continues a paused run: with the arguments edited, a hand-written result, or as it was."""
    if state is None or not state.run.running:
        yield state or RunState(), tr("没有暂停中的运行：先点「单步」。", "No run is paused: click «Step» first.")
        return
    pending = state.pending or {}
    override = backend.NEXT
    if (result_text or "").strip():
        override = {"result": result_text}
    else:
        try:
            edited = json.loads(args_text) if (args_text or "").strip() else None
        except json.JSONDecodeError as exc:
            yield state, tr("参数不是合法 JSON（第 {line} 行第 {col} 列：{msg}），改好再继续。",
                            "The arguments are not valid JSON (line {line}, column {col}: {msg}); fix them, then "
                            "continue.").format(line=exc.lineno, col=exc.colno, msg=exc.msg)
            return
        if edited is not None and edited != pending.get("arguments"):
            if not isinstance(edited, dict):
                yield state, tr("参数应是一个 JSON 对象，例如 {\"city\": \"北京\"}。",
                                "The arguments must be a JSON object, such as {\"city\": \"北京\"}.")
                return
            override = {"arguments": edited}
    state.step = keep_stepping
    state.pending = None
    yield from drive(state, override)


def answer(state: RunState | None, choice: str, args_text: str = "",
           reason: str = "") -> Iterator[tuple[RunState, str]]:
    """The student's answer to a rule's "ask": approve as shown, approve with edited arguments, or deny."""
    if state is None or state.waiting is None:
        yield state or RunState(), tr("没有等待批准的调用。", "No call is waiting for approval.")
        return
    override: Any = backend.NEXT
    if state.asking.get("hook"):             # a hook's question: may it run, yes or no
        if choice == EDIT:
            yield state, tr("钩子问的是这次调用能不能执行：只能批准或拒绝。要改参数，让钩子返回 updatedInput。",
                            "A hook asks whether the call may run: approve or deny. To change the arguments, have "
                            "the hook return updatedInput.")
            return
        override = {"allow": True} if choice == APPROVE else {"deny": (reason or "").strip() or DEFAULT_DENIAL}
    elif choice == APPROVE and state.asking.get("gate"):     # the loop's own gate waits for a yes
        override = {"allow": True}
    elif choice == EDIT:
        try:
            edited = json.loads(args_text or "")
        except json.JSONDecodeError as exc:
            yield state, tr("参数不是合法 JSON（第 {line} 行第 {col} 列：{msg}），改好再批准。",
                            "The arguments are not valid JSON (line {line}, column {col}: {msg}); fix them, then "
                            "approve.").format(line=exc.lineno, col=exc.colno, msg=exc.msg)
            return
        if not isinstance(edited, dict):
            yield state, tr("参数应是一个 JSON 对象，例如 {\"command\": \"ls\"}。",
                            "The arguments must be a JSON object, such as {\"command\": \"ls\"}.")
            return
        override = {"arguments": edited}
    elif choice == DENY:
        override = {"deny": (reason or "").strip() or DEFAULT_DENIAL}
    state.asking = None
    yield from drive(state, override)


def export(lesson: Lesson, state: RunState | None, session_key: str,
           session_id: str | None = None) -> tuple[str | None, str]:
    """(file path or None, note). The session's key is blanked from the file; a workspace
    lesson's file also holds the workspace's files as they are now."""
    state = state or RunState()
    events = state.replay if state.replay is not None else state.run.events
    if not events:
        return None, tr("还没有可以导出的运行。", "There is no run to export yet.")
    files = None
    if lesson.workspace:
        try:
            files = workspace.export_files(session_id) if session_id else None
        except workspace.WorkspaceError:
            files = None
    document = session_io.session_document(lesson.id, state.source, state.run.tools, state.question, events,
                                           state.settings, state.options, workspace=files)
    # The file appears in the «下载» box beside the export button (run_views.py), not in the status line.
    note = (tr("📦 已生成会话文件（含工作区文件）：点「下载」框里的文件名保存。",
               "📦 Session file written (with the workspace's files): click the file name in the «Download» box to "
               "save it.")
            if lesson.workspace else
            tr("📦 已生成会话文件：点「下载」框里的文件名保存。",
               "📦 Session file written: click the file name in the «Download» box to save it."))
    return session_io.export_file(document, secret=session_key), note


def load(lesson: Lesson, path: str, session_id: str | None = None) -> tuple[RunState, str]:
    """(replay state, note) of an imported session file; a workspace lesson's workspace takes
    the file's files. Raises session_io.ImportProblem."""
    document = session_io.load_document(path)
    files = document.get("workspace") if lesson.workspace else None
    restored = ""
    if files is not None and session_id:
        try:
            workspace.import_files(session_id, files)
        except workspace.WorkspaceError as exc:
            raise session_io.ImportProblem(tr("工作区文件没有导入：", "the workspace's files were not imported: ")
                                           + str(exc)) from None
        restored = tr("工作区已换成导出时的文件；", "the workspace holds the exported files again; ")
    state = replay(lesson, document)
    recorded = document.get("lesson")
    named = isinstance(recorded, str) and LESSON_ID.fullmatch(recorded) and recorded != lesson.id
    other = tr("（这是「{lesson}」课的记录）", " (a record of the lesson «{lesson}»)").format(lesson=recorded) if named else ""
    return state, tr("已导入录制的运行{other}：{restored}点「下一步」逐步回放，不调用模型。",
                     "Recorded run imported{other}: {restored}click «Next» to replay it step by step, without the "
                     "model.").format(other=other, restored=restored)


def replay(lesson: Lesson, document: Any) -> RunState:
    """The replay state of a session document (checked here), leaving the workspace's files alone:
    a run kept in the browser comes back this way (a workspace's files are put back once for both tabs)."""
    document = session_io.load_document(document)
    tools = document.get("tools", [])
    run = workspace_backend.WorkspaceRun(tools=tools) if lesson.workspace else backend.Run(tools=tools)
    source = "" if lesson.workspace else document.get("source", "")    # a workspace lesson has no tool source
    return RunState(run=run, replay=document["events"], pos=0, source=source, question=document.get("question", ""),
                    settings=document.get("settings", {}), options=document.get("options", {}))


def walk(state: RunState | None, to_end: bool) -> tuple[RunState, str]:
    """One more step of a replay (or all of it)."""
    if state is None or state.replay is None:
        return state or RunState(), tr("先导入一个会话文件，再逐步回放。", "Import a session file first, then replay it.")
    events = state.replay
    state.pos = len(events) if to_end else session_io.next_position(events, state.pos)
    return state, session_io.step_label(events, state.pos)


# ------------------------------------------------------------------ 去掉 … 重试



def refused_parameter(state: RunState | None) -> str | None:
    """The request parameter the endpoint refused (LLMError.retry_without, carried by the
    error event) when the run shown ended that way; otherwise None."""
    if state is None or state.replay is not None or state.run.running or not state.run.events:
        return None
    last = state.run.events[-1]
    return last.get("retry_without") if last.get("type") == "error" else None


def retry(lesson: Lesson, inputs: RunInputs, old: RunState | None, *, secrets: Mapping[str, str],
          session_id: str | None, request: Any = None) -> Iterator[tuple[RunState, str]]:
    """The failed run's source and question again, without the refused parameter: strict is
    switched off; tool_choice / parallel_tool_calls go into options["without"], which the
    lesson's start leaves out of the request (llm_clients.without_parameter)."""
    parameter = refused_parameter(old)
    if parameter is None:
        yield old or RunState(), tr("没有可以去掉参数重试的失败运行。", "No failed run to retry without a parameter.")
        return
    without = [*old.options.get("without", []), parameter] if parameter != "strict" else old.options.get("without", [])
    again = dataclasses.replace(inputs, source=old.source, question=old.question,
                                strict=inputs.strict and parameter != "strict",
                                options={**old.options, "without": without})
    for state, note in begin(lesson, again, old, secrets=secrets, session_id=session_id, step=False, request=request):
        yield state, note or tr("🔁 已去掉 {p} 重新运行（只这一次；页面上的设置没有改）。",
                                "🔁 Ran again without {p} (this once; the settings on the page are unchanged). ").format(
                                    p=parameter) + summary_of(state)


def summary_of(state: RunState) -> str:
    answer = next((e for e in reversed(state.run.events) if e.get("type") in ("final", "error")), None)
    if answer is None:
        return ""
    return (tr("这次成功得到了回答。", "This time an answer came.") if answer["type"] == "final"
            else tr("这次也失败了，原因见时间线。", "This failed too: the timeline says why."))
