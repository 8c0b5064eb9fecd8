"""MCP: the same tools served over MCP. The editor's source is served by an MCP server
(runs/mcp_backend.py), the loop is an MCP client (code/mcp_client_loop.py), and the timeline
shows every JSON-RPC message beside the model's. The schema panel puts what the client is
listed (tools/list: inputSchema, annotations) beside what FastMCP derives from the same
functions, and the annotations can be the permission rules' defaults."""
from __future__ import annotations

import json

import gradio as gr
import permissions
from mcp_schema_diff import show

from lessons.editor_panel import EditorPanel, lesson_text
from lessons.function_calling_tab import tool_choice_value
from lessons.lesson_tab import LessonTab
from lessons.presets import PRESETS, mistake_choices
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from llm_clients import without_parameter
from runs import mcp_backend
from runs.run_driver import Lesson

# The tab's words, in one place.
TITLE = "MCP"
LESSON_TITLE = "📖 课文：同一批工具，放到 MCP 上"
REGISTRY_LABEL = "注册表的 schema（上一课的 tools）"
LISTED_LABEL = "MCP 客户端看到的 tools/list（inputSchema、annotations）"
FASTMCP_LABEL = "对照：换成 FastMCP（pydantic 从同一个函数自己推）会列出的"
PARALLEL_LABEL = "允许并行调用 parallel_tool_calls"
MISTAKE_LABEL = "模拟模型失误（离线模型）"
ANNOTATIONS_LABEL = "用工具注解作为默认规则（readOnlyHint → 直接执行，destructiveHint → 先问你）"
ANNOTATIONS_NOTE = ("注解是服务器对自己的描述，是提示，不是保证。打开后：标了 readOnlyHint 的工具直接执行，"
                    "标了 destructiveHint 的先暂停问你，其余的也先问你（没有规则匹配就问人）。")
SAME = "✅ `{name}`：inputSchema 与注册表的 parameters 完全相同"
NOT_SAME = "❌ `{name}`：inputSchema 与注册表的 parameters 不同"
NOT_LISTED = "❌ `{name}`：tools/list 里没有这个工具"
HINTS = {"readOnlyHint": "只读 readOnlyHint", "destructiveHint": "会删改 destructiveHint"}
NO_HINTS = "没有注解"
LISTED_FAILED = "tools/list 的样子没有生成：{message}"
MADE_HOW = ("在沙箱里为每个工具生成：左边是课程的服务器（code/mcp_server.py 的 mcp_tool）在 tools/list 里列出的一项，"
            "右边是 FastMCP 会列出的一项。运行时，时间线里是服务器真正的回答。")
OUTPUT_SCHEMA = "- 【outputSchema】FastMCP 还按返回值注解生成了一份 `{schema}`；注册表不生成（MCP 里它是可选的）"


def start(client, question, tools, execute, settings, options):
    """The loop over MCP: the options of Function Calling, the tools from the server's tools/list."""
    tool_choice, parallel = tool_choice_value(options.get("tool_choice")), bool(options.get("parallel_tool_calls", True))
    for parameter in options.get("without") or ():   # 「去掉 … 重试」: what the endpoint refused is not sent
        tools, tool_choice, parallel = without_parameter(tools, tool_choice, parallel, parameter)
    return mcp_backend.served_loop(execute, client, question, max_turns=settings.max_turns,
                                   temperature=settings.temperature, stream=settings.stream, tool_choice=tool_choice,
                                   parallel_tool_calls=parallel, envelope=bool(options.get("envelope")))


LESSON = Lesson("mcp", start, mistake_option="mistake")


def hints_text(annotations: dict) -> str:
    shown = [label for key, label in HINTS.items() if annotations.get(key) is True]
    return "、".join(shown) if shown else NO_HINTS


