"""8.9 技能: skills in the Agent Skills format. They are files of the session's workspace,
skills/<name>/SKILL.md (the workspace the atomic-tools and permission lessons work in), shown in
one editable box (one SKILL.md after each `==> skills/<name>/SKILL.md <==` line) and written back
as the student edits. The panel lists what was read and what is wrong, and what the system prompt
costs either way; ▶ 运行 mounts them (code/skills.py's run_with_skills). With the memory tools
ticked the model may also remember, recall and forget facts: the session's memories are listed
below, where the student corrects or deletes any of them. The browser keeps the files with the
workspace's (memory/workspace_memory.py) and the memories (memory/skill_memories.py).
"""
from __future__ import annotations

import hashlib

import gradio as gr
import skills
import workspace

from i18n import now, tr

from catalogue import LESSONS
from lessons import context_view
from lessons.skills import skills_view
from lessons.editor_panel import lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel
from memory import skill_memories, workspace_memory
from runs import skills_backend
from serving.page_events import PRIVATE, SILENT, session_of

LESSON = LESSONS["skills"]
STARTERS = skills_backend.text_from_files(dict(sorted(skills.EXAMPLES.items())))   # folder order, as read back
PRESETS = ["帮我把这几个提交写成发布说明", "帮我 review 这段代码", "这个查询怎么写", "帮我写一份发布说明的格式",
           "请记住我喜欢用 Python", "你记得我的偏好吗"]
FILES_NOTE = tr("📁 这些是你的工作区里 `skills/` 文件夹的文件：和「原子工具」「权限与确认」两课是同一个工作区，在那两课的"
               "文件树里看得到，模型在那里也能用 `read` 读。改了就写回工作区，和工作区的其他文件一起保存在**本浏览器**。",
               "📁 These are the files of the `skills/` folder of your workspace, the one the atomic-tools and "
               "permission lessons work in: their file tree shows them, and a model there can `read` them. An edit "
               "is written back to the workspace and kept in **this browser** with its other files.")
NO_SKILLS = tr("📭 工作区里没有技能文件（skills/ 文件夹是空的，或者被删掉了）：这一课的模型现在没有技能可用。"
               "要回到三个示例技能，点「↺ 恢复示例技能」；也可以在框里写一个新的。",
               "📭 The workspace has no skill files (skills/ is empty, or was deleted): the model of this lesson has "
               "no skills now. For the three example skills again: «↺ Restore the example skills»; or write a new "
               "one in the box.")


def memory_rows(session_id: str | None) -> dict:
    return skills_view.memory_table([[number, item["fact"], item["source"], item["at"]]
                                     for number, item in enumerate(skills_backend.memory_of(session_id).all(), 1)])


def shown_skills(text: str, way: str) -> str:
    found, problems = skills_backend.skills_from(text or "")
    return skills_view.render(skills.skills_event(found, problems, way if way in skills.WAYS else "catalogue"))


def digest(text: str) -> str:
    return hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).hexdigest()


def written(text: str, request: gr.Request) -> str:
    """The box as the student left it, written to the workspace's skills/ folder; what the note under
    the box then says."""
    session_id = session_of(request)
    problem = (skills_backend.write_to_workspace(session_id, text) if session_id else
               tr("这个页面没有会话标识，技能没有写进工作区：请刷新页面。",
                  "This page has no session id, so the skills were not written to the workspace: reload the page."))
    return now(FILES_NOTE) + (f"\n\n⚠️ {now(problem)}" if problem else "")


