"""循环产出的事件：每种一个 TypedDict，一个构造函数。循环只调用这些函数，不在别处手写 dict。

一次运行就是一串事件，界面逐条显示、测试逐条检查、导出文件原样保存：
  request → delta…（流式时）→ response → parse（文本协议）→ tool_call → tool_result → … → final / error
第一次调用（first_call.py）只有一个来回，收完以后再发一个 assembled：每个工具调用由几片拼成、参数何时完整：
  request → delta…（带到达时刻）→ response → assembled
计划（planning.py）：每次 write_todos 之后（或固定流程改了一项的状态之后）是一个 plan 事件，带着改之前和之后的计划板：
  … → tool_call write_todos → tool_result → plan → …
有钩子时（hooks.py），tool_call 和 tool_result 之间是每个钩子的 hook 事件：
  tool_call → hook PreToolUse… → （执行）→ hook PostToolUse… → tool_result
工具在 MCP 服务器上时（mcp_client_loop.py），协议上往来的每条 JSON-RPC 消息也是一个 rpc 事件：
  rpc initialize → rpc tools/list → request → … → tool_call → rpc tools/call（请求、结果）→ tool_result → …
有权限规则时（mini_agent.py），执行之前是一个 permission 事件：规则怎么说；要先问人时循环停在这里等 send：
  tool_call → hook PreToolUse… → permission → （执行）→ hook PostToolUse… → tool_result
在会话的一条分支上跑时（sessions.py），每个事件都带上 branch（分支的 id），写进会话的每一条消息是一个 entry 事件：
  request → response → …… → tool_result → entry（assistant）→ entry（tool）… → response → entry → final
一次运行知道自己要做到什么时（evaluation.py 的一条用例），第一个事件是 purpose（turn 0），带着那条用例：
  purpose → request → …
事件都是普通的 dict（TypedDict 只是给读代码的人和类型检查器看的），所以能直接 json.dumps。
每个事件都有 type 和 turn（第几轮，从 1 开始）。
"""
from __future__ import annotations

import copy
from typing import Any, Literal, TypedDict

from tool_outcome import ToolOutcome


class RequestEvent(TypedDict):
    type: Literal["request"]
    turn: int
    messages: list[dict]          # 这次发出去的完整历史（拷贝：之后历史再变，这里不变）
    tools: list[dict] | None
    params: dict[str, Any]        # model、temperature、tool_choice、parallel_tool_calls、stop、stream


class DeltaEvent(TypedDict, total=False):
    type: Literal["delta"]
    turn: int
    content: str                  # 一段文字增量；或者下面几个：一段工具调用的增量
    index: int
    id: str                       # 调用的 id：只在带着它的那一片上（通常是第一片）
    name: str | None
    arguments: str
    at_ms: float                  # 以下只有 first_call.py 的才有：从发出请求算起，这一片到的时刻
    so_far: str                   # 到这一片为止，这个调用的参数拼成了什么
    closed: bool                  # so_far 能不能被 json.loads 读出来（参数收完了没有）
    json_error: str | None        # 读不出来时，json.loads 说了什么


class ResponseEvent(TypedDict):
    type: Literal["response"]
    turn: int
    raw: Any                      # 服务端原样发来的 JSON（流式时是分片列表）
    message: dict                 # 规范化后的 assistant 消息
    text: str
    usage: dict | None
    duration_ms: float
    finish_reason: str | None
    reasoning: str | None         # 思考过程（reasoning_content / <think>）：给人看，不放回历史
    accents: list[dict]           # 端点的“口音”：[{"code", "message": 中文说明}]，见 accents.py


class ParseExtras(TypedDict, total=False):
    naive: dict                   # 只有 ReAct：朴素正则读同一段回复的结果（text_parsers.compare_naive）


class ParseEvent(ParseExtras):
    """文本协议（ReAct / JSON）从回复里解析出了什么。kind: action / final / none。"""
    type: Literal["parse"]
    turn: int
    ok: bool
    kind: Literal["action", "final", "none"]
    pattern: str                  # 用的正则，界面上给学生看
    groups: dict[str, str]        # action: thought?/tool/args；final: answer
    span: list[int] | None        # 匹配到的位置 [起点, 终点]
    notes: list[str]              # 解析器容忍了哪些不规范的写法
    reason: str | None            # 没解析出来时，为什么


