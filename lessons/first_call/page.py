"""8.1 第一次调用: one request and its response, no loop and no tool run (code/first_call.py). The
timeline shows the request body raw with the same request as openai and zhipuai SDK code, the raw
response and, streamed, every fragment on a time axis with whether json.loads takes the arguments
so far (lessons/first_call/first_call_view.py), then each assembled call and what finish_reason says."""
from __future__ import annotations

import first_call
import gradio as gr

from i18n import tr

from catalogue import LESSONS
from lessons.editor_panel import lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel

LESSON = LESSONS["first_call"]
# One call, two calls, no call: each shows another shape of the reply and another finish_reason.
PRESETS = [first_call.QUESTION, "北京和上海今天天气怎么样？", "你好"]
STREAM_LABEL = tr("stream=True：流式，回复一片一片地到（不勾选：stream=False，一整块）。这一课只看这里，不看模型设置里的「流式输出」",
                  "stream=True: streamed, the reply arrives fragment by fragment (unticked: stream=False, one block). "
                  "This lesson reads this box, not «Streaming» in the model settings")


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        stream = gr.Checkbox(value=True, label=STREAM_LABEL, elem_classes=["tw-fc-stream-option"])
        run = RunPanel(LESSON, settings, None, PRESETS, options={"stream": stream})
        run.wire()
    return LessonPage(LESSON.id, run)
