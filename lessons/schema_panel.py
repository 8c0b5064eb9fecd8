"""The live schema panel: the tools JSON regenerated through the sandbox as the
student types, the registry's warnings, errors with their line, and a one-line
summary of what changed since the previous schema (kept in the session's gr.State)."""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Iterable, Mapping

import gradio as gr

import i18n
from i18n import tr
from lessons.code_box import CodeBox

from runs import backend
from runs.backend import error_text
from serving import expiry
from serving.page_events import SILENT, session_of


def _props(tool: dict) -> tuple[dict, set]:
    params = (tool.get("function") or {}).get("parameters") or {}
    return params.get("properties") or {}, set(params.get("required") or [])


def _type_of(prop: Any) -> str:
    if not isinstance(prop, dict):
        return "?"
    kind = prop.get("type")
    if kind is None and "anyOf" in prop:
        kind = [_type_of(p) for p in prop["anyOf"]]
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array[{_type_of(prop['items'])}]"
    text = str(kind)
    if prop.get("enum"):
        text += "{" + ",".join(str(v) for v in prop["enum"]) + "}"
    return text


def describe_changes(old: list[dict] | None, new: list[dict] | None) -> str:
    """`count: string → integer`, `+ 工具 get_time`, `- 参数 unit`... or '' when equal."""
    if old is None or new is None:
        return ""
    old_by = {(t.get("function") or {}).get("name"): t for t in old}
    new_by = {(t.get("function") or {}).get("name"): t for t in new}
    changes: list[str] = []
    for name in new_by.keys() - old_by.keys():
        changes.append(tr("+ 工具 {n}", "+ tool {n}").format(n=name))
    for name in old_by.keys() - new_by.keys():
        changes.append(tr("- 工具 {n}", "- tool {n}").format(n=name))
    for name in [n for n in new_by if n in old_by]:
        before, after = old_by[name], new_by[name]
        prefix = f"{name}." if len(new_by) > 1 else ""
        old_props, old_req = _props(before)
        new_props, new_req = _props(after)
        for pname in new_props.keys() - old_props.keys():
            changes.append(tr("+ 参数 {p}: {t}", "+ parameter {p}: {t}").format(p=prefix + pname, t=_type_of(new_props[pname])))
        for pname in old_props.keys() - new_props.keys():
            changes.append(tr("- 参数 {p}", "- parameter {p}").format(p=prefix + pname))
        for pname in [p for p in new_props if p in old_props]:
            a, b = _type_of(old_props[pname]), _type_of(new_props[pname])
            if a != b:
                changes.append(f"{prefix}{pname}: {a} → {b}")
            elif old_props[pname] != new_props[pname]:
                changes.append(tr("{p}: 说明或默认值变了", "{p}: description or default changed").format(p=prefix + pname))
            if (pname in old_req) != (pname in new_req):
                changes.append(f"{prefix}{pname}: " + (tr("可选 → 必填", "optional → required") if pname in new_req
                                                        else tr("必填 → 可选", "required → optional")))
        if (before.get("function") or {}).get("description") != (after.get("function") or {}).get("description"):
            changes.append(tr("{n}: 描述变了", "{n}: description changed").format(n=name))
        if (before.get("function") or {}).get("strict") != (after.get("function") or {}).get("strict"):
            changes.append(f"{name}: strict " + (tr("开", "on") if (after.get("function") or {}).get("strict")
                                                     else tr("关", "off")))
    return tr("；", "; ").join(sorted(changes, key=lambda c: c.lstrip("+- "))) if changes else ""


def warnings_text(warnings: dict | None) -> str:
    lines = [f"⚠️ {name}：{w}" for name, items in (warnings or {}).items() for w in items]
    return "\n".join(lines)


def schema_report(source: str, strict: bool = False, previous: list | None = None, method: str = "registry",
                  session_id: str | None = None) -> dict:
    """What the panel shows, as plain data: the extraction (backend.extract) and what changed."""
    report = backend.extract(source, method, strict, session_id)
    report["changes"] = describe_changes(previous, report["tools"]) if report["ok"] else ""
    return report


def status_markdown(report: dict, kept_previous: bool) -> str:
    lines = []
    if report["error"]:
        lines.append(error_text(report["error"]))
        if kept_previous:
            # The schema box is drawn below this note (SchemaPanel builds the status first).
            lines.append(tr("（下面显示的是上一次成功生成的 schema）", "(Below: the schema from the last successful generation.)"))
    else:
        count = len(report["tools"])
        lines.append(tr("✅ 已生成 {n} 个工具的 schema", "✅ Schema generated for {n} tool(s)").format(n=count) + (
            "" if count else tr("（源码里还没有用 @registry.tool 注册的工具）",
                                " (the source has no tool registered with @registry.tool yet)")))
    if report["warnings"]:
        lines.append(warnings_text(report["warnings"]))
    if report["changes"]:
        lines.append(tr("🔁 变化：", "🔁 Changes: ") + f"`{report['changes']}`")
    return "\n\n".join(lines)


