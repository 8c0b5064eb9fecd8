"""8.3 计划与执行: the model keeps its todo list through write_todos (code/planning.py), the tool
refuses a list that breaks its rules, and a failed step makes the model replan; the timeline shows
the board before and after each write. The course's fixed plan runs on the same task, and a button
runs both ways to set their counts side by side (planning.tally)."""
from __future__ import annotations

import gradio as gr

from i18n import now, tr

from catalogue import LESSONS
from lessons import timeline
from lessons.planning import plan_view
from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.presets import PRESETS
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from runs import planning_backend, purposes
from serving.page_events import PRIVATE, session_of

LESSON = LESSONS["planning"]
APPROACHES = [(tr("计划是工具：模型用 write_todos 自己写、自己改", "The plan is a tool: the model writes and rewrites it "
                                                        "with write_todos"), "todos"),
              (tr("先定计划再执行（课程仓库的写法）", "Plan first, then execute (the course's way)"), "fixed")]
NOT_BROKEN = (tr("不让工具失败", "No tool fails"), "")
BROKEN_LABEL = tr("让一个工具失败（演示一步失败了）", "Make one tool fail (a failed step, for the demonstration)")
BROKEN_CHOICE = tr("{name} 这次一律失败", "{name} fails every time")
# The planning task on the weather tools; the other example sets keep their usual questions.
EXAMPLE_PRESETS = {**PRESETS, "天气": list(planning_backend.QUESTIONS)}


def broken_choices(names: list[str]) -> list:
    return [now(NOT_BROKEN)] + [(now(BROKEN_CHOICE).format(name=name), name) for name in names]


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=EXAMPLE_PRESETS)
                schema = SchemaPanel()
            with gr.Column(scale=6, min_width=320):
                approach = gr.Radio(APPROACHES, value="todos", label=tr("写法", "Approach"),
                                    elem_classes=["tw-approach"])
                broken = gr.Dropdown(broken_choices(["get_weather", "get_forecast"]), value="", label=BROKEN_LABEL,
                                     elem_classes=["tw-broken"])
                # Above the run area: the table is short, the timeline below it long.
                with gr.Accordion(tr("⚖️ 同一个任务，两种写法对照", "⚖️ One task, both approaches side by side"), open=True):
                    compare_btn = gr.Button(tr("⚖️ 两种写法各跑一遍", "⚖️ Run both approaches"), size="sm",
                                            elem_classes=["tw-compare"])
                    compared = gr.HTML(plan_view.comparison([]), css_template=timeline.css(),
                                       elem_classes=["tw-compare-table"])
                run = RunPanel(LESSON, settings, editor.editor, list(planning_backend.QUESTIONS),
                               options={"approach": approach, "broken": broken})

        def choices_for(report, inputs, values):
            names = [(t.get("function") or {}).get("name") for t in report["tools"]] if report["ok"] else []
            return {broken: gr.update(choices=broken_choices([n for n in names if n]))}

        def compare(values: dict, request: gr.Request):
            question = (values[run.question] or "").strip()
            if not question:
                return plan_view.comparison([], tr("请先输入一个问题，或从预设问题里选一个。",
                                                   "Type a question first, or pick a preset one."))
            chosen, session_key = settings.read(values)
            rows = planning_backend.compare(values[editor.editor] or "", question, chosen, values[broken] or "",
                                            session_key=session_key, secrets=settings.secrets,
                                            session_id=session_of(request), request=request,
                                            purpose=purposes.event(purposes.purpose_for(LESSON.id, question)))
            return plan_view.comparison(rows)

        compare_btn.click(compare, {editor.editor, run.question, broken, *settings.components}, [compared],
                          api_visibility=PRIVATE)
        schema.wire(editor.editor, extra=choices_for, extra_outputs=[broken])
        editor.wire(run.presets, run.question)
        run.wire()
    return LessonPage(LESSON.id, run, editor=editor, schema=schema)