class ToolCallEvent(TypedDict):
    type: Literal["tool_call"]
    turn: int
    id: str
    name: str
    raw_arguments: Any            # 模型写的参数原文
    arguments: dict | None        # 解析出来的参数；None 表示解析不了
    problems: list[str]           # 解析时的问题和备注


class ConcurrentTiming(TypedDict, total=False):
    """只有同时执行的几个调用才有（function_calling_loop.run_concurrently）：时间都从这一批开始算。"""
    started_ms: float
    finished_ms: float
    round_ms: float               # 整批的耗时
    concurrent: int               # 最多几个同时跑


class HookChanges(TypedDict, total=False):
    """只有 hooks.py 的调用才有。"""
    changed_by: list[str]         # 执行前改过参数的钩子（执行的不是模型写的参数）
    hook: str                     # 拦下这次调用的前置钩子（hook_denied、hook_failed）
    unseen_by: list[str]          # 调用失败了：没看到失败文本的 PostToolUse 钩子（它们只在成功之后运行）


class ToolResultEvent(ConcurrentTiming, HookChanges):
    type: Literal["tool_result"]
    turn: int
    id: str
    name: str
    content: str                  # 回填给模型的文本（最多 RESULT_LIMIT 字，截断会写明）
    ok: bool
    error_code: str | None
    duration_ms: float
    arguments: dict | None        # 实际执行时的参数
    message: dict                 # 放回历史的那条消息
    problems: list[str]
    coercions: list[str]          # 看得见的宽松转换，如 count: "5" → 5
    clipped_from: int | None      # 截断前的字数；None 表示原样回填
    edited: list[str]             # 执行前人改过的参数（单步、修改参数后批准），模型从结果里也会读到


class FinalEvent(TypedDict):
    type: Literal["final"]
    turn: int
    content: str
    messages: list[dict]          # 整段对话历史


class ErrorExtras(TypedDict, total=False):
    retry_without: str            # 端点不认的参数（tool_choice / parallel_tool_calls / strict）：去掉它可以重试
    status: int                   # 服务端答的 HTTP 错误状态码；没得到回答（连不上、超时、流断了）就没有这一项
    cause: str                    # 错误由另一个错误引起时，那个错误的 code（比如钩子源码加载失败的原因）


class ErrorEvent(ErrorExtras):
    type: Literal["error"]
    turn: int | None              # None：还没开始哪一轮就停了（比如源码读不了、对话不能用）
    code: str                     # 模型端的失败（LLMError.code）或 too_many_failures / max_turns / bad_response
    message: str                  # 给人看的中文，说清楚下一步怎么做


class RpcEvent(TypedDict):
    """客户端和 MCP 服务器之间的一条 JSON-RPC 消息（mcp_client_loop.py）。"""
    type: Literal["rpc"]
    turn: int
    direction: Literal["send", "receive"]     # send：客户端 → 服务器；receive：服务器 → 客户端
    kind: Literal["request", "notification", "result", "error"]
    id: int | str | None          # 请求和它的响应 id 相同；通知没有 id
    method: str | None            # 响应也写上它回答的是哪个请求（initialize、tools/list、tools/call……）
    params: dict | None           # 请求、通知的参数
    result: dict | None           # 成功的响应；tools/call 的工具失败也在这里（isError: true）
    error: dict | None            # 协议层的失败（JSON-RPC error：code、message）
    at_ms: float                  # 从连接开始算的时刻
    message: dict                 # 线上原样的那条消息


class HookEvent(TypedDict):
    """一个钩子运行了一次（hooks.py）：拿到什么、返回什么、出了什么错。"""
    type: Literal["hook"]
    turn: int
    id: str                       # 这个钩子围绕的那次调用（tool_call 的 id）
    event: str                    # PreToolUse / PostToolUse / PostToolUseFailure
    name: str                     # 钩子函数的名字
    payload: dict                 # 钩子拿到的 dict（tool_name、tool_input，之后还有 tool_response 或 error）
    answer: dict | None           # 它返回的 dict；None 是没意见（出了错也是 None）
    problem: str | None           # 它出的错：抛的异常，或者返回了不该返回的东西
    fail: str                     # 出错时怎么办：closed 拦下，open 照常
    duration_ms: float
    asking: str | None            # 只有“先问人”时才有：问人的理由；循环停在这里等 send


