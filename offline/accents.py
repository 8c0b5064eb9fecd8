"""让离线服务器学各家接口的"口音"：没有网络的教室里，也能预演真实平台的小毛病。

    python code/offline_server.py --accent deepseek          # 像 DeepSeek 那样回答
    python code/offline_server.py --quirks no_id,args_object # 自己挑几个毛病组合

一个口音（ACCENTS）就是几条毛病（QUIRKS）的组合。毛病分三类：
  - 拒收：请求里有某样东西就回 400，错误体是那家平台的写法（reject）；
  - 改答：把正常的回答改成那家的样子（speak）；
  - 流式：分片的切法（chunks）。
哪些是平台文档写明的、哪些只是社区反馈，见 docs/providers.md 和 provider_presets.py 的 confirmed 字段。
"""
import json

QUIRKS = {
    # ---- 拒收
    "needs_reasoning_back": "带 tool_calls 的 assistant 历史消息缺 reasoning_content 就回 400（DeepSeek 思考模式）",
    "rejects_empty_content": "历史里 content 为 \"\" 又带 tool_calls 就回 1214（智谱）",
    "rejects_forced_tool_choice": "tool_choice 为 required 或指定函数就回 400（Kimi 思考模型）",
    "rejects_auto_tool_choice": "tool_choice=\"auto\" 回 400：vLLM 没开 --enable-auto-tool-choice",
    "rejects_parallel_tool_calls": "不认识 parallel_tool_calls 参数，回 400",
    "rejects_strict": "不支持 tools[].function.strict，回 400",
    # ---- 改答
    "reasoning_content": "content 旁边多一个 reasoning_content（思考过程）",
    "reasoning_field": "思考过程放在 reasoning 字段（Ollama 新版、vLLM 新版的写法）",
    "think_tags": "思考过程用 <think>…</think> 写在 content 开头",
    "empty_content": "tool_calls 旁边的 content 是 \"\" 而不是 null",
    "stop_with_tool_calls": "有 tool_calls 时 finish_reason 仍是 \"stop\"",
    "no_id": "工具调用没有 id",
    "no_type": "工具调用没有 \"type\": \"function\"",
    "args_object": "arguments 是 JSON 对象而不是字符串",
    "args_double": "arguments 被 JSON 编码了两次",
    "text_tool_call": "不返回 tool_calls，把调用写成 <tool_call>{…}</tool_call> 文字（没开工具解析器）",
    "no_usage": "不返回 usage",
    "drops_tools": "聊天模板里没有 tools 的位置：请求里的 tools 被悄悄丢掉，模型只当普通聊天回答"
                   "（llama-server 用模型自带的模板时就这样；GET /props 说 supports_tools: false）",
    "partial_usage": "usage 缺 total_tokens",
    # ---- 流式
    "stream_whole_call": "每个工具调用一片发完（名字和全部参数在同一片里）",
    "stream_no_index": "工具调用分片不带 index（有 id 时每片都带 id）",
    "stream_interleaved": "几个调用的参数碎片交错着发",
    "stream_empty_id": "后续分片带空字符串 id 和空 name",
}

ACCENTS = {
    "openai": [],
    "deepseek": ["reasoning_content", "needs_reasoning_back", "rejects_strict"],
    "glm": ["reasoning_content", "rejects_empty_content", "stream_whole_call"],
    "dashscope": ["empty_content", "stream_empty_id"],
    "moonshot": ["rejects_forced_tool_choice"],
    "siliconflow": ["reasoning_content"],
    "volcengine": ["reasoning_content"],
    "ollama": ["reasoning_field", "stop_with_tool_calls", "stream_whole_call"],
    "vllm-no-parser": ["rejects_auto_tool_choice", "text_tool_call", "think_tags"],
    "llamacpp-no-tools": ["drops_tools"],
    # 不是哪一家：自己写的转发代理、小众网关会有的毛病，凑在一起练手
    "rough-gateway": ["no_id", "no_type", "args_object", "stream_no_index", "partial_usage", "rejects_parallel_tool_calls"],
}

