"""8.9 技能: skills in the Agent Skills format, all in one editable box (one SKILL.md after each
`==> skills/<name>/SKILL.md <==` line). The panel lists what was read and what is wrong, and what
the system prompt costs either way; ▶ 运行 mounts them (code/skills.py's run_with_skills)."""
from __future__ import annotations

import gradio as gr
import skills

from i18n import tr

from catalogue import LESSONS
from lessons import context_view, skills_view
from lessons.editor_panel import lesson_text
from lessons.lesson_page import LessonPage
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel
from runs import skills_backend
from serving.page_events import PRIVATE

LESSON = LESSONS["skills"]
STARTERS = skills_backend.text_from_files(skills.EXAMPLES)
PRESETS = ["帮我把这几个提交写成发布说明", "帮我 review 这段代码", "这个查询怎么写", "帮我写一份发布说明的格式"]


def shown_skills(text: str, way: str) -> str:
    found, problems = skills_backend.skills_from(text or "")
    return skills_view.render(skills.skills_event(found, problems, way if way in skills.WAYS else "catalogue"))


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        with gr.Accordion(tr("📖 课文：用到时才读的说明书", "📖 Lesson: instructions read when needed"), open=False):
            gr.Markdown(lesson_text("skills.md"))
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                box = gr.Code(STARTERS, language="markdown", interactive=True, lines=18, max_lines=40,
                              label=tr("技能（可编辑；每个技能以一行 ==> skills/<名字>/SKILL.md <== 开头，可以再加）",
                                       "Skills (editable; each starts with a line ==> skills/<name>/SKILL.md <==, and "
                                       "you can add more)"), elem_classes=["tw-skills-box"])
                reset = gr.Button(tr("↺ 恢复示例技能", "↺ Restore the example skills"), size="sm",
                                  elem_classes=["tw-skills-reset"])
            with gr.Column(scale=5, min_width=320):
                way = gr.Radio([(skills_view.WAYS[name], name) for name in skills.WAYS], value="catalogue",
                               label=tr("怎样交给模型", "How the model gets them"), elem_classes=["tw-skills-way"])
                panel = gr.HTML(shown_skills(STARTERS, "catalogue"), css_template=context_view.CSS,
                                elem_classes=["tw-skills-panel"])
        run = RunPanel(LESSON, settings, None, PRESETS, options={"skills": box, "way": way})
        for component in (box, way):
            component.change(shown_skills, [box, way], [panel], api_visibility=PRIVATE, show_progress="hidden",
                             trigger_mode="always_last")
        reset.click(lambda: STARTERS, None, [box], api_visibility=PRIVATE, show_progress="hidden")
        run.wire()

        def shown(values: dict, request: gr.Request) -> dict:
            return {panel: shown_skills(values[box], values[way])}

    return LessonPage(LESSON.id, run, also_on_load=(shown, {box, way}, [panel]))
