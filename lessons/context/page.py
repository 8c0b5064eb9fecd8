"""8.8 上下文预算: a conversation with two large tool results, a token budget and a strategy
(code/context.py). The preview shows the next request message by message while the student
moves the budget; ▶ 运行 sends the shrunk context with the question, and the answer shows what
the model still knows."""
from __future__ import annotations

import json

import context
import gradio as gr

from i18n import tr

from catalogue import LESSONS
from lessons import context_view
from lessons.editor_panel import lesson_text_box
from lessons.html_bits import esc
from lessons.lesson_page import LessonPage
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel
from runs import context_backend
from serving.gradio_patches import OutOfRange
from serving.page_events import PRIVATE

LESSON = LESSONS["context"]
HISTORY, FIRST_QUESTION = context.EXAMPLE[:-1], context.EXAMPLE[-1]["content"]
CONVERSATION = json.dumps(HISTORY, ensure_ascii=False, indent=2)
PRESETS = [FIRST_QUESTION, "构建为什么失败？"]
FIRST_STRATEGY, FIRST_BUDGET = "window", 300


def shown_preview(conversation: str, question: str, strategy: str, budget) -> str:
    """The next request as the chosen strategy would send it, or why the conversation cannot be sent.
    A budget typed outside the slider's range is said first; the preview is then of the nearest end
    of the range, where the slider goes when the box loses focus."""
    typed = budget
    try:
        messages = context_backend.conversation_from(conversation)
        strategy, budget = context_backend.strategy_from(strategy), context_backend.budget_from(budget)
    except context_backend.Unusable as problem:
        return f'<div class="tw-error">❌ {esc(tr("对话用不了：", "The conversation cannot be used: "))}{esc(problem)}</div>'
    shown = context_view.preview(messages, question, strategy, budget)
    if isinstance(typed, OutOfRange):
        said = typed.message + tr("下面是按 {n} 的预览。", " The preview below is for {n}.").format(n=budget)
        shown = f'<div class="tw-context-warning">⚠️ {esc(said)}</div>' + shown
    return shown


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=2, min_width=320):
                with gr.Row():
                    strategy = gr.Radio([(context_view.title(name), name) for name in context.STRATEGIES],
                                        value=FIRST_STRATEGY, label=tr("做法", "Strategy"), elem_classes=["tw-strategy"])
                budget = gr.Slider(*context_backend.BUDGET_RANGE, value=FIRST_BUDGET, step=10,
                                   label=tr("token 预算（滑动窗口按它丢消息；其他做法不看它，只拿它对照）",
                                            "Token budget (the sliding windows drop messages by it; the other strategies "
                                            "only compare against it)"),
                                   elem_classes=["tw-budget"])
                with gr.Accordion(tr("对话（JSON，可编辑：下一次请求 = 这段对话 + 下面的问题）",
                                     "Conversation (JSON, editable: the next request = this conversation + the question "
                                     "below)"), open=False):
                    conversation = gr.Code(CONVERSATION, language="json", interactive=True, lines=14, max_lines=30,
                                           show_label=False, elem_classes=["tw-conversation"])
                    reset = gr.Button(tr("↺ 恢复示例对话", "↺ Restore the example conversation"), size="sm",
                                      elem_classes=["tw-conversation-reset"])
            with gr.Column(scale=3, min_width=320):
                gr.Markdown(tr("**下一次请求**：这段对话加上下面的问题，按左边的做法收拾之后",
                               "**The next request**: this conversation plus the question below, after the strategy "
                               "on the left"))
                preview = gr.HTML(css_template=context_view.CSS, elem_classes=["tw-context-preview"])
        run = RunPanel(LESSON, settings, None, PRESETS,
                       options={"conversation": conversation, "strategy": strategy, "budget": budget})

        inputs = [conversation, run.question, strategy, budget]

        def shown(values: dict, request: gr.Request) -> dict:
            return {preview: shown_preview(*(values[component] for component in inputs))}

        # One listener for the four: a redraw waits for the one under way, so the preview shown is always
        # the latest inputs'.
        gr.on([component.change for component in inputs], shown_preview, inputs, [preview], api_visibility=PRIVATE,
              show_progress="hidden", trigger_mode="always_last")
        reset.click(lambda: CONVERSATION, None, [conversation], api_visibility=PRIVATE, show_progress="hidden")
        run.wire()
    return LessonPage(LESSON.id, run,
                      also_on_load=(shown, set(inputs), [preview]))
