"""The optional part of a run area (run_panel.RunPanel) for a lesson with a workspace: the
session's workspace (file tree, the selected file, what the run changed, 重置 / zip download /
zip upload), how the run area's views differ there, and for the permission lesson the box
where a rule's "ask" waits for 批准 / 修改参数后批准 / 拒绝. Both workspace lessons show the
same workspace: the browser session's."""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Callable

import gradio as gr

from i18n import now, pick, tr

import workspace

from lessons import timeline
from lessons.code_box import CodeBox
from lessons.rule_reasons import reason_in_english
from serving.page_events import PRIVATE, session_of
from runs.run_driver import RunState
from lessons.run_views import RunViews
from runs.workspace_backend import APPROACHES
from memory.workspace_memory import MEMORY_NOTE

NO_FILE = tr("（在上面的文件树里选一个文件）", "(Pick a file in the file tree above.)")
NOT_RUN = ('<div class="tw-protocol"><div class="tw-empty">'
           + tr("还没有运行。选一个预设问题，点「运行」。", "Nothing has run yet. Pick a preset question and click «Run».")
           + '</div></div>')


def changes_html(events: list[dict]) -> str:
    """Every change the run's steps made, one diff per step, in order."""
    steps = [e for e in events if e.get("type") == "tool_result" and e.get("diff")]
    if not steps:
        return ('<div class="tw-empty">' + tr("这次运行还没有改动工作区里的文件。",
                                              "This run has not changed any file in the workspace yet.") + '</div>')
    parts = []
    for step in steps:
        args = step.get("arguments") if isinstance(step.get("arguments"), dict) else {}
        what = args.get("path") or args.get("command") or ""
        turn = tr("第 {n} 轮", "round {n}").format(n=timeline.esc(step.get("turn")))
        parts.append(f'<div class="tw-label">{turn} · {timeline.esc(step.get("name"))} '
                     f'{timeline.esc(what)}</div>{timeline.diff_html(step["diff"])}')
    return '<div class="tw-ws-changes">' + "".join(parts) + "</div>"


def last_changed(events: list[dict]) -> str | None:
    """The file the run changed last (to show it), if any."""
    for event in reversed(events):
        changed = event.get("changed") if event.get("type") == "tool_result" else None
        if isinstance(changed, dict):
            paths = (changed.get("modified") or []) + (changed.get("added") or [])
            if paths:
                return paths[-1]
    return None


def write_zip(session_id: str) -> str:
    data = workspace.export_zip(session_id)
    folder = tempfile.mkdtemp(prefix="tool-workshop-")
    path = os.path.join(folder, f"workspace-{time.strftime('%Y%m%d-%H%M%S')}.zip")
    with open(path, "wb") as handle:
        handle.write(data)
    return path


