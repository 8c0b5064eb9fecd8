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
import events as loop_events

from i18n import now, tr

MAX_MESSAGES = 200
MAX_CHARS = 200_000
BUDGET_RANGE = (50, 8_000)      # the page's slider spans it; a link or the API is held to it too
ROLES = ("system", "user", "assistant", "tool")
# A message's fates in English (the Chinese come with the event); the strategies' titles are
# context.STRATEGY_TABLE's.
FATES_EN = {"原样留着": "kept as it is", "折叠了": "folded", "换成一行说明": "replaced by one line",
            "丢掉了": "dropped", "交给模型写摘要": "given to the model to summarise", "改了": "changed"}


# Said after each conversation the chat API would refuse, and of a conversation json cannot read.
REFUSED = tr("这段对话原样发出去就会被 API 拒收。", "sent as it is, this conversation would be refused by the API.")
TOO_DEEP = tr("对话的 JSON 嵌套太深或数字太长，读不了。", "The conversation's JSON is nested too deep or has too long a number: "
              "it cannot be read.")


class Unusable(ValueError):
    """The conversation cannot be sent as it is; the message says where and why."""


def conversation_from(value: Any) -> list[dict]:
    """The messages of `value` (JSON text or a list), checked: each a dict with a known role, its
    content a string (or null beside tool_calls), each tool call with an id, a name and arguments
    as a JSON string, each tool result with its tool_call_id."""
    if isinstance(value, str):
        if len(value) > MAX_CHARS:
            raise Unusable(tr("对话太长：{n} 字，最多 {most} 字。", "The conversation is too long: {n} characters, "
                              "at most {most}.").format(n=len(value), most=MAX_CHARS))
        try:
            value = json.loads(value or "[]")
        except json.JSONDecodeError as error:
            raise Unusable(tr("对话不是合法的 JSON：第 {line} 行第 {column} 列，{what}。",
                              "The conversation is not valid JSON: line {line}, column {column}, {what}.").format(
                                  line=error.lineno, column=error.colno, what=error.msg)) from None
        except (ValueError, RecursionError):    # 几千层的嵌套、几千位的数字：json 自己的上限
            raise Unusable(now(TOO_DEEP)) from None
    if not isinstance(value, list):
        raise Unusable(tr("对话应是一个消息列表（JSON 数组），收到的是{kind}。",
                          "The conversation must be a list of messages (a JSON array); it is {kind}.").format(
                              kind=json_type(value)))
    if len(value) > MAX_MESSAGES:
        raise Unusable(tr("对话有 {n} 条消息，最多 {most} 条。", "The conversation has {n} messages, at most {most}.")
                       .format(n=len(value), most=MAX_MESSAGES))
    try:
        size = len(json.dumps(value, ensure_ascii=False))
    except (ValueError, RecursionError):
        raise Unusable(now(TOO_DEEP)) from None
    if size > MAX_CHARS:
        raise Unusable(tr("对话太长：最多 {most} 字。", "The conversation is too long: at most {most} characters.")
                       .format(most=MAX_CHARS))
    checked = []
    for number, message in enumerate(value, 1):
        if not isinstance(message, dict):
            raise Unusable(tr("第 {n} 条消息应是一个对象（{{\"role\": …, \"content\": …}}），收到的是{kind}。",
                              "Message {n} must be an object ({{\"role\": …, \"content\": …}}); it is {kind}.")
                           .format(n=number, kind=json_type(message)))
        if message.get("role") not in ROLES:
            raise Unusable(tr("第 {n} 条消息的 role 应是 {roles} 之一，收到 {role}。",
                              "Message {n}'s role must be one of {roles}; it is {role}.").format(
                                  n=number, roles=" / ".join(ROLES), role=repr(message.get("role"))))
        content, calls = message.get("content"), message.get("tool_calls")
        if not (isinstance(content, str) or text_parts(content) or (content is None and calls)):
            raise Unusable(tr("第 {n} 条消息的 content 应是字符串，或 [{{\"type\": \"text\", \"text\": …}}] 这样的文字段列表"
                              "（只有带 tool_calls 的 assistant 消息可以是 null）。",
                              "Message {n}'s content must be a string, or a list of text parts such as "
                              "[{{\"type\": \"text\", \"text\": …}}] (only an assistant message with tool_calls may "
                              "have null).").format(n=number))
        if calls is not None:
            if message["role"] != "assistant" or not isinstance(calls, list):
                raise Unusable(tr("第 {n} 条消息：只有 assistant 消息可以带 tool_calls，而且它应是一个列表。",
                                  "Message {n}: only an assistant message may have tool_calls, and they must be a "
                                  "list.").format(n=number))
            if not calls:
                raise Unusable(tr("第 {n} 条消息的 tool_calls 是空列表：没有调用就不要写这个键。",
                                  "Message {n}'s tool_calls is an empty list: without a call, leave the key out.")
                               .format(n=number))
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not (isinstance(call.get("id") if isinstance(call, dict) else None, str)
                        and call.get("type", "function") == "function" and isinstance(function, dict)
                        and isinstance(function.get("name"), str) and isinstance(function.get("arguments"), str)):
                    raise Unusable(tr("第 {n} 条消息的 tool_calls 里每一项应是 {{\"id\": 字符串, \"type\": \"function\", "
                                      "\"function\": {{\"name\": 字符串, \"arguments\": JSON 字符串}}}}。",
                                      "Each item of message {n}'s tool_calls must be {{\"id\": string, \"type\": "
                                      "\"function\", \"function\": {{\"name\": string, \"arguments\": JSON string}}}}.")
                                   .format(n=number))
        if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise Unusable(tr("第 {n} 条消息是工具结果，应带 tool_call_id（它回答的那个调用的 id）。",
                              "Message {n} is a tool result: it must have a tool_call_id (the id of the call it "
                              "answers).").format(n=number))
        checked.append(only_known(message))
    # Sent as it is, the API would refuse these: said here, so that no strategy is blamed for them.
    lost = context.orphan_results(checked)
    if lost:
        raise Unusable(tr("第 {n} 条是 {id} 的结果，可它前面没有这个调用：", "Message {n} is the result of {id}, but "
                          "no call of it comes before: ").format(n=lost[0] + 1, id=checked[lost[0]]["tool_call_id"])
                       + REFUSED)
    unanswered = answered_in_turn(checked)
    if unanswered:
        raise Unusable(unanswered + REFUSED)
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
            return tr("第 {n} 条的调用 {ids} 后面没有紧跟着恰好一条它的结果（每个调用的结果要紧跟在它后面，一个调用一条）：",
                      "The call {ids} of message {n} is not followed right after by exactly one result of it (each "
                      "call's result comes right after it, one per call): ").format(
                          n=index + 1, ids=", ".join(dict.fromkeys(missing)))
    return ""


