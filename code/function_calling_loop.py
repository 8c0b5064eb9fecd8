"""原生 function calling：把 tools 交给接口，模型用结构化的 tool_calls 回答。

三步握手，重复到模型不再要工具为止：
  1. 请求里带 tools=（JSON Schema）；
  2. 模型回 assistant 消息，里面有 tool_calls（可能一次好几个，即"并行调用"）；
  3. 每个调用都执行，结果用 role "tool" + 对应的 tool_call_id 放回历史，再问一次模型。
模型写错的地方（未知工具、坏 JSON、参数不对）都变成一条 tool 结果告诉它，它下一轮可以改。
"""
from loop_events import (MAX_FAILURES, as_executor, ask_model, model_failed, out_of_turns, parse_arguments,
                         run_tool, start_history, too_many_failures, tool_names)


def run_function_calling(client, messages, tools, execute, *, max_turns=6, tool_choice=None,
                         parallel_tool_calls=None, temperature=None, stream=False):
    if tools is None and hasattr(execute, "to_schemas"):     # 直接传了 ToolRegistry
        tools = execute.to_schemas()
    execute = as_executor(execute)
    history = start_history(messages)
    names = tool_names(tools)
    failures, last_problem = 0, ""
    for turn in range(1, max_turns + 1):
        # 强制调用（"required" 或指定函数）只用在第一轮：每轮都强制，模型就永远没法给出最终回答。
        choice = tool_choice if (turn == 1 or tool_choice in ("auto", "none")) else None
        try:
            completion = yield from ask_model(client, history, turn, stream, tools=tools or None, tool_choice=choice,
                                              parallel_tool_calls=parallel_tool_calls, temperature=temperature)
        except Exception as error:
            yield model_failed(turn, error)
            return
        message = completion.message
        history.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            yield {"type": "final", "turn": turn, "content": message.get("content") or "", "messages": history}
            return
        outcomes = []
        for call in calls:
            raw = call["function"]["arguments"]
            arguments, problems, notes = parse_arguments(raw)
            outcome = yield from run_tool(
                execute, names, call["id"], call["function"]["name"], raw, arguments, problems + notes, turn,
                wrap=lambda content, call_id=call["id"]: {"role": "tool", "tool_call_id": call_id, "content": content})
            history.append(outcome["message"])
            outcomes.append(outcome)
        failures = 0 if any(o["ok"] for o in outcomes) else failures + 1
        last_problem = outcomes[-1]["content"]
        if failures >= MAX_FAILURES:
            yield too_many_failures(turn, last_problem)
            return
    yield out_of_turns(max_turns, max_turns)


if __name__ == "__main__":
    from llm_clients import make_client
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    run = run_function_calling(make_client("offline"), "北京和上海的天气怎么样？", weather,
                               lambda name, args: {"ok": True, "content": f"{args['city']}：晴，25℃"})
    for event in run:
        print(event["type"], {k: v for k, v in event.items() if k in ("name", "arguments", "content")})
