"""8.11 会话与分支: a run is a tree of messages (code/sessions.py). ▶ 运行 asks on the current branch;
「✂️ 改了，从这里接着跑」 edits one message of it (the question, a later message, a tool result) into a
new branch and runs on from there. The branches stand side by side below: where each forked, what
differs, each one's verdict (runs/headline.py) and the raw messages of its last request. A branch
exports as Markdown or JSONL; a JSONL file read back resumes the session.

The session is its JSONL text in a read-only box, which is also a run option: the loop reads it
(runs/sessions_backend.py loads it with the course's checks), and the browser keeps it with the
lesson's other options, so it is back after a reload or a server restart. The branches' verdicts
come from the runs made on this page (a gr.State): a file holds messages, not how a run went.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile

import gradio as gr
import sessions
from sessions import Session, SessionProblem

from i18n import pick, tr

from catalogue import LESSONS
from lessons.sessions import sessions_view
from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.presets import PRESETS
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from runs import run_driver, sessions_backend
from serving import expiry
from serving.page_events import PRIVATE, session_of

LESSON = LESSONS["sessions"]


def said(problem: SessionProblem) -> str:
    return pick(problem.zh, problem.en)


def read(text: str, branch: str | None) -> tuple[Session | None, str]:
    """(the session in the box on `branch`, "") or (None, what is wrong with it)."""
    try:
        return sessions_backend.on_branch(text, branch), ""
    except SessionProblem as problem:
        return None, said(problem)


def shown(text: str, branch: str | None, verdicts: dict | None) -> dict:
    """Everything the session panel shows of the box's session."""
    session, problem = read(text, branch)
    if session is None and branch:          # a branch the session no longer has: its current one
        session, problem = read(text, None)
    return drawn(session, problem, verdicts)


def drawn(session: Session | None, problem: str, verdicts: dict | None) -> dict:
    """Everything the session panel shows of a session already read (None: `problem` says why not)."""
    choices = sessions_view.branch_choices(session)
    current = session.branch_of() if session is not None and session.leaf else None
    return {"tree": sessions_view.render(session, verdicts, problem),
            "branch": gr.update(choices=choices, value=current), "current": current,
            "entries": gr.update(choices=sessions_view.entry_choices(session), value=None)}


def drawn_key(text: str | None, branch: str | None) -> str:
    """What identifies a drawing of the panel: the session's text (the page's code box drops its last
    newline) and the branch it shows as current."""
    return hashlib.sha256(f"{(text or '').rstrip()}\0{branch or ''}".encode()).hexdigest()


