"""三种循环共用的零件：问模型、跑工具、截断长结果、把工具清单写进提示词。

循环是生成器，每一步都 yield 一个事件 dict（type + turn + 内容），界面逐条显示，测试逐条检查：
  request → delta…（流式时）→ response → parse（文本协议）→ tool_call → tool_result → … → final / error
在 tool_call 事件之后可以 generator.send(override)，人工干预这次调用（"单步模式"）：
  None 照常执行；{"arguments": {...}} 换参数执行；{"result": "文字"} 不执行，直接把文字当结果喂回去。
"""
import copy
import json
import re
import time

from llm_clients import Completion, LLMError

RESULT_LIMIT = 2000      # 工具结果超过这么多字就截断：太长的结果既费 token，又会淹没关键信息
MAX_FAILURES = 3         # 连续这么多轮失败（解析不了、工具全失败）就停，免得模型原地打转


def start_history(messages, system=None):
    """问题字符串或消息列表 -> 新的消息列表（不改调用方的列表）；system 放在最前面。"""
    history = [{"role": "user", "content": messages}] if isinstance(messages, str) else copy.deepcopy(list(messages))
    if system is not None:
        history = [m for m in history if m.get("role") != "system"]
        history.insert(0, {"role": "system", "content": system})
    return history


def truncate(text, limit=RESULT_LIMIT):
    text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n…[已截断：原文 {len(text)} 字，只保留前 {limit} 字]"


def tool_names(tools):
    return [t["function"]["name"] for t in tools or []]


def describe_tools(tools):
    """文本协议（ReAct、JSON）把工具写进提示词：每个工具两行，名字+说明，然后是参数的 JSON Schema。
    Schema 写成一行，离线模型和学生都能原样读回来。"""
    lines = []
    for tool in tools or []:
        fn = tool["function"]
        description = " ".join((fn.get("description") or "（无说明）").split())
        schema = json.dumps(fn.get("parameters") or {"type": "object", "properties": {}}, ensure_ascii=False)
        lines += [f"- {fn['name']}: {description}", f"  参数 JSON Schema: {schema}"]
    return "\n".join(lines) or "（没有可用的工具）"


def as_executor(execute):
    """允许直接传 ToolRegistry：默认用 registry.call(...).to_dict() 执行。"""
    if hasattr(execute, "call") and hasattr(execute, "to_schemas"):
        registry = execute
        return lambda name, args: registry.call(name, args).to_dict()
    if execute is None:       # 没给执行函数：每次调用都如实告诉模型，而不是崩掉
        return lambda name, args: failed_result("tool_exception", "❌ [无法执行] 没有提供执行工具的函数，请在代码里传入 execute。")
    return execute


def ask_model(client, history, turn, stream, tools=None, **params):
    """发一次请求：yield request、delta…、response 事件，返回 Completion（失败抛 LLMError）。"""
    params = {k: v for k, v in params.items() if v is not None}
    yield {"type": "request", "turn": turn, "messages": copy.deepcopy(history), "tools": tools,
           "params": {"model": client.model, "temperature": params.get("temperature"),
                      "tool_choice": params.get("tool_choice"), "parallel_tool_calls": params.get("parallel_tool_calls"),
                      "stop": params.get("stop"), "stream": stream}}
    if stream:
        completion = None
        for item in client.stream(history, tools=tools, **params):
            if isinstance(item, Completion):
                completion = item
            else:
                yield {"type": "delta", "turn": turn, **item}
    else:
        completion = client.complete(history, tools=tools, **params)
    yield {"type": "response", "turn": turn, "raw": completion.raw, "message": completion.message,
           "text": completion.text, "usage": completion.usage, "duration_ms": round(completion.duration_ms, 2),
           "finish_reason": completion.finish_reason}
    return completion