class PermissionEvent(TypedDict):
    """一次调用执行之前，权限规则怎么说（mini_agent.py 的 permitted，规则见 permissions.py）。"""
    type: Literal["permission"]
    turn: int
    id: str                       # 那次调用（tool_call 的 id）
    name: str
    arguments: Any                # 规则看的参数（钩子改过的话，是改过的）
    verdict: Literal["allow", "ask", "deny"]
    rule: str                     # 起作用的规则的键；没有规则匹配时是 ""（默认先问人）
    reason: str
    asking: str | None            # 只有 ask 才有：问人的理由；循环停在这里等 send（见 mini_agent.permitted）


class PurposeEvent(TypedDict, total=False):
    """这次运行要做到什么：evaluation.py 的一条用例（Case.to_json），记在最前面，导出、回放时照样能判。"""
    type: Literal["purpose"]
    turn: int                     # 0：在第一轮请求之前
    name: str
    question: str
    calls: list[dict]             # 该有的调用和参数的匹配规则
    order: str
    answer: dict
    before: list[dict]


class ContextEvent(TypedDict):
    """下一次请求发出之前，上下文被收拾成了什么样（context.py 的 run_within_budget）。"""
    type: Literal["context"]
    turn: int                     # 0：在第一轮请求之前
    strategy: str                 # context.STRATEGIES 里的名字
    title: str
    budget: int
    rows: list[dict]              # 原来每条消息：role、preview、tokens、fate（去向）、after（之后多少 token，丢掉为 0）、
                                  # orphan（留下了，调用却丢了）
    added: list[dict]             # 新写的消息（摘要）：role、preview、tokens
    before_tokens: int
    after_tokens: int
    notes: list[str]              # 做了什么，每件事一句话
    orphans: list[str]            # 找不到调用的 tool 结果（按 rows 的编号说）：真的 API 会拒收
    ms: float                     # 这一种做法这次用了多少毫秒（摘要含一次模型调用）
    model_call: dict | None       # 只有 /compact：交给模型的请求、摘要、用时、usage、模型名
    compared: list[dict]          # 几种做法并排：messages、tokens、saved、ms、orphans、fits；要模型而这次没做的只有 needs_model


class SkillsEvent(TypedDict):
    """一次带技能的运行开始之前（skills.py 的 run_with_skills）：有哪些技能，两种写法各多少 token。"""
    type: Literal["skills"]
    turn: int                     # 0：在第一轮请求之前
    way: str                      # catalogue（只列名字和描述，load_skill 读正文）或 pasted（正文全贴进来）
    skills: list[dict]            # name、description
    problems: list[str]           # 不合格的技能，每条一句话
    system_tokens: dict           # {"catalogue": n, "pasted": m}：两种写法的 system 提示词各多少 token


class EntryEvent(TypedDict):
    """会话里写下了一条消息（sessions.py）：它成了树上的一个节点。"""
    type: Literal["entry"]
    turn: int                     # 0：运行之前写的（问题、改过的那一条）
    branch: str                   # 它所在分支的 id
    entry: dict                   # 文件里的那一行：id、parent_id、time、message，改过的还有 edited_from


class AssembledEvent(TypedDict):
    """一次回复收完了（first_call.py）：每个工具调用由几片拼成，参数从哪一刻起才是完整的 JSON。"""
    type: Literal["assembled"]
    turn: int
    streamed: bool
    calls: list[dict]             # index、id、name、arguments（拼好的原文）、parsed（json.loads 的结果，读不出来是 None）、
                                  # fragments（几片；不流式是 0）、first_ms（第一片到的时刻）、
                                  # closed_ms / closed_at（参数成为完整 JSON 的时刻、第几片；一直没完整是 None）
    finish_reason: str | None
    meaning: str                  # finish_reason 是什么意思（first_call.FINISH_REASONS）
    done_ms: float                # 整个响应收完的时刻（从发出请求算起）


