"""8.1 第一次调用 in the timeline: what code/first_call.py recorded of one request, drawn.

Two parts of a round: under the request, the request body as the client sends it and the same
request as openai and zhipuai SDK code (first_call.sdk_code); after the response, the time axis of
the stream (every fragment at the moment it arrived; a tool call's fragments with what the arguments
read so far and whether json.loads takes them yet), each assembled call, and what finish_reason
says, beside every value it may take (first_call.FINISH_REASONS). Nothing here computes a fragment,
a time or a parse: the events carry them.
"""
from __future__ import annotations

import json

from first_call import FINISH_REASONS, NO_FINISH, sdk_code
from llm_clients import GLM_BASE_URL, OPENAI_BASE_URL

from i18n import now, tr
from lessons.html_bits import esc, pre

CSS = """
.tw-fc-sdk { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 8px; }
.tw-fc-axis { width: 100%; border-collapse: collapse; font-size: 0.88em; }
.tw-fc-axis td, .tw-fc-axis th { border-bottom: 1px solid var(--border-color-primary); padding: 2px 6px;
  text-align: left; vertical-align: top; }
.tw-fc-axis code { white-space: pre-wrap; word-break: break-all; }
.tw-fc-axis td:first-child { white-space: nowrap; }
.tw-fc-lane { position: relative; min-width: 120px; height: 1.2em; background: var(--background-fill-secondary); }
.tw-fc-dot { position: absolute; top: 0.2em; width: 0.8em; height: 0.8em; margin-left: -0.4em; border-radius: 50%;
  background: var(--color-accent); }
.tw-fc-piece[data-closed="true"] .tw-fc-dot { background: #16a34a; }
.tw-fc-open { color: #b45309; }
.tw-fc-closed { color: #15803d; font-weight: 600; }
.tw-fc-reasons tr[data-current="true"] { background: var(--color-accent-soft); font-weight: 600; }
"""
# The offline model served on this machine (python code/offline_server.py --port 8765), as each SDK addresses it.
OFFLINE_URLS = {"openai": "http://127.0.0.1:8765/v1", "zhipuai": "http://127.0.0.1:8765/api/paas/v4"}
OFFLINE_NOTE = tr("离线模型：先在本机运行 python code/offline_server.py --port 8765，两段代码就发到它那里（Key 随便填）。",
                  "The offline model: first run python code/offline_server.py --port 8765 on your machine; both snippets "
                  "then send to it (any key will do).")
# first_call.FINISH_REASONS (the course's words) on an English page.
FINISH_REASONS_EN = {
    "tool_calls": "The model wants to call tools: message.tool_calls holds the function names and arguments. Run them "
                  "and send the results back, and only then does the model go on to answer",
    "stop": "The model finished writing (or met a word of stop): this is an answer, with no tool to call",
    "length": "Cut off at max_tokens: the answer or the arguments may be half written (the arguments are then most "
              "likely not complete JSON); do not run it: raise max_tokens and ask again",
    "content_filter": "Stopped by the platform's content moderation",
    "sensitive": "(Zhipu) Stopped by the platform's content moderation",
    "network_error": "(Zhipu) The model's inference failed: try again",
    "function_call": "The older API's way (the functions parameter) of saying tool_calls",
}
NO_FINISH_EN = "No finish_reason came: the response may have been cut off on its way"


def meaning(value: str | None) -> str:
    """What a finish_reason value says, in the page's language."""
    if value in FINISH_REASONS:
        return tr(FINISH_REASONS[value], FINISH_REASONS_EN.get(value, FINISH_REASONS[value]))
    return tr(NO_FINISH, NO_FINISH_EN)


EXPLAINED = tr("（每个值的意思，来自 first_call.FINISH_REASONS）", "(what each value means: first_call.FINISH_REASONS)")


def label(text: str) -> str:
    return f'<div class="tw-label">{esc(text)}</div>'


