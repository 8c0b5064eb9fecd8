"""查看代码: the Python that reproduces the last request of a run with the openai or
zhipuai SDK, ready to copy. Keys come from environment variables, never from the page."""
from __future__ import annotations

import pprint
from typing import Any

from i18n import tr
from llm_clients import OFFLINE_MODEL

OFFLINE_URL = "http://127.0.0.1:8765/v1"


def _literal(name: str, value: Any) -> str:
    return f"{name} = {pprint.pformat(value, width=100, sort_dicts=False)}\n"


def last_request(events: list[dict]) -> dict | None:
    for event in reversed(events or []):
        if event.get("type") == "request":
            return event
    return None


def _client_lines(provider: str, base_url: str) -> list[str]:
    if provider == "glm":
        return ["from zhipuai import ZhipuAI", "",
                "# 密钥从环境变量读取，不要写进代码",
                'client = ZhipuAI(api_key=os.environ["ZHIPUAI_API_KEY"])']
    if provider == "openai":
        url = f'"{base_url}"' if base_url else 'os.environ.get("OPENAI_BASE_URL")  # 不设置则用官方地址'
        return ["from openai import OpenAI", "",
                "# 密钥从环境变量读取，不要写进代码",
                "client = OpenAI(", '    api_key=os.environ["OPENAI_API_KEY"],', f"    base_url={url},", ")"]
    return ["from openai import OpenAI", "",
            "# 离线演示模型也有 OpenAI 兼容接口：先在另一个终端运行 python code/offline_server.py",
            f'client = OpenAI(api_key="offline", base_url="{OFFLINE_URL}")']


def python_for(events: list[dict], settings: dict | None = None) -> str:
    """Source code reproducing the most recent request in `events`."""
    request = last_request(events)
    if request is None:
        return tr("# 先运行一次，这里会生成复现最近一次请求的 Python 代码。\n",
                  "# Run once first: the Python that repeats the last request appears here.\n")
    settings = settings or {}
    provider = settings.get("provider", "offline")
    params = dict(request.get("params") or {})
    model = params.get("model") or settings.get("model") or OFFLINE_MODEL
    stream = bool(params.get("stream"))
    lines = ["# 复现第 {} 轮请求（{}）".format(request.get("turn"), {"glm": "智谱 GLM", "openai": "OpenAI 兼容接口"}.get(provider, "离线演示模型")),
             "import json", "import os", ""]
    lines += _client_lines(provider, settings.get("base_url", ""))
    body = ["", _literal("messages", request.get("messages") or [])]
    tools = request.get("tools")
    if tools:
        body.append(_literal("tools", tools))
    lines += body
    args = [f'    model="{model}",', "    messages=messages,"]
    if tools:
        args.append("    tools=tools,")
    for key in ("tool_choice", "parallel_tool_calls", "temperature", "stop"):
        if params.get(key) is not None:
            args.append(f"    {key}={params[key]!r},")
    if stream:
        args.append("    stream=True,")
    lines += ["response = client.chat.completions.create(", *args, ")", ""]
    if stream:
        lines += [
            "text, calls = \"\", {}",
            "for chunk in response:",
            "    if not chunk.choices:",
            "        continue",
            "    delta = chunk.choices[0].delta",
            "    text += delta.content or \"\"",
            "    for piece in delta.tool_calls or []:  # 参数分片到达：按 index 拼接",
            "        call = calls.setdefault(piece.index, {\"name\": \"\", \"arguments\": \"\"})",
            "        call[\"name\"] += (piece.function and piece.function.name) or \"\"",
            "        call[\"arguments\"] += (piece.function and piece.function.arguments) or \"\"",
            "print(text)",
            "for index, call in calls.items():",
            "    print(index, call[\"name\"], json.loads(call[\"arguments\"] or \"{}\"))",
        ]
    else:
        lines += [
            "message = response.choices[0].message",
            "print(message.content)",
            "for call in message.tool_calls or []:",
            "    # 第二步：模型点的菜。执行后用 role=\"tool\" 和同一个 tool_call_id 回填",
            "    print(call.id, call.function.name, json.loads(call.function.arguments))",
        ]
    return "\n".join(lines) + "\n"