class PlanEvent(TypedDict):
    """计划板变了一次，或者一次改动被规则拒了（planning.py）。每一项：content、status、done_when，
    完成的项还有 evidence 和 found_in（证据在哪个工具结果里）；固定流程的项还有 result、failed_calls 和 ok_calls（这一步失败、成功的调用各几次）。"""
    type: Literal["plan"]
    turn: int
    id: str | None                # 那次 write_todos 调用的 id；固定流程（循环自己改状态）是 None
    source: Literal["write_todos", "fixed"]
    accepted: bool                # 规则都过了没有：没过，计划板不变
    before: list[dict]            # 这次之前的计划板
    after: list[dict]             # 这次之后的计划板（没过时和 before 一样）
    proposed: list[dict] | None   # 模型这次写的清单（不管过没过）；固定流程是 None
    changes: list[str]            # 每处变化一句话：新增、删掉、改写、状态变了
    replanned: bool               # 不只是改状态：已经有计划以后，又加了、删了或改写了计划项
    problems: list[str]           # 违反了哪些规则，每条一句（回给模型的错误就是它们）


Event = (RequestEvent | DeltaEvent | ResponseEvent | ParseEvent | ToolCallEvent | ToolResultEvent
         | FinalEvent | ErrorEvent | RpcEvent | HookEvent | ContextEvent | SkillsEvent | EntryEvent | AssembledEvent
         | PlanEvent | PermissionEvent)


def own(events: list[dict]) -> list[dict]:
    """一次运行里循环自己的事件：去掉子代理的（subagents.py 给它们带上 "child"）。最终回答、错误、轮数都只看这些。"""
    return [event for event in events if "child" not in event]


def request(turn: int, messages: list[dict], tools: list[dict] | None, params: dict[str, Any]) -> RequestEvent:
    return {"type": "request", "turn": turn, "messages": copy.deepcopy(messages), "tools": tools, "params": params}


def delta(turn: int, piece: dict[str, Any]) -> DeltaEvent:
    return {"type": "delta", "turn": turn, **piece}          # type: ignore[typeddict-item]


def timed_delta(turn: int, piece: dict[str, Any], at_ms: float, so_far: str | None = None,
                json_error: str | None = None) -> DeltaEvent:
    """一片增量加上它到的时刻；工具调用的碎片再加上拼到这片为止的参数，和 json.loads 读它的结果。"""
    event = {**delta(turn, piece), "at_ms": round(at_ms, 3)}
    if so_far is not None:
        event.update(so_far=so_far, closed=json_error is None, json_error=json_error)
    return event                                              # type: ignore[return-value]


def response(turn: int, completion: Any) -> ResponseEvent:
    """completion 是 llm_clients.Completion。"""
    return {"type": "response", "turn": turn, "raw": completion.raw, "message": completion.message,
            "text": completion.text, "usage": completion.usage, "duration_ms": round(completion.duration_ms, 2),
            "finish_reason": completion.finish_reason,
            "reasoning": getattr(completion, "reasoning", None), "accents": list(getattr(completion, "accents", []))}


def parse(turn: int, parsed: dict[str, Any]) -> ParseEvent:
    """parsed 是解析器（parse_react / parse_json_reply）交回的内容：ok、kind、pattern、groups……"""
    return {"type": "parse", "turn": turn, **parsed}         # type: ignore[typeddict-item]


def tool_call(turn: int, call_id: str, name: str, raw_arguments: Any, arguments: dict | None,
              problems: list[str]) -> ToolCallEvent:
    return {"type": "tool_call", "turn": turn, "id": call_id, "name": name, "raw_arguments": raw_arguments,
            "arguments": arguments, "problems": problems}


def tool_result(turn: int, call_id: str, name: str, outcome: ToolOutcome, message: dict) -> ToolResultEvent:
    return {"type": "tool_result", "turn": turn, "id": call_id, "name": name, "content": outcome.content,
            "ok": bool(outcome.ok), "error_code": outcome.error_code, "duration_ms": outcome.duration_ms,
            "arguments": outcome.arguments, "message": message, "problems": list(outcome.problems),
            "coercions": list(outcome.coercions), "clipped_from": outcome.clipped_from,
            "edited": list(outcome.edited)}


