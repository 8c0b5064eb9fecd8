"""Function Calling: the three-step handshake, tool_choice and parallel calls, and
the offline model's simulated mistakes travelling back to it."""
from __future__ import annotations

import gradio as gr

from i18n import now, tr

from catalogue import LESSONS

from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.lesson_page import LessonPage
from serving.page_events import PRIVATE
from lessons.presets import MISTAKE_LABEL, PARALLEL_LABEL, PRESETS, describe_mistakes, mistake_choices
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel

TOOL_CHOICES = [(tr("auto（模型自己决定）", "auto (the model decides)"), "auto"),
                (tr("none（不许调用工具）", "none (no tool calls allowed)"), "none"),
                (tr("required（第一轮必须调用）", "required (must call in the first round)"), "required")]
CHOICE_NOTES = {
    "auto": tr("`auto`：每一轮由模型自己决定调不调用工具、调用哪个。",
               "`auto`: in each round the model decides whether to call a tool, and which."),
    "none": tr("`none`：每次请求照样带着 tools，但告诉模型不许调用，只能直接用文字回答。"
               "它是一个设置，不是菜单被拿走：模型知道有哪些工具，只是不能用。",
               "`none`: each request still carries the tools, but tells the model not to call and to answer in text. "
               "It is a setting, not a menu taken away: the model knows which tools there are, it just may not use "
               "them."),
    "required": tr("`required`：第一次请求必须调用某个工具。**强制只用在第一次请求**：之后的请求不再带 tool_choice（即默认的 auto），"
                   "否则模型每一轮都被迫调用工具，永远给不出最终回答，只会一直调用到 max_turns。",
                   "`required`: the first request must call some tool. **It is forced on the first request only**: "
                   "later requests carry no tool_choice (the default, auto); otherwise the model would have to call a "
                   "tool in every round, could never give a final answer, and would call until max_turns."),
}
FORCED_NOTE = tr("强制调用 `{name}`：第一次请求必须调用它。**强制只用在第一次请求**：之后的请求不再带 tool_choice（即默认的 auto），"
                 "否则模型每一轮都被迫再调用它，永远给不出最终回答，只会一直调用到 max_turns。",
                 "Forcing `{name}`: the first request must call it. **It is forced on the first request only**: later "
                 "requests carry no tool_choice (the default, auto); otherwise the model would have to call it again in "
                 "every round, could never give a final answer, and would call until max_turns.")
FORCED_CHOICE = tr("强制调用 {name}", "force {name}")
# tool_outcome.as_envelope: the result the model gets is a fixed-shape JSON instead of a sentence.
ENVELOPE_LABEL = tr("结果信封 status/data/error_code（回填固定形状的 JSON，而不是一段文字）",
                    "Result envelope status/data/error_code (JSON of a fixed shape goes back, not text)")
GLM_NOTE = tr("⚠️ 智谱 GLM 的接口只支持 `tool_choice=\"auto\"`：选 none、required 或强制某个工具，"
              "据报告会被当成 auto，效果可能和说明不一样。",
              "⚠️ Zhipu GLM's API supports only `tool_choice=\"auto\"`: none, required or a forced tool are "
              "reported to be treated as auto, so the effect may differ from what is described here.")


def choice_note(choice: str | None, provider: str | None) -> str:
    """What the chosen tool_choice does, and the GLM warning when GLM is the provider."""
    text = now(CHOICE_NOTES.get(choice or "auto") or now(FORCED_NOTE).format(name=choice))
    if provider == "glm":
        text += "\n\n" + now(GLM_NOTE)
    return text


LESSON = LESSONS["function_calling"]


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=PRESETS)
                schema = SchemaPanel()
            with gr.Column(scale=6, min_width=320):
                with gr.Row():
                    tool_choice = gr.Dropdown(TOOL_CHOICES, value="auto", label="tool_choice", allow_custom_value=True,
                                              elem_classes=["tw-tool-choice"], min_width=150)
                    parallel = gr.Checkbox(value=True, label=PARALLEL_LABEL, min_width=150)
                # Its own line: a mistake's name is cut in a row beside other controls.
                mistake = gr.Dropdown(mistake_choices("function_calling"), value="", label=MISTAKE_LABEL,
                                      elem_classes=["tw-mistake"])
                describe_mistakes(mistake)
                envelope = gr.Checkbox(value=False, label=ENVELOPE_LABEL, elem_classes=["tw-envelope"])
                choice_help = gr.Markdown(choice_note("auto", "offline"), elem_classes=["tw-choice-note"])
                run = RunPanel(LESSON, settings, editor.editor, PRESETS[LESSON.example],
                               options={"tool_choice": tool_choice, "parallel_tool_calls": parallel,
                                        "mistake": mistake, "envelope": envelope})

        def choices_for(report, inputs, values):
            names = [(t.get("function") or {}).get("name") for t in report["tools"]] if report["ok"] else []
            return {tool_choice: gr.update(choices=now(TOOL_CHOICES) + [(now(FORCED_CHOICE).format(name=n), n)
                                                                        for n in names if n])}

        schema.wire(editor.editor, extra=choices_for, extra_outputs=[tool_choice])
        for trigger in (tool_choice.change, settings.provider.change):
            trigger(choice_note, [tool_choice, settings.provider], [choice_help], api_visibility=PRIVATE,
                    show_progress="hidden")
        editor.wire(run.presets, run.question)
        run.wire()
    return LessonPage(LESSON.id, run, editor=editor, schema=schema)