class WorkspaceView:
    """The workspace of the browser session: tree, selected file, the run's changes."""

    def __init__(self):
        gr.Markdown(tr("**工作区**（每个浏览器会话一份，只有你看得到；原子工具、权限与确认、MiniAgent 三课共用同一个工作区，"
                       "技能课的 `skills/` 也在这里）",
                       "**Workspace** (one per browser session, seen only by you; Atomic tools, Permissions and "
                       "MiniAgent share it, and the skills lesson's `skills/` lives here too)"))
        self.shell = gr.Markdown(elem_classes=["tw-ws-shell"])
        with gr.Row():
            self.reset_btn = gr.Button(tr("↺ 重置工作区", "↺ Reset workspace"), size="sm", elem_classes=["tw-ws-reset"], min_width=100)
            self.zip_btn = gr.Button(tr("⬇ 打包下载 zip", "⬇ Download as zip"), size="sm", elem_classes=["tw-ws-zip-btn"], min_width=100)
            self.upload_btn = gr.UploadButton(tr("⬆ 上传 zip", "⬆ Upload zip"), size="sm", file_types=[".zip"], type="filepath",
                                              elem_classes=["tw-ws-upload"], min_width=100)
        self.zip_file = gr.File(label=tr("工作区 zip", "Workspace zip"), interactive=False, visible=False, elem_classes=["tw-ws-zip"])
        self.note = gr.Markdown(elem_classes=["tw-ws-note"])
        self.tree = gr.Radio([], label=tr("文件树", "File tree"), elem_classes=["tw-ws-tree"])
        self.file = CodeBox(NO_FILE, label=tr("文件内容", "File content"), language="python", lines=10, max_lines=30,
                            elem_classes=["tw-ws-file"])
        self.memory_note = gr.Markdown(MEMORY_NOTE, elem_classes=["tw-memory-note", "tw-ws-memory"])
        self.replaced: list = []     # the events after which the files were replaced (重置, zip upload)
        with gr.Accordion(tr("这次运行改了什么（diff）", "What this run changed (diff)"), open=True):
            self.changes = gr.HTML(changes_html([]), css_template=timeline.css(), elem_classes=["tw-ws-diff"])
        self.outputs = [self.tree, self.file, self.changes]

    def render(self, session_id: str | None, selected: str | None = None, events: list[dict] | None = None) -> dict:
        """{component: value} of the workspace as it is now."""
        shown = {self.changes: changes_html(events)} if events is not None else {}
        if not session_id:
            return {self.tree: gr.update(choices=[]), self.file: tr("（没有会话标识：请刷新页面）", "(No session id: reload the page.)"), **shown}
        try:
            entries = workspace.tree(session_id)
        except workspace.WorkspaceError as exc:
            return {self.tree: gr.update(choices=[]), self.file: f"（{exc}）", **shown}
        files = [e["path"] for e in entries if e.get("type") == "file"]
        choices = [(tree_label(e), e["path"]) for e in entries if e.get("type") == "file"]
        pick = last_changed(events or []) if events else None
        selected = pick if pick in files else selected if selected in files else None
        return {self.tree: gr.update(choices=choices, value=selected),
                self.file: file_text(session_id, selected), **shown}

    def wire(self, extra_outputs: list | None = None, on_replace: Callable[[], dict] | None = None):
        """Selecting a file, 重置, zip out and in. `on_replace` adds values when the files were replaced."""
        outputs = self.outputs + list(extra_outputs or [])

        def select(path, request: gr.Request):
            return file_text(session_of(request), path)

        self.tree.input(select, [self.tree], [self.file], api_visibility=PRIVATE, show_progress="hidden")

        def replaced(note, request):
            extra = on_replace() if on_replace else {}
            return {**self.render(session_of(request), events=[]), self.note: note, **extra}

        def reset(request: gr.Request):
            try:
                workspace.reset(session_of(request) or "")
            except workspace.WorkspaceError as exc:
                return {self.note: f"❌ {exc}"}
            return replaced(tr("已重置为初始练习项目（本浏览器保存的工作区文件随之换成初始项目；技能课的 skills/ 也回到"
                               "三个示例技能）。",
                               "Reset to the original practice project (the workspace files this browser keeps are "
                               "the original project now too; the skills lesson's skills/ holds the three example "
                               "skills again)."), request)

        self.replaced.append(self.reset_btn.click(reset, None, outputs + [self.note], api_visibility=PRIVATE))

        def download(request: gr.Request):
            try:
                path = write_zip(session_of(request) or "")
            except workspace.WorkspaceError as exc:
                return {self.note: f"❌ {exc}", self.zip_file: gr.update(visible=False)}
            return {self.zip_file: gr.update(value=path, visible=True), self.note: tr("已打包，点文件名下载。", "Packed: click the file name to download.")}

        self.zip_btn.click(download, None, [self.zip_file, self.note], api_visibility=PRIVATE)

        def upload(path, request: gr.Request):
            try:
                with open(path, "rb") as handle:
                    workspace.import_zip(session_of(request) or "", handle.read())
            except (workspace.WorkspaceError, OSError, TypeError) as exc:
                return {self.note: tr("❌ zip 没有导入：{exc}", "❌ The zip was not imported: {exc}").format(exc=exc)}
            return replaced(tr("已用上传的 zip 替换工作区。", "The workspace is now the uploaded zip."), request)

        self.replaced.append(self.upload_btn.upload(upload, [self.upload_btn], outputs + [self.note],
                                                    api_visibility=PRIVATE))


def shell_note() -> str:
    """Which of bash's layers hold on this server, said as the sandbox says it."""
    status = workspace.shell_status()
    mark = {"sandboxed": "🛡️", "unsandboxed": "⚠️"}.get(status.get("mode"), "⛔")
    said = pick(status.get("notice", ""), status.get("notice_en") or status.get("notice", ""))
    return f"{mark} " + tr("**bash 的隔离：** ", "**bash isolation:** ") + str(said)


def tree_label(entry: dict) -> str:
    return f"📄 {entry['path']}  ·  {entry.get('size', 0)} B"


def file_text(session_id: str | None, path: str | None) -> Any:
    if not session_id or not path:
        return gr.update(value=now(NO_FILE), language="markdown")
    try:
        text = workspace.read_file(session_id, path)
    except workspace.WorkspaceError as exc:
        return gr.update(value=f"（{exc}）", language="markdown")
    language = "python" if path.endswith(".py") else "markdown" if path.endswith(".md") else None
    return gr.update(value=text, language=language)


PREVIEW_ACTION = tr("批准后将执行（bash 命令，或 write / edit 对文件的改动）",
                    "Runs once approved (the bash command, or the change write / edit makes)")
