"""循环 3：原生 function calling 循环，也是后面每一课的循环共用的骨架。

握手还是那三步，重复到模型不再要工具为止：
  1. 请求里带 tools=（JSON Schema）；
  2. 模型回 assistant 消息，里面有 tool_calls（可能一次好几个，即"并行调用"）；
  3. 每个调用都执行，结果用 role "tool" + 对应的 tool_call_id 放回历史，再问一次模型。

比 basic_loop.py 多了这些，每一条都是真实模型逼出来的：
  - 每一步都 yield 一个事件（events.py）：页面逐条显示，测试逐条检查，导出文件原样保存；
  - 错误变成结果的做法不变，只是更细：未知工具、坏 JSON、参数不对都由注册表说清楚（"是不是想用 …"）；
  - 工具结果太长就截断（一处上限：tool_outcome.RESULT_LIMIT）；
  - 连续 MAX_FAILURES 轮全失败、或者用完 max_turns 轮，就停下并说明原因；
  - 请求参数：tool_choice（强制调用只用在第一轮）、parallel_tool_calls、temperature；
  - stream=True 时模型的回复边生成边 yield delta 事件；
  - 在 tool_call 事件之后可以 send() 改参数、手写结果或拒绝这次调用（人类在环，见 loop_parts.py）；
  - 一次回复里有好几个调用时，同时执行它们（run_concurrently）：三个城市的天气各要 1 秒，一起查只要 1 秒；
  - envelope=True 时，工具结果装进固定形状的 JSON 信封再交给模型（tool_outcome.as_envelope）。

后面每一课的循环都是这一个，只在两个扩展点上换零件（不另写一个循环）：
  - prepare(history, turn)：每次请求之前，历史先交给它收拾（上下文预算，context.py），它返回的就是之后的历史；
  - run_call(call, execute, names)：一个调用怎么跑，从 tool_call 到 tool_result（钩子，hooks.py；
    子代理，subagents.py；MiniAgent 把几样装在一起，mini_agent.py）。它的 max_parallel 属性说一轮最多同时跑几个。
多出来的工具（task、write_todos、load_skill）不用扩展点：加进 tools、让执行函数认得它们就行。
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Generator

import events
from loop_parts import (MAX_FAILURES, Executor, Steps, ToolCall, ask_model, enveloping, out_of_turns, run_tool,
                        start_history, too_many_failures, tool_names, tools_and_executor)

# 一轮最多同时执行几个调用。执行端的名额是有限的（页面里的沙箱每个人同时只能跑两个），
# 执行函数可以用 max_parallel 属性说明自己的上限，循环取两者中小的那个。
MAX_PARALLEL = 4
START_TOGETHER_SECONDS = 5.0

# 两个扩展点的样子
Prepare = Callable[[list[dict], int], Generator[events.Event, Any, list[dict]]]
RunCall = Callable[[ToolCall, "Executor | None", list[str]], Generator[events.Event, Any, events.ToolResultEvent]]


def run_function_calling(client: Any, messages: str | list[dict], tools: list[dict] | None,
                         execute: Executor | Any | None, *, max_turns: int = 6, tool_choice: Any = None,
                         parallel_tool_calls: bool | None = None, temperature: float | None = None,
                         stream: bool = False, envelope: bool = False, prepare: Prepare | None = None,
                         run_call: RunCall | None = None) -> Steps:
    tools, execute = tools_and_executor(tools, execute)     # execute 也可以直接是一个 ToolRegistry
    run_call = run_call or plain_call
    limit = min(MAX_PARALLEL, getattr(execute, "max_parallel", MAX_PARALLEL),
                getattr(run_call, "max_parallel", MAX_PARALLEL))
    if envelope:
        execute = enveloping(execute)
    history = start_history(messages)
    names = tool_names(tools)
    failures = 0
    for turn in range(1, max_turns + 1):
        if prepare is not None:
            history = yield from prepare(history, turn)
        # 强制调用（"required" 或指定函数）只用在第一轮：每轮都强制，模型就永远没法给出最终回答。
        choice = tool_choice if (turn == 1 or tool_choice in ("auto", "none")) else None
        completion = yield from ask_model(client, history, turn, stream, tools=tools or None, tool_choice=choice,
                                          parallel_tool_calls=parallel_tool_calls, temperature=temperature)
        if completion is None:                               # 模型那边出错：error 事件已经发出
            return
        message = completion.message
        history.append(message)
        requested = message.get("tool_calls") or []
        if not requested:
            yield events.final(turn, message.get("content") or "", history)
            return
        calls = [ToolCall.read(turn, raw["id"], raw["function"]["name"], raw["function"]["arguments"])
                 for raw in requested]
        steps = [run_call(call, execute, names) for call in calls]       # 按调用的顺序建好，还没有开始跑
        if len(steps) > 1 and parallel_tool_calls is not False and limit > 1:
            results = yield from run_concurrently(steps, limit)
        else:                                                # 一个调用（或不许并行）：一个接一个
            results = []
            for step in steps:
                results.append((yield from step))
        history.extend(result["message"] for result in results)   # 按调用的顺序放回历史
        # 这一轮只要有一个调用成功就不算失败：并行调用里错一个很常见，模型下一轮会补
        failures = 0 if any(r["ok"] for r in results) else failures + 1
        if failures >= MAX_FAILURES:
            yield too_many_failures(turn, results[-1]["content"])
            return
    yield out_of_turns(max_turns)


def plain_call(call: ToolCall, execute: Executor | None, names: list[str]):
    """默认的 run_call：loop_parts.run_tool，结果以 role "tool" 回到历史。"""
    return run_tool(call, execute, names, wrap=tool_message(call.id))


def tool_message(call_id: str):
    """工具结果以 role "tool" 回到历史，tool_call_id 对上是哪一个调用。"""
    return lambda content: {"role": "tool", "tool_call_id": call_id, "content": content}


def run_concurrently(steps: list[Generator], limit: int) -> Generator[events.Event, Any, list[events.ToolResultEvent]]:
    """模型一次要了几个调用（"并行调用"），就同时执行它们。steps 是每个调用的 run_call，分三步：
      1. 按顺序 yield 每个调用的 tool_call 事件。每个 run_call 都停在 tool_call 之后，
         等我们把干预 send 回去（单步模式在这里逐个暂停，可以改参数、手写结果）；
      2. 全部问完以后，在线程池里同时让它们继续：执行工具，产出 tool_result；
      3. 按调用的顺序 yield 每个调用产出的事件，tool_result 带上它在这一批里的起止时刻（started_ms / finished_ms，
         从这一批开始算），加上整批的耗时 round_ms：几个调用是不是重叠着跑的，看这几个数就知道。
    工具要是慢（查接口、查数据库），几个一起跑，总耗时接近最慢的那一个，而不是全部相加。"""
    overrides = []
    for step in steps:
        overrides.append((yield next(step)))     # tool_call 事件；send 回来的干预先存着
    start = time.perf_counter()

    def finish(step: Generator, override: Any, let_go: float) -> tuple[list[dict], dict]:
        *produced, result = [step.send(override), *step]    # 执行；最后一个事件是这个调用的 tool_result
        started, finished = round((let_go - start) * 1000, 3), elapsed_ms(start)
        # 从放行到拿回结果：一齐放行的调用，时刻上一定重叠（放行以后哪个线程先轮到 CPU 由机器决定，
        # 等 CPU 的那段也是它在这一批里的时间）。用时也是这一段，条的长短和结果行的用时说的是同一个数
        return produced, {**result, "started_ms": started, "finished_ms": finished,
                          "duration_ms": round(finished - started, 3)}

    batches = side_by_side(lambda pair, let_go: finish(*pair, let_go), list(zip(steps, overrides)), limit)
    round_ms = elapsed_ms(start)
    results = []
    for produced, result in batches:
        yield from produced                       # 这个调用执行途中的事件（钩子、子代理的每一步……）
        results.append({**result, "round_ms": round_ms, "concurrent": min(limit, len(steps))})
        yield results[-1]
    return results


def side_by_side(work: Callable[[Any, float], Any], items: list, limit: int) -> list:
    """work(item, let_go) for every item in threads, at most `limit` at once; the results in the items' order.
    let_go is the time.perf_counter() at which the item was let go. The first `limit` items are let go
    together, by a start line: a thread that finished its item quickly must not take the next one while
    another thread has not started yet (on a busy machine quick items would otherwise run one after another
    on one thread). Later items are let go when a thread takes them up."""
    limit = max(1, min(limit, len(items)))
    line_opened: list[float] = []
    start_line = threading.Barrier(limit, action=lambda: line_opened.append(time.perf_counter()))

    def one(position: int, item: Any) -> Any:
        let_go = None
        if position < limit:
            try:
                start_line.wait(timeout=START_TOGETHER_SECONDS)
                let_go = line_opened[0]
            except threading.BrokenBarrierError:   # the line was given up: start anyway
                pass
        return work(item, time.perf_counter() if let_go is None else let_go)

    with ThreadPoolExecutor(max_workers=limit) as pool:
        try:
            started = [pool.submit(one, position, item) for position, item in enumerate(items)]
        except BaseException:       # a thread the machine could not start: the ones waiting go on, no new ones
            start_line.abort()
            pool.shutdown(cancel_futures=True)
            raise
        return [future.result() for future in started]


def elapsed_ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


if __name__ == "__main__":
    from llm_clients import make_client
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    run = run_function_calling(make_client("offline"), "北京和上海的天气怎么样？", weather,
                               lambda name, args: f"{args['city']}：晴，25℃")
    for event in run:
        print(event["type"], {k: v for k, v in event.items() if k in ("name", "arguments", "content")})
