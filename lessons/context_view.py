"""The context lesson's one picture: the next request, message by message (tokens, what
happened to it, what it costs now), what the strategy did, the results a real API would refuse,
and the strategies side by side. The timeline shows it as the step before round 1; the page's
preview shows the same picture while the student moves the budget."""
from __future__ import annotations

import re
from typing import Any

import context

import i18n
from i18n import now, tr
from lessons.html_bits import esc, fold, milliseconds, pre
from runs.context_backend import FATES_EN


# Wide tables scroll inside their own box: on a phone the page itself does not scroll sideways.
CSS = """
.tw-context { overflow-x: auto; }
.tw-context-table { border-collapse: collapse; margin: 6px 0; font-size: 0.88em; }
.tw-context-table th, .tw-context-table td { border: 1px solid var(--border-color-primary); padding: 3px 6px; vertical-align: top; }
.tw-context-table code { white-space: pre-wrap; word-break: break-all; }
.tw-context-head { font-weight: 600; margin: 4px 0; }
.tw-context-warning { border-left: 4px solid #d97706; padding: 6px 10px; background: rgba(217,119,6,0.08); border-radius: 4px; margin: 4px 0; }
"""


# What code/context.py says it did (Shrunk.notes, the orphans of context_event), in English: each
# sentence it writes, with the parts it fills in named. A sentence not here is shown as written.
NOTES_EN = [(re.compile(pattern), english) for pattern, english in (
    (r"折叠了 (?P<id>.+?) 的结果：(?P<n>\d+) 行只留头尾各 (?P<k>\d+) 行",
     "Folded the result of {id}: of its {n} lines, the first and the last {k} are kept"),
    (r"第 (?P<i>\d+) 条（(?P<name>.+?) 的结果）换成了一行说明", "Message {i} (the result of {name}) became one line"),
    (r"(?P<id>.+?) 的结果（(?P<t>\d+) 个 token）写进了 (?P<file>.+?)，对话里只留指针",
     "The result of {id} ({t} tokens) went into {file}: the conversation keeps a pointer to it"),
    (r"丢掉了最早的 (?P<n>\d+) 条消息（(?P<g>\d+) 组，调用和它的结果算一组），省下 (?P<t>\d+) 个 token",
     "Dropped the earliest {n} messages ({g} groups: a call and its results are one group), saving {t} tokens"),
    (r"还剩 (?P<n>\d+) 条、(?P<t>\d+) 个 token，超出预算 (?P<b>\d+)：再丢就不到 (?P<m>\d+) 条，或者要丢掉刚问的问题了",
     "{n} messages and {t} tokens are left, over the budget of {b}: dropping more would leave fewer than {m} "
     "messages, or drop the question just asked"),
    (r"一条一条地丢掉了最早的 (?P<n>\d+) 条消息", "Dropped the earliest {n} messages, one at a time"),
    (r"第 (?P<i>\d+) 条是 (?P<id>.+?) 的结果，可它前面没有这个调用：OpenAI 的接口会拒绝这次请求（400）",
     "Message {i} is the result of {id}, but no call of it comes before: OpenAI's API would refuse this request (400)"),
    (r"第 (?P<i>\d+) 条（(?P<id>.+?) 的结果）留下了，它的调用却丢了：OpenAI 的接口会拒绝这次请求（400）",
     "Message {i} (the result of {id}) was kept, but its call was dropped: OpenAI's API would refuse this request (400)"),
    (r"最早的 (?P<n>\d+) 条消息（(?P<t>\d+) 个 token）交给模型写成了摘要（(?P<s>\d+) 个 token），多了一次模型调用；"
     r"工具结果交给它的只有前 (?P<limit>\d+) 字",
     "The earliest {n} messages ({t} tokens) went to the model, which wrote a summary of them ({s} tokens): one more "
     "model call; of each tool result it got the first {limit} characters only"),
    (r"⚠️ 模型写的摘要是空的：早先的对话就这样没了", "⚠️ The summary the model wrote is empty: the earlier conversation is gone"),
    (r"⚠️ 摘要写到 max_tokens 就被截断了（finish_reason = length）：后面的没写进去",
     "⚠️ The summary was cut at max_tokens (finish_reason = length): the rest of it was never written"),
    (r"对话还很短，没有可以压缩的部分", "The conversation is still short: there is nothing to compact"),
)]


def note(text: Any) -> str:
    """A sentence of code/context.py in the tab's language."""
    text = str(text)
    if i18n.english():
        for pattern, english in NOTES_EN:
            found = pattern.fullmatch(text)
            if found:
                return english.format(**found.groupdict())
    return text


def title(strategy: str) -> str:
    return tr(context.STRATEGIES.get(strategy, strategy), context.TITLES_EN.get(strategy, strategy))


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


def compared_row(row: dict) -> list[str]:
    """A strategy's numbers; one that needs the model and was not run this time has none (it is not
    run again just to compare)."""
    if row.get("needs_model") is True:
        return ["—", "—", "—", esc(tr("选它运行时才量（要调用一次模型）", "measured only when run (one model call)")),
                "—", "—"]
    return [esc(row.get("messages")), esc(row.get("tokens")), esc(row.get("saved")), esc(milliseconds(row.get("ms"))),
            (f"⛔ {esc(row.get('orphans'))}" if row.get("orphans") else "0"),
            "✅" if row.get("fits") else tr("⚠️ 超出", "⚠️ over")]


def compared_table(rows: Any, chosen: str) -> str:
    body = [[("👉 " if row.get("strategy") == chosen else "") + esc(title(str(row.get("strategy")))), *compared_row(row)]
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
        parts.append("<ul class='tw-context-notes'>" + "".join(f"<li>{esc(note(n))}</li>" for n in notes) + "</ul>")
    for orphan in event.get("orphans") if isinstance(event.get("orphans"), list) else []:
        parts.append(f'<div class="tw-error">⛔ {esc(note(orphan))}</div>')
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
        said = tr("「{title}」要模型来写摘要：点 ▶ 运行，时间线的第一步会显示这次模型调用、它写的摘要和每条消息的去向。",
                  "«{title}» needs the model to write the summary: click ▶ Run, and the timeline's first step shows "
                  "that model call, the summary it wrote and what happened to each message.").format(title=title(strategy))
        return (f'<div class="tw-context"><div class="tw-context-head">{esc(said)}</div>'
                + compared_table(context.compared(asked, budget), strategy) + "</div>")
    shrunk, ms = context.measured(strategy, asked, budget)
    return render(context.context_event(strategy, budget, asked, shrunk, ms))


def line(event: dict) -> str:
    """One line for the chat view."""
    return now(summary_line(event))
