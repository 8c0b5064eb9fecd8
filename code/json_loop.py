"""循环 5/5：纯文本里的 JSON——在 text_protocol_loop.py 上只换一份提示词和一个 JSON 解析器。

约定模型要调用工具时输出 {"tool": "工具名", "arguments": {...}}，想回答时输出 {"answer": "..."}。
模型往往不会只输出 JSON：前面来一句"好的"、包在 ```json 里、一次写好几个……
所以不能直接 json.loads 整段文字，而是从每个 "{" 开始试着解析（json.JSONDecoder.raw_decode），
找出文字里所有完整的 JSON 对象，取第一个有 tool 或 answer 的。
一个都解析不出来时，把解析器的报错原话告诉模型，请它重来。
"""
from __future__ import annotations

import json
import re
from typing import Any

from loop_parts import Executor, Steps, describe_tools, enveloping, tools_and_executor
from text_protocol_loop import TextProtocol, run_text_protocol

OPEN_BRACE = re.compile(r"\{")
FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)


def build_json_prompt(tools: list[dict] | None) -> str:
    return f"""你是一个会使用工具的助手。

可用工具（名称: 说明，下一行是参数的 JSON Schema）：
{describe_tools(tools)}

需要调用工具时，只输出一个 JSON 对象，不要输出别的文字：
{{"tool": "工具名", "arguments": {{"参数名": "值"}}}}
工具结果会以 "Observation: " 开头发给你。可以回答用户时，输出：
{{"answer": "给用户的最终回答"}}"""


def find_json_objects(text: str) -> tuple[list[tuple[dict, int, int]], json.JSONDecodeError | None]:
    """-> ([(对象, 起点, 终点)], 第一个解析错误或 None)。只收 JSON 对象，嵌套在别的对象里的不重复收。"""
    decoder, found, first_error, position = json.JSONDecoder(), [], None, 0
    while True:
        match = OPEN_BRACE.search(text, position)
        if not match:
            return found, first_error
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as error:
            first_error = first_error or error
            position = match.start() + 1
            continue
        if isinstance(value, dict):
            found.append((value, match.start(), end))
        position = end


def parse_json_reply(text: str) -> dict:
    """-> parse 事件的内容。kind: action（groups 里有 tool/args）/ final / none。"""
    text = text or ""
    objects, error = find_json_objects(text)
    useful = [(obj, start, end) for obj, start, end in objects if "tool" in obj or "name" in obj or "answer" in obj]
    notes = []
    if not useful:
        if "{" not in text:
            return {"ok": True, "kind": "final", "pattern": OPEN_BRACE.pattern, "groups": {"answer": text.strip()},
                    "span": [0, len(text)], "notes": ["回复里没有 JSON，按最终回答处理"], "reason": None}
        reason = (f"JSON 解析失败：{error.msg}（第 {error.lineno} 行第 {error.colno} 列）" if error and not objects
                  else "找到了 JSON，但里面没有 \"tool\" 或 \"answer\" 字段")
        if error and objects:
            reason = f"最外层的 JSON 不完整（{error.msg}，第 {error.colno} 列），只解析出了里面的片段"
        return {"ok": False, "kind": "none", "pattern": OPEN_BRACE.pattern, "groups": {}, "span": None,
                "notes": notes, "reason": reason}
    obj, start, end = useful[0]
    if len(useful) > 1:
        notes.append(f"回复里有 {len(useful)} 个 JSON 对象，只采用第一个")
    if any(m.start() < start < m.end() for m in FENCE.finditer(text)):
        notes.append("JSON 被包在 markdown 代码块（```）里，已照常取出")
    elif text[:start].strip() or text[end:].strip():
        notes.append("JSON 前后有多余的文字，已忽略")
    if "answer" in obj and "tool" not in obj:
        return {"ok": True, "kind": "final", "pattern": OPEN_BRACE.pattern, "groups": {"answer": str(obj["answer"])},
                "span": [start, end], "notes": notes, "reason": None}
    arguments = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
    args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"ok": True, "kind": "action", "pattern": OPEN_BRACE.pattern,
            "groups": {"tool": str(obj.get("tool") or obj.get("name")), "args": args_text},
            "span": [start, end], "notes": notes, "reason": None}


JSON_PROTOCOL = TextProtocol("json", build_json_prompt, lambda text: (parse_json_reply(text), None), format_hint=(
    "请只输出一个完整的 JSON 对象，例如 {\"tool\": \"工具名\", \"arguments\": {...}}"))


def run_json_from_text(client: Any, messages: str | list[dict], tools: list[dict] | None,
                       execute: Executor | Any | None, *, max_turns: int = 6, temperature: float | None = None,
                       stream: bool = False, envelope: bool = False) -> Steps:
    tools, execute = tools_and_executor(tools, execute)
    if envelope:                 # Observation: 后面是 {"status", "data", "error_code", "message"} 信封
        execute = enveloping(execute)
    return run_text_protocol(JSON_PROTOCOL, client, messages, tools, execute, max_turns=max_turns,
                             temperature=temperature, stream=stream)


if __name__ == "__main__":
    from llm_clients import make_client
    print(parse_json_reply('好的，我来查：\n```json\n{"tool": "get_weather", "arguments": {"city": "北京"}}\n```'), "\n")
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    for event in run_json_from_text(make_client("offline", mistake="fenced_json"), "北京的天气怎么样？", weather,
                                    lambda name, args: f"{args['city']}：晴，25℃"):
        print(event["type"], {k: v for k, v in event.items() if k in ("kind", "notes", "name", "arguments", "content")})
