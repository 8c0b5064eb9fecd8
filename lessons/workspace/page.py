"""Lesson 4 · 原子工具: the four tools (read, write, edit, bash) on a private workspace per
browser session; the run's steps, and after each one the diff of what it changed."""
from __future__ import annotations

import gradio as gr


from catalogue import LESSONS

from lessons.editor_panel import lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel
from lessons.workspace_panel import WorkspaceView, approach_radio

LESSON = LESSONS["workspace"]
PRESETS = [
    "读一下 notes.md，告诉我练习要做什么",
    "运行测试",
    "找到失败的测试并修好它",
    "把 notes.md 里的“修一个 bug”改成“修好一个 bug”",
    "新建文件 hello.py，内容是 print('你好，工作区')",
    "运行 `ls -la src`",
]


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                view = WorkspaceView()
            with gr.Column(scale=6, min_width=320):
                run = RunPanel(LESSON, settings, None, PRESETS, options={"approach": approach_radio()}, workspace=view)
        run.wire()
    return LessonPage(LESSON.id, run)