# 各家错误体的写法（给拒收和 /_control 的 fault 用）
ERRORS = {
    "deepseek_reasoning": (400, {"error": {"message": "The `reasoning_content` in the thinking mode must be passed back to the API.",
                                           "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}),
    "deepseek_balance": (402, {"error": {"message": "Insufficient Balance", "type": "unknown_error",
                                         "param": None, "code": "invalid_request_error"}}),
    "glm_1214": (400, {"error": {"code": "1214", "message": "messages[1]:content和tool_calls 字段不能同时为空"}}),
    "glm_1113": (429, {"error": {"code": "1113", "message": "您的账户已欠费，请充值后重试。"}}),
    "dashscope_key": (401, {"code": "InvalidApiKey", "message": "Invalid API-key provided.",
                            "request_id": "8d5e8b1c-0000-0000-0000-offline00001"}),
    "dashscope_parameter": (400, {"code": "InvalidParameter", "message": "Range of input length should be [1, 30720]",
                                  "request_id": "8d5e8b1c-0000-0000-0000-offline00002"}),
    "llamacpp_context": (400, {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                                                 "increasing it", "type": "exceed_context_size_error",
                                         "n_prompt_tokens": 4133, "n_ctx": 4096}}),
    "llamacpp_cut_call": (500, {"error": {"code": 500, "message": "Failed to parse tool call arguments as JSON: "
                                                                  "[json.exception.parse_error.101] parse error at line 1, "
                                                                  "column 17: syntax error while parsing value - invalid "
                                                                  "string: missing closing quote; last read: '\"广州'",
                                          "type": "server_error"}}),
    "moonshot_tool_choice": (400, {"error": {"message": "tool_choice 'required' is incompatible with thinking enabled",
                                             "type": "invalid_request_error"}}),
    "vllm_auto": (400, {"object": "error", "message": "\"auto\" tool choice requires --enable-auto-tool-choice and "
                                                      "--tool-call-parser to be set", "type": "BadRequestError", "param": None, "code": 400}),
    "unknown_parallel": (400, {"error": {"message": "Unrecognized request argument supplied: parallel_tool_calls",
                                         "type": "invalid_request_error", "param": None, "code": None}}),
    "no_strict": (400, {"error": {"message": "strict mode of function calling is not supported on this endpoint",
                                  "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}),
}
GATEWAY_PAGE = (b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n"
                b"<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
THOUGHT = "用户在问天气，我应该先查工具，再根据结果回答。"


def quirks_of(accent=None, quirks=()):
    """口音名 + 额外的毛病 -> 毛病集合；名字写错时说清楚有哪些可选。"""
    if accent and accent not in ACCENTS:
        raise ValueError(f"未知的口音 {accent!r}，可选：{', '.join(ACCENTS)}")
    unknown = [q for q in quirks if q not in QUIRKS]
    if unknown:
        raise ValueError(f"未知的毛病 {unknown}，可选：{', '.join(QUIRKS)}")
    return set(ACCENTS.get(accent) or []) | set(quirks)


# ---------------------------------------------------------------- 拒收

def reject(quirks, request):
    """-> (状态码, 错误体) 或 None。"""
    messages = request.get("messages") or []
    with_calls = [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]
    choice = request.get("tool_choice")
    if "needs_reasoning_back" in quirks and any(not m.get("reasoning_content") for m in with_calls):
        return ERRORS["deepseek_reasoning"]
    if "rejects_empty_content" in quirks and any(m.get("content") == "" for m in with_calls):
        return ERRORS["glm_1214"]
    if "rejects_forced_tool_choice" in quirks and (choice == "required" or isinstance(choice, dict)):
        return ERRORS["moonshot_tool_choice"]
    if "rejects_auto_tool_choice" in quirks and choice == "auto":
        return ERRORS["vllm_auto"]
    if "rejects_parallel_tool_calls" in quirks and "parallel_tool_calls" in request:
        return ERRORS["unknown_parallel"]
    if "rejects_strict" in quirks and any("strict" in (t.get("function") or {}) for t in request.get("tools") or []):
        return ERRORS["no_strict"]
    return None


# ---------------------------------------------------------------- 改答

def hear(quirks, request):
    """服务端读请求时的毛病：模板放不下 tools，它们就没有送到模型面前（usage 也就不算它们）。"""
    if "drops_tools" in quirks:
        return {k: v for k, v in request.items() if k not in ("tools", "tool_choice", "parallel_tool_calls")}
    return request


def props(quirks):
    """llama-server 的 GET /props（只给出本课会读的那一项）。"""
    return {"chat_template_caps": {"supports_tools": "drops_tools" not in quirks}}


def speak(quirks, body):
    """把正常的非流式响应体改成带口音的样子（返回新的 dict，不改原来的）。"""
    body = json.loads(json.dumps(body))
    choice = body["choices"][0]
    message = choice["message"]
    calls = message.get("tool_calls") or []
    if calls and "text_tool_call" in quirks:
        blocks = [f"<tool_call>\n{json.dumps({'name': c['function']['name'], 'arguments': loads_or_text(c['function']['arguments'])}, ensure_ascii=False)}\n</tool_call>"
                  for c in calls]
        message.pop("tool_calls")
        message["content"], choice["finish_reason"], calls = "\n".join(blocks), "stop", []
    if "think_tags" in quirks:
        message["content"] = f"<think>\n{THOUGHT}\n</think>\n\n{message.get('content') or ''}"
    if "reasoning_content" in quirks:
        message["reasoning_content"] = THOUGHT
    if "reasoning_field" in quirks:
        message["reasoning"] = THOUGHT
    if calls and "empty_content" in quirks:
        message["content"] = ""
    if calls and "stop_with_tool_calls" in quirks:
        choice["finish_reason"] = "stop"
    for call in calls:
        if "no_id" in quirks:
            call.pop("id", None)
        if "no_type" in quirks:
            call.pop("type", None)
        arguments = call["function"]["arguments"]
        if "args_object" in quirks and isinstance(loads_or_text(arguments), dict):
            call["function"]["arguments"] = json.loads(arguments)
        elif "args_double" in quirks:
            call["function"]["arguments"] = json.dumps(arguments)
    if "no_usage" in quirks:
        body.pop("usage", None)
    elif "partial_usage" in quirks and body.get("usage"):
        body["usage"].pop("total_tokens", None)
    return body


def loads_or_text(text):
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


# ---------------------------------------------------------------- 流式

def chunks(quirks, body, piece=6):
    """带口音的响应体 -> 流式分片。思考过程先发，然后正文，然后工具调用。"""
    choice = body["choices"][0]
    message = choice["message"]
    head = {k: body[k] for k in ("id", "created", "model") if k in body} | {"object": "chat.completion.chunk"}
    deltas = [{"role": "assistant", "content": ""}]
    for field in ("reasoning_content", "reasoning"):
        text = message.get(field) or ""
        deltas += [{field: text[i:i + piece]} for i in range(0, len(text), piece)]
    content = message.get("content") or ""
    deltas += [{"content": content[i:i + piece]} for i in range(0, len(content), piece)]
    deltas += call_deltas(quirks, message.get("tool_calls") or [], piece)
    out = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    last = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    if body.get("usage"):
        last["usage"] = body["usage"]
    return out + [last]


def call_deltas(quirks, calls, piece):
    per_call = []
    for index, call in enumerate(calls):
        arguments = call["function"]["arguments"]
        header = {"index": index, **{k: call[k] for k in ("id", "type") if k in call},
                  "function": {"name": call["function"]["name"], "arguments": ""}}
        if "stream_whole_call" in quirks or not isinstance(arguments, str):
            header["function"]["arguments"] = arguments
            per_call.append([header])
            continue
        pieces = [{"index": index, "function": {"arguments": arguments[i:i + piece]}}
                  for i in range(0, len(arguments), piece)]
        if "stream_no_index" in quirks and call.get("id"):    # 没有 index 的服务端，每片都带上 id 才拼得回去
            pieces = [{**p, "id": call["id"]} for p in pieces]
        if "stream_empty_id" in quirks:
            pieces = [{**p, "id": "", "type": "function", "function": {"name": "", **p["function"]}} for p in pieces]
        per_call.append([header] + pieces)
    if "stream_interleaved" in quirks:        # 轮流从每个调用里取一片：0 的头、1 的头、0 的碎片、1 的碎片……
        order = [part for round_ in zip_longest_lists(per_call) for part in round_]
    else:
        order = [part for parts in per_call for part in parts]
    if "stream_no_index" in quirks:
        order = [{k: v for k, v in part.items() if k != "index"} for part in order]
    return [{"tool_calls": [part]} for part in order]


def zip_longest_lists(lists):
    longest = max((len(x) for x in lists), default=0)
    return [[x[i] for x in lists if i < len(x)] for i in range(longest)]


if __name__ == "__main__":
    for name, quirks in ACCENTS.items():
        print(f"{name}:")
        for quirk in quirks:
            print(f"    {quirk:<28} {QUIRKS[quirk]}")