def address(request: dict, sdk: str) -> str | None:
    """Where the `sdk` snippet sends the request (None: the SDK's own default): the local offline server,
    the Base URL the student typed, or else the provider's official address as this SDK must be told it.
    Never the server's own Base URL: a request event carries only what the student typed."""
    provider = request.get("provider")
    if provider == "offline":
        return OFFLINE_URLS[sdk]
    if request.get("base_url"):
        return request["base_url"]
    if provider == "glm":
        return GLM_BASE_URL if sdk == "openai" else None
    return OPENAI_BASE_URL if sdk == "zhipuai" else None


def render_request(request: dict) -> str:
    """The body the client sends, raw, and the same request through each SDK (no key in the code)."""
    body = request.get("body")
    if not isinstance(body, dict):
        return ""
    offline = request.get("provider") == "offline"
    code = "".join(f'<div class="tw-fc-code tw-fc-sdk-{sdk}">{label(title)}'
                   f'{pre(sdk_code(provider, body, address(request, sdk)))}</div>'
                   for sdk, provider, title in (("openai", "openai", tr("用 openai SDK 发", "Sent with the openai SDK")),
                                                ("zhipuai", "glm", tr("用 zhipuai SDK 发（同一个请求）",
                                                                      "Sent with the zhipuai SDK (the same request)"))))
    note = f'<div class="tw-meta">{esc(now(OFFLINE_NOTE))}</div>' if offline else ""
    return (f'<div class="tw-step tw-fc-request">{label(tr("请求体原文（发出去的就是它）", "The request body, raw (exactly what is sent)"))}'
            f'<div class="tw-fc-body">{pre(body)}</div><div class="tw-fc-sdk">{code}</div>{note}</div>')


def render_arrival(events: list[dict]) -> str:
    """The time axis of a streamed reply (live while it streams), the assembled calls and finish_reason."""
    pieces = [e for e in events if e.get("type") == "delta" and "at_ms" in e]
    assembled = next((e for e in events if e.get("type") == "assembled"), None)
    if not pieces and assembled is None:
        return ""
    parts = []
    if pieces:
        parts.append(render_axis(pieces, (assembled or {}).get("done_ms")))
    elif assembled is not None:
        parts.append(f'<div class="tw-step tw-fc-whole">{label(tr("不流式：一整块", "Not streamed: one block"))}'
                     + esc(tr("没有分片：整个响应在 {ms:.1f} ms 一次到达，工具调用就在 choices[0].message.tool_calls 里。",
                              "No fragments: the whole response arrived at once, at {ms:.1f} ms; the tool calls are in "
                              "choices[0].message.tool_calls.").format(ms=float(assembled.get("done_ms") or 0)))
                     + "</div>")
    if assembled is not None:
        parts.append(render_calls(assembled))
        parts.append(render_finish(assembled.get("finish_reason")))
    return "".join(parts)


