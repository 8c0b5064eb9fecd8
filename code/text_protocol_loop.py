"""循环 4：不用接口的 tools 参数，只靠提示词约定格式，再从模型写的文字里把动作读出来。

比 function_calling_loop.py 多了（也少了）这些：
  - 请求里没有 tools=：工具清单和回答格式写在 system 提示词里，哪个模型都能用；
  - 模型只回文字，由一个解析器读出"调用哪个工具、什么参数"或"最终回答"，并 yield 一个 parse 事件
    （用了什么规则、匹配到哪、容忍了哪些不规范的写法）；
  - 一轮只执行一个动作，结果以 "Observation: ..." 的用户消息发回去；
  - 读不出动作也不崩：把原因告诉模型，请它按格式重来（算一轮失败）。
ReAct（react_loop.py）和 JSON（json_loop.py）只差提示词和解析器，循环就是下面这一个。
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import events
from loop_parts import (MAX_FAILURES, Executor, Steps, ToolCall, ask_model, observation, out_of_turns, run_tool,
                        start_history, too_many_failures, tool_names, tools_and_executor)
from tool_outcome import error_text

# 解析器：模型的回复 -> (parse 事件的内容, 历史里只保留到哪个位置；None 表示整段保留)
Parser = Callable[[str], tuple[dict, int | None]]


@dataclass(frozen=True)
class TextProtocol:
    name: str                                      # 用作调用 id 的前缀：react_1、json_2……
    build_prompt: Callable[[list[dict]], str]      # 工具清单 -> system 提示词
    parse: Parser
    format_hint: str                               # 读不出动作时，告诉模型正确的格式
    stop: list[str] | None = None                  # 让后端在模型想编造 Observation 时就停下


def run_text_protocol(protocol: TextProtocol, client: Any, messages: str | list[dict], tools: list[dict] | None,
                      execute: Executor | Any | None, *, max_turns: int = 6, temperature: float | None = None,
                      stream: bool = False) -> Steps:
    tools, execute = tools_and_executor(tools, execute)     # execute 也可以直接是一个 ToolRegistry
    history = start_history(messages, system=protocol.build_prompt(tools))
    names = tool_names(tools)
    failures = 0
    for turn in range(1, max_turns + 1):
        completion = yield from ask_model(client, history, turn, stream, stop=protocol.stop, temperature=temperature)
        if completion is None:                               # 模型那边出错：error 事件已经发出
            return
        text = completion.text
        parsed, cut = protocol.parse(text)
        yield events.parse(turn, parsed)
        # 模型自己编的 Observation 不能留在历史里，否则下一轮它会当真
        history.append({"role": "assistant", "content": text[:cut].rstrip() if cut is not None else text})
        if parsed["kind"] == "final":
            yield events.final(turn, parsed["groups"]["answer"], history)
            return
        if parsed["kind"] == "none":
            last, ok = error_text("format_error", parsed["reason"], protocol.format_hint), False
            history.append(observation(last))
        else:
            call = read_action(turn, f"{protocol.name}_{turn}", parsed["groups"], tools)
            result = yield from run_tool(call, execute, names, wrap=observation)
            history.append(result["message"])
            last, ok = result["content"], result["ok"]
        failures = 0 if ok else failures + 1
        if failures >= MAX_FAILURES:
            yield too_many_failures(turn, last)
            return
    yield out_of_turns(max_turns)


def read_action(turn: int, call_id: str, groups: dict[str, str], tools: list[dict]) -> ToolCall:
    """parse 事件里的 tool/args -> ToolCall。只有一个参数的工具，允许 tool[北京] 这种不带 JSON 的写法。"""
    name, raw = groups["tool"], groups["args"]
    call = ToolCall.read(turn, call_id, name, raw)
    only = single_parameter(next((t for t in tools if t["function"]["name"] == name), None))
    if call.arguments is None and only and not raw.lstrip().startswith(("{", "[")):
        notes = call.problems[1:]                          # 第一条是 JSON 解析的问题，这样读就不算问题了
        return ToolCall(turn, call_id, name, raw, {only: raw.strip().strip("\"'")},
                        [*notes, f"参数不是 JSON，按唯一的参数 {only} 的值处理"])
    return call


def single_parameter(tool: dict | None) -> str | None:
    props = list(((tool or {}).get("function", {}).get("parameters") or {}).get("properties") or {})
    return props[0] if len(props) == 1 else None


if __name__ == "__main__":
    from json_loop import JSON_PROTOCOL
    from react_loop import REACT
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    replies = {"react": "Thought: 查一下\nAction: get_weather[北京]",
               "json": '好的。{"tool": "get_weather", "arguments": {"city": "北京"}}'}
    for protocol in (REACT, JSON_PROTOCOL):       # 同一个循环，换的只是这两样：怎么读回复、读出来的动作
        parsed, _ = protocol.parse(replies[protocol.name])
        print(protocol.name, parsed["kind"], parsed["notes"], read_action(1, "demo", parsed["groups"], weather))
