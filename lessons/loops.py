"""Where the lesson loops and prompt builders live in code/ (imported on first use,
so the page starts without waiting for them)."""
from __future__ import annotations

import importlib

# function name -> modules in code/ that may define it, first match wins
PLACES = {
    "run_function_calling": ["function_calling_loop"],
    "run_react": ["react_loop"],
    "run_json_from_text": ["json_loop"],
    "build_react_prompt": ["react_loop"],
    "build_json_prompt": ["json_loop"],
}


def find(name: str):
    for module_name in PLACES[name]:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, name):
            return getattr(module, name)
    raise ImportError(f"code/ 里找不到 {name}（查找过：{', '.join(PLACES[name])}）")


def run_function_calling(*args, **kwargs):
    return find("run_function_calling")(*args, **kwargs)


def run_react(*args, **kwargs):
    return find("run_react")(*args, **kwargs)


def run_json_from_text(*args, **kwargs):
    return find("run_json_from_text")(*args, **kwargs)


def system_prompt(approach: str, tools: list) -> str:
    try:
        return find("build_json_prompt" if approach == "json" else "build_react_prompt")(tools)
    except Exception as exc:  # a prompt builder choking on odd tools should not break the page
        return f"（无法生成系统提示词：{exc}）"
