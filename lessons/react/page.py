"""正则 ReAct: the generated system prompt, the model's raw text, what the regex matched
(or exactly why not), the Observation appended. JSON-from-text is selectable too."""
from __future__ import annotations

import json

import gradio as gr

import i18n
from i18n import tr

from catalogue import LESSONS

from json_loop import build_json_prompt
from lessons.code_box import CodeBox
from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.lesson_page import LessonPage
from serving.page_events import SILENT
from lessons.presets import MISTAKE_LABEL, PRESETS, describe_mistakes, mistake_choices
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from react_loop import build_react_prompt

ENVELOPE_LABEL = tr("结果信封 status/data/error_code（Observation 后面是固定形状的 JSON，而不是一段文字）",
                    "Result envelope status/data/error_code (after Observation comes JSON of a fixed shape, not text)")
APPROACHES = [(tr("正则 ReAct（Thought / Action / Observation）", "Regex ReAct (Thought / Action / Observation)"), "react"),
              (tr("从文本中解析 JSON", "Parse JSON from text"), "json")]


def system_prompt(approach: str, tools: list) -> str:
    build = build_json_prompt if approach == "json" else build_react_prompt
    try:
        return build(tools)
    except Exception as exc:  # a prompt builder choking on odd tools should not break the page
        return tr("（无法生成系统提示词：{exc}）", "(Could not write the system prompt: {exc})").format(exc=exc)


def mistake_lists() -> dict:
    """{approach: {language: [[label, code], ...]}}: only the mistakes that can happen in that approach."""
    lists = {}
    for approach in ("react", "json"):
        for lang in ("zh", "en"):
            with i18n.using(lang):
                lists.setdefault(approach, {})[lang] = [[str(label), code] for label, code in mistake_choices(approach)]
    return lists


# The mistakes follow the approach in the browser, at once; a choice the new approach cannot make goes back
# to none. A list that came back from the server later could be opened in between, and Gradio's open list
# then keeps drawing options it no longer has.
MISTAKES_JS = """(approach, current) => {
  const lists = %s;
  const shown = lists[approach === "json" ? "json" : "react"][/^en/.test(window.gradio_config?.page_lang || "") ? "en" : "zh"];
  return {__type__: "update", choices: shown, value: shown.some((choice) => choice[1] === current) ? current : ""};
}"""


LESSON = LESSONS["react"]


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=PRESETS)
                schema = SchemaPanel(label=tr("工具 schema（自动生成；ReAct 不发送 tools，下面的系统提示词由它写成）",
                                        "Tool schema (generated; ReAct sends no tools: the system prompt below is written "
                                        "from it)"))
                prompt = CodeBox(label=tr("生成的系统提示词（模型收到的工具说明，由上面的 schema 写成）",
                                    "Generated system prompt (the tools as the model reads them, written from the schema "
                                    "above)"), language="markdown", filename="system_prompt.md",
                                 lines=8, max_lines=24, elem_classes=["tw-system-prompt"])
            with gr.Column(scale=6, min_width=320):
                with gr.Row():
                    approach = gr.Radio(APPROACHES, value="react", label=tr("解析方式", "Parsing"), elem_classes=["tw-approach"],
                                        min_width=200)
                # Its own line: a mistake's name is cut in a row beside other controls.
                mistake = gr.Dropdown(mistake_choices("react"), value="", label=MISTAKE_LABEL,
                                      elem_classes=["tw-mistake"])
                describe_mistakes(mistake)
                envelope = gr.Checkbox(value=False, label=ENVELOPE_LABEL, elem_classes=["tw-envelope"])
                run = RunPanel(LESSON, settings, editor.editor, PRESETS[LESSON.example],
                               options={"approach": approach, "mistake": mistake, "envelope": envelope})

        def prompt_for(report, inputs, values):
            # A source that does not parse keeps the last good tools, as the schema shown does.
            tools = report["tools"] if report["ok"] else inputs.previous
            return {prompt: system_prompt(values[approach], tools) if tools is not None else gr.update()}

        # First of the approach's listeners: the page starts them in this order, each after the one before
        # has reached the server.
        approach.change(None, [approach, mistake], [mistake],
                        js=MISTAKES_JS % json.dumps(mistake_lists(), ensure_ascii=False), **SILENT)
        # The prompt has one writer, the schema's refresh, on an edit and on a new approach alike: a second
        # listener drawing it from the tools kept so far could land after an edit's and show the old tools.
        schema.wire(editor.editor, extra=prompt_for, extra_inputs=[approach], extra_outputs=[prompt],
                    extra_triggers=[approach.change])
        editor.wire(run.presets, run.question)
        run.wire()
    return LessonPage(LESSON.id, run, editor=editor, schema=schema)
