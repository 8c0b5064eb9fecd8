"""What the sessions lesson (8.11) draws of a session: its branches side by side (where each forked
from, what differs, its verdict, the raw messages of its last request) and the whole tree, one line
an entry, the way Pi's /tree lists it. Everything shown is what code/sessions.py computes
(branches(), compare(), tree(), messages()) and runs/headline.py says; nothing is worked out here."""
from __future__ import annotations

import json
from typing import Any

from sessions import KIND_NAMES, Session, preview

from i18n import pick, tr
from lessons.html_bits import esc
from runs import headline, sessions_backend

KIND_EN = {"question": "question", "user": "user message", "assistant": "model's answer", "tool": "tool result",
           "system": "system prompt"}
CSS = """
.tw-branches { display: flex; gap: 10px; overflow-x: auto; align-items: flex-start; }
.tw-branch { flex: 1 0 260px; border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px;
             font-size: 13px; }
.tw-branch.tw-current { border: 2px solid var(--color-accent); }
.tw-branch h4 { margin: 0 0 4px 0; }
.tw-branch ol { padding-left: 1.6em; margin: 6px 0; }
.tw-branch li.tw-shared { opacity: 0.55; }
.tw-branch li.tw-differs { background: var(--color-accent-soft); border-radius: 4px; }
.tw-branch .tw-verdict, .tw-branch .tw-forked { margin: 4px 0; }
.tw-branch pre { white-space: pre-wrap; max-height: 260px; overflow: auto; font-size: 12px; }
.tw-tree { font-family: var(--font-mono); font-size: 12px; white-space: pre; overflow-x: auto; margin-top: 8px; }
.tw-tree .tw-on-path { font-weight: bold; }
"""


def kind_name(kind: str) -> str:
    return pick(KIND_NAMES.get(kind, kind), KIND_EN.get(kind, kind))


def render(session: Session | None, verdicts: dict | None, problem: str = "") -> str:
    """The session panel's HTML: a problem with the session (its text could not be read), or its
    branches side by side and the tree."""
    if problem:
        return f"<div class='tw-session-problem'>❌ {esc(problem)}</div>"
    if session is None or not session.entries:
        # A Text (both languages) as a whole: the page built with it shows its English on an English page.
        return "<div class='tw-session-empty'>" + tr(
            "会话还是空的：问一个问题（▶ 运行），这里就出现第一条分支。",
            "The session is empty: ask a question (▶ Run) and its first branch appears here.") + "</div>"
    rows = session.branches()
    columns = "".join(branch_column(session, row, (verdicts or {}).get(row["id"])) for row in rows)
    return f"<div class='tw-branches'>{columns}</div>{tree(session)}"


def branch_column(session: Session, row: dict, run_events: list | None) -> str:
    number, change = row["number"], row["change"]
    path = session.path_ids(row["leaf"])
    shared = 0
    title = tr("分支 {n}", "Branch {n}").format(n=number) + (tr("（当前）", " (current)") if row["current"] else "")
    parts = [f"<h4>{esc(title)}</h4>"]
    if change is not None:
        side = session.compare(change["sibling_branch"], row["id"])
        shared = side["shared"]
        parts.append("<div class='tw-forked'>" + esc(tr(
            "从分支 {m} 分出：共有前 {shared} 条，第 {k} 条{kind}不同：原来「{before}」，这里「{after}」",
            "Forked from branch {m}: the first {shared} messages are shared; message {k}, the {kind}, differs: "
            "«{before}» there, «{after}» here").format(
                m=session.branch_number(change["sibling_branch"]), shared=shared, k=shared + 1,
                kind=kind_name(change["kind"]), before=short(change["before"]), after=short(change["after"])))
            + "</div>")
    parts.append("<div class='tw-verdict'>" + verdict_line(run_events) + "</div>")
    items = []
    for index, entry_id in enumerate(path):
        entry = session.entries[entry_id]
        css = "tw-shared" if index < shared else ("tw-differs" if change is not None and index == shared else "")
        mark = " ✏️" if entry.get("edited_from") else ""
        items.append(f"<li class='{css}' data-entry='{esc(entry_id)}'><b>{esc(kind_name(session.kind(entry_id)))}"
                     f"</b>{mark}：{esc(preview(entry['message']))}</li>")
    parts.append(f"<ol>{''.join(items)}</ol>")
    answer = row["answer"]
    parts.append("<div class='tw-answer'>" + esc(tr("回答：", "Answer: ")) + esc(
        short(answer, 200) if answer is not None else tr("（还没有回答）", "(no answer yet)")) + "</div>")
    parts.append(raw_request(session, row, run_events))
    current = " tw-current" if row["current"] else ""
    return f"<div class='tw-branch{current}' data-branch='{esc(row['id'])}' data-number='{number}'>{''.join(parts)}</div>"


def verdict_line(run_events: list | None) -> str:
    if not run_events:
        return esc(tr("（这条分支没有在本页跑过：它是读进来的，或者页面重新打开过，没有结论）",
                      "(this branch has not run on this page: it was read from a file, or the page was opened "
                      "again, so there is no verdict)"))
    found = headline.verdict(run_events)
    if found is None:
        return esc(tr("⏳ 还没有跑完", "⏳ Not finished yet"))
    return f"<b>{esc(found['icon'])} {esc(found['title'])}</b>"


def raw_request(session: Session, row: dict, run_events: list | None) -> str:
    """The messages the branch's last request sent, exactly (from its request event); for a branch that
    has not run here, the messages its next request would send (sessions.messages)."""
    sent = sessions_backend.last_request(run_events or [])
    if sent is not None:
        label = tr("最后一次请求的 messages（原样）", "The messages of its last request (as sent)")
    else:
        sent = session.messages(row["leaf"])
        label = tr("下一次请求会发的 messages", "The messages its next request would send")
    body = json.dumps(sent, ensure_ascii=False, indent=1)
    return (f"<details class='tw-raw-request'><summary>{esc(label)}（{len(sent)}）</summary>"
            f"<pre>{esc(body)}</pre></details>")


def tree(session: Session) -> str:
    """The whole tree, one line an entry (/tree): indented under its parent, the current path bold,
    each line with its branch's number."""
    lines = []
    for row in session.tree():
        css = "tw-on-path" if row["current"] else ""
        mark = " ✏️" if row["edited_from"] else ""
        lines.append(f"<div class='{css}'>{'  ' * row['depth']}{'└ ' if row['depth'] else ''}"
                     f"[{row['number']}] {esc(kind_name(row['kind']))}{mark}：{esc(row['preview'])}</div>")
    heading = esc(tr("整棵树（[n] 是分支号，粗体是当前分支的路径）", "The whole tree ([n]: the branch; bold: the current path)"))
    return f"<details class='tw-tree-box' open><summary>{heading}</summary><div class='tw-tree'>{''.join(lines)}</div></details>"


def short(text: Any, limit: int = 60) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def branch_choices(session: Session | None) -> list[tuple[str, str]]:
    if session is None:
        return []
    return [(pick(f"分支 {row['number']}", f"Branch {row['number']}") + f" · {short(row['answer'] or '', 30)}", row["id"])
            for row in session.branches()]


def entry_choices(session: Session | None) -> list[tuple[str, str]]:
    """The current branch's messages a fork may start from, numbered as the branch shows them."""
    if session is None or session.leaf is None:
        return []
    numbers = {entry_id: n for n, entry_id in enumerate(session.path_ids(), 1)}
    return [(f"{numbers[e['id']]}. {kind_name(session.kind(e['id']))} · {short(preview(e['message']), 40)}", e["id"])
            for e in sessions_backend.editable(session)]