@dataclasses.dataclass
class SchemaInputs:
    """What a refresh of the panel reads from the page."""
    source: str
    previous: list | None          # the last good tools list (kept while the source is broken)
    strict: bool
    session_id: str | None


# extra(report, inputs, values) -> {component: value}: what a tab adds to each refresh, given
# the report, the panel's inputs and the values of the tab's own extra inputs.
Extra = Callable[[dict, SchemaInputs, Mapping], dict]


class SchemaPanel:
    """Components of one tab's schema panel. `tools_state` holds the last good tools list."""

    def __init__(self, label: str | None = None):
        label = label or tr("工具 schema（自动生成，发送给模型的 tools）", "Tool schema (generated; the tools sent to the model)")
        self.first: dict = {}      # per language, what the page shows before it asks the server (`prepare`)
        self.tools_state = gr.State(None, time_to_live=expiry.session_ttl())
        self.status = gr.Markdown(elem_classes=["tw-schema-status"])
        self.json = CodeBox(label=label, language="json", filename="tools.json", lines=14, max_lines=30,
                            elem_classes=["tw-schema-json"])

    def wire(self, editor: gr.Code, strict: gr.Checkbox | None = None, extra: Extra | None = None,
             extra_inputs: Iterable = (), extra_outputs: Iterable = (), extra_triggers: Iterable = ()):
        """Re-extract on every edit (trigger_mode always_last collapses fast typing) and
        when strict changes (or `extra_triggers` fire: a tab control an extra output depends on).
        `extra` feeds the tab's additional outputs (e.g. the try-call tool list). Sets
        `inputs`/`outputs` and returns the handler, also used on page load."""
        self.inputs = {editor, self.tools_state, *([strict] if strict is not None else []), *extra_inputs}
        self.outputs = [self.json, self.status, self.tools_state, *extra_outputs]
        self.editor, self.strict = editor, strict

        def refresh(values: dict, request: gr.Request):
            inputs = SchemaInputs(source=values[editor] or "", previous=values[self.tools_state],
                                  strict=bool(values[strict]) if strict is not None else False,
                                  session_id=session_of(request))
            report = schema_report(inputs.source, inputs.strict, inputs.previous, session_id=inputs.session_id)
            tools = report["tools"] if report["ok"] else inputs.previous
            shown = {self.json: json.dumps(tools or [], ensure_ascii=False, indent=2),
                     self.status: status_markdown(report, inputs.previous is not None), self.tools_state: tools}
            return {**shown, **(extra(report, inputs, values) if extra else {})}

        # A few milliseconds of work: answered directly rather than through the queue. `edited`
        # is the refresh after an edit: what else an edit triggers (keeping the source in the
        # browser) is chained after it, so the student sees the new schema first. One listener for the
        # source and strict: a refresh waits for the one under way and reads both as they are then, so
        # an earlier edit's schema never lands after a later one's.
        triggers = [editor.change] + ([strict.change] if strict is not None else []) + list(extra_triggers)
        self.edited = gr.on(triggers, refresh, self.inputs, self.outputs, trigger_mode="always_last", **SILENT)
        self.refresh = refresh
        return refresh

    # ------------------------------------------------------------ page load

    def prepare(self) -> None:
        """The schema of the editor's untouched example, made once by the sandbox (after it has
        started): every page then shows it from the start (gradio_patches.set_page_values), in
        each language, instead of waiting for its first round trip. A page whose browser kept
        another source shows that one's schema after `load`."""
        strict = bool(self.strict.value) if self.strict is not None else False
        report = schema_report(self.editor.value or "", strict)
        if report["ok"]:
            tools = json.dumps(report["tools"], ensure_ascii=False, indent=2)
            for lang in i18n.LANGUAGES:
                with i18n.using(lang):
                    self.first[lang] = {self.json: self.json.postprocess(tools), self.status: status_markdown(report, False)}

    def load(self, values: dict, request: gr.Request) -> dict:
        """The refresh on page load (after the browser's memory is back): what the page already
        shows is not sent again, so an edit typed meanwhile is never overdrawn by this older answer."""
        out = self.refresh(values, request)
        # The browser holds the schema box's HTML, drawn from the text: compared as drawn.
        if self.json.postprocess(out[self.json]) == values.get(self.json):
            out[self.json] = gr.skip()
        if out[self.status] == values.get(self.status):
            out[self.status] = gr.skip()
        return out
