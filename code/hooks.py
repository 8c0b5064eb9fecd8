"""钩子（hooks）：每次工具调用的前后，运行你自己写的几行代码——计时、给结果脱敏、记审计日志、拦下危险的参数。

比 function_calling_loop.py 多了这些（问模型、读参数、执行工具还是 loop_parts.py 里那几个零件）：
  - 调用执行之前，PreToolUse 钩子按注册的顺序一个个运行。每个拿到一个 dict：
        {"hook_event_name": "PreToolUse", "tool_name": "get_weather", "tool_input": {"city": "北京"},
         "tool_use_id": "call_1"}
    返回 None 就是“没意见”；要改变什么，返回一个 dict：
        {"permissionDecision": "deny", "permissionDecisionReason": "…"}  不执行，理由作为工具结果告诉模型，它可以换个做法；
        {"permissionDecision": "ask", "permissionDecisionReason": "…"}   先问人：循环 yield 一个 hook 事件停下来，
                                       send({"allow": True}) 是同意，send({"deny": "理由"}) 是拒绝，
                                       没人回答（send(None)、直接 for 循环）就不执行；
        {"permissionDecision": "allow"}   放行；后面的钩子照样运行，它们说 deny 或 ask 依然算数；
        {"updatedInput": {...}}           换一组参数执行，后面的钩子看到的是换过的；换上的参数先按工具的
                                       参数 schema 校验，不合就算这个钩子出了错（见下面的 fail），不交给工具；
        {"additionalContext": "…"}        一句话，附在工具结果后面给模型看。
    几个钩子意见不同时最严的算：deny > ask > allow，和 permissions.py 的规则一样。
  - 执行成功以后，PostToolUse 钩子另外拿到 "tool_response"（要回填给模型的文本），可以返回：
        {"updatedToolOutput": "…"}        换掉结果（脱敏靠它），后面的钩子看到的是换过的；
        {"decision": "block", "reason": "…"}  工具已经运行了，但结果不交给模型，交给它的是这个理由；
        {"additionalContext": "…"}。
  - 执行失败以后（工具抛了异常、超时、参数不对……）PostToolUse 钩子不运行，运行的是 PostToolUseFailure 钩子。
    它拿到 "error"（要交给模型的失败文本），可以用 updatedToolOutput 换掉这段文本，或者附上 additionalContext；
    调用仍然算失败：失败这件事，钩子抹不掉。报错里一样可能有密钥，所以脱敏钩子两种都要登记（mask_secrets 两种都能挂）。
  - 钩子自己出错（抛了异常、返回的不是 dict、返回了它这种钩子不能用的键或值）怎么办，注册时说：fail="closed"（安全类：拦下这次调用，
    或者不交出结果、不交出失败的文本），fail="open"（计时、日志：记一条警告，调用照常）。默认 closed：一道没运行成功的安全检查不算通过。
  - 钩子拿到的是一份拷贝：它改动手里的 dict 不会影响调用，想改什么就写进返回值——改了什么因此都看得见。
  - 每个钩子运行一次，就 yield 一个 hook 事件：谁、拿到了什么、返回了什么、出了什么错。

事件名和字段名照着今天的 agent 取（Claude Code 的 hooks），为了一页能讲清楚，做法上改了几处：
  - Claude Code 的钩子是 shell 命令，从 stdin 读 JSON，用退出码 2 拦下调用，PreToolUse 的回答写在
    hookSpecificOutput 里；这里是 Python 函数，读一个 dict，返回一个平的 dict；
  - Claude Code 把同一事件的几个钩子并行运行，它们看不到彼此的改动；这里一个接一个，后面的看得到前面改过的
    （所以下面才有顺序的坑）；
  - Claude Code 的 PostToolUse block 只是把理由告诉模型；这里 block 让模型收不到结果，只收到理由。改写结果在
    Claude Code 里只有 MCP 工具可以（updatedMCPToolOutput），这里所有工具都可以；
  - Claude Code 的 PostToolUseFailure 只能附上一句话；这里它也能换掉失败的文本：报错交给模型之前，一样要能脱敏；
  - Claude Code 的钩子出了别的错（退出码不是 0 也不是 2）不拦调用；这里每个钩子自己说 closed 还是 open。
课程仓库里的 HookManager（s07_hooks_lifecycle.py）更简单，有两处要当心：前置钩子只能改参数，拦不下调用；
后置钩子的返回值直接替换结果，一个忘了写 return 的钩子会把结果变成 None。这里返回 None 就是没意见，结果原样不动。

顺序有意义：审计钩子排在脱敏钩子前面，日志里记下的就是没脱敏的密钥（运行本文件，看第 3 段）。
上一课的权限规则也是一个 PreToolUse 钩子：permission_hook(rules)。
"""
from __future__ import annotations

