"""MCP: the same tools served over MCP. The editor's source is served by an MCP server
(runs/mcp_backend.py), the loop is an MCP client (code/mcp_client_loop.py), and the timeline
shows every JSON-RPC message beside the model's. The schema panel puts what the client is
listed (tools/list: inputSchema, annotations) beside what FastMCP derives from the same
functions, and the annotations can be the permission rules' defaults."""
from __future__ import annotations

import json

import gradio as gr
import i18n
import permissions
from i18n import now, tr

from catalogue import LESSONS
from mcp_schema_diff import MISSING, show

from lessons.code_box import CodeBox
from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.presets import MISTAKE_LABEL, PARALLEL_LABEL, PRESETS, describe_mistakes, mistake_choices
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from runs import mcp_backend

# The tab's words, in one place.
REGISTRY_LABEL = tr("注册表的 schema（上一课的 tools）", "The registry's schema (the last lesson's tools)")
LISTED_LABEL = tr("MCP 客户端看到的 tools/list（inputSchema、annotations）",
                  "tools/list as the MCP client sees it (inputSchema, annotations)")
FASTMCP_LABEL = tr("对照：换成 FastMCP（pydantic 从同一个函数自己推）会列出的",
                   "Beside it: what FastMCP would list (pydantic derives it from the same function)")
ANNOTATIONS_LABEL = tr("用工具注解作为默认规则（readOnlyHint → 直接执行，destructiveHint → 先问你）",
                       "Use the tool annotations as default rules (readOnlyHint → runs, destructiveHint → asks you)")
ANNOTATIONS_NOTE = tr("注解是服务器对自己的描述，是提示，不是保证。打开后：标了 readOnlyHint 的工具直接执行，"
                      "标了 destructiveHint 的先暂停问你，其余的也先问你（没有规则匹配就问人）。",
                      "Annotations are the server describing itself: hints, not guarantees. When on, a tool marked "
                      "readOnlyHint runs, one marked destructiveHint pauses to ask you, and so does any other "
                      "(no rule matches, so a person is asked).")
SAME = tr("✅ `{name}`：inputSchema 与注册表的 parameters 完全相同",
          "✅ `{name}`: inputSchema is exactly the registry's parameters")
NOT_SAME = tr("❌ `{name}`：inputSchema 与注册表的 parameters 不同", "❌ `{name}`: inputSchema differs from the registry's parameters")
NOT_LISTED = tr("❌ `{name}`：tools/list 里没有这个工具", "❌ `{name}`: this tool is not in tools/list")
HINTS = {"readOnlyHint": tr("只读 readOnlyHint", "read-only readOnlyHint"),
         "destructiveHint": tr("会删改 destructiveHint", "destructive destructiveHint")}
HINTS_LEAD = tr("；注解：", "; annotations: ")
NO_HINTS = tr("没有注解", "no annotations")
LISTED_FAILED = tr("tools/list 的样子没有生成：{message}", "What tools/list would show could not be made: {message}")
MADE_HOW = tr("在沙箱里为每个工具生成：左边是课程的服务器（code/mcp_server.py 的 mcp_tool）在 tools/list 里列出的一项，"
              "右边是 FastMCP 会列出的一项。运行时，时间线里是服务器真正的回答。",
              "Made in the sandbox for each tool: on the left, the item the course's server (mcp_tool in "
              "code/mcp_server.py) lists in tools/list; on the right, the item FastMCP would list. When you run, "
              "the timeline holds the server's real answers.")
DIFFERENT = tr("FastMCP 推出的 `{name}` 与注册表有 {count} 处不同：", "FastMCP's `{name}` differs from the registry in {count} places:")
NO_DIFFERENCE = tr("FastMCP 推出的 `{name}` 参数与注册表的一样。", "FastMCP's `{name}` has the registry's parameters.")
AT_ROOT, AT_PARAMETER = tr("根上的", "at the root,"), tr("参数 {name} 的", "parameter {name},")
DIFFERENCE = tr("- 【{kind}】{where} `{key}`：注册表 `{registry}`，FastMCP `{fastmcp}`",
                "- [{kind}] {where} `{key}`: registry `{registry}`, FastMCP `{fastmcp}`")
