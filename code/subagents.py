"""子代理（8.10）：把一件事交给一个从零开始的子循环去做，只拿回它最后的那段话。

比 function_calling_loop.py 多了这些（父循环、子循环都是它，父循环只换了 run_call 这一个扩展点）：
  - 父循环多一个 task(description, prompt) 工具。模型自己决定什么时候用它（课程仓库是用 Python 把
    四个角色排好顺序，模型不做决定）；
  - 执行 task 就起一个子循环：messages 全新（只有 CHILD_SYSTEM 和 prompt，看不到父循环的对话），
    工具是父循环的工具去掉 task（子代理不能再派子代理，不会无限套下去），轮数有上限（child_turns），
    时间有预算（child_seconds）；
  - 子循环的每个事件照样发出来，带上 "child"（父循环里那次 task 调用的 id），页面可以把它折叠在那次调用下面；
    回到父循环历史里的只有子循环的最终回答：父循环的上下文省下了子循环的全部来回；
  - 子循环用完轮数、超了时间、出了错或者交回一段空话，父循环拿到的是一条写明“子代理没做完”的失败结果，
    不是一段看起来像答案的话。时间在两步之间检查，一次模型调用自己的上限由客户端的 round_seconds 管，
    所以子代理最多会超出预算一次模型调用的时间；一轮最多派 MAX_TASKS 个子代理，参数不对的 task 不派；
  - 一轮只派一个子代理时没有线程：子循环就是同一个生成器里的一段，父循环被关掉（close），子循环也跟着
    关掉，不会在后台继续花 token（课程仓库用线程加超时，超时后线程还在跑）；子循环停下来问人时
    （比如 MiniAgent 的权限规则），人的回答也照样送到子循环里；
  - 一轮要了几个 task，骨架就同时跑它们（function_calling_loop.run_concurrently）：每个子代理一个线程，
    各自的时间预算管着。这一轮等它们全都结束才往下走，所以父循环能被关掉的时候（在两次 yield 之间），
    没有哪个子代理还在跑。子代理自己的调用一个接一个执行：几个子代理可能同时在跑，执行端的名额
    （max_parallel）要留给它们分；同时跑的子代理没有人能回答它们的提问，问人的调用按没人同意处理。

    python code/subagents.py
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Generator, Iterator

import events
from function_calling_loop import MAX_PARALLEL, RunCall, plain_call, run_function_calling, tool_message
from loop_parts import Executor, ToolCall, run_tool, tools_and_executor
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


def child_outcome(steps: Iterator, seconds: float, call_id: str) -> Generator[events.Event, Any, ToolOutcome]:
    """跑一个子循环，把它的事件带上 "child" 发出去（人的回答原样送回去），返回交给父循环的结果。"""
    deadline, ended, reply = time.monotonic() + seconds, None, None
    try:
        while True:
            try:
                event = steps.send(reply)
            except StopIteration:
                break
            reply = yield {**event, "child": call_id}
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


def delegate(client: Any, call: ToolCall, tools: list[dict], execute: Any, *, child_turns: int = CHILD_TURNS,
             child_seconds: float = CHILD_SECONDS, **options: Any) -> Generator[events.Event, Any, ToolOutcome]:
    """派一个子代理做 call 交代的事：一个全新的 run_function_calling。options 原样交给子循环
    （temperature、stream、run_call……）。返回它交给父循环的结果，用时是子循环从头到尾的时间。"""
    began = time.perf_counter()
    steps = run_function_calling(client, [{"role": "system", "content": CHILD_SYSTEM},
                                          {"role": "user", "content": str(call.arguments.get("prompt"))}],
                                 tools, one_at_a_time(execute), max_turns=child_turns, **options)
    outcome = yield from child_outcome(steps, child_seconds, call.id)
    return dataclasses.replace(outcome, duration_ms=round((time.perf_counter() - began) * 1000, 3),
                               arguments=call.arguments)


def with_tasks(run_call: RunCall, start_child: Callable[[ToolCall], Generator[events.Event, Any, ToolOutcome]]) -> RunCall:
    """一个认得 task 的 run_call：task 交给 start_child（一个子循环），别的调用照 run_call 的样子跑。
    task 先数一数（参数对不对、这一轮是第几个），按调用的顺序数：这一轮的调用是按顺序建好的（见骨架）。"""
    started: dict[int, int] = {}                # 第几轮 -> 这一轮已经派了几个

    def each_call(call: ToolCall, execute: Executor | None, names: list[str]):
        if call.name != "task":
            return run_call(call, execute, names)
        refused = task_refused(call, started.get(call.turn, 0) + 1)
        if refused is None:
            started[call.turn] = started.get(call.turn, 0) + 1

        def carry_out(call: ToolCall) -> Generator[events.Event, Any, ToolOutcome]:
            if refused is not None:
                return refused
            return (yield from start_child(call))
        return run_tool(call, execute, names, wrap=tool_message(call.id), carry_out=carry_out)
    each_call.max_parallel = getattr(run_call, "max_parallel", MAX_PARALLEL)
    return each_call


def run_with_subagents(client: Any, messages: str | list[dict], tools: list[dict] | None, execute: Any, *,
                       child_turns: int = CHILD_TURNS, child_seconds: float = CHILD_SECONDS, **options: Any):
    """Function Calling 循环，工具里多一个 task。options 原样交给父循环（max_turns、tool_choice、temperature、
    stream……）；子循环用同样的 temperature 和 stream。"""
    tools, execute = tools_and_executor(tools, execute)
    child_tools = [t for t in tools if t["function"]["name"] != "task"]
    child_options = {key: options[key] for key in ("temperature", "stream") if key in options}

    def start_child(call: ToolCall):
        return delegate(client, call, child_tools, execute, child_turns=child_turns, child_seconds=child_seconds,
                        **child_options)
    return run_function_calling(client, messages, child_tools + [TASK_SCHEMA], execute,
                                run_call=with_tasks(plain_call, start_child), **options)


def one_at_a_time(execute: Any) -> Any:
    """子代理的调用一个接一个执行：执行端的名额留给几个子代理分。"""
    def run(name: str, arguments: Any) -> Any:
        return execute(name, arguments)
    run.max_parallel = 1
    return run


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