import copy
import dataclasses
import json
import re
import time
from typing import Any, Callable, Generator, Literal, Mapping

import events
import permissions
from function_calling_loop import tool_message
from loop_parts import (MAX_FAILURES, Executor, Steps, ToolCall, ask_model, denied, execute_call, out_of_turns,
                        start_history, tool_names, tools_and_executor, too_many_failures)
from tool_arguments import build_validator, find_problems
from tool_outcome import ToolOutcome, clip, failure

PRE, POST, FAILED = "PreToolUse", "PostToolUse", "PostToolUseFailure"
Hook = Callable[[dict], "dict | None"]
# 每种钩子能返回哪些键，每个键的值该是什么。多写、写错的键和值都不会被悄悄忽略（"Deny" 不是 deny，
# updatedToolOutput 为 None 不是“没改”）：那是一个出了错的钩子，按它的 fail 处理。
TEXT = (str, "文字（str）")
ANSWERS = {PRE: {"permissionDecision": (("allow", "ask", "deny"), "allow、ask 或 deny"), "permissionDecisionReason": TEXT,
                 "updatedInput": (dict, "一个 dict"), "additionalContext": TEXT},
           POST: {"updatedToolOutput": TEXT, "decision": (("block",), "block"), "reason": TEXT, "additionalContext": TEXT},
           FAILED: {"updatedToolOutput": TEXT, "additionalContext": TEXT}}


@dataclasses.dataclass(frozen=True)
class Registered:
    event: str                               # PRE / POST / FAILED
    name: str
    run: Hook
    fail: Literal["open", "closed"]


class Hooks:
    """钩子的登记簿：一个列表，按注册的顺序运行。

        hooks = Hooks()

        @hooks.on(POST, fail="closed")
        def mask_secrets(call): ...
    """

    def __init__(self):
        self.registered: list[Registered] = []

    def add(self, event: str, hook: Hook, fail: Literal["open", "closed"] = "closed") -> Hook:
        if event not in ANSWERS:
            raise ValueError(f"没有 {event!r} 这种钩子，只有 {', '.join(ANSWERS)}")
        if fail not in ("open", "closed"):
            raise ValueError(f"fail 应为 \"open\" 或 \"closed\"，收到 {fail!r}")
        self.registered.append(Registered(event, getattr(hook, "__name__", "hook"), hook, fail))
        return hook

    def on(self, event: str, fail: Literal["open", "closed"] = "closed") -> Callable[[Hook], Hook]:
        return lambda hook: self.add(event, hook, fail)

    def of(self, event: str) -> list[Registered]:
        return [hook for hook in self.registered if hook.event == event]


# ── 一个钩子运行一次

def consult(hook: Registered, payload: dict, turn: int,
            parameters: dict | None = None) -> Generator[events.Event, Any, tuple[dict, str | None]]:
    """运行一个钩子，yield 它的 hook 事件。-> (它的回答，没意见是 {}；它出的错，没出错是 None)。
    parameters 是被调用的工具的参数 schema：钩子换上的参数（updatedInput）按它校验。"""
    started = time.perf_counter()
    answer, problem = {}, None
    try:
        returned = hook.run(copy.deepcopy(payload))
        if isinstance(returned, Mapping):
            # 钩子写的文字最后都到了模型眼前（换掉的结果、理由、附言）：和工具结果一样有长度上限
            answer = {key: clip(value)[0] if isinstance(value, str) else value for key, value in returned.items()}
            problem = wrong_answer(hook.event, answer)
            if problem is None and "updatedInput" in answer:
                problem = wrong_arguments(payload["tool_name"], parameters, answer["updatedInput"])
        elif returned is not None:
            problem = f"钩子应返回 dict 或 None，收到 {type(returned).__name__}"
    except Exception as error:               # 学生写的钩子什么错都可能抛
        problem = f"{type(error).__name__}: {str(error)[:300]}"
    if problem:
        answer = {}
    yield events.hook(turn, payload["tool_use_id"], hook.event, hook.name, payload, answer or None, problem,
                      hook.fail, round((time.perf_counter() - started) * 1000, 3))
    return answer, problem


