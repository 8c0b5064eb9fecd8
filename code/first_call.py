"""第一次调用（8.1）：一个请求、一个响应，原样摆出来。课程的第一个文件，在 minimal_loop.py 之前读。

这里还没有循环，也不执行工具：只问模型一次，看清楚三件事——
  1. 发出去的是什么：request_body 是请求体原文，sdk_code 是用 openai 或 zhipuai SDK 发同一个请求的代码；
  2. 回来的是什么：不流式，是一整块 JSON，工具调用在 choices[0].message.tool_calls 里；
     流式（stream=True），是一串分片：一个调用先来 index、id 和函数名，参数再一片几个字地来，
     客户端按 index 把碎片接起来（llm_clients.py 替我们接好了，这里把每一片和它到的时刻都记下来）；
  3. finish_reason：模型为什么停（FINISH_REASONS 逐个说明）。"tool_calls" 说的是“轮到你执行工具了”。
每来一片参数，就对拼到这片为止的文字试一次 json.loads：最后一片到之前，它都不是完整的 JSON，
连要查哪个城市都还不知道。所以流式的调用不能边收边执行：要等它的参数收完整。
（智谱文档说，流式的工具调用要 glm-4.6 加 tool_stream=True 才分片发，别的模型整个调用一片发完；一片就是全部，道理一样。）

    python code/first_call.py            # 离线模型：先不流式，再流式
"""
from __future__ import annotations

import json
import pprint
import time
from typing import Any, Iterator

import events
from llm_clients import Completion, usage_is_estimate
from loop_parts import model_failed

QUESTION = "北京今天天气怎么样？"
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "查询指定城市的当前天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "城市名，如 北京"}},
                   "required": ["city"]}}}]

FINISH_REASONS = {
    "tool_calls": "模型要调用工具：message.tool_calls 里是函数名和参数。执行它们、把结果发回去，模型才会接着回答",
    "stop": "模型写完了（或碰到了 stop 里的词）：这是一段回答，没有要调用的工具",
    "length": "写到 max_tokens 被截断了：回答或参数可能只写了一半（参数多半不是完整的 JSON），别执行，调大 max_tokens 再问",
    "content_filter": "内容被平台的安全审核拦下了",
    "sensitive": "（智谱）内容被平台的安全审核拦下了",
    "network_error": "（智谱）模型推理出了错，请重试",
    "function_call": "旧接口（functions 参数）的写法，意思和 tool_calls 一样",
}
NO_FINISH = "没有收到 finish_reason：响应可能中途断了"


def request_body(client: Any, question: str = QUESTION, tools: list[dict] | None = TOOLS, stream: bool = False) -> dict:
    """客户端要发出去的请求体，原样（llm_clients 的 request_body：没给值的参数一个都不发）。"""
    return client.request_body([{"role": "user", "content": question}], tools, None, None, None, None, stream)


def sdk_code(provider: str, body: dict, base_url: str | None = None) -> str:
    """用官方 SDK 发同一个请求的 Python 代码。Key 从环境变量读，代码里不写 Key。"""
    if provider == "glm":
        head = ["from zhipuai import ZhipuAI", "", 'client = ZhipuAI(api_key=os.environ["ZHIPUAI_API_KEY"]'
                + (f", base_url={base_url!r})" if base_url else ")")]
    else:
        head = ["from openai import OpenAI", "", 'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"]'
                + (f", base_url={base_url!r})" if base_url else ")")]
    arguments = []
    for key, value in body.items():           # 每个参数一行；长的值折行时和等号后面对齐
        shown = pprint.pformat(value, width=100, sort_dicts=False)
        arguments.append(f"    {key}=" + shown.replace("\n", "\n" + " " * (5 + len(key))) + ",")
    lines = ["import os", *head, "response = client.chat.completions.create(", *arguments, ")"]
    if body.get("stream"):
        lines += ["for chunk in response:                 # 一片一片地到",
                  "    for choice in chunk.choices:       # 最后一片可能只带 usage、没有 choices（llama-server 就这样发）",
                  "        print(choice.delta)"]
    else:
        lines += ["print(response.choices[0].message)     # 一整块", "print(response.choices[0].finish_reason)"]
    return "\n".join(lines)


def json_error(text: str) -> str | None:
    """json.loads(text) 读得出来就是 None；读不出来，是它的原话。"""
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return f"{error.msg}（第 {error.pos + 1} 个字符）" if text.strip() else "还没有参数"
    return None


