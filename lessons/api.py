"""Named API endpoints (visible under "Use via API") for scripted demos and tests:
the same functions the page uses, with plain inputs and JSON results. Keys are never
parameters: a provider other than the offline model uses the server's configured key."""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

import gradio as gr

from lessons import function_calling_tab, react_tab, registry_tab, schema_panel, timeline
from lessons.settings_panel import Settings, make_client
from lessons.run_panel import jsonable, make_execute

MAX_EVENTS = 2_000


def _run(start, secrets, source, question, provider, model, options, mistake, session_id) -> dict:
    report = schema_panel.schema_report(source)
    if not report["ok"]:
        return {"ok": False, "final": "", "error": report["error"], "tools": [], "events": []}
    settings = Settings(provider=provider or "offline", model=model or "")
    try:
        client = make_client(settings, "", secrets, mistake=mistake or None)
    except Exception as exc:
        return {"ok": False, "final": "", "error": {"code": "client", "message": str(exc), "line": None},
                "tools": report["tools"], "events": []}
    events = []
    try:
        for event in start(client, question, report["tools"], make_execute(source, session_id), settings, options):
            if len(events) < MAX_EVENTS and event.get("type") != "delta":
                events.append(jsonable(event))
    except Exception as exc:
        events.append({"type": "error", "turn": None, "code": getattr(exc, "code", "exception"), "message": str(exc)})
    final = next((e for e in reversed(events) if e.get("type") == "final"), None)
    error = next((e for e in reversed(events) if e.get("type") == "error"), None)
    return {"ok": final is not None, "final": (final or {}).get("content") or "",
            "error": None if final else error, "tools": report["tools"], "events": events}


def register(secrets: Mapping[str, str]) -> list[str]:
    """Adds the endpoints to the Blocks being built; returns their api_names."""
    secrets = MappingProxyType(dict(secrets))

    def schema(source: str, strict: bool = False, method: str = "registry") -> dict:
        """工具源码 -> OpenAI tools 列表、警告、错误（含行号）。method: registry | naive。"""
        report = schema_panel.schema_report(source, strict, None, method)
        return {k: report[k] for k in ("ok", "tools", "warnings", "error")}

    def try_call(source: str, name: str, arguments: str = "{}", request: gr.Request = None) -> dict:
        """不经过模型，在沙箱里调用一个工具：类型转换、参数问题和 invoke 返回的原文。"""
        result = registry_tab.try_call(source, name, arguments, getattr(request, "session_hash", None))
        return {k: result.get(k) for k in ("ok", "content", "error_code", "arguments", "problems", "coercions",
                                           "duration_ms", "stdout")}

    def run_function_calling(source: str, question: str, tool_choice: str = "auto",
                             parallel_tool_calls: bool = True, mistake: str = "",
                             provider: str = "offline", model: str = "", request: gr.Request = None) -> dict:
        """用 Function Calling 跑完一个问题；返回最终回答和全部事件（不含流式分片）。"""
        options = {"tool_choice": tool_choice, "parallel_tool_calls": parallel_tool_calls}
        return _run(function_calling_tab.start, secrets, source, question, provider, model, options, mistake,
                    getattr(request, "session_hash", None))

    def run_react(source: str, question: str, approach: str = "react", mistake: str = "",
                  provider: str = "offline", model: str = "", request: gr.Request = None) -> dict:
        """用正则 ReAct（approach=react）或从文本解析 JSON（approach=json）跑完一个问题。"""
        return _run(react_tab.start, secrets, source, question, provider, model, {"approach": approach}, mistake,
                    getattr(request, "session_hash", None))

    endpoints = {"schema": schema, "try_call": try_call, "run_function_calling": run_function_calling,
                 "run_react": run_react}
    for name, fn in endpoints.items():
        # The schema is a few milliseconds of work: answer it directly, not through the queue.
        gr.api(fn, api_name=name, queue=name != "schema")
    return list(endpoints)
