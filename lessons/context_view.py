"""The context lesson's one picture: the next request, message by message (tokens, what
happened to it, what it costs now), what the strategy did, the results a real API would refuse,
and the strategies side by side. The timeline shows it as the step before round 1; the page's
preview shows the same picture while the student moves the budget."""
from __future__ import annotations

from typing import Any

import context

from i18n import now, tr
from lessons.html_bits import esc, fold, milliseconds, pre
from runs.context_backend import FATES_EN, TITLES_EN


# Wide tables scroll inside their own box: on a phone the page itself does not scroll sideways.
CSS = """
.tw-context { overflow-x: auto; }
.tw-context-table { border-collapse: collapse; margin: 6px 0; font-size: 0.88em; }
.tw-context-table th, .tw-context-table td { border: 1px solid var(--border-color-primary); padding: 3px 6px; vertical-align: top; }
.tw-context-table code { white-space: pre-wrap; word-break: break-all; }
.tw-context-head { font-weight: 600; margin: 4px 0; }
"""

.tw-context-warning { border-left: 4px solid #d97706; padding: 6px 10px; background: rgba(217,119,6,0.08); border-radius: 4px; margin: 4px 0; }

def title(strategy: str) -> str:
    return tr(context.STRATEGIES.get(strategy, strategy), TITLES_EN.get(strategy, strategy))


def fate(text: str) -> str:
    return tr(text, FATES_EN.get(text, text))


def _table(head: list, rows: list[list]) -> str:
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="tw-context-table"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'


def _rows(value: Any) -> list[dict]:
    """A list of dicts from an event that may come from an imported file: anything else is left out."""
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def messages_table(event: dict) -> str:
    rows = [[esc(number), esc(row.get("role")), f"<code>{esc(row.get('preview'))}</code>", esc(row.get("tokens")),
             esc(fate(str(row.get("fate")))) + (" ⛔" if row.get("orphan") is True else ""), esc(row.get("after"))]
            for number, row in enumerate(_rows(event.get("rows")), 1)]
    rows += [["＋", esc(row.get("role")), f"<code>{esc(row.get('preview'))}</code>", "—",
              esc(tr("新写的一条", "a new message")), esc(row.get("tokens"))] for row in _rows(event.get("added"))]
    return _table([tr("#", "#"), "role", tr("开头", "starts with"), tr("token（原来）", "tokens (before)"),
                   tr("去向", "what happened"), tr("token（发出）", "tokens (sent)")], rows)


def compared_table(rows: Any, chosen: str) -> str:
    body = [[("👉 " if row.get("strategy") == chosen else "") + esc(title(str(row.get("strategy")))),
             esc(row.get("messages")), esc(row.get("tokens")), esc(row.get("saved")), esc(milliseconds(row.get("ms"))),
             (f"⛔ {esc(row.get('orphans'))}" if row.get("orphans") else "0"),
             "✅" if row.get("fits") else tr("⚠️ 超出", "⚠️ over")]
            for row in _rows(rows)]
    return _table([tr("做法", "strategy"), tr("条数", "messages"), "token", tr("省下", "saved"),
                   tr("用时（这次量的）", "time (measured now)"), tr("孤儿结果", "orphan results"),
                   tr("装进预算", "fits the budget")], body)


def summary_line(event: dict) -> str:
    before, after, budget = event.get("before_tokens"), event.get("after_tokens"), event.get("budget")
    numbers = all(isinstance(n, int) for n in (before, after, budget))
    fits = (tr("✅ 装进了预算", "✅ fits the budget") if numbers and after <= budget
            else tr("⚠️ 仍然超出预算", "⚠️ still over the budget"))
    return tr("做法：{title} · 预算 {budget} · {before} → {after} 个 token（省下 {saved}）· 用时 {ms} · {fits}",
              "Strategy: {title} · budget {budget} · {before} → {after} tokens (saved {saved}) · took {ms} · {fits}"
              ).format(title=title(str(event.get("strategy"))), budget=budget, before=before, after=after,
                       saved=before - after if numbers else "?", ms=milliseconds(event.get("ms")), fits=fits)


def render(event: dict) -> str:
    """The whole picture of one context event (HTML)."""
    parts = [f'<div class="tw-context-head">{esc(summary_line(event))}</div>', messages_table(event)]
    notes = event.get("notes") if isinstance(event.get("notes"), list) else []
    if notes:
        parts.append("<ul class='tw-context-notes'>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    for orphan in event.get("orphans") if isinstance(event.get("orphans"), list) else []:
        parts.append(f'<div class="tw-error">⛔ {esc(orphan)}</div>')
    call = event.get("model_call")
    if isinstance(call, dict):
        parts.append(fold(tr("摘要是一次模型调用（{ms}）：交给它的请求和它写的摘要",
                             "The summary is one model call ({ms}): what it was sent and what it wrote").format(
                                 ms=milliseconds(call.get("duration_ms"))),
                          pre(call.get("messages")) + pre(str(call.get("answer") or "")), open_=True))
    parts.append(f'<div class="tw-label">{esc(tr("几种做法并排（同一段对话、同一个预算，这次量的）", "The strategies side by side (the same conversation and budget, measured now)"))}</div>')
    parts.append(compared_table(event.get("compared"), str(event.get("strategy"))))
    return '<div class="tw-context">' + "".join(parts) + "</div>"


def preview(messages: list[dict], question: str, strategy: str, budget: int) -> str:
    """The page's picture before a run. A summary needs the model: it is written only when the run
    starts, and the preview says so instead of guessing it."""
    asked = [*messages, {"role": "user", "content": question or ""}]
    if strategy in context.NEEDS_MODEL:
        note = tr("「{title}」要模型来写摘要：点 ▶ 运行，时间线的第一步会显示这次模型调用、它写的摘要和每条消息的去向。",
                  "«{title}» needs the model to write the summary: click ▶ Run, and the timeline's first step shows "
                  "that model call, the summary it wrote and what happened to each message.").format(title=title(strategy))
        return (f'<div class="tw-context"><div class="tw-context-head">{esc(note)}</div>'
                + compared_table(context.compared(asked, budget), strategy) + "</div>")
    shrunk, ms = context.measured(strategy, asked, budget)
    return render(context.context_event(strategy, budget, asked, shrunk, ms))


def line(event: dict) -> str:
    """One line for the chat view."""
    return now(summary_line(event))