def first_call(client: Any, question: str = QUESTION, tools: list[dict] | None = TOOLS, *,
               stream: bool = False) -> Iterator[events.Event]:
    """问一次：yield request →（流式时）每一片的 delta → response → assembled。出错时 yield 一个 error 就结束。"""
    messages = [{"role": "user", "content": question}]
    yield events.request(1, messages, tools, {"model": client.model, "stream": stream})
    started = time.perf_counter()
    so_far: dict[int, str] = {}                  # index -> 这个调用到目前为止收到的参数
    timeline: dict[int, list[dict]] = {}         # index -> 它的每一片：到的时刻、收完没有
    try:
        if stream:
            for piece in client.stream(messages, tools=tools):
                at_ms = (time.perf_counter() - started) * 1000
                if isinstance(piece, Completion):
                    completion = piece
                elif "index" in piece:
                    so_far[piece["index"]] = so_far.get(piece["index"], "") + piece["arguments"]
                    event = events.timed_delta(1, piece, at_ms, so_far[piece["index"]],
                                               json_error(so_far[piece["index"]]))
                    timeline.setdefault(piece["index"], []).append(event)
                    yield event
                else:
                    yield events.timed_delta(1, piece, at_ms)
        else:
            completion = client.complete(messages, tools=tools)
    except Exception as error:          # Key 不对、连不上、限流……：说清楚，不崩
        yield model_failed(1, error)
        return
    done_ms = (time.perf_counter() - started) * 1000
    yield events.response(1, completion)
    calls = [assembled_call(index, call, timeline.get(index, []), done_ms)
             for index, call in enumerate(completion.message.get("tool_calls") or [])]
    yield events.assembled(1, stream, calls, completion.finish_reason,
                           FINISH_REASONS.get(completion.finish_reason or "", NO_FINISH), done_ms)


def assembled_call(index: int, call: dict, pieces: list[dict], done_ms: float) -> dict:
    """一个拼好的调用：由几片拼成，第几片、什么时刻参数才完整。不流式时没有分片，整个调用随响应一起到。"""
    text = call["function"]["arguments"]
    closing = next((n for n, piece in enumerate(pieces, 1) if piece["closed"]), None)
    return {"index": index, "id": call.get("id"), "name": call["function"]["name"], "arguments": text,
            "parsed": None if json_error(text) else json.loads(text), "fragments": len(pieces),
            "first_ms": pieces[0]["at_ms"] if pieces else round(done_ms, 3),
            "closed_ms": (pieces[closing - 1]["at_ms"] if closing else None) if pieces else round(done_ms, 3),
            "closed_at": closing if pieces else None}


if __name__ == "__main__":
    from llm_clients import make_client
    client = make_client("offline")            # 换成 make_client("glm") 就是智谱的真模型（要 ZHIPUAI_API_KEY）

    print("── 不流式：一个请求，一整块响应\n" + sdk_code("openai", request_body(client)))
    for event in first_call(client):
        if event["type"] == "response":
            print("响应原文：", json.dumps(event["raw"], ensure_ascii=False)[:400], "…")
        elif event["type"] == "assembled":
            print(f"finish_reason = {event['finish_reason']}：{event['meaning']}")

    print("\n── 流式：同一个请求加上 stream=True，工具调用一片一片地到")
    for event in first_call(client, stream=True):
        if event["type"] == "delta" and "index" in event:
            said = f"id={event['id']} name={event['name']} " if event.get("id") else ""
            state = "✓ 完整的 JSON" if event["closed"] else f"✗ json.loads 读不出来：{event['json_error']}"
            print(f"{event['at_ms']:8.2f} ms  tool_calls[{event['index']}] {said}片段 {event['arguments']!r:12} "
                  f"拼到现在 {event['so_far']!r:22} {state}")
        elif event["type"] == "assembled":
            for call in event["calls"]:
                print(f"拼好的调用：{call['name']}({call['arguments']})，共 {call['fragments']} 片，"
                      f"第 {call['closed_at']} 片（{call['closed_ms']} ms）参数才完整，这时才能执行。")
            print(f"finish_reason = {event['finish_reason']}：{event['meaning']}")
        elif event["type"] == "response":
            print(f"usage：{event['usage']}" + ("（离线模型按字数估的，不是分词器数的）" if usage_is_estimate(event["raw"]) else ""))
        elif event["type"] == "error":
            print(event["message"])
