"""The editable tool source: a Python gr.Code preloaded from the example files in
code/, an example-set picker and a reset button."""
from __future__ import annotations

from pathlib import Path

import gradio as gr

from catalogue import Lesson
from i18n import now, tr
from lessons import CODE_DIR, ROOT
from memory.browser_memory import LESSON_NOTE
from serving.page_events import PRIVATE, on_choice

# (name, its English, file): the name is what links and the browser's memory hold, in either language.
EXAMPLES = [
    ("天气", "Weather", "examples_weather.py"),
    ("计算器", "Calculator", "examples_calculator.py"),
    ("工资/员工档案", "Salaries / staff records", "examples_employees.py"),
    ("员工档案与税后收入（8.4）", "Staff records and net income (8.4)", "examples_payroll.py"),
    ("转账与删除用户（Schema ≠ 授权）", "Transfers and deleting users (schema ≠ authorisation)", "examples_authorization.py"),
    ("异步工具（async def）", "Async tools (async def)", "examples_async.py"),
    ("会超时的工具（timeout）", "A tool that times out (timeout)", "examples_timeout.py"),
    ("超长结果（截断）", "Very long result (cut)", "examples_long_result.py"),
    ("运维：配置、SQL、命令", "Ops: config, SQL, shell", "examples_ops.py"),
]
# Only the evaluation lesson offers it: the weather tools with vague descriptions, to be scored against the clear ones.
VAGUE_WEATHER = ("天气（描述含糊）", "Weather (vague descriptions)", "examples_weather_vague.py")
EXAMPLE_SETS = {name: file for name, _, file in EXAMPLES}          # the sets every editor offers
EXAMPLE_FILES = {name: file for name, _, file in [*EXAMPLES, VAGUE_WEATHER]}
EXAMPLE_NAMES_EN = {name: english for name, english, _ in [*EXAMPLES, VAGUE_WEATHER]}
FUTURE_TRAP = "examples_future_trap.py"
DRIFT = "examples_drift.py"          # a hand-written schema left behind by a renamed parameter


def example_text(file_name: str) -> str:
    path = Path(CODE_DIR) / file_name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return tr("# 找不到示例文件 code/{file}\n", "# Example file not found: code/{file}\n").format(file=file_name) + "from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n"


def lesson_sets(lesson: Lesson) -> dict[str, str]:
    """{name: file} of the example sets a lesson's editor offers: the shared ones, then its own (catalogue)."""
    return {**EXAMPLE_SETS, **{name: EXAMPLE_FILES[name] for name in lesson.own_examples}} if lesson.editor else {}


def example_choices(sets) -> list:
    """The example sets as the dropdown shows them: (name in the page's language, name)."""
    return [(tr(name, EXAMPLE_NAMES_EN.get(name, name)), name) for name in sets]


def lesson_text_box(lesson: Lesson) -> None:
    """The lesson's text, folded under its heading: the catalogue's, so the title is written once."""
    with gr.Accordion(tr("📖 课文：{heading}", "📖 Lesson: {heading}").format(heading=lesson.heading), open=False):
        gr.Markdown(lesson_text(lesson))


def lesson_text(lesson: Lesson) -> tr:
    """A lesson's text, with its English beside it: the files the catalogue names (`texts`)."""
    return tr((ROOT / lesson.texts.zh).read_text(encoding="utf-8"), (ROOT / lesson.texts.en).read_text(encoding="utf-8"))


class EditorPanel:
    def __init__(self, lesson: Lesson, presets: dict[str, list[str]] | None = None):
        self.sets, default = lesson_sets(lesson), lesson.example
        self.texts = {label: example_text(file) for label, file in self.sets.items()}
        self.presets = presets or {}
        with gr.Row():
            self.example_set = gr.Dropdown(example_choices(self.sets), value=default, label=tr("示例工具集", "Example tool set"),
                                           elem_classes=["tw-example-set"], min_width=160, scale=3)
            self.reset_btn = gr.Button(tr("↺ 重置源码", "↺ Reset source"), size="sm", elem_classes=["tw-reset"], min_width=100, scale=1)
        self.editor = gr.Code(self.texts[default], language="python", label=tr("工具源码（可编辑，改动后 schema 自动更新）",
                                                                               "Tool source (editable; the schema follows every edit)"),
                              interactive=True, lines=18, max_lines=40, elem_classes=["tw-editor"])
        # What this browser keeps of the tab, and notices about it (browser_memory.py).
        self.memory_note = gr.Markdown(LESSON_NOTE, elem_classes=["tw-memory-note"])

    def wire(self, presets_dropdown: gr.Dropdown | None = None, question: gr.Textbox | None = None):
        texts, presets = self.texts, self.presets

        def pick(label):
            source = texts.get(label, "")
            if presets_dropdown is None:
                return source
            choices = presets.get(label) or []
            first = choices[0] if choices else ""
            return source, gr.update(choices=choices, value=first), first

        outputs = [self.editor] + ([presets_dropdown, question] if presets_dropdown is not None else [])
        on_choice(self.example_set, pick, [], outputs)

        def reset(label):
            return texts.get(label, ""), now(LESSON_NOTE) + "\n\n" + tr(
                "↺ 已把源码恢复为示例「{label}」：你改过的源码已被替换，本浏览器里保存的源码也随之更新。",
                "↺ The source is the example «{label}» again: your edited source was replaced, and so was the "
                "source this browser keeps.").format(label=tr(label, EXAMPLE_NAMES_EN.get(label, label)))

        self.reset_btn.click(reset, [self.example_set], [self.editor, self.memory_note], api_visibility=PRIVATE)
