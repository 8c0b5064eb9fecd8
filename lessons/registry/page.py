"""工具注册: the naive inspect-based generator and the registry side by side on the
student's source, the difference highlighted, the __future__ trap and a hand-written
schema that drifted from its function one click away,
strict mode, and a 试调用 panel that calls one tool through the sandbox, no model."""
from __future__ import annotations

import difflib
import html
import json
import re

import gradio as gr

from i18n import tr

from catalogue import LESSONS

from runs import backend
from lessons.code_box import CodeBox
from lessons.editor_panel import DRIFT, FUTURE_TRAP, EditorPanel, example_text, lesson_text_box
from lessons.lesson_page import LessonPage
from serving.page_events import PRIVATE, session_of, value_box
from lessons.presets import PRESETS
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel, describe_changes, error_text
from lessons.settings_panel import SettingsPanel
from tool_outcome import RESULT_LIMIT

DIFF_CSS = """
.tw-diff { font-family: var(--font-mono); font-size: 0.8em; white-space: pre-wrap; word-break: break-word;
  background: var(--background-fill-secondary); border-radius: 6px; padding: 8px; max-height: 360px; overflow: auto; }
.tw-diff .add { background: rgba(22,163,74,0.18); display: block; }
.tw-diff .del { background: rgba(220,38,38,0.16); display: block; text-decoration: line-through; text-decoration-color: rgba(220,38,38,0.5); }
.tw-diff .same { display: block; color: var(--body-text-color-subdued); }
.tw-diff-summary { margin: 4px 0 8px 0; font-weight: 600; }
"""
EXAMPLE_IN_TEXT = re.compile(r"如\s*([^\s，、,；;。）)]+)")
TYPE_EXAMPLES = {"string": "文本", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}
# The pick of a tool fills the arguments box with its example in the browser, at once: an answer from the
# server could land after the student had started typing, and replace what they typed.
FILL_EXAMPLE_JS = """(name, examples) => {
  try {
    const known = JSON.parse(examples || "{}");
    return Object.hasOwn(known, name) && typeof known[name] === "string" ? known[name] : "{}";
  } catch (e) { return "{}"; }
}"""