def hook(turn: int, call_id: str, event: str, name: str, payload: dict, answer: dict | None, problem: str | None,
         fail: str, duration_ms: float, asking: str | None = None) -> HookEvent:
    return {"type": "hook", "turn": turn, "id": call_id, "event": event, "name": name,
            "payload": copy.deepcopy(payload), "answer": answer, "problem": problem, "fail": fail,
            "duration_ms": duration_ms, "asking": asking}


def permission(turn: int, call_id: str, name: str, arguments: Any, verdict: str, rule: str,
               reason: str) -> PermissionEvent:
    return {"type": "permission", "turn": turn, "id": call_id, "name": name, "arguments": copy.deepcopy(arguments),
            "verdict": verdict, "rule": rule, "reason": reason, "asking": reason if verdict == "ask" else None}


def assembled(turn: int, streamed: bool, calls: list[dict], finish_reason: str | None, meaning: str,
              done_ms: float) -> AssembledEvent:
    return {"type": "assembled", "turn": turn, "streamed": streamed, "calls": copy.deepcopy(calls),
            "finish_reason": finish_reason, "meaning": meaning, "done_ms": round(done_ms, 3)}


def plan(turn: int, call_id: str | None, source: str, accepted: bool, before: list[dict], after: list[dict],
         proposed: list[dict] | None, changes: list[str], replanned: bool, problems: list[str]) -> PlanEvent:
    """before / after / proposed 都拷贝一份：计划板之后再变，这个事件记下的还是这一刻的样子。"""
    return {"type": "plan", "turn": turn, "id": call_id, "source": source, "accepted": accepted,
            "before": copy.deepcopy(before), "after": copy.deepcopy(after), "proposed": copy.deepcopy(proposed),
            "changes": list(changes), "replanned": replanned, "problems": list(problems)}


def final(turn: int, content: str, messages: list[dict]) -> FinalEvent:
    return {"type": "final", "turn": turn, "content": content, "messages": messages}


def error(turn: int | None, code: str, message: str) -> ErrorEvent:
    return {"type": "error", "turn": turn, "code": code, "message": message}


def purpose(case: dict) -> PurposeEvent:
    """case 是 evaluation.Case.to_json() 写出的那种 dict。"""
    return {"type": "purpose", "turn": 0, **case}


def entry(turn: int, branch: str, written: dict) -> EntryEvent:
    return {"type": "entry", "turn": turn, "branch": branch, "entry": copy.deepcopy(written)}


def rpc(turn: int, direction: str, message: dict, method: str | None = None, at_ms: float = 0.0) -> RpcEvent:
    """message 是线上的 JSON-RPC 消息（dict）。响应里没有 method：由调用方按 id 查出对应的请求再传进来。"""
    message = copy.deepcopy(message)     # 拷贝：之后谁再改那个 dict，事件里记下的还是线上的样子
    if "method" in message:
        kind = "request" if "id" in message else "notification"
    else:
        kind = "error" if "error" in message else "result"
    return {"type": "rpc", "turn": turn, "direction": direction, "kind": kind, "id": message.get("id"),
            "method": message.get("method", method), "params": message.get("params"),
            "result": message.get("result"), "error": message.get("error"), "at_ms": round(at_ms, 3),
            "message": message}


if __name__ == "__main__":
    import json

    from tool_outcome import failure
    outcome = failure("invalid_json", "参数不是合法的 JSON：第 1 行第 2 列附近出错", "请重新输出一个合法的 JSON 对象")
    for event in [tool_call(1, "call_1", "get_weather", "{", None, ["参数不是合法的 JSON"]),
                  tool_result(1, "call_1", "get_weather", outcome, {"role": "tool", "tool_call_id": "call_1",
                                                                    "content": outcome.content}),
                  error(2, "max_turns", "已经用完 max_turns=2 轮还没得到最终回答，已停止。")]:
        print(json.dumps(event, ensure_ascii=False))
