"""循环 6：纯文本里的 JSON——在 text_protocol_loop.py 上只换一份提示词和一个 JSON 解析器。

约定模型要调用工具时输出 {"tool": "工具名", "arguments": {...}}，想回答时输出 {"answer": "..."}。
模型往往不会只输出 JSON：前面来一句"好的"、包在 ```json 里、一次写好几个……
所以解析器 parse_json_reply（在 text_parsers.py）不直接 json.loads 整段文字，而是从每个 "{" 开始试着解析，
取第一个有 tool 或 answer 的 JSON 对象；一个都解析不出来时，把解析器的报错原话告诉模型，请它重来。
"""
from __future__ import annotations

from typing import Any

from loop_parts import Executor, Steps, describe_tools, enveloping, tools_and_executor
from text_parsers import parse_json_reply
from text_protocol_loop import TextProtocol, run_text_protocol


def build_json_prompt(tools: list[dict] | None) -> str:
    return f"""你是一个会使用工具的助手。

可用工具（名称: 说明，下一行是参数的 JSON Schema）：
{describe_tools(tools)}

需要调用工具时，只输出一个 JSON 对象，不要输出别的文字：
{{"tool": "工具名", "arguments": {{"参数名": "值"}}}}
工具结果会以 "Observation: " 开头发给你。可以回答用户时，输出：
{{"answer": "给用户的最终回答"}}"""


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
