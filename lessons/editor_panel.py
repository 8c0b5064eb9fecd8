"""The editable tool source: a Python gr.Code preloaded from the example files in
code/, an example-set picker and a reset button."""
from __future__ import annotations

from pathlib import Path

import gradio as gr

from i18n import tr
from lessons import CODE_DIR
from memory.browser_memory import LESSON_NOTE
from serving.page_events import PRIVATE

EXAMPLE_SETS = {
    "天气": "examples_weather.py",
    "计算器": "examples_calculator.py",
    "工资/员工档案": "examples_employees.py",
    "员工档案与税后收入（8.4）": "examples_payroll.py",
    "转账与删除用户（Schema ≠ 授权）": "examples_authorization.py",
    "异步工具（async def）": "examples_async.py",
    "会超时的工具（timeout）": "examples_timeout.py",
    "超长结果（截断）": "examples_long_result.py",
}
FUTURE_TRAP = "examples_future_trap.py"
DRIFT = "examples_drift.py"          # a hand-written schema left behind by a renamed parameter


def example_text(file_name: str) -> str:
    path = Path(CODE_DIR) / file_name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return f"# 找不到示例文件 code/{file_name}\nfrom tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n"


def lesson_text(name: str) -> str:
    """A lesson's text (`react.md`), with its English beside it (`react.en.md`)."""
    folder, path = Path(__file__).parent, Path(name)
    english = folder / f"{path.stem}.en{path.suffix}"
    return tr((folder / name).read_text(encoding="utf-8"), english.read_text(encoding="utf-8"))


class EditorPanel:
    def __init__(self, sets: dict[str, str] | None = None, default: str = "天气", presets: dict[str, list[str]] | None = None):
        self.sets = dict(sets or EXAMPLE_SETS)
        self.texts = {label: example_text(file) for label, file in self.sets.items()}
        self.presets = presets or {}
        with gr.Row():
            self.example_set = gr.Dropdown(list(self.sets), value=default, label="示例工具集",
                                           elem_classes=["tw-example-set"], min_width=160, scale=3)
            self.reset_btn = gr.Button("↺ 重置源码", size="sm", elem_classes=["tw-reset"], min_width=100, scale=1)
        self.editor = gr.Code(self.texts[default], language="python", label="工具源码（可编辑，改动后 schema 自动更新）",
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
        self.example_set.input(pick, [self.example_set], outputs, api_visibility=PRIVATE)

        def reset(label):
            return texts.get(label, ""), (f"{LESSON_NOTE}\n\n↺ 已把源码恢复为示例「{label}」：你改过的源码已被替换，"
                                          "本浏览器里保存的源码也随之更新。")

        self.reset_btn.click(reset, [self.example_set], [self.editor, self.memory_note], api_visibility=PRIVATE)