def hidden_note(hidden: list[str]) -> str:
    return tr("\n\n⚠️ 这些技能文件框里显示不了（文件夹名里有换行，或正文里有一行 ==> … <==），框里没有它们；"
              "框里不写同名的技能，改框就不会动它们：{paths}",
              "\n\n⚠️ The box cannot show these skill files (a line break in the folder name, or a line ==> … <== in "
              "the body): they are not in the box, and editing the box leaves them alone unless it holds a skill "
              "of the same name: {paths}").format(
        paths="、".join(repr(p) for p in hidden)) if hidden else ""


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                box = gr.Code(STARTERS, language="markdown", interactive=True, lines=18, max_lines=40,
                              label=tr("技能：工作区的 skills/<名字>/SKILL.md（可编辑；每个技能以一行 "
                                       "==> skills/<名字>/SKILL.md <== 开头，可以再加）",
                                       "Skills: the workspace's skills/<name>/SKILL.md (editable; each starts with "
                                       "a line ==> skills/<name>/SKILL.md <==, and you can add more)"),
                              elem_classes=["tw-skills-box"])
                files_note = gr.Markdown(FILES_NOTE, elem_classes=["tw-skills-files"])
                # What the box was filled with on load (a digest): kept again once it differs from what the
                # browser held, as after skills an older page kept with the lesson were written in.
                loaded = gr.Textbox(visible="hidden", elem_classes=["tw-skills-loaded"])
                reset = gr.Button(tr("↺ 恢复示例技能", "↺ Restore the example skills"), size="sm",
                                  elem_classes=["tw-skills-reset"])
            with gr.Column(scale=5, min_width=320):
                way = gr.Radio([(skills_view.WAYS[name], name) for name in skills.WAYS], value="catalogue",
                               label=tr("怎样交给模型", "How the model gets them"), elem_classes=["tw-skills-way"])
                panel = gr.HTML(shown_skills(STARTERS, "catalogue"), css_template=context_view.CSS,
                                elem_classes=["tw-skills-panel"])
                memory_on = gr.Checkbox(False, label=tr("再给模型记忆工具（remember / recall / forget）",
                                                        "Also give the model memory tools (remember / recall / forget)"),
                                        elem_classes=["tw-skills-memory-on"])
                with gr.Accordion(tr("🧠 记忆（保存在本浏览器）", "🧠 Memories (kept in this browser)"), open=True):
                    memories = gr.Dataframe(headers=list(skills_view.MEMORY_HEADERS), value=[], interactive=False,
                                            wrap=True, elem_classes=["tw-memories"])
                    with gr.Row():
                        number = gr.Number(label=tr("第几条", "No."), precision=0, minimum=1, value=1,
                                           elem_classes=["tw-memory-number"], min_width=80)
                        fact = gr.Textbox(label=tr("改成", "Change it to"), elem_classes=["tw-memory-fact"], scale=3)
                    with gr.Row():
                        correct_btn = gr.Button(tr("✏️ 改正这一条", "✏️ Correct it"), size="sm",
                                                elem_classes=["tw-memory-correct"])
                        delete_btn = gr.Button(tr("🗑 删掉这一条", "🗑 Delete it"), size="sm",
                                               elem_classes=["tw-memory-delete"])
                    memory_note = gr.Markdown(elem_classes=["tw-memory-said"])
        run = RunPanel(LESSON, settings, None, PRESETS, options={"skills": box, "way": way, "memory": memory_on})
        # One listener for both: a redraw waits for the one under way, so the panel is always the latest inputs'.
        gr.on([box.change, way.change], shown_skills, [box, way], [panel], api_visibility=PRIVATE,
              show_progress="hidden", trigger_mode="always_last")
        # What the student puts in the box (typed, ↺, an imported session, typed while the page was still
        # putting back what the browser kept) is written to the workspace; what the page's load puts
        # there came from the workspace (`loaded` holds its digest), and is not written back.
        # Once the student has changed it, every change is theirs: an edit back to the loaded text too.
        def written_unless_loaded(text: str, shown: str, request: gr.Request):
            return (gr.skip(), gr.skip()) if shown and digest(text) == shown else (written(text, request), "")

        typed = box.change(written_unless_loaded, [box, loaded], [files_note, loaded], api_visibility=PRIVATE,
                           show_progress="hidden", trigger_mode="always_last")
        reset.click(lambda: STARTERS, None, [box], api_visibility=PRIVATE, show_progress="hidden")
        run.wire()

        def listed(request: gr.Request):
            return memory_rows(session_of(request))

        # A run may have remembered or forgotten something.
        ran = [event.then(listed, None, [memories], api_visibility=PRIVATE, show_progress="hidden")
               for event in run.changed_files]

        def changed(kind: str):
            def change(which, text, request: gr.Request):
                memory = skills_backend.memory_of(session_of(request))
                which = int(which or 0)
                if kind == "correct" and not (text or "").strip():
                    return memory_rows(session_of(request)), tr("先在「改成」里写上对的事实。",
                                                                "Write the right fact in «Change it to» first.")
                done = memory.correct(which, text.strip()) if kind == "correct" else memory.forget(which)
                if done is None:
                    said = tr("没有第 {n} 条记忆。", "There is no memory No. {n}.").format(n=which)
                elif kind == "correct":
                    said = tr("✏️ 第 {n} 条改成了「{fact}」，来源记为「用户改正」。",
                              "✏️ No. {n} now says «{fact}»; its source is «用户改正» (corrected by the user).").format(
                        n=which, fact=done["fact"])
                else:
                    said = tr("🗑 删掉了第 {n} 条「{fact}」。", "🗑 Deleted No. {n}, «{fact}».").format(n=which, fact=done["fact"])
                return memory_rows(session_of(request)), said
            return change

        corrected = correct_btn.click(changed("correct"), [number, fact], [memories, memory_note], api_visibility=PRIVATE)
        deleted = delete_btn.click(changed("delete"), [number, fact], [memories, memory_note], api_visibility=PRIVATE)

        def shown_with_memories(values: dict, request: gr.Request) -> dict:
            """Once the workspace and the memories are back: the workspace's skills in the box."""
            session_id = session_of(request)
            text, said = values[box], now(FILES_NOTE)
            if session_id:
                try:
                    text, hidden = skills_backend.workspace_text(session_id)
                except workspace.WorkspaceError as exc:
                    return {panel: shown_skills(text, values[way]), memories: memory_rows(session_id),
                            files_note: tr("⚠️ 读不到工作区里的技能（{exc}），框里是示例技能，改了也写不进工作区。",
                                           "⚠️ The workspace's skills could not be read ({exc}); the box holds the "
                                           "example skills, and edits cannot be written to the workspace.").format(
                                exc=exc)}
                said += hidden_note(hidden)
                if not text and not hidden:   # every skill deleted: what the student did stays done
                    said += "\n\n" + now(NO_SKILLS)
            return {box: text, panel: shown_skills(text, values[way]), memories: memory_rows(session_id),
                    files_note: said, loaded: digest(text)}

    def keep_files_and_memories(memory) -> None:
        filled = loaded.change(None, None, None, **SILENT)
        workspace_memory.keep_shared_files(memory, [(event, files_note) for event in (typed, filled)],
                                           base=FILES_NOTE, start_over=tr(
            "要回示例技能：点「↺ 恢复示例技能」。", "For the example skills again: «↺ Restore the example skills»."))
        skill_memories.keep(memory, page, [*ran, corrected, deleted], memory_note, after=workspace_memory.PART)

    def adopt_kept(fields: dict, session_id: str | None) -> list[str]:
        old = fields.get("option.skills") if isinstance(fields, dict) else None
        said = skills_backend.adopt_old_box(session_id, old) if session_id else None
        return [now(said)] if said else []

    page = LessonPage(LESSON.id, run, also_on_load=(shown_with_memories, {box, way}, [box, panel, memories, files_note, loaded]),
                      keep_shared=keep_files_and_memories, kept_elsewhere=frozenset({"skills"}), adopt_kept=adopt_kept)
    return page
