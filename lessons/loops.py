"""The lesson loops and prompt builders from code/, under the names the tabs use."""
from __future__ import annotations

from function_calling_loop import run_function_calling
from json_loop import build_json_prompt, run_json_from_text
from react_loop import build_react_prompt, run_react

__all__ = ["run_function_calling", "run_react", "run_json_from_text", "system_prompt"]


def system_prompt(approach: str, tools: list) -> str:
    build = build_json_prompt if approach == "json" else build_react_prompt
    try:
        return build(tools)
    except Exception as exc:  # a prompt builder choking on odd tools should not break the page
        return f"（无法生成系统提示词：{exc}）"
