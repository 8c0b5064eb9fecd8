"""循环 2/5：原生 function calling 循环——minimal_loop.py 长大以后的样子。

握手还是那三步，重复到模型不再要工具为止：
  1. 请求里带 tools=（JSON Schema）；
  2. 模型回 assistant 消息，里面有 tool_calls（可能一次好几个，即"并行调用"）；
  3. 每个调用都执行，结果用 role "tool" + 对应的 tool_call_id 放回历史，再问一次模型。

比 minimal_loop.py 多了这些，每一条都是真实模型逼出来的：
  - 每一步都 yield 一个事件（events.py）：页面逐条显示，测试逐条检查，导出文件原样保存；
  - 模型写错的地方（未知工具、坏 JSON、参数不对）不抛异常，而是变成一条 tool 结果告诉它，它下一轮可以改；
  - 工具结果太长就截断（一处上限：tool_outcome.RESULT_LIMIT）；
  - 连续 MAX_FAILURES 轮全失败、或者用完 max_turns 轮，就停下并说明原因；
  - 在 tool_call 事件之后可以 send() 改参数或手写结果（单步模式，见 loop_parts.py）；
  - stream=True 时模型的回复边生成边 yield delta 事件。
"""
from __future__ import annotations

from typing import Any

import events
from loop_parts import (MAX_FAILURES, Executor, Steps, ToolCall, ask_model, out_of_turns, run_tool, start_history,
                        too_many_failures, tool_names, tools_and_executor)


def run_function_calling(client: Any, messages: str | list[dict], tools: list[dict] | None,
                         execute: Executor | Any | None, *, max_turns: int = 6, tool_choice: Any = None,
                         parallel_tool_calls: bool | None = None, temperature: float | None = None,
                         stream: bool = False) -> Steps:
    tools, execute = tools_and_executor(tools, execute)     # execute 也可以直接是一个 ToolRegistry
    history = start_history(messages)
    names = tool_names(tools)
    failures = 0
    for turn in range(1, max_turns + 1):
        # 强制调用（"required" 或指定函数）只用在第一轮：每轮都强制，模型就永远没法给出最终回答。
        choice = tool_choice if (turn == 1 or tool_choice in ("auto", "none")) else None
        completion = yield from ask_model(client, history, turn, stream, tools=tools or None, tool_choice=choice,
                                          parallel_tool_calls=parallel_tool_calls, temperature=temperature)
        if completion is None:                               # 模型那边出错：error 事件已经发出
            return
        message = completion.message
        history.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            yield events.final(turn, message.get("content") or "", history)
            return
        results = []
        for raw in calls:
            call = ToolCall.read(turn, raw["id"], raw["function"]["name"], raw["function"]["arguments"])
            result = yield from run_tool(call, execute, names, wrap=lambda content, call_id=raw["id"]: {
                "role": "tool", "tool_call_id": call_id, "content": content})
            history.append(result["message"])
            results.append(result)
        # 这一轮只要有一个调用成功就不算失败：并行调用里错一个很常见，模型下一轮会补
        failures = 0 if any(r["ok"] for r in results) else failures + 1
        if failures >= MAX_FAILURES:
            yield too_many_failures(turn, results[-1]["content"])
            return
    yield out_of_turns(max_turns)


if __name__ == "__main__":
    from llm_clients import make_client
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    run = run_function_calling(make_client("offline"), "北京和上海的天气怎么样？", weather,
                               lambda name, args: f"{args['city']}：晴，25℃")
    for event in run:
        print(event["type"], {k: v for k, v in event.items() if k in ("name", "arguments", "content")})