def wrong_answer(event: str, answer: dict) -> str | None:
    """一个钩子的回答哪里不对（一句中文），没有问题是 None。"""
    allowed = ANSWERS[event]
    unknown = sorted(set(answer) - set(allowed))
    if unknown:
        return f"{event} 钩子不能返回 {', '.join(unknown)}，只能返回 {', '.join(allowed)}"
    for key, value in answer.items():
        kind, said = allowed[key]
        if not (value in kind if isinstance(kind, tuple) else isinstance(value, kind)):
            return f"{key} 应为 {said}，收到 {json.dumps(value, ensure_ascii=False, default=str)[:60]}"
    return None


def wrong_arguments(tool: str, parameters: dict | None, arguments: dict) -> str | None:
    """钩子换上的参数哪里不合工具的 schema（一句中文），合是 None。和模型写的参数用同一个校验器，只是不做宽松转换
    （"3" 不会变成 3）：钩子是代码，写错了就是错了。不合的参数不交给工具，工具的报错也就不会让模型去改它没写过的参数。"""
    if parameters is None:                   # 模型点了一个不存在的工具：没有 schema 可对，执行端会说
        return None
    problems, _ = find_problems(build_validator(parameters), arguments)
    return f"updatedInput 不合 {tool} 的参数：{'；'.join(problems)}" if problems else None


def payload_of(event: str, call: ToolCall, arguments: Any, **more: Any) -> dict:
    """一个钩子拿到的 dict：哪种钩子、哪个工具、什么参数、哪次调用，执行之后还有结果或错误。"""
    return {"hook_event_name": event, "tool_name": call.name, "tool_input": arguments, "tool_use_id": call.id, **more}


# ── 执行之前

@dataclasses.dataclass
class Gate:
    verdict: str = "allow"                   # allow / ask / deny，几个钩子里最严的
    reason: str = ""
    broken: bool = False                     # deny 是因为一个 fail closed 的钩子自己出了错（reason 是它的错）
    by: str = ""                             # 说出这个结论的钩子
    arguments: Any = None                    # 最后一个 updatedInput 之后的参数
    changed_by: list[str] = dataclasses.field(default_factory=list)
    context: list[str] = dataclasses.field(default_factory=list)


def stops(fail: str) -> bool:
    """钩子自己出错时，这次调用是不是就此拦下：fail closed 的就拦下——执行之前的不放行，执行之后的不交出
    结果或失败的文本（没检查过的文本，比如脱敏钩子坏了）。fail open 的记下这个错，照常往下走。"""
    return fail == "closed"


def before(call: ToolCall, hooks: Hooks, parameters: dict | None = None) -> Generator[events.Event, Any, Gate]:
    gate = Gate(arguments=call.arguments)
    for hook in hooks.of(PRE):
        answer, problem = yield from consult(hook, payload_of(PRE, call, gate.arguments), call.turn, parameters)
        if problem:
            if stops(hook.fail):             # 一道安全检查没运行成功，就不放行
                return dataclasses.replace(gate, verdict="deny", by=hook.name, broken=True, reason=problem)
            continue
        verdict = answer.get("permissionDecision")
        if verdict and permissions.VERDICTS.index(verdict) > permissions.VERDICTS.index(gate.verdict):
            gate.verdict, gate.by = verdict, hook.name
            gate.reason = str(answer.get("permissionDecisionReason") or "没有说明理由")
        if "updatedInput" in answer:
            gate.arguments = answer["updatedInput"]
            gate.changed_by.append(hook.name)
        if answer.get("additionalContext"):
            gate.context.append(str(answer["additionalContext"]))
        if gate.verdict == "deny":           # 已经是最严的结论，后面的钩子不必再跑
            return gate
    return gate