def render_axis(pieces: list[dict], done_ms: float | None) -> str:
    """One row per fragment, in the order it arrived, placed on a lane from the request (0 ms) to the
    last byte (done_ms; while streaming, the latest fragment)."""
    end = max([float(done_ms or 0)] + [float(p.get("at_ms") or 0) for p in pieces]) or 1.0
    rows = []
    for piece in pieces:
        at = float(piece.get("at_ms") or 0)
        lane = f'<div class="tw-fc-lane"><span class="tw-fc-dot" style="left:{at / end * 100:.1f}%"></span></div>'
        if "index" in piece:
            said = f'index={piece.get("index")}'
            if piece.get("id"):
                said += f' id={piece.get("id")} name={piece.get("name")}'
            closed = bool(piece.get("closed"))
            parse = (f'<span class="tw-fc-closed">✓ {esc(tr("完整的 JSON", "complete JSON"))}</span>' if closed else
                     f'<span class="tw-fc-open">✗ {esc(tr("json.loads 读不出来：", "json.loads fails: "))}'
                     f'<code>{esc(piece.get("json_error"))}</code></span>')
            rows.append(f'<tr class="tw-fc-piece" data-index="{esc(piece.get("index"))}" data-closed="{str(closed).lower()}">'
                        f'<td>{at:.2f} ms</td><td>{lane}</td><td>tool_calls[{esc(said)}]</td>'
                        f'<td><code>{esc(json.dumps(piece.get("arguments") or "", ensure_ascii=False))}</code></td>'
                        f'<td><code>{esc(piece.get("so_far"))}</code></td><td>{parse}</td></tr>')
        else:
            rows.append(f'<tr class="tw-fc-text"><td>{at:.2f} ms</td><td>{lane}</td><td>content</td>'
                        f'<td><code>{esc(json.dumps(piece.get("content") or "", ensure_ascii=False))}</code></td>'
                        f'<td></td><td></td></tr>')
    head = "".join(f"<th>{esc(h)}</th>" for h in (
        tr("到达时刻", "Arrived at"), tr("时间轴", "Time axis"), tr("哪一部分", "Which part"),
        tr("这一片", "This fragment"), tr("参数拼到现在", "Arguments so far"), tr("json.loads(拼到现在)", "json.loads(so far)")))
    title = tr("流式：{n} 片，按到达的时刻排开（从发出请求算起）", "Streamed: {n} fragments, by the moment each arrived "
               "(from the request)").format(n=len(pieces))
    return (f'<div class="tw-step tw-fc-stream">{label(title)}'
            f'<table class="tw-fc-axis"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def render_calls(assembled: dict) -> str:
    """Each call as the client assembled it, and from when it could have run."""
    calls = assembled.get("calls") or []
    if not calls:
        return (f'<div class="tw-step tw-fc-calls">{label(tr("拼好的调用", "The assembled calls"))}'
                f'{esc(tr("没有工具调用：这次回复是一段文字。", "No tool call: this reply is text."))}</div>')
    items = []
    for call in calls:
        if call.get("parsed") is None:
            when = tr("参数一直不是完整的 JSON：这个调用不能执行。", "The arguments never became complete JSON: this call cannot run.")
        elif call.get("fragments"):
            when = tr("由 {n} 片拼成；第 {k} 片（{ms:.2f} ms）到了，参数才是完整的 JSON：从这一刻起才能执行它。",
                      "Made of {n} fragments; only when fragment {k} arrived ({ms:.2f} ms) were the arguments complete "
                      "JSON: only from then on can it run.").format(n=call.get("fragments"), k=call.get("closed_at"),
                                                                   ms=float(call.get("closed_ms") or 0))
        else:
            when = tr("不流式：整个调用随响应一起到（{ms:.1f} ms），到了就是完整的。",
                      "Not streamed: the whole call came with the response ({ms:.1f} ms), complete on arrival.").format(
                          ms=float(call.get("closed_ms") or 0))
        items.append(f'<div class="tw-fc-call" data-index="{esc(call.get("index"))}">'
                     f'<code>{esc(call.get("name"))}({esc(call.get("arguments"))})</code> · id={esc(call.get("id"))}'
                     f'<div>{esc(when)}</div></div>')
    return f'<div class="tw-step tw-fc-calls">{label(tr("拼好的调用", "The assembled calls"))}{"".join(items)}</div>'


def render_finish(finish: str | None) -> str:
    """finish_reason as it came, and every value it may take, this one marked."""
    rows = "".join(f'<tr data-reason="{esc(value)}" data-current="{str(value == finish).lower()}">'
                   f"<td><code>{esc(value)}</code></td><td>{esc(meaning(value))}</td></tr>"
                   for value in FINISH_REASONS)
    came = (f'finish_reason = <code>{esc(finish)}</code>{esc(tr("：", ": "))}{esc(meaning(finish))}' if finish
            else esc(meaning(None)))
    return (f'<div class="tw-step tw-fc-finish">{label(tr("模型为什么停：finish_reason", "Why the model stopped: finish_reason"))}'
            f'<div class="tw-fc-came">{came}</div><div class="tw-meta">{esc(now(EXPLAINED))}</div>'
            f'<table class="tw-fc-axis tw-fc-reasons"><tbody>{rows}</tbody></table></div>')
