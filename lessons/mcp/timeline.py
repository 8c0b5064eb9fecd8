"""MCP's part of the timeline: one JSON-RPC message between the client and the server. Which call a
message belongs to is the round's layout (lessons/timeline.py rpc_by_call); how it looks is here."""
from __future__ import annotations

from i18n import now, tr
from lessons.html_bits import esc, fold, pre
from lessons.timeline import Round, register


@register("rpc")
def draw_rpc(event: dict, round_: Round) -> str:
    return render_rpc(event)


ARROWS = {"send": tr("→ 客户端发给服务器", "→ client to server"), "receive": tr("← 服务器发给客户端", "← server to client")}
KINDS = {"request": tr("请求", "request"), "notification": tr("通知", "notification"), "result": tr("响应", "response"),
         "error": tr("JSON-RPC 错误", "JSON-RPC error")}


def render_rpc(event: dict) -> str:
    """One JSON-RPC message between the MCP client and server: direction, kind, method, id,
    the moment (ms since the connection opened) and its params / result / error. A tool that
    failed (result.isError) and a protocol error are marked as failures."""
    result = event.get("result") if isinstance(event.get("result"), dict) else None
    failed = event.get("kind") == "error" or bool(result and result.get("isError"))
    mark = ""
    if event.get("kind") == "error":
        mark = f" <span class=tw-bad>{tr('✗ 协议层出错', '✗ protocol error')}</span>"
    elif failed:
        mark = (" <span class=tw-bad>" + tr("✗ isError: true（工具失败，结果照样回给模型）",
                                            "✗ isError: true (the tool failed; the result still goes back to the model)") + "</span>")
    at = event.get("at_ms")
    when = f"{float(at):.0f} ms" if isinstance(at, (int, float)) else "?"
    ident = "" if event.get("id") is None else f" id={esc(event.get('id'))}"
    head = (f'<div class="tw-rpc-head">{esc(now(ARROWS.get(event.get("direction"), event.get("direction"))))} · '
            f'{esc(now(KINDS.get(event.get("kind"), event.get("kind"))))} <b>{esc(event.get("method") or "?")}</b>'
            f'{ident} <span class="tw-meta">@ {when}</span>{mark}</div>')
    body = {"request": "params", "notification": "params", "result": "result", "error": "error"}.get(event.get("kind"))
    shown = fold(body, pre(event.get(body))) if body and event.get(body) is not None else ""
    return f'<div class="tw-rpc{" tw-rpc-failed" if failed else ""}">{head}{shown}</div>'