def stopped_by_hook(call: ToolCall, gate: Gate) -> ToolOutcome:
    """执行之前被钩子拦下的调用：钩子说了 deny（hook_denied），或者一个 fail closed 的钩子自己出了错（hook_failed）。"""
    if gate.broken:                          # 钩子自己坏了：不是它说了不，也不是模型写的参数错了
        return failure("hook_failed", f"执行之前，钩子 {gate.by} 自己出错了（{gate.reason}），它是 fail closed 的，"
                                      f"{call.name} 没有执行", "这是钩子的问题，不是你写的参数的问题：不要改参数重试，请告诉用户",
                       arguments=call.arguments)
    return failure("hook_denied", f"钩子 {gate.by} 不允许这次调用：{gate.reason}",
                   f"不要重复同样的 {call.name} 调用；请按理由换一种做法", arguments=call.arguments)


CHANGED = "（执行前，钩子 {hooks} 改了你写的参数，实际执行的是 {arguments}，下面的结果按它得出。）\n"
NOTE_LIMIT = 500                             # CHANGED 里的参数最多这么长


# ── 执行之后

def after(call: ToolCall, arguments: Any, outcome: ToolOutcome,
          hooks: Hooks) -> Generator[events.Event, Any, tuple[ToolOutcome, list[str]]]:
    event = POST if outcome.ok else FAILED
    context: list[str] = []
    for hook in hooks.of(event):
        payload = payload_of(event, call, arguments, **{"tool_response" if outcome.ok else "error": outcome.content})
        answer, problem = yield from consult(hook, payload, call.turn)
        if problem:
            if stops(hook.fail):             # 没能检查过的文本不交出去（比如脱敏钩子坏了）
                kept = "结果" if outcome.ok else "失败的文本"
                return failure("hook_blocked", f"钩子 {hook.name} 出错（{problem}），它是 fail closed 的，{kept}不交出",
                               f"工具已经运行过了{'' if outcome.ok else '，但失败了'}；请不要重复这次调用，"
                               f"直接告诉用户{kept}被拦下了", arguments=arguments), context
            continue
        if answer.get("decision") == "block":
            return failure("hook_blocked", f"工具运行了，但钩子 {hook.name} 拦下了结果：{answer.get('reason') or '没有说明理由'}",
                           "请不要重复这次调用", arguments=arguments), context
        if "updatedToolOutput" in answer:    # 换掉的是结果，或者失败的文本（调用仍然算失败）
            outcome = dataclasses.replace(outcome, content=answer["updatedToolOutput"])
        if answer.get("additionalContext"):
            context.append(str(answer["additionalContext"]))
    return outcome, context


# ── 一次调用：前置钩子 → 执行 → 后置钩子

