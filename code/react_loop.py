"""循环 5：ReAct——在 text_protocol_loop.py 上只加一份提示词和一个正则解析器。

模型每轮写：
    Thought: 我需要查北京的天气
    Action: get_weather[{"city": "北京"}]
我们执行工具，把结果作为 "Observation: ..." 发回去；直到它写出 Final Answer: ...（或 Finish[...]）。
请求里带 stop=["Observation:"]：支持的后端会在模型想编 Observation 时就停下。

解析器 parse_react 在 text_parsers.py：真实模型不会老老实实守格式（**Action:** 粗体、<think> 思考块、
自己编的 Observation、一次写好几步、```json 代码块……），那里逐条写着它怎样扛住这些，
还留着一个"朴素解析"，parse 事件的 naive 一项记下它读同一段回复会读出什么，和正式解析器对照。
"""
from __future__ import annotations

from typing import Any

from loop_parts import Executor, Steps, describe_tools, enveloping, tools_and_executor
from text_parsers import parse_react
from text_protocol_loop import TextProtocol, run_text_protocol

STOP = ["Observation:"]


def build_react_prompt(tools: list[dict] | None) -> str:
    return f"""你是一个会使用工具的助手。请一步一步解决用户的问题。

可用工具（名称: 说明，下一行是参数的 JSON Schema）：
{describe_tools(tools)}

严格按下面的格式回答：
Thought: 你对下一步的思考
Action: 工具名[JSON 格式的参数]
然后停下，等待系统给你 Observation: 工具结果。这个过程可以重复多次。
拿到足够的信息以后：
Thought: 我已经可以回答了
Final Answer: 给用户的最终回答

规则：每次只写一个 Action；不要自己编写 Observation；参数必须是合法的 JSON 对象，
例如 Action: 工具名[{{"参数名": "值"}}]。"""


REACT = TextProtocol("react", build_react_prompt, parse_react, stop=STOP, format_hint=(
    "请严格按格式输出：\"Thought: ...\" 加 \"Action: 工具名[JSON 参数]\"，或者 \"Final Answer: 回答\""))


def run_react(client: Any, messages: str | list[dict], tools: list[dict] | None, execute: Executor | Any | None,
              *, max_turns: int = 6, temperature: float | None = None, stream: bool = False,
              envelope: bool = False) -> Steps:
    tools, execute = tools_and_executor(tools, execute)
    if envelope:                 # Observation: 后面是 {"status", "data", "error_code", "message"} 信封
        execute = enveloping(execute)
    return run_text_protocol(REACT, client, messages, tools, execute, max_turns=max_turns, temperature=temperature,
                             stream=stream)


if __name__ == "__main__":
    from llm_clients import make_client
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    print(build_react_prompt(weather), "\n")
    for reply in ["Action: get_weather[{\"city\": \"北京\"}]", "**Action:** get_weather[{\"city\": \"北京\"}]",
                  "Action: get_weather[{\"city\": \"北京\"}]\nObservation: 晴\nFinal Answer: 晴"]:
        parsed, _ = parse_react(reply)           # 同一段回复，正式解析和朴素解析各读出什么
        print(repr(reply), "->", parsed["kind"], parsed["groups"], "|", parsed["naive"]["verdict"])
    print()
    for event in run_react(make_client("offline", mistake="bold_action"), "北京的天气怎么样？", weather,
                           lambda name, args: {"ok": True, "content": f"{args['city']}：晴，25℃"}):
        print(event["type"], {k: v for k, v in event.items() if k in ("kind", "notes", "name", "arguments", "content")})
