"""A run of the context lesson: a conversation (the student's JSON, or the named API's list)
plus a new question, shrunk by code/context.py's strategies into a token budget, then sent.

The conversation is data from a stranger, not code: it is read here, in the app, as JSON and
nothing else. It is checked for the shape the chat API takes before any strategy or model sees
it, and its size is capped, since every strategy counts its tokens.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

import context

MAX_MESSAGES = 200
MAX_CHARS = 200_000
BUDGET_RANGE = (50, 8_000)      # the page's slider spans it; a link or the API is held to it too
ROLES = ("system", "user", "assistant", "tool")
# context.py's strategy titles and a message's fates, in English (the Chinese come with the event).
TITLES_EN = {"none": "No change (sent as it is)", "fold": "Fold long results", "forget": "Old results to one line",
             "window": "Sliding window", "fold_window": "Fold, then sliding window",
             "naive_window": "The course's window (drops one message at a time)", "compact": "/compact summary"}
FATES_EN = {"原样留着": "kept as it is", "折叠了": "folded", "换成一行说明": "replaced by one line",
            "丢掉了": "dropped", "交给模型写摘要": "given to the model to summarise", "改了": "changed"}


class Unusable(ValueError):
    """The conversation cannot be sent as it is; the message says where and why."""


def conversation_from(value: Any) -> list[dict]:
    """The messages of `value` (JSON text or a list), checked: each a dict with a known role, its
    content a string (or null beside tool_calls), each tool call with an id, a name and arguments
    as a JSON string, each tool result with its tool_call_id."""
    if isinstance(value, str):
        if len(value) > MAX_CHARS:
            raise Unusable(f"对话太长：{len(value)} 字，最多 {MAX_CHARS} 字。")
        try:
            value = json.loads(value or "[]")
        except json.JSONDecodeError as error:
            raise Unusable(f"对话不是合法的 JSON：第 {error.lineno} 行第 {error.colno} 列，{error.msg}。") from None
        except (ValueError, RecursionError):    # 几千层的嵌套、几千位的数字：json 自己的上限
            raise Unusable("对话的 JSON 嵌套太深或数字太长，读不了。") from None
    if not isinstance(value, list):
        raise Unusable(f"对话应是一个消息列表（JSON 数组），收到的是{json_type(value)}。")
    if len(value) > MAX_MESSAGES:
        raise Unusable(f"对话有 {len(value)} 条消息，最多 {MAX_MESSAGES} 条。")
    try:
        size = len(json.dumps(value, ensure_ascii=False))
    except (ValueError, RecursionError):
        raise Unusable("对话的 JSON 嵌套太深或数字太长，读不了。") from None
    if size > MAX_CHARS:
        raise Unusable(f"对话太长：最多 {MAX_CHARS} 字。")
    checked = []
    for number, message in enumerate(value, 1):
        where = f"第 {number} 条消息"
        if not isinstance(message, dict):
            raise Unusable(f"{where}应是一个对象（{{\"role\": …, \"content\": …}}），收到的是{json_type(message)}。")
        if message.get("role") not in ROLES:
            raise Unusable(f"{where}的 role 应是 {' / '.join(ROLES)} 之一，收到 {message.get('role')!r}。")
        content, calls = message.get("content"), message.get("tool_calls")
        if not (isinstance(content, str) or text_parts(content) or (content is None and calls)):
            raise Unusable(f"{where}的 content 应是字符串，或 [{{\"type\": \"text\", \"text\": …}}] 这样的文字段列表"
                           "（只有带 tool_calls 的 assistant 消息可以是 null）。")
        if calls is not None:
            if message["role"] != "assistant" or not isinstance(calls, list):
                raise Unusable(f"{where}：只有 assistant 消息可以带 tool_calls，而且它应是一个列表。")
            if not calls:
                raise Unusable(f"{where}的 tool_calls 是空列表：没有调用就不要写这个键。")
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not (isinstance(call.get("id") if isinstance(call, dict) else None, str)
                        and call.get("type", "function") == "function" and isinstance(function, dict)
                        and isinstance(function.get("name"), str) and isinstance(function.get("arguments"), str)):
                    raise Unusable(f"{where}的 tool_calls 里每一项应是 {{\"id\": 字符串, \"type\": \"function\", "
                                   "\"function\": {\"name\": 字符串, \"arguments\": JSON 字符串}}。")
        if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise Unusable(f"{where}是工具结果，应带 tool_call_id（它回答的那个调用的 id）。")
        checked.append(only_known(message))
    # Sent as it is, the API would refuse these: said here, so that no strategy is blamed for them.
    lost = context.orphan_results(checked)
    if lost:
        raise Unusable(f"第 {lost[0] + 1} 条是 {checked[lost[0]]['tool_call_id']} 的结果，可它前面没有这个调用："
                       "这段对话原样发出去就会被 API 拒收。")
    unanswered = answered_in_turn(checked)
    if unanswered:
        raise Unusable(unanswered + "这段对话原样发出去就会被 API 拒收。")
    return checked


def answered_in_turn(messages: list[dict]) -> str:
    """"" when every assistant message with tool_calls is followed, right after, by one tool result
    for each of its calls (what the chat API requires), else where it is not."""
    for index, message in enumerate(messages):
        if not message.get("tool_calls"):
            continue
        wanted = [call["id"] for call in message["tool_calls"]]
        given = []
        for after in messages[index + 1:]:
            if after["role"] != "tool":
                break
            given.append(after["tool_call_id"])
        if sorted(given) != sorted(wanted):
            missing = [i for i in wanted if i not in given] or [i for i in given if given.count(i) > 1]
            return (f"第 {index + 1} 条的调用 {', '.join(dict.fromkeys(missing))} 后面没有紧跟着恰好一条它的结果"
                    "（每个调用的结果要紧跟在它后面，一个调用一条）：")
    return ""


def text_parts(content: Any) -> bool:
    """Content as a list of text parts ([{"type": "text", "text": …}]), which the chat API takes too."""
    return (isinstance(content, list) and bool(content)
            and all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content))


def json_type(value: Any) -> str:
    """A value's kind as JSON names it: the student wrote JSON, not Python."""
    kinds = ((bool, "布尔值"), (dict, "对象"), (list, "数组"), (str, "字符串"), ((int, float), "数字"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def only_known(message: dict) -> dict:
    """The keys the chat API reads, and nothing else: what a stranger adds is not forwarded."""
    kept = {key: message[key] for key in ("role", "content", "tool_call_id", "name") if key in message}
    if message.get("tool_calls"):
        kept["tool_calls"] = [{"id": call["id"], "type": "function",
                               "function": {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}}
                              for call in message["tool_calls"]]
    return kept


def is_example(value: Any) -> bool:
    """Whether `value` is the example conversation (context.EXAMPLE without its question), however spaced."""
    try:
        return conversation_from(value) == context.EXAMPLE[:-1]
    except Unusable:
        return False


def budget_from(value: Any) -> int:
    try:
        budget = int(float(value))
    except (TypeError, ValueError, OverflowError):
        raise Unusable(f"预算应是整数（token 数），收到 {value!r}。") from None
    return max(BUDGET_RANGE[0], min(BUDGET_RANGE[1], budget))


def strategy_from(value: Any) -> str:
    if value not in context.STRATEGIES:
        raise Unusable(f"做法应是 {' / '.join(context.STRATEGIES)} 之一，收到 {value!r}。")
    return value


def context_loop(client: Any, question: str, options: dict, *, max_turns: int, temperature: float | None,
                 stream: bool) -> Iterator:
    """context.run_within_budget on the options' conversation, strategy and budget; a conversation
    that cannot be used ends the run before the model is asked, saying why."""
    try:
        history = conversation_from(options.get("conversation"))
        strategy, budget = strategy_from(options.get("strategy") or "none"), budget_from(options.get("budget"))
    except Unusable as problem:
        yield {"type": "error", "turn": None, "code": "conversation", "message": str(problem)}
        return None
    return (yield from context.run_within_budget(client, history, question, strategy, budget, max_turns=max_turns,
                                                 temperature=temperature, stream=stream))
