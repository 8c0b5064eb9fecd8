"""8.10 子代理: the Function Calling loop with a task tool (code/subagents.py). The model hands a
job to a child loop that starts from nothing; the child's run is drawn folded under the task call,
with what it cost against what it handed back, and the headline looks inside every child."""
from __future__ import annotations

import gradio as gr

from i18n import tr

from catalogue import LESSONS
from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.presets import PRESETS
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from runs import starters
from subagents import CHILD_SECONDS, CHILD_TURNS

LESSON = LESSONS["subagents"]
# The offline model delegates only when told to: every example set's first questions, handed over.
EXAMPLE_PRESETS = {name: [f"交给子代理：{question}" for question in questions[:2]] + questions[:1]
               for name, questions in PRESETS.items()}
EXAMPLE_PRESETS["天气"] = ["派一个子代理去查北京今天的天气，告诉我结论", "派一个子代理去打个招呼",
                      "派一个子代理去查北京和上海今天的天气", "北京今天天气怎么样？"]


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=EXAMPLE_PRESETS)
                schema = SchemaPanel()
            with gr.Column(scale=6, min_width=320):
                with gr.Row():
                    child_turns = gr.Slider(1, starters.CHILD_TURNS_MAX, value=CHILD_TURNS, step=1,
                                            label=tr("子代理最多几轮", "A sub-agent's rounds at most"),
                                            elem_classes=["tw-child-turns"])
                    child_seconds = gr.Slider(0, starters.CHILD_SECONDS_MAX, value=CHILD_SECONDS, step=1,
                                              label=tr("子代理的时间预算（秒）", "A sub-agent's time budget (s)"),
                                              elem_classes=["tw-child-seconds"])
                run = RunPanel(LESSON, settings, editor.editor, EXAMPLE_PRESETS[LESSON.example],
                               options={"child_turns": child_turns, "child_seconds": child_seconds})
        schema.wire(editor.editor)
        editor.wire(run.presets, run.question)
        run.wire()
    return LessonPage(LESSON.id, run, editor=editor, schema=schema)