def text_parts(content: Any) -> bool:
    """Content as a list of text parts ([{"type": "text", "text": …}]), which the chat API takes too."""
    return (isinstance(content, list) and bool(content)
            and all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content))


def json_type(value: Any) -> str:
    """A value's kind as JSON names it: the student wrote JSON, not Python."""
    kinds = ((bool, tr("布尔值", "a boolean")), (dict, tr("对象", "an object")), (list, tr("数组", "an array")),
             (str, tr("字符串", "a string")), ((int, float), tr("数字", "a number")))
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
        raise Unusable(tr("预算应是整数（token 数），收到 {value}。", "The budget must be a whole number (of tokens); "
                          "it is {value}.").format(value=repr(value))) from None
    return max(BUDGET_RANGE[0], min(BUDGET_RANGE[1], budget))


def strategy_from(value: Any) -> str:
    if value not in context.STRATEGIES:
        raise Unusable(tr("做法应是 {known} 之一，收到 {value}。", "The strategy must be one of {known}; it is {value}.")
                       .format(known=" / ".join(context.STRATEGIES), value=repr(value)))
    return value


def context_loop(client: Any, question: str, options: dict, *, max_turns: int, temperature: float | None,
                 stream: bool) -> Iterator:
    """context.run_within_budget on the options' conversation, strategy and budget; a conversation
    that cannot be used ends the run before the model is asked, saying why."""
    try:
        history = conversation_from(options.get("conversation"))
        strategy, budget = strategy_from(options.get("strategy") or "none"), budget_from(options.get("budget"))
    except Unusable as problem:
        yield loop_events.error(None, "conversation", str(problem))
        return None
    return (yield from context.run_within_budget(client, history, question, strategy, budget, max_turns=max_turns,
                                                 temperature=temperature, stream=stream))