def comparison(views: dict) -> str:
    """Per tool: inputSchema = parameters or not, its annotations, and what FastMCP derives differently."""
    if not views["listed"]["ok"]:
        return "❌ " + LISTED_FAILED.format(message=views["listed"]["error"])
    blocks = [MADE_HOW]
    for row in views["tools"]:
        template = SAME if row["same"] else NOT_SAME if row["listed"] else NOT_LISTED
        blocks.append(template.format(name=row["name"]) + f"；注解：{hints_text(row['annotations'])}")
        found = row["differences"]
        lines = [f"FastMCP 推出的 `{row['name']}` 与注册表有 {len(found)} 处不同：" if found
                 else f"FastMCP 推出的 `{row['name']}` 参数与注册表的一样。"]
        for d in found:
            where = "根上的" if d["where"] == "根" else f"参数 {d['where']} 的"
            lines.append(f"- 【{d['kind']}】{where} `{d['key']}`：注册表 `{show(d['registry'])}`，"
                         f"FastMCP `{show(d['fastmcp'])}`")
        if row["description_differs"]:
            lines.append(f"- 【描述】工具描述：FastMCP `{show(row['fastmcp_description'])}`")
        if row["output_schema"]:
            lines.append(OUTPUT_SCHEMA.format(schema=show(row["output_schema"])))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def annotation_gate(source: str, on: bool) -> tuple[dict | None, str]:
    """The run's permission rules: None (no gate) unless the student turned the annotations on;
    then the annotations of the tools the server lists for `source` (from the panel's cache).
    A source whose tools cannot be listed leaves no rule, so every call asks."""
    if not on:
        return None, ""
    listed = mcp_backend.listed_tools(source or "")
    return permissions.annotation_rules(listed["tools"]), ""


def build(settings: SettingsPanel) -> LessonTab:
    with gr.Tab(TITLE, id=LESSON.name, elem_id="tab-mcp") as tab:
        with gr.Accordion(LESSON_TITLE, open=False):
            gr.Markdown(lesson_text("mcp.md"))
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(presets=PRESETS)
                schema = SchemaPanel(REGISTRY_LABEL)
                compared = gr.Markdown(elem_classes=["tw-mcp-compare"])
                with gr.Row(equal_height=False):
                    listed = gr.Code(label=LISTED_LABEL, language="json", interactive=False, lines=10, max_lines=30,
                                     elem_classes=["tw-mcp-listed"], min_width=200)
                    fastmcp = gr.Code(label=FASTMCP_LABEL, language="json", interactive=False, lines=10,
                                      max_lines=30, elem_classes=["tw-mcp-fastmcp"], min_width=200)
            with gr.Column(scale=6, min_width=320):
                with gr.Row():
                    parallel = gr.Checkbox(value=True, label=PARALLEL_LABEL, min_width=150)
                    mistake = gr.Dropdown(mistake_choices("function_calling"), value="", label=MISTAKE_LABEL,
                                          elem_classes=["tw-mistake"], min_width=150)
                annotations = gr.Checkbox(value=False, label=ANNOTATIONS_LABEL, info=ANNOTATIONS_NOTE,
                                          elem_classes=["tw-mcp-annotations"])
                run = RunPanel(LESSON, settings, editor.editor, PRESETS["天气"],
                               options={"parallel_tool_calls": parallel, "mistake": mistake},
                               rules=lambda values: annotation_gate(values[editor.editor], bool(values[annotations])),
                               rule_inputs=[annotations], ask=True)

        def views_for(report, inputs, values):
            if not report["ok"]:
                return {}
            views = mcp_backend.schema_views(inputs.source, report["tools"], inputs.session_id)
            return {compared: comparison(views),
                    listed: json.dumps(views["listed"]["tools"], ensure_ascii=False, indent=2),
                    fastmcp: json.dumps(views["listed"]["fastmcp"], ensure_ascii=False, indent=2)}

        schema.wire(editor.editor, extra=views_for, extra_outputs=[compared, listed, fastmcp])
        editor.wire(run.presets, run.question)
        run.wire()
    return LessonTab(LESSON.name, run, tab, editor=editor, schema=schema, kept={"annotations": annotations})