PREVIEW_CALL = tr("批准后将执行的调用", "The call that runs once approved")
ARGS_EDITABLE = tr("参数（可修改后点「修改参数后批准」）", "Arguments (edit them, then click «Approve with edited arguments»)")


class AskBox:
    """Where a rule's "ask" waits: exactly what will run, and the student's three answers."""

    def __init__(self):
        with gr.Group(visible=False, elem_classes=["tw-ask"]) as self.box:
            self.title = gr.Markdown(elem_classes=["tw-ask-title"])
            self.preview = CodeBox(label=PREVIEW_ACTION, lines=4, max_lines=20, elem_classes=["tw-ask-preview"])
            self.args = gr.Code(label=ARGS_EDITABLE, language="json", interactive=True,
                                lines=3, elem_classes=["tw-ask-args"])
            self.reason = gr.Textbox(label=tr("拒绝的理由（会告诉模型）", "Reason for denying (told to the model)"), lines=1, elem_classes=["tw-ask-reason"])
            with gr.Row():
                self.approve = gr.Button(tr("✅ 批准", "✅ Approve"), variant="primary", elem_classes=["tw-approve"], min_width=90)
                self.approve_edited = gr.Button(tr("✏️ 修改参数后批准", "✏️ Approve with edited arguments"), elem_classes=["tw-approve-edited"], min_width=120)
                self.deny = gr.Button(tr("🚫 拒绝", "🚫 Deny"), variant="stop", elem_classes=["tw-deny"], min_width=90)
        self.outputs = [self.box, self.title, self.preview, self.args, self.reason, self.approve_edited]

    def render(self, state: RunState) -> dict:
        asking = state.waiting
        if asking is None:
            return {self.box: gr.update(visible=False)}
        call = asking["call"]
        args = call.get("arguments")
        if asking.get("hook"):      # a hook (the hooks lesson) asks: its reason is the student's own text
            return {
                self.box: gr.update(visible=True),
                self.title: tr("**⏸ 等待你的确认：** 钩子 `{hook}` 要先问你：模型要调用 `{name}`（{reason}）。",
                               "**⏸ Waiting for you:** the hook `{hook}` asks you first: the model wants to call "
                               "`{name}` ({reason}).").format(hook=asking["hook"], name=call.get("name"),
                                                                reason=asking["reason"]),
                self.preview: gr.update(value=asking["preview"], label=now(PREVIEW_CALL)),
                self.args: gr.update(value=json.dumps(args, ensure_ascii=False, indent=2), visible=False),
                self.reason: "",
                self.approve_edited: gr.update(visible=False),
            }
        # No rule matched: the reason itself says so (an empty rule would read 规则 `` here).
        reason = tr(asking["reason"], reason_in_english(asking["reason"]))
        why = (tr("规则 `{rule}` 要求先问你（{reason}）", "rule `{rule}` says to ask you first ({reason})").format(
            rule=asking["rule"], reason=reason) if asking["rule"] else reason)
        return {
            self.box: gr.update(visible=True),
            self.title: tr("**⏸ 等待你的确认：** 模型要调用 `{name}`，{why}。",
                           "**⏸ Waiting for you:** the model wants to call `{name}`: {why}.").format(
                               name=call.get("name"), why=why),
            self.preview: gr.update(value=asking["preview"], label=now(PREVIEW_ACTION)),
            self.args: gr.update(value=json.dumps(args, ensure_ascii=False, indent=2) if args is not None
                                 else str(call.get("raw_arguments") or ""), visible=True),
            self.reason: "",
            self.approve_edited: gr.update(visible=True),
        }


def approach_radio() -> gr.Radio:
    """The workspace lessons' loop (the run area's option "approach")."""
    return gr.Radio(APPROACHES, value="function_calling", label=tr("循环", "Loop"), elem_classes=["tw-ws-approach"])


def adapt_views(views: RunViews) -> None:
    """A workspace lesson's run area: no 单步 (its pause is the permission gate's), and a first view that says so."""
    views.step_btn.visible = False
    views.protocol.value = NOT_RUN


def run_shown(views: RunViews, state: RunState, note: str) -> dict:
    """What a workspace lesson's run area shows differently: a ReAct run is labelled as a text
    protocol, not as the native handshake, and a run not started yet says how to start one."""
    shown = {}
    if state.options.get("approach") == "react":
        shown = {views.protocol: timeline.render_protocol(state.shown_events, "react", note, check_arguments=False,
                                                          replaying=state.replay is not None),
                 views.chat: timeline.render_chat(state.shown_events, "react", check_arguments=False)}
    if not state.shown_events and not note and state.replay is None:
        shown[views.protocol] = now(NOT_RUN)
    return shown
