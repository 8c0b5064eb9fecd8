"""子代理（8.10）：把一件事交给一个从零开始的子循环去做，只拿回它最后的那段话。

比 function_calling_loop.py 多了这些：
  - 父循环多一个 task(description, prompt) 工具。模型自己决定什么时候用它（课程仓库是用 Python 把
    四个角色排好顺序，模型不做决定）；
  - 调用 task 就起一个子循环：messages 全新（只有 CHILD_SYSTEM 和 prompt，看不到父循环的对话），
    工具是父循环的工具去掉 task（子代理不能再派子代理，不会无限套下去），轮数有上限（child_turns），
    时间有预算（child_seconds）；
  - 子循环的每个事件照样发出来，带上 "child"（父循环里那次 task 调用的 id）和 "child_turn"（那次调用在第几轮：
    有的服务端每轮都从 call_0 数起），页面可以把它折叠在
    那次调用下面；回到父循环历史里的只有子循环的最终回答：父循环的上下文省下了子循环的全部来回；
  - 子循环用完轮数、超了时间、出了错或者交回一段空话，父循环拿到的是一条写明“子代理没做完”的失败结果，
    不是一段看起来像答案的话。时间在两步之间检查，一次模型调用自己的上限由客户端的 round_seconds 管，
    所以子代理最多会超出预算一次模型调用的时间；一轮最多派 MAX_TASKS 个子代理，参数不对的 task 不派；
  - 一轮只派一个子代理时没有线程：子循环就是同一个生成器里的一段，父循环被关掉（close），子循环也跟着
    关掉，不会在后台继续花 token（课程仓库用线程加超时，超时后线程还在跑）；
  - 一轮要了几个 task，就同时做（run_children）：每个子代理一个线程，各自的时间预算管着。这一轮等它们
    全都结束才往下走，所以父循环能被关掉的时候（在两次 yield 之间），没有哪个子代理还在跑。几个子代理的
    结果带上起止时刻（和 function_calling_loop.run_concurrently 的一样），时间线画出它们重叠着跑。
    同时跑的子代理各自的调用一个接一个执行：执行端的名额（max_parallel）要留给几个子代理分。

    python code/subagents.py
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Iterator

import events
from function_calling_loop import MAX_PARALLEL, elapsed_ms, run_function_calling, side_by_side
from loop_parts import (MAX_FAILURES, ToolCall, ask_model, out_of_turns, run_tool, start_history, too_many_failures,
                        tool_names, tools_and_executor)
from tool_outcome import ToolOutcome, failure, success
from tool_registry import ToolRegistry

CHILD_SYSTEM = "你是一个子代理：只做下面这一件事，做完用几句话说出结论。你看不到用户和主代理之间的对话。"
CHILD_TURNS = 4
CHILD_SECONDS = 60.0

_task = ToolRegistry()


@_task.tool("把一件独立的小事交给子代理：它从零开始（看不到这段对话），用同样的工具做完，只把结论交回来。"
            "适合要查很多资料、但结论只要几句话的事。")
def task(description: str, prompt: str) -> str:
    """派一个子代理。

    Args:
        description: 三五个字说明这件事，如 查北京天气
        prompt: 交给子代理的完整说明：它只看得到这一段
    """
    raise RuntimeError("task 由 run_with_subagents 自己处理，不会被直接调用")


TASK_SCHEMA = _task.to_schemas()[0]


MAX_TASKS = 3       # 一轮最多派几个子代理：每个都要花好几次模型调用


def task_refused(call: ToolCall, number: int) -> ToolOutcome | None:
    """task 的参数不对（description、prompt 要是不空的字符串），或者这一轮已经派了 MAX_TASKS 个：不派，说清楚为什么。"""
    if call.arguments is None:
        return failure("invalid_json", "task 的参数不是合法的 JSON", "请写成 {\"description\": …, \"prompt\": …}")
    missing = [key for key in ("description", "prompt")
               if not isinstance(call.arguments.get(key), str) or not call.arguments[key].strip()]
    if missing:
        return failure("invalid_arguments", f"task 需要不空的文字参数 {', '.join(missing)}",
                       "prompt 是交给子代理的完整说明：它只看得到这一段", arguments=call.arguments)
    if number > MAX_TASKS:
        return failure("forbidden", f"这一轮已经派了 {MAX_TASKS} 个子代理，这个没有派",
                       "等它们交回结论，再决定还要不要派", arguments=call.arguments)
    return None


def child_outcome(steps: Iterator, seconds: float, tag: Callable[[dict], dict]):
    """跑一个子循环，把它的事件加上标记发出去，返回交给父循环的结果（ToolOutcome）。"""
    deadline, ended = time.monotonic() + seconds, None
    try:
        for event in steps:
            yield tag(event)
            if event["type"] in ("final", "error"):
                ended = event
                break
            if time.monotonic() > deadline:
                break
    finally:
        steps.close()                       # 没跑完也关掉：子循环就此停下，不留在后台
    if ended is None:
        return failure("timeout", f"子代理超过了 {seconds:g} 秒的时间预算，被停下了，没有最终回答",
                       "它做到一半的事不算数；可以把事情拆小一点再交给它，或者自己来做")
    if ended["type"] == "error":
        return failure("subagent_failed", f"子代理没有做完（{ended['code']}）：{ended['message']}",
                       "不要把它当成答案；可以换个说法再交给它一次，或者自己来做")
    if not (ended["content"] or "").strip():
        return failure("subagent_failed", "子代理的回答是空的，没有交回任何结论", "不要把它当成答案")
    return success(ended["content"])


def run_with_subagents(client: Any, messages: str | list[dict], tools: list[dict] | None, execute: Any, *,
                       max_turns: int = 6, child_turns: int = CHILD_TURNS, child_seconds: float = CHILD_SECONDS,
                       temperature: float | None = None):
    """Function Calling 循环，工具里多一个 task。别的调用一个接一个地执行；一轮的几个 task 同时做（run_children）。"""
    tools, execute = tools_and_executor(tools, execute)
    child_tools = [t for t in tools if t["function"]["name"] != "task"]
    tools = child_tools + [TASK_SCHEMA]
    history = start_history(messages)
    names = tool_names(tools)
    failures = 0
    for turn in range(1, max_turns + 1):
        completion = yield from ask_model(client, history, turn, False, tools=tools, temperature=temperature)
        if completion is None:
            return
        history.append(completion.message)
        requested = completion.message.get("tool_calls") or []
        if not requested:
            yield events.final(turn, completion.message.get("content") or "", history)
            return
        results: list = [None] * len(requested)        # in the order of the calls, whatever finishes first
        tasks = []                                     # (position, call) of the children this round starts
        for position, raw in enumerate(requested):
            call = ToolCall.read(turn, raw["id"], raw["function"]["name"], raw["function"]["arguments"])
            if call.name != "task":
                results[position] = yield from run_tool(call, execute, names, wrap=tool_message(call.id))
                continue
            yield events.tool_call(turn, call.id, call.name, call.raw_arguments, call.arguments, call.problems)
            refused = task_refused(call, len(tasks) + 1)
            if refused is not None:
                results[position] = events.tool_result(turn, call.id, call.name, refused,
                                                       tool_message(call.id)(refused.content))
                yield results[position]
                continue
            tasks.append((position, call))
        children = [call for _, call in tasks]
        finished = yield from run_children(client, children, turn, child_tools, execute, child_turns=child_turns,
                                           child_seconds=child_seconds, temperature=temperature)
        for (position, _), result in zip(tasks, finished):
            results[position] = result
        history.extend(result["message"] for result in results)
        failures = 0 if any(r["ok"] for r in results) else failures + 1
        if failures >= MAX_FAILURES:
            yield too_many_failures(turn, results[-1]["content"])
            return
    yield out_of_turns(max_turns)


def run_children(client: Any, calls: list[ToolCall], turn: int, tools: list[dict], execute: Any, *,
                 child_turns: int, child_seconds: float, temperature: float | None):
    """这一轮交出去的几件事，每件一个子循环；yield 它们的事件和 tool_result，返回 tool_result 的列表。
    一件：子循环的事件边跑边交出去。几件：同时跑，全都结束以后按调用的顺序交出每个子代理的事件。"""
    def child(call: ToolCall, run_tools: Any) -> Iterator:
        steps = run_function_calling(client, [{"role": "system", "content": CHILD_SYSTEM},
                                              {"role": "user", "content": str(call.arguments.get("prompt"))}],
                                     tools, run_tools, max_turns=child_turns, temperature=temperature)
        return child_outcome(steps, child_seconds, lambda event: {**event, "child": call.id, "child_turn": turn})

    def result_of(call: ToolCall, outcome: ToolOutcome, began: float) -> dict:
        outcome = dataclasses.replace(outcome, duration_ms=(time.perf_counter() - began) * 1000, arguments=call.arguments)
        return events.tool_result(turn, call.id, call.name, outcome, tool_message(call.id)(outcome.content))

    if len(calls) <= 1:
        finished = []
        for call in calls:
            began = time.perf_counter()
            outcome = yield from child(call, execute)
            finished.append(result_of(call, outcome, began))
            yield finished[-1]
        return finished

    limit = min(len(calls), MAX_PARALLEL, getattr(execute, "max_parallel", MAX_PARALLEL))
    start = time.perf_counter()

    def whole(call: ToolCall) -> tuple[list[dict], dict]:
        began, produced = time.perf_counter(), []
        steps = child(call, one_at_a_time(execute))
        try:
            while True:
                produced.append(next(steps))
        except StopIteration as stop:
            outcome = stop.value
        result = result_of(call, outcome, began)
        started = round((began - start) * 1000, 3)
        return produced, {**result, "started_ms": started, "finished_ms": round(started + result["duration_ms"], 3)}

    done = side_by_side(whole, calls, limit)
    round_ms = elapsed_ms(start)
    finished = []
    for produced, result in done:
        yield from produced
        finished.append({**result, "round_ms": round_ms, "concurrent": limit})
        yield finished[-1]
    return finished


def one_at_a_time(execute: Any) -> Any:
    """同时跑的子代理各自的调用一个接一个执行：执行端的名额留给几个子代理分。"""
    def run(name: str, arguments: Any) -> Any:
        return execute(name, arguments)
    run.max_parallel = 1
    return run


def tool_message(call_id: str):
    return lambda content: {"role": "tool", "tool_call_id": call_id, "content": content}


if __name__ == "__main__":
    from examples_weather import registry
    from llm_clients import make_client

    question = "派一个子代理去查北京今天的天气，告诉我结论"
    for event in run_with_subagents(make_client("offline"), question, registry.to_schemas(), registry):
        who = f"  子代理（{event['child']}）" if "child" in event else "主代理"
        if event["type"] == "tool_call":
            print(f"{who} 调用 {event['name']}({event['raw_arguments']})")
        elif event["type"] == "tool_result":
            print(f"{who} 结果：{event['content'][:80]}")
        elif event["type"] in ("final", "error"):
            print(f"{who} {event['type']}：{(event.get('content') or event.get('message'))[:120]}")