def hooked_call(call: ToolCall, execute: Executor | None, tools: list[dict],
                hooks: Hooks) -> Generator[events.Event, Any, events.ToolResultEvent]:
    """tools 是发给模型的工具清单：执行时认名字，钩子换上的参数按被调用的那个工具的 schema 校验。"""
    yield events.tool_call(call.turn, call.id, call.name, call.raw_arguments, call.arguments, call.problems)
    parameters = next((t["function"].get("parameters") for t in tools if t["function"]["name"] == call.name), None)
    gate = yield from before(call, hooks, parameters)
    refused = stopped_by_hook(call, gate) if gate.verdict == "deny" else None
    if gate.verdict == "ask":                # 停下来问人：send({"allow": True}) 同意，send({"deny": "理由"}) 拒绝
        person = yield events.hook(call.turn, call.id, PRE, gate.by, payload_of(PRE, call, gate.arguments),
                                   {"permissionDecision": "ask"}, None, "closed", 0.0, asking=gate.reason)
        person = person if isinstance(person, dict) else {}
        if "deny" in person:                 # 是人拒绝的，就说是人，不说是钩子
            refused = denied(call, str(person["deny"] or "").strip())
        elif person.get("allow") is not True:
            refused = stopped_by_hook(call, dataclasses.replace(gate, reason=f"{gate.reason}；它要先问人，没有人同意"))
    context, unseen = list(gate.context), []
    if refused is not None:
        outcome = refused
    else:
        executed = dataclasses.replace(call, arguments=gate.arguments)
        outcome = execute_call(executed, execute, tool_names(tools))
        if not outcome.ok:                   # PostToolUse 钩子只在成功之后运行：这次的失败它们看不到
            on_failure = {hook.name for hook in hooks.of(FAILED)}
            unseen = [hook.name for hook in hooks.of(POST) if hook.name not in on_failure]
        outcome, added = yield from after(call, gate.arguments, outcome, hooks)
        context += added
        if gate.arguments != call.arguments:   # 参数被钩子换过：告诉模型，否则它会照着自己写的参数理解结果
            note = CHANGED.format(hooks="、".join(gate.changed_by),
                                  arguments=clip(json.dumps(gate.arguments, ensure_ascii=False), NOTE_LIMIT)[0])
            outcome = dataclasses.replace(outcome, content=note + outcome.content)
    if context:
        outcome = dataclasses.replace(outcome, content=outcome.content + "\n" + "\n".join(context))
    result = events.tool_result(call.turn, call.id, call.name, outcome, tool_message(call.id)(outcome.content))
    if refused is None and gate.arguments != call.arguments:
        result["changed_by"] = gate.changed_by     # 失败了也不怪模型：执行的不是它写的参数
    if refused is not None and refused.error_code in ("hook_denied", "hook_failed"):
        result["hook"] = gate.by                   # 拦下这次调用的钩子
    if unseen:
        result["unseen_by"] = unseen               # 界面要提醒：这些钩子（比如只挂在成功之后的脱敏）没看过失败的文本
    yield result
    return result


def run_with_hooks(client: Any, messages: str | list[dict], tools: list[dict] | None, execute: Executor | Any | None,
                   hooks: Hooks, *, max_turns: int = 6) -> Steps:
    """function_calling_loop.run_function_calling 的样子，只是每个调用都经过 hooked_call。
    调用一个接一个地执行：审计日志、计时这类钩子按调用的顺序运行，读起来才对得上。"""
    tools, execute = tools_and_executor(tools, execute)
    history = start_history(messages)
    failures = 0
    for turn in range(1, max_turns + 1):
        completion = yield from ask_model(client, history, turn, False, tools=tools or None)
        if completion is None:
            return
        message = completion.message
        history.append(message)
        requested = message.get("tool_calls") or []
        if not requested:
            yield events.final(turn, message.get("content") or "", history)
            return
        results = []
        for raw in requested:
            call = ToolCall.read(turn, raw["id"], raw["function"]["name"], raw["function"]["arguments"])
            results.append((yield from hooked_call(call, execute, tools, hooks)))
        history.extend(result["message"] for result in results)
        failures = 0 if any(r["ok"] for r in results) else failures + 1
        if failures >= MAX_FAILURES:
            yield too_many_failures(turn, results[-1]["content"])
            return
    yield out_of_turns(max_turns)


# ── 几个常用的钩子

# 密钥只留前几个字符；密码的值整个换掉：password=…、DB_PASSWORD=…、"password": "…"、密码：…
SECRETS = [(re.compile(r"\b(sk-[A-Za-z0-9]{4})[A-Za-z0-9_-]{8,}"), r"\1****"),
           (re.compile(r"(?i)(password|passwd|pwd|密码)([\"']?\s*[:=：]\s*[\"']?)[^\s\"',，;}]+"), r"\1\2******")]


def mask(text: str) -> str:
    """遮住一段文字里的密钥和密码：sk-… 只留前几个字符，password=… 的值换成星号。"""
    for pattern, kept in SECRETS:
        text = pattern.sub(kept, text)
    return text


def mask_secrets(call: dict) -> dict | None:
    """PostToolUse 和 PostToolUseFailure 都能挂：要交给模型的文本（结果，或失败的报错）里的密钥和密码遮住。
    没有要遮的就没意见。"""
    text = call["tool_response"] if call["hook_event_name"] == POST else call["error"]
    masked = mask(text)
    return {"updatedToolOutput": masked} if masked != text else None