def pretty(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def diff_html(naive: list, correct: list) -> str:
    """Line diff of the two schemas: red lines only the naive one has, green only the registry."""
    summary = describe_changes(naive, correct)
    head = (f'<div class="tw-diff-summary">{tr("朴素 → 正确：", "naive → correct: ")}{html.escape(summary)}</div>'
            if summary else f'<div class="tw-diff-summary">{tr("两种生成方式结果相同。", "Both ways give the same result.")}</div>')
    rows = []
    for line in difflib.ndiff(pretty(naive).splitlines(), pretty(correct).splitlines()):
        tag, text = line[:2], html.escape(line[2:])
        if tag == "- ":
            rows.append(f'<span class="del">- {text}</span>')
        elif tag == "+ ":
            rows.append(f'<span class="add">+ {text}</span>')
        elif tag == "  ":
            rows.append(f'<span class="same">  {text}</span>')
    return head + '<div class="tw-diff">' + "".join(rows) + "</div>"


def example_arguments(tools: list | None, name: str | None) -> str:
    for tool in tools or []:
        function = tool.get("function") or {}
        if function.get("name") == name:
            props = (function.get("parameters") or {}).get("properties") or {}
            sample = {}
            for pname, prop in props.items():
                kind = prop.get("type")
                kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
                example = EXAMPLE_IN_TEXT.search(prop.get("description") or "") if kind == "string" else None
                if prop.get("enum"):
                    sample[pname] = prop["enum"][0]
                elif example:  # the description's own example, e.g. "城市名，如 北京"
                    sample[pname] = example.group(1)
                else:
                    sample[pname] = TYPE_EXAMPLES.get(kind, "")
            return pretty(sample)
    return "{}"


def try_call_markdown(result: dict, typed: str = "") -> str:
    lines = [tr("✅ 调用成功", "✅ The call succeeded") if result.get("ok") else
             tr("❌ 调用失败（error_code = `{code}`）", "❌ The call failed (error_code = `{code}`)").format(
                 code=result.get("error_code"))]
    # Valid JSON that is not an object: say what it is (the registry's own text, in the box below,
    # is for the model). Not when the registry read a string as JSON encoded twice (a conversion).
    shape = backend.not_an_object(typed) if result.get("error_code") == "invalid_json" \
        and not result.get("coercions") else ""
    if shape:
        lines.append(shape)
    if result.get("coercions"):
        lines.append(tr("**类型转换**：", "**Type conversions**: ") + tr("；", "; ").join(f"`{c}`" for c in result["coercions"]))
    if result.get("problems") and not shape:
        lines.append(tr("**参数问题**：", "**Problems with the arguments**:") + "\n"
                     + "\n".join(f"- {p}" for p in result["problems"]))
    if result.get("arguments") is not None:
        lines.append(tr("**实际执行的参数**：", "**Arguments the tool ran with**: ")
                     + f"`{json.dumps(result['arguments'], ensure_ascii=False)}`")
    if result.get("stdout"):
        lines.append(tr("**工具打印的输出**：", "**What the tool printed**:") + f"\n```\n{str(result['stdout'])[:2000]}\n```")
    if isinstance(result.get("clipped_from"), int):
        lines.append(tr("✂️ **结果过长已截断**：原来 {n} 个字符，回填给模型的只有前 {limit} 个",
                        "✂️ **Result too long, cut**: {n} characters, of which only the first {limit} go back to the "
                        "model").format(n=result["clipped_from"], limit=RESULT_LIMIT))
    lines.append(tr("用时 {ms} ms", "took {ms} ms").format(ms=f"{float(result.get('duration_ms') or 0):.1f}"))
    return "\n\n".join(lines)


LESSON = LESSONS["registry"]


def build(settings: SettingsPanel) -> LessonPage:
    trap_text, drift_text = example_text(FUTURE_TRAP), example_text(DRIFT)
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=PRESETS)
                with gr.Row():
                    trap_btn = gr.Button(tr("⚠️ 载入 __future__ 陷阱", "⚠️ Load the __future__ trap"), size="sm", elem_classes=["tw-trap"], min_width=140)
                    drift_btn = gr.Button(tr("⚠️ 载入 手写 schema 漂移", "⚠️ Load hand-written schema drift"), size="sm", elem_classes=["tw-drift"], min_width=140)
                    strict = gr.Checkbox(value=False, label=tr("strict 模式", "strict mode"), elem_classes=["tw-strict"], min_width=120)
            with gr.Column(scale=6, min_width=320):
                with gr.Row(equal_height=False):
                    with gr.Column(min_width=240):
                        naive = CodeBox(label=tr("朴素生成（inspect.signature + 查表）",
                                          "Naive (inspect.signature + a lookup table)"), language="json",
                                        filename="naive_tools.json", lines=12, max_lines=26, elem_classes=["tw-naive"])
                    with gr.Column(min_width=240):
                        schema = SchemaPanel(label=tr("ToolRegistry 生成（get_type_hints）", "ToolRegistry (get_type_hints)"))
                diff = gr.HTML(css_template=DIFF_CSS, elem_classes=["tw-diff-view"])
        with gr.Accordion(tr("🧪 试调用（不经过模型）", "🧪 Try a call (no model)"), open=True):
            with gr.Row(equal_height=False):
                with gr.Column(scale=1, min_width=260):
                    # Custom values allowed: an edit's schema refresh may give the list new tools while a
                    # request from the page still carries the old choice (Gradio would refuse it with a red
                    # error); a name that is no tool gets the sandbox's own answer, as a typed one does.
                    tool_name = gr.Dropdown([], label=tr("工具", "Tool"), elem_classes=["tw-try-tool"],
                                            allow_custom_value=True)
                    # Each tool's example arguments (JSON: {name: arguments}), set in the same answer as the
                    # tool list's value: the pick that answer makes reads this set's examples, not the last.
                    try_examples = value_box(value="{}")
                    try_args = gr.Code("{}", label=tr("参数 JSON", "Arguments JSON"), language="json", interactive=True, lines=5,
                                       elem_classes=["tw-try-args"])
                    try_btn = gr.Button(tr("试调用", "Try the call"), variant="primary", elem_classes=["tw-try-btn"])
                with gr.Column(scale=1, min_width=260):
                    try_report = gr.Markdown(elem_classes=["tw-try-report"])
                    try_content = gr.Textbox(label=tr("invoke 返回的文本（回填给模型的就是它；超过 {n} 字的截断并在末尾写明）",
                                                      "The text invoke returns (exactly what goes back to the model; "
                                                      "over {n} characters it is cut, and the end says so)"
                                                      ).format(n=RESULT_LIMIT), lines=4, interactive=False,
                                             elem_classes=["tw-try-content"])
        with gr.Accordion(tr("▶ 用这些工具跑一次 Function Calling", "▶ Run Function Calling once with these tools"),
                          open=False, elem_classes=["tw-run-opener"]):
            run = RunPanel(LESSON, settings, editor.editor, PRESETS[LESSON.example], strict=strict)

        def compare(report, inputs, values):
            naive_result = backend.extract(inputs.source, "naive", False, inputs.session_id)
            naive_tools = naive_result["tools"]
            names = [(t.get("function") or {}).get("name") for t in report["tools"]] if report["ok"] else []
            if report["ok"]:
                current_tool = values[tool_name]
                picked = current_tool if current_tool in names else (names[0] if names else None)
                shown_diff = diff_html(naive_tools, report["tools"])
                tool_update = gr.update(choices=names, value=picked)
                examples = json.dumps({name: example_arguments(report["tools"], name) for name in names},
                                      ensure_ascii=False)
            else:
                shown_diff = f'<div class="tw-diff-summary">{html.escape(error_text(report["error"]))}</div>'
                tool_update = examples = gr.update()
            return {naive: pretty(naive_tools) if not naive_result["error"] else error_text(naive_result["error"]),
                    diff: shown_diff, tool_name: tool_update, try_examples: examples}

        schema.wire(editor.editor, strict=strict, extra=compare, extra_inputs=[tool_name],
                    extra_outputs=[naive, diff, tool_name, try_examples])
        trap_btn.click(lambda: trap_text, None, [editor.editor], api_visibility=PRIVATE)
        drift_btn.click(lambda: drift_text, None, [editor.editor], api_visibility=PRIVATE)
        tool_name.change(None, [tool_name, try_examples], [try_args], js=FILL_EXAMPLE_JS, api_visibility=PRIVATE,
                         show_progress="hidden")

        def on_try(values: dict, request: gr.Request):
            result = backend.call_tool(values[editor.editor], values[tool_name], values[try_args],
                                       session_of(request))
            return {try_report: try_call_markdown(result, values[try_args]), try_content: str(result.get("content", ""))}

        try_btn.click(on_try, {editor.editor, tool_name, try_args}, [try_report, try_content],
                      api_visibility=PRIVATE)
        editor.wire(run.presets, run.question)
        run.wire()
    return LessonPage(LESSON.id, run, editor=editor, schema=schema)