def written_file(text: str, name: str) -> str:
    folder = tempfile.mkdtemp(prefix="tool-workshop-session-")
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        # The session as its JSONL file: the loop's input (a run option), kept in the browser with them.
        session_box = gr.Code(Session().dumps(), language="json", interactive=False, lines=6, max_lines=20,
                              label=tr("会话文件（JSONL：第一行是文件头，之后一条消息一行，parent_id 连成树）",
                                       "The session file (JSONL: a header line, then one message a line; parent_id "
                                       "makes the tree)"),
                              elem_classes=["tw-session-jsonl"], render=False)
        branch = gr.Dropdown([], value=None, allow_custom_value=True, elem_classes=["tw-session-branch"],
                             label=tr("当前分支（▶ 运行在它的最后一条后面接着问）",
                                      "Current branch (▶ Run asks on after its last message)"), render=False)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=PRESETS)
                schema = SchemaPanel()
            with gr.Column(scale=6, min_width=320):
                run = RunPanel(LESSON, settings, editor.editor, PRESETS[LESSON.example],
                               options={"session": session_box, "branch": branch})
        verdicts = gr.State({}, time_to_live=expiry.session_ttl())     # branch id -> the events it was judged on
        drawn_from = gr.State(None, time_to_live=expiry.session_ttl())  # drawn_key() of what the panel shows
        with gr.Group(elem_classes=["tw-session-panel"]):
            gr.Markdown(tr("### 🌳 会话：分支并排", "### 🌳 The session: branches side by side"))
            branch.render()
            tree = gr.HTML(sessions_view.render(None, {}), css_template=sessions_view.CSS,
                           elem_classes=["tw-session-tree"])
            with gr.Row():
                entry = gr.Dropdown([], value=None, label=tr("从当前分支的哪一条分叉", "Fork from which message of the current branch"),
                                    elem_classes=["tw-fork-entry"], scale=2)
                content = gr.Textbox(label=tr("改成", "Change it to"), lines=2, elem_classes=["tw-fork-text"], scale=3)
            with gr.Row():
                fork_btn = gr.Button(tr("✂️ 改了，从这里接着跑", "✂️ Edited: run on from here"), variant="primary",
                                     elem_classes=["tw-fork"])
                new_btn = gr.Button(tr("🆕 新会话", "🆕 New session"), elem_classes=["tw-session-new"])
            with gr.Row():
                markdown_btn = gr.Button(tr("导出当前分支（Markdown）", "Export the current branch (Markdown)"),
                                         size="sm", elem_classes=["tw-export-md"])
                jsonl_btn = gr.Button(tr("导出当前分支（JSONL）", "Export the current branch (JSONL)"), size="sm",
                                      elem_classes=["tw-export-jsonl"])
            with gr.Row():
                download = gr.File(label=tr("下载", "Download"), interactive=False, elem_classes=["tw-session-download"])
                upload = gr.File(label=tr("读入会话文件（.jsonl），接着问", "Read a session file (.jsonl) and ask on"),
                                 file_types=[".jsonl"], type="filepath", elem_classes=["tw-session-upload"])
            note = gr.Markdown(elem_classes=["tw-session-note"])
            with gr.Accordion(tr("会话文件（JSONL）", "The session file (JSONL)"), open=False):
                session_box.render()
        schema.wire(editor.editor)
        editor.wire(run.presets, run.question)
        run.wire()

        panel = [tree, branch, entry, drawn_from]

        def on_panel(text: str, parts: dict) -> dict:
            return {tree: parts["tree"], branch: parts["branch"], entry: parts["entries"],
                    drawn_from: drawn_key(text, parts["current"])}

        def show(text: str, chosen: str | None, judged: dict | None) -> dict:
            return on_panel(text, shown(text, chosen, judged))

        def redraw(values: dict) -> dict:
            if values[drawn_from] == drawn_key(values[session_box], values[branch]):
                # The panel shows this already (the run, fork, upload or new session that wrote the box drew
                # it): drawn again, the fork point a person picked meanwhile would be emptied.
                return {component: gr.skip() for component in panel}
            return show(values[session_box], values[branch], values[verdicts])

        # The box changes after a run, an upload, a new session (each draws the panel itself), when the
        # browser puts a kept one back and when an exercise sets one up.
        for changed in (session_box.change, branch.select):
            changed(redraw, {session_box, branch, verdicts, drawn_from}, panel, api_visibility=PRIVATE,
                    show_progress="hidden")

        def after_run(values: dict) -> dict:
            """The session once a run has written to it: the text it started from plus its entries; the
            branch it ran on becomes current and gets its verdict."""
            state = values[run.state]
            if state is None or state.replay is not None or not state.run.events:
                return {note: gr.skip()}      # an empty dict would be taken for one value
            start = state.options.get("session") if isinstance(state.options.get("session"), str) else ""
            ran_on = sessions_backend.branch_of_run(state.run.events)
            judged = dict(values[verdicts] or {})
            try:
                session = sessions_backend.session_after(start, state.run.events, state.options.get("branch"))
            except SessionProblem as problem:
                return {note: tr("❌ 这次运行写下的没有存进会话：", "❌ What this run wrote was not kept: ") + said(problem)}
            if ran_on:
                judged[ran_on] = sessions_backend.own_events(state.run.events, ran_on)
            text = session.dumps()
            return {session_box: text, verdicts: judged, **on_panel(text, drawn(session, "", judged))}

        for event in run.changed_files:
            event.then(after_run, {run.state, verdicts}, [session_box, verdicts, note, *panel], api_visibility=PRIVATE,
                       show_progress="hidden")

        def fill(values: dict) -> str:
            session, _ = read(values[session_box], values[branch])
            chosen = values[entry]
            if session is None or chosen not in session.entries:
                return ""
            return str(session.entries[chosen]["message"].get("content") or "")

        entry.select(fill, {session_box, branch, entry}, [content], api_visibility=PRIVATE, show_progress="hidden")

        fork_inputs = {editor.editor, run.question, run.state, *settings.components, *run.options.values(), entry, content}

        def fork(values: dict, request: gr.Request):
            shower = run.shower(values, request)
            state = values[run.state] or run_driver.RunState()
            session, problem = read(values[session_box], values[branch])
            chosen, text = values[entry], values[content] or ""
            if session is not None and not chosen:
                problem = pick("先在「从当前分支的哪一条分叉」里选一条消息。", "Pick a message in «Fork from which message» first.")
            elif session is not None:
                try:      # tried on this copy first: a fork the session refuses starts no run
                    session.fork(chosen, text)
                except SessionProblem as refused:
                    problem = said(refused)
            if problem:
                yield shower(state, tr("❌ 没有分叉：", "❌ No fork: ") + problem)
                return
            inputs = run.read(values)
            inputs = dataclasses.replace(inputs, question=sessions_backend.fork_question(session, chosen, text),
                                         options={**inputs.options, "fork": {"entry": chosen, "content": text}})
            for fresh, said_now in run_driver.begin(LESSON, inputs, state, secrets=settings.secrets,
                                                    session_id=session_of(request), step=False, request=request):
                yield shower(fresh, said_now)

        forked = fork_btn.click(fork, fork_inputs, run.outputs, api_visibility=PRIVATE)
        forked.then(after_run, {run.state, verdicts}, [session_box, verdicts, note, *panel], api_visibility=PRIVATE,
                    show_progress="hidden")

        def start_over() -> dict:
            text = Session().dumps()
            return {session_box: text, verdicts: {}, note: "", **show(text, None, {})}

        new_btn.click(start_over, None, [session_box, verdicts, note, *panel], api_visibility=PRIVATE)

        def exported(kind: str):
            def export(values: dict) -> dict:
                session, problem = read(values[session_box], values[branch])
                if session is None or not session.entries:
                    return {download: None, note: problem or pick("会话还是空的：先跑一次。", "The session is empty: run first.")}
                number = session.branch_number(session.branch_of())
                if kind == "md":
                    path = written_file(session.to_markdown(), f"session-{session.id[:8]}-branch-{number}.md")
                else:
                    path = written_file(session.dumps(session.leaf), f"session-{session.id[:8]}-branch-{number}.jsonl")
                return {download: path, note: tr("📦 分支 {n} 导出好了：点「下载」框里的文件名保存。",
                                                 "📦 Branch {n} exported: click the file name in «Download» to save it."
                                                 ).format(n=number)}
            return export

        markdown_btn.click(exported("md"), {session_box, branch}, [download, note], api_visibility=PRIVATE)
        jsonl_btn.click(exported("jsonl"), {session_box, branch}, [download, note], api_visibility=PRIVATE)

        def read_back(values: dict) -> dict:
            """A JSONL file read back (resume): through the course's loader, never more than its size limit."""
            path = values[upload]
            if not path:
                return {note: gr.skip()}
            try:
                size = os.path.getsize(path)
                if size > sessions.MAX_FILE_BYTES:
                    raise sessions.too_big(size)
                with open(path, "rb") as source:
                    session = sessions.loads(source.read(sessions.MAX_FILE_BYTES + 1))
            except SessionProblem as problem:
                return {upload: None, note: tr("❌ 这个文件没有读进来（当前会话没有变）：", "❌ The file was not read (the "
                                               "session is unchanged): ") + said(problem)}
            except OSError as problem:
                return {upload: None, note: tr("❌ 文件读不出来（当前会话没有变）：", "❌ The file could not be read (the "
                                               "session is unchanged): ") + str(problem)}
            number = session.branch_number(session.branch_of()) if session.leaf else 0
            text = session.dumps()
            return {upload: None, session_box: text, verdicts: {}, **on_panel(text, drawn(session, "", {})),
                    note: tr("📂 读进来了：{n} 条消息，{b} 条分支；当前是分支 {k}，问一句就接着这条分支跑。",
                             "📂 Read: {n} messages, {b} branches; branch {k} is current: ask and it runs on.").format(
                        n=len(session.entries), b=len(session.branch_ids()), k=number)}

        upload.upload(read_back, {upload}, [upload, session_box, verdicts, note, *panel], api_visibility=PRIVATE)
    return LessonPage(LESSON.id, run, editor=editor, schema=schema,
                      exercise_fields={"fork_entry": entry, "fork_content": content})