def parse_arguments(raw):
    """工具参数文本 -> (dict 或 None, 问题列表, 备注列表)。容忍 ``` 包裹，但要说出来。"""
    if isinstance(raw, dict):
        return raw, [], []
    text, notes = (raw or "").strip(), []
    fenced = re.fullmatch(r"```[a-zA-Z]*\s*(.*?)\s*```", text, re.S)
    if fenced:
        text = fenced.group(1)
        notes.append("参数被包在 markdown 代码块（```）里，已去掉代码块再解析")
    if not text:
        return {}, [], notes
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return None, [f"参数不是合法的 JSON：{error.msg}（第 {error.lineno} 行第 {error.colno} 列）"], notes
    if not isinstance(value, dict):
        return None, [f"参数应该是 JSON 对象（{{...}}），收到的是 {type(value).__name__}"], notes
    return value, [], notes


def failed_result(code, content, arguments=None):
    return {"ok": False, "content": content, "error_code": code, "duration_ms": 0.0, "arguments": arguments}


def run_tool(execute, names, call_id, name, raw_arguments, arguments, problems, turn, wrap):
    """yield tool_call（可被 send 干预）→ 执行 → yield tool_result；返回结果 dict（含 message）。
    wrap(content) 决定结果以什么消息回到历史里：原生是 role "tool"，文本协议是 "Observation: ..."。"""
    override = yield {"type": "tool_call", "turn": turn, "id": call_id, "name": name,
                      "raw_arguments": raw_arguments, "arguments": arguments, "problems": problems}
    if override and "result" in override:
        result = {"ok": True, "content": str(override["result"]), "error_code": None,
                  "duration_ms": 0.0, "arguments": arguments}
    else:
        if override and isinstance(override.get("arguments"), dict):
            arguments, problems = override["arguments"], []
        if name not in names:
            listed = "、".join(names) or "（没有）"
            result = failed_result("unknown_tool", f"❌ [未知工具] 没有名为 \"{name}\" 的工具。可用的工具：{listed}。"
                                                   f"请从中选一个重新调用。")
        elif arguments is None:
            result = failed_result("invalid_json", f"❌ [JSON 格式错误] {'；'.join(problems)}。"
                                                   f"请重新调用，参数写成一个合法的 JSON 对象，例如 {{\"参数名\": \"值\"}}。")
        else:
            result = safe_execute(execute, name, arguments)
    content = truncate(result.get("content", ""))
    message = wrap(content)
    yield {"type": "tool_result", "turn": turn, "id": call_id, "name": name, "content": content,
           "ok": bool(result.get("ok")), "error_code": result.get("error_code"),
           "duration_ms": result.get("duration_ms", 0.0), "arguments": result.get("arguments", arguments),
           "message": message}
    return {**result, "message": message}


def safe_execute(execute, name, arguments):
    """执行函数本身出错也不能让循环崩：变成一条模型看得懂的失败结果。"""
    started = time.perf_counter()
    try:
        result = execute(name, arguments)
    except Exception as error:      # 学生写的执行函数什么错都可能抛
        return failed_result("tool_exception", f"❌ [执行异常] 工具 {name} 出错：{type(error).__name__}: {error}。"
                                               f"请检查参数后重试，或换一个工具。", arguments)
    if not isinstance(result, dict):
        result = {"ok": True, "content": result, "error_code": None}
    result.setdefault("duration_ms", (time.perf_counter() - started) * 1000)
    result.setdefault("arguments", arguments)
    return result


def error_event(turn, code, message):
    return {"type": "error", "turn": turn, "code": code, "message": message}


def model_failed(turn, error):
    if isinstance(error, LLMError):
        return error_event(turn, error.code, str(error))
    return error_event(turn, "bad_response", f"调用模型时出现意外错误：{type(error).__name__}: {error}")


def too_many_failures(turn, last):
    return error_event(turn, "too_many_failures", f"连续 {MAX_FAILURES} 轮都没有成功，已停止。最后一次的反馈：{last[:200]}"
                                                  f" 请检查工具说明和参数描述，或换一个更强的模型。")


def out_of_turns(turn, max_turns):
    return error_event(turn, "max_turns", f"已经用完 max_turns={max_turns} 轮还没得到最终回答，已停止。"
                                          f"可以调大 max_turns，或看看模型是不是在反复调用同一个工具。")
