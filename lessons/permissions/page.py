"""Lesson 5 · 权限与确认: rules (allow / ask / deny) between the model's call and the tool.
An "ask" pauses the run and shows exactly what would run; the student approves, edits the
arguments and approves, or denies with a reason the model is told. Same workspace as lesson 4."""
from __future__ import annotations

import json

import gradio as gr

from i18n import tr

from catalogue import LESSONS
import permissions

from lessons.editor_panel import lesson_text_box
from lessons.lesson_page import LessonPage
from serving.page_events import PRIVATE
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel
from lessons.workspace_panel import WorkspaceView, approach_radio

LESSON = LESSONS["permissions"]
DEFAULT_PRESET = "默认"
# The course's rule presets (code/permissions.py) by name, in English.
PRESET_NAMES_EN = {"默认": "Default", "只读": "Read-only", "全部信任": "Trust all"}
PRESETS = [
    "运行测试",
    "找到失败的测试并修好它",
    "新建文件 hello.py，内容是 print('你好，工作区')",
    "运行 `rm notes.md`",
    "读一下 notes.md，告诉我练习要做什么",
    "运行 `ls -la src`",
]


def rules_text(preset: str) -> str:
    return json.dumps(permissions.PRESETS.get(preset, {}), ensure_ascii=False, indent=2)


def parse_rules(text: str) -> tuple[dict | None, str]:
    """(rules, "") or (None, what is wrong, in Chinese)."""
    try:
        rules = json.loads(text or "")
    except json.JSONDecodeError as exc:
        return None, tr("规则不是合法 JSON（第 {line} 行第 {col} 列：{msg}）",
                        "The rules are not valid JSON (line {line}, column {col}: {msg})").format(
                            line=exc.lineno, col=exc.colno, msg=exc.msg)
    problems = permissions.validate_rules(rules)
    return (None, "；".join(problems)) if problems else (rules, "")


def rules_status(text: str) -> str:
    rules, problem = parse_rules(text)
    if problem:
        return f"❌ {problem}"
    counts = {verdict: sum(1 for v in rules.values() if v == verdict) for verdict in permissions.VERDICTS}
    return tr("✅ 规则有效：{n} 条（allow {allow} · ask {ask} · deny {deny}）。没有规则匹配的调用先问你。",
              "✅ Valid rules: {n} (allow {allow} · ask {ask} · deny {deny}). A call no rule matches asks you first."
              ).format(n=len(rules), **counts)


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                preset = gr.Radio([(tr(name, PRESET_NAMES_EN.get(name, name)), name) for name in permissions.PRESETS],
                                  value=DEFAULT_PRESET, label=tr("规则预设", "Rule presets"),
                                  elem_classes=["tw-rules-preset"])
                rules = gr.Code(rules_text(DEFAULT_PRESET), language="json", interactive=True, lines=10,
                                label=tr("规则（键：工具名，或 bash:命令模式 / write:路径模式 / edit:路径模式；值：allow / ask / deny）",
                                         "Rules (key: a tool name, or bash:command pattern / write:path pattern / "
                                         "edit:path pattern; value: allow / ask / deny)"),
                                elem_classes=["tw-rules"])
                status = gr.Markdown(rules_status(rules_text(DEFAULT_PRESET)), elem_classes=["tw-rules-status"])
                view = WorkspaceView()
            with gr.Column(scale=6, min_width=320):
                run = RunPanel(LESSON, settings, None, PRESETS, options={"approach": approach_radio()}, workspace=view,
                               rules=lambda values: parse_rules(values[rules]), rule_inputs=[rules], ask=True)
        preset.input(lambda name: (rules_text(name), rules_status(rules_text(name))), [preset], [rules, status],
                     api_visibility=PRIVATE, show_progress="hidden")
        rules.change(rules_status, [rules], [status], api_visibility=PRIVATE, show_progress="hidden")
        run.wire()
    return LessonPage(LESSON.id, run, kept={"rules": rules, "rules_preset": preset})