# mcp_schema_diff (course code) names the kinds in Chinese; an English page names them by key.
KINDS_EN = {"title": "title key", "description": "description", "default": "default"}
OTHER_KIND_EN = "type and other"
DESCRIPTION_DIFFERS = tr("- 【描述】工具描述：FastMCP `{description}`", "- [description] the tool's description: FastMCP `{description}`")
OUTPUT_SCHEMA = tr("- 【outputSchema】FastMCP 还按返回值注解生成了一份 `{schema}`；注册表不生成（MCP 里它是可选的）",
                   "- [outputSchema] FastMCP also makes one from the return annotation, `{schema}`; the registry makes "
                   "none (it is optional in MCP)")


LESSON = LESSONS["mcp"]


def hints_text(annotations: dict) -> str:
    shown = [now(label) for key, label in HINTS.items() if annotations.get(key) is True]
    return tr("、", ", ").join(shown) if shown else now(NO_HINTS)


def shown(value) -> str:
    text = show(value)
    return text if text != MISSING else tr(MISSING, "(none)")


def comparison(views: dict) -> str:
    """Per tool: inputSchema = parameters or not, its annotations, and what FastMCP derives differently."""
    if not views["listed"]["ok"]:
        return "❌ " + now(LISTED_FAILED).format(message=views["listed"]["error"])
    blocks = [now(MADE_HOW)]
    for row in views["tools"]:
        template = SAME if row["same"] else NOT_SAME if row["listed"] else NOT_LISTED
        blocks.append(now(template).format(name=row["name"]) + now(HINTS_LEAD) + hints_text(row["annotations"]))
        found = row["differences"]
        lines = [now(DIFFERENT).format(name=row["name"], count=len(found)) if found
                 else now(NO_DIFFERENCE).format(name=row["name"])]
        for d in found:
            where = now(AT_ROOT) if d["where"] == "根" else now(AT_PARAMETER).format(name=d["where"])
            kind = i18n.pick(d["kind"], KINDS_EN.get(d["key"], OTHER_KIND_EN))
            lines.append(now(DIFFERENCE).format(kind=kind, where=where, key=d["key"], registry=shown(d["registry"]),
                                                fastmcp=shown(d["fastmcp"])))
        if row["description_differs"]:
            lines.append(now(DESCRIPTION_DIFFERS).format(description=shown(row["fastmcp_description"])))
        if row["output_schema"]:
            lines.append(now(OUTPUT_SCHEMA).format(schema=shown(row["output_schema"])))
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


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=PRESETS)
                schema = SchemaPanel(REGISTRY_LABEL)
                compared = gr.Markdown(elem_classes=["tw-mcp-compare"])
                with gr.Row(equal_height=False):
                    listed = CodeBox(label=LISTED_LABEL, language="json", filename="tools_list.json", lines=10,
                                     max_lines=30, elem_classes=["tw-mcp-listed"], min_width=200)
                    fastmcp = CodeBox(label=FASTMCP_LABEL, language="json", filename="fastmcp_tools.json", lines=10,
                                      max_lines=30, elem_classes=["tw-mcp-fastmcp"], min_width=200)
            with gr.Column(scale=6, min_width=320):
                with gr.Row():
                    parallel = gr.Checkbox(value=True, label=PARALLEL_LABEL, min_width=150)
                # Its own line: a mistake's name is cut in a row beside other controls.
                mistake = gr.Dropdown(mistake_choices("function_calling"), value="", label=MISTAKE_LABEL,
                                      elem_classes=["tw-mistake"])
                describe_mistakes(mistake)
                annotations = gr.Checkbox(value=False, label=ANNOTATIONS_LABEL, info=ANNOTATIONS_NOTE,
                                          elem_classes=["tw-mcp-annotations"])
                run = RunPanel(LESSON, settings, editor.editor, PRESETS[LESSON.example],
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
    return LessonPage(LESSON.id, run, editor=editor, schema=schema, kept={"annotations": annotations})
