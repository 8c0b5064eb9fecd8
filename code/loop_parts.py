"""循环共用的零件：问模型、读参数、跑工具、把工具清单写进提示词、什么时候该停。

循环是生成器，每一步都 yield 一个事件（见 events.py）。在 tool_call 事件之后可以
generator.send(override)，人工干预这次调用（"单步模式"）：
  None 照常执行；{"arguments": {...}} 换参数执行，结果里告诉模型参数被人改过、改了什么；
  {"result": "文字"} 不执行，直接把文字当结果喂回去；
  {"deny": "理由"} 不执行，告诉模型这次调用被用户拒绝了（人类在环：见 permissions.py）；
  {"deny": "理由", "rule": "bash:rm *"} 不执行，告诉模型是权限规则不允许，不是用户点了拒绝。
工具的结果永远是一个 ToolOutcome（见 tool_outcome.py）：执行函数交回什么都先变成它，再回填给模型。
"""
from __future__ import annotations

import copy
import dataclasses
import json
import re
import time
from typing import Any, Callable, Generator

import events
from llm_clients import Completion, LLMError
from tool_arguments import JSON_HINT, parse_arguments
from tool_outcome import ToolOutcome, as_envelope, as_outcome, failure, success
from tool_registry import unknown_tool

MAX_FAILURES = 3         # 连续这么多轮失败（解析不了、工具全失败）就停，免得模型原地打转