def permission_hook(rules: Mapping[str, str]) -> Hook:
    """上一课的权限规则，写成一个 PreToolUse 钩子：同样的 deny，同样的理由，只是换了一个挂的地方。"""
    def permission_rules(call: dict) -> dict:
        decision = permissions.decide(rules, call["tool_name"], call["tool_input"] or {})
        return {"permissionDecision": decision.verdict, "permissionDecisionReason": decision.reason}
    return permission_rules


if __name__ == "__main__":
    from llm_clients import make_client

    def fetch_config(name: str, args: dict) -> str:
        return f"服务 {args['service']} 的配置：endpoint=https://api.example.com，key=sk-abcdef1234567890xyz，password=hunter2"

    config_tool = [{"type": "function", "function": {
        "name": "fetch_config", "description": "读取一个服务的配置",
        "parameters": {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}}}]
    audit_log: list[str] = []

    def audit(call: dict) -> None:
        audit_log.append(f"{call['tool_name']} → {call['tool_response']}")

    for title, order in (("1. 只有脱敏钩子", [mask_secrets]),
                         ("2. 先脱敏，再审计", [mask_secrets, audit]),
                         ("3. 先审计，再脱敏：日志里是没脱敏的密钥", [audit, mask_secrets])):
        hooks, audit_log[:] = Hooks(), []
        for hook in order:
            hooks.add(POST, hook)
        print(f"── {title}")
        for event in run_with_hooks(make_client("offline"), "读一下 payments 服务的配置", config_tool, fetch_config, hooks):
            if event["type"] == "hook":
                print(f"   hook  {event['name']}: {event['answer'] or '没意见'}")
            elif event["type"] == "tool_result":
                print(f"   模型收到：{event['content']}")
        print(f"   审计日志：{audit_log}")

    print("── 4. 权限规则就是一个 PreToolUse 钩子")
    hooks = Hooks()
    hooks.add(PRE, permission_hook({"bash": "ask", "bash:rm *": "deny"}))
    shell = [{"type": "function", "function": {"name": "bash", "description": "运行一条 shell 命令",
                                               "parameters": {"type": "object",
                                                              "properties": {"command": {"type": "string"}},
                                                              "required": ["command"]}}}]
    call = ToolCall(1, "call_1", "bash", '{"command": "rm -rf src"}', {"command": "rm -rf src"}, [])
    for event in hooked_call(call, lambda name, args: "（不该运行）", shell, hooks):
        if event["type"] == "tool_result":
            print(f"   模型收到：{event['content']}")

    print("── 5. 钩子自己出错：fail closed 的拦下调用，fail open 的记一笔，调用照常")

    def broken_check(call: dict) -> dict:
        return {"permissionDecision": call["tool_input"]["region"]}     # 没有 region 这个参数：KeyError

    for fail in ("closed", "open"):
        hooks = Hooks()
        hooks.add(PRE, broken_check, fail=fail)
        call = ToolCall(1, "call_1", "fetch_config", '{"service": "payments"}', {"service": "payments"}, [])
        for event in hooked_call(call, fetch_config, config_tool, hooks):
            if event["type"] == "hook":
                print(f"   fail={fail}  hook {event['name']} 出错：{event['problem']}")
            elif event["type"] == "tool_result":
                print(f"   fail={fail}  模型收到：{event['content'][:60]}")

    print("── 6. 工具失败了：报错里也有密钥，PostToolUse 不运行，挂在 PostToolUseFailure 上的 mask_secrets 遮住它")

    def unreachable(name: str, args: dict) -> str:
        raise ConnectionError("配置中心拒绝了请求：api_key=sk-abcdef1234567890xyz 已过期")

    for title, events_hooked in (("只挂 PostToolUse", [POST]), ("两种都挂", [POST, FAILED])):
        hooks = Hooks()
        for event_name in events_hooked:
            hooks.add(event_name, mask_secrets)
        call = ToolCall(1, "call_1", "fetch_config", '{"service": "billing"}', {"service": "billing"}, [])
        for event in hooked_call(call, unreachable, config_tool, hooks):
            if event["type"] == "tool_result":
                print(f"   {title}  模型收到：{event['content']}")