Executor = Callable[[str, Any], Any]            # execute(工具名, 参数) -> ToolOutcome / dict / 任意值
Wrap = Callable[[str], dict]                    # 结果文本 -> 放回历史的那条消息
Steps = Generator[events.Event, Any, None]      # 一次运行：yield 事件，tool_call 之后可以 send 干预
FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)\s*```", re.S)


def start_history(messages: str | list[dict], system: str | None = None) -> list[dict]:
    """问题字符串或消息列表 -> 新的消息列表（不改调用方的列表）；system 放在最前面。"""
    history = [{"role": "user", "content": messages}] if isinstance(messages, str) else copy.deepcopy(list(messages))
    if system is not None:
        history = [m for m in history if m.get("role") != "system"]
        history.insert(0, {"role": "system", "content": system})
    return history


def tools_and_executor(tools: list[dict] | None, execute: Any) -> tuple[list[dict], Executor | None]:
    """允许直接传 ToolRegistry 当 execute：tools 没给就用它的 schema，执行就是 registry.call。"""
    if hasattr(execute, "call") and hasattr(execute, "to_schemas"):
        return (execute.to_schemas() if tools is None else tools), execute.call
    return tools or [], execute


def enveloping(execute: Executor | None) -> Executor | None:
    """envelope=True 时循环用它包一层执行函数：结果先变成 ToolOutcome，再把回填的文本换成
    tool_outcome.as_envelope 写的 {"status", "data", "error_code", "message"} JSON。ok、error_code 等字段不变，
    界面照样按它们上色。循环自己写的失败（没有执行函数、执行函数抛了异常）和单步时手写的结果不装信封。"""
    if execute is None:
        return None

    def run(name: str, arguments: Any) -> ToolOutcome:
        outcome = as_outcome(execute(name, arguments))
        return dataclasses.replace(outcome, content=as_envelope(outcome))
    return run


def tool_names(tools: list[dict]) -> list[str]:
    return [t["function"]["name"] for t in tools]


def describe_tools(tools: list[dict] | None) -> str:
    """文本协议（ReAct、JSON）把工具写进提示词：每个工具两行，名字+说明，然后是参数的 JSON Schema。
    Schema 写成一行，离线模型和学生都能原样读回来。"""
    lines = []
    for tool in tools or []:
        fn = tool["function"]
        description = " ".join((fn.get("description") or "（无说明）").split())
        schema = json.dumps(fn.get("parameters") or {"type": "object", "properties": {}}, ensure_ascii=False)
        lines += [f"- {fn['name']}: {description}", f"  参数 JSON Schema: {schema}"]
    return "\n".join(lines) or "（没有可用的工具）"


# ── 问模型

def ask_model(client: Any, history: list[dict], turn: int, stream: bool, tools: list[dict] | None = None,
              **params: Any) -> Generator[events.Event, Any, Completion | None]:
    """发一次请求：yield request、delta…、response 事件，返回 Completion。
    模型那边出错时 yield 一个 error 事件并返回 None：循环看到 None 就结束。"""
    params = {k: v for k, v in params.items() if v is not None}
    yield events.request(turn, history, tools, {
        "model": client.model, "temperature": params.get("temperature"), "tool_choice": params.get("tool_choice"),
        "parallel_tool_calls": params.get("parallel_tool_calls"), "stop": params.get("stop"), "stream": stream,
        "max_tokens": getattr(client, "max_tokens", None), "round_seconds": getattr(client, "round_seconds", None)})
    try:
        if stream:
            completion = None
            for item in client.stream(history, tools=tools, **params):
                if isinstance(item, Completion):
                    completion = item
                else:
                    yield events.delta(turn, item)
        else:
            completion = client.complete(history, tools=tools, **params)
    except Exception as error:       # 网络、Key、限流……都只结束这一次运行，不让页面崩
        yield model_failed(turn, error)
        return None
    yield events.response(turn, completion)
    return completion


# ── 跑工具

@dataclasses.dataclass
class ToolCall:
    """模型要的一次调用：谁（name）、原文（raw_arguments）、读出来的参数（读不出来是 None）。"""
    turn: int
    id: str
    name: str
    raw_arguments: Any
    arguments: dict | None
    problems: list[str]              # 读参数时的问题（在前）和备注（在后），tool_call 事件原样展示

    @classmethod
    def read(cls, turn: int, call_id: str, name: str, raw_arguments: Any) -> ToolCall:
        arguments, problems = read_arguments(raw_arguments)
        return cls(turn, call_id, name, raw_arguments, arguments, problems)


def read_arguments(raw: Any) -> tuple[dict | None, list[str]]:
    """参数原文 -> (dict 或 None, 问题和备注)。用注册表同一个解析函数，同样的坏 JSON 得到同样的话；
    另外容忍 ``` 包裹，但要说出来。"""
    notes: list[str] = []
    text = raw.strip() if isinstance(raw, str) else raw      # 有的后端直接给 dict，也可能给 null
    fenced = FENCE.fullmatch(text) if isinstance(text, str) else None
    if fenced:
        text = fenced.group(1)
        notes.append("参数被包在 markdown 代码块（```）里，已去掉代码块再解析")
    arguments, problem = parse_arguments(text, notes)
    return (None, [problem, *notes]) if problem else (arguments, notes)


def run_tool(call: ToolCall, execute: Executor | None, names: list[str],
             wrap: Wrap) -> Generator[events.Event, Any, events.ToolResultEvent]:
    """yield tool_call（可被 send 干预）→ 执行 → yield tool_result，并把 tool_result 事件返回给循环。
    wrap(content) 决定结果以什么消息回到历史里：原生是 role "tool"，文本协议是 "Observation: ..."。"""
    override = yield events.tool_call(call.turn, call.id, call.name, call.raw_arguments, call.arguments,
                                      call.problems)
    if override and "deny" in override:
        outcome = denied(call, str(override["deny"] or "").strip(), override.get("rule"))
    elif override and "result" in override:
        outcome = success(str(override["result"]), arguments=call.arguments)
    elif override and isinstance(override.get("arguments"), dict):
        edited = dataclasses.replace(call, arguments=override["arguments"], problems=[])
        outcome = told_edited(execute_call(edited, execute, names), call.arguments, edited.arguments)
    else:
        outcome = execute_call(call, execute, names)
    result = events.tool_result(call.turn, call.id, call.name, outcome, wrap(outcome.content))
    yield result
    return result


def denied(call: ToolCall, reason: str, rule: str | None = None) -> ToolOutcome:
    """用户（或者一条权限规则）拒绝了这次调用：工具不运行。结果照样回填给模型——它得知道没做成，
    还得知道别原样再要一次，否则它会以为是偶然失败，把同一个调用重发一遍，用户就得一遍遍点“拒绝”。
    是谁拒绝的要说对：规则拒绝的，换一种规则允许的做法就行；用户拒绝的，要先问用户。"""
    if rule is not None:
        return failure("rule_denied", f"权限规则不允许这次调用（{reason}）",
                       f"不要重复同样的 {call.name} 调用；请换一种规则允许的做法，或者请用户修改规则",
                       arguments=call.arguments)
    return failure("denied", f"用户拒绝了这次调用：{reason or '没有说明理由'}",
                   f"不要重复同样的 {call.name} 调用；请先问用户想怎么做，或者换一种做法",
                   arguments=call.arguments)


EDITED = "（执行前，用户修改了你写的参数：{changes}。实际执行的参数是 {arguments}，下面的结果按它得出。）\n"
_EDITED = re.compile(r"（执行前，用户修改了你写的参数：.*?。实际执行的参数是 (\{.*\})，下面的结果按它得出。）\n", re.S)


def told_edited(outcome: ToolOutcome, written: dict | None, executed: dict) -> ToolOutcome:
    """人改了参数再执行（单步、修改参数后批准）：结果前面告诉模型改了什么、实际按什么执行的。
    不说的话，模型以为执行的是自己写的参数，回答就会和真实发生的事对不上（比如照着自己写的内容说“文件里是 …”）。"""
    before = written if isinstance(written, dict) else {}
    changes = [f"{key}：{shown(before[key]) if key in before else '（没有）'} → "
               f"{shown(executed[key]) if key in executed else '（去掉了）'}"
               for key in dict.fromkeys([*before, *executed]) if before.get(key, ...) != executed.get(key, ...)]
    if not changes:
        return outcome
    note = EDITED.format(changes="；".join(changes), arguments=json.dumps(executed, ensure_ascii=False))
    return dataclasses.replace(outcome, content=note + outcome.content, edited=changes)


def read_edited(content: str) -> tuple[dict | None, str]:
    """一段工具结果 -> (人改过以后实际执行的参数，没改过是 None；去掉 told_edited 那句说明之后的结果)。"""
    found = _EDITED.match(content.lstrip())
    return (json.loads(found.group(1)), content.lstrip()[found.end():]) if found else (None, content)


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


def execute_call(call: ToolCall, execute: Executor | None, names: list[str]) -> ToolOutcome:
    """调用交给执行函数，连未知工具、读不出的参数也交：注册表的提示（"是不是想用 …"）比循环知道的多。
    只有没有执行函数、或者执行函数自己抛了异常时，循环才自己写结果。"""
    if execute is None:              # 如实告诉模型，而不是崩掉
        return failure("no_executor", "没有提供执行工具的函数", "请在代码里传入 execute，例如 registry.call",
                       arguments=call.arguments)
    started = time.perf_counter()
    try:
        value = execute(call.name, call.raw_arguments if call.arguments is None else call.arguments)
    except Exception as error:       # 学生写的执行函数什么错都可能抛；抛了，循环就按它知道的实情写结果
        if call.name not in names:
            problem, hint = unknown_tool(call.name, names)
            return failure("unknown_tool", problem, hint, problems=[problem])
        if call.arguments is None:
            return failure("invalid_json", call.problems[0], JSON_HINT, problems=call.problems[:1])
        return failure("tool_exception", f"{call.name} 执行出错：{type(error).__name__}: {str(error)[:300]}",
                       "请检查参数是否合理后重试，或换一种做法", arguments=call.arguments)
    # 用时是循环量的这一段：执行函数交回的结果里也许有它自己的 duration_ms（沙箱里的注册表只量了函数本身），
    # 可循环（和学生）等的是整个来回。时间线上的“用时”和结果行说的都是这一个数。
    duration_ms = round((time.perf_counter() - started) * 1000, 3)
    return dataclasses.replace(as_outcome(value, arguments=call.arguments), duration_ms=duration_ms)


def observation(content: str) -> dict:
    """文本协议把工具结果当作用户消息发回去。"""
    return {"role": "user", "content": f"Observation: {content}"}


# ── 什么时候停

def model_failed(turn: int, error: Exception) -> events.ErrorEvent:
    if isinstance(error, LLMError):
        event = events.error(turn, error.code, str(error))
        if error.status is not None:     # 服务端答了一个 HTTP 错误（而不是连不上、超时）：评估据此分辨是谁弄坏了这次运行
            event = {**event, "status": error.status}
        # 服务端不认某个参数时（retry_without），界面据此给出"去掉它重试"的按钮
        return {**event, "retry_without": error.retry_without} if error.retry_without else event
    return events.error(turn, "bad_response", f"调用模型时出现意外错误：{type(error).__name__}: {error}")


def too_many_failures(turn: int, last: str) -> events.ErrorEvent:
    return events.error(turn, "too_many_failures", f"连续 {MAX_FAILURES} 轮都没有成功，已停止。最后一次的反馈："
                                                   f"{last[:200]} 请检查工具说明和参数描述，或换一个更强的模型。")


def out_of_turns(max_turns: int) -> events.ErrorEvent:
    return events.error(max_turns, "max_turns", f"已经用完 max_turns={max_turns} 轮还没得到最终回答，已停止。"
                                                f"可以调大 max_turns，或看看模型是不是在反复调用同一个工具。")


if __name__ == "__main__":
    for raw in ['{"city": "北京"}', '```json\n{"city": "北京"}\n```', '{"city": 北京}', '"{\\"city\\": \\"北京\\"}"']:
        print(repr(raw), "->", read_arguments(raw))
    weather = lambda city: f"{city}：晴"
    for name, raw in [("get_weather", '{"city": "北京"}'), ("get_wether", '{"city": "北京"}'), ("get_weather", "{")]:
        call = ToolCall.read(1, "demo", name, raw)
        print(name, raw, "->", execute_call(call, lambda n, args: {"get_weather": weather}[n](**args), ["get_weather"]))
