"""The planning lesson's picture of one plan event (code/planning.py): the board before and after
the write, what changed, whether it was a replan, and what the tool refused. The timeline draws it
in the round of the write_todos call that made it (or, for the course's fixed plan, where the loop
changed a status). Every text in it came from a model."""
from __future__ import annotations

from typing import Any

from i18n import now, tr
from lessons.html_bits import esc
from runs import headline

CSS = """
.tw-plan { border-left: 4px solid #0f766e; padding: 4px 10px; margin: 6px 0; background: rgba(15,118,110,0.06); border-radius: 4px; font-size: 0.92em; }
.tw-plan.tw-plan-refused { border-left-color: #dc2626; background: rgba(220,38,38,0.07); }
.tw-plan-head { font-weight: 600; }
.tw-plan-boards { display: flex; flex-wrap: wrap; gap: 12px; margin: 4px 0; }
.tw-plan-board { flex: 1 1 240px; min-width: 0; }
.tw-plan-board ol { margin: 2px 0 2px 1.4em; padding: 0; }
.tw-plan-item-completed { color: #15803d; } .tw-plan-item-in_progress { font-weight: 600; }
.tw-plan-changes { margin: 2px 0 2px 1.2em; padding: 0; }
"""
MARKS = {"pending": "⬜", "in_progress": "▶️", "completed": "✅"}
SOURCES = {"write_todos": tr("📋 计划板：模型用 write_todos 写的", "📋 The plan board: written by the model with write_todos"),
           "fixed": tr("📋 计划：先定好，状态由循环来改（课程仓库的写法）",
                       "📋 The plan: written once, its statuses changed by the loop (the course's way)")}


def _items(value: Any) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def board_html(items: list[dict]) -> str:
    """A board as a numbered list: a mark for each status, what done means, the evidence of a finished item."""
    if not items:
        return f'<div class="tw-note">{esc(tr("（空）", "(empty)"))}</div>'
    rows = []
    for item in items:
        status = str(item.get("status"))
        line = f"{MARKS.get(status, '❔')} {esc(item.get('content'))} <code>{esc(status)}</code>"
        if item.get("evidence"):
            line += f'<br><span class="tw-note">{esc(tr("证据：", "evidence: "))}“{esc(item.get("evidence"))}”</span>'
        elif item.get("done_when"):
            line += f'<br><span class="tw-note">{esc(tr("做完的标准：", "done when: "))}{esc(item.get("done_when"))}</span>'
        if item.get("failed_calls"):
            failed = tr("这一步失败的调用：{n} 次", "failed calls in this step: {n}").format(n=item.get("failed_calls"))
            line += f'<br><span class="tw-bad">{esc(failed)}</span>'
        rows.append(f'<li class="tw-plan-item-{esc(status)}">{line}</li>')
    return "<ol>" + "".join(rows) + "</ol>"


def headline_of(event: dict) -> str:
    """One line: whose plan, and what this write did (accepted, refused, replanned)."""
    title = now(SOURCES.get(event.get("source"), SOURCES["write_todos"]))
    if not event.get("accepted"):
        return title + tr(" · ❌ 退回，计划板没有动", " · ❌ refused; the board did not change")
    if event.get("replanned"):
        return title + tr(" · 🔁 改了计划", " · 🔁 replanned")
    if not _items(event.get("before")):
        return title + tr(" · 写下计划", " · the plan written")
    return title + tr(" · 更新状态", " · statuses updated")


def render(event: dict) -> str:
    """The whole picture of one plan event (HTML)."""
    refused = not event.get("accepted")
    parts = [f'<div class="tw-plan-head">{esc(headline_of(event))}</div>']
    problems = [str(p) for p in event.get("problems") or []]
    if refused and problems:
        parts.append('<ul class="tw-plan-changes">' + "".join(f'<li class="tw-bad">{esc(p)}</li>' for p in problems)
                     + "</ul>")
    changes = [headline.change_words(c) for c in event.get("changes") or []]
    if changes:
        said = tr("这次交来的清单想改的：", "What the list sent would change: ") if refused else tr("变了什么：", "What changed: ")
        parts.append(f"<div>{esc(said)}</div>" + '<ul class="tw-plan-changes">'
                     + "".join(f"<li>{esc(c)}</li>" for c in changes) + "</ul>")
    before, after = _items(event.get("before")), _items(event.get("after"))
    parts.append('<div class="tw-plan-boards">'
                 f'<div class="tw-plan-board tw-plan-before"><div class="tw-meta">{esc(tr("之前", "Before"))}</div>'
                 f"{board_html(before)}</div>"
                 f'<div class="tw-plan-board tw-plan-after"><div class="tw-meta">{esc(tr("之后", "After"))}</div>'
                 f"{board_html(after)}</div></div>")
    return f'<div class="tw-plan{" tw-plan-refused" if refused else ""}">' + "".join(parts) + "</div>"


def text(event: dict) -> str:
    """The event as the chat view says it: the headline, the changes or problems, the board after."""
    lines = [*(str(p) for p in event.get("problems") or [] if not event.get("accepted")),
             *(str(c) for c in event.get("changes") or [])]
    board = [f"{MARKS.get(str(item.get('status')), '❔')} {item.get('content')}" for item in _items(event.get("after"))]
    return "\n".join([*lines, "", *board]).strip()


APPROACH_NAMES = {"todos": tr("计划是工具（write_todos）", "The plan is a tool (write_todos)"),
                  "fixed": tr("先定计划再执行（课程仓库）", "Plan first, then execute (the course's)")}
COLUMNS = (tr("写法", "Approach"), tr("请求轮数", "Requests"), tr("token：输入 + 输出", "Tokens: prompt + completion"),
           tr("工具调用（失败）", "Tool calls (failed)"), tr("计划：写了 / 退回 / 改了", "Plan: written / refused / changed"),
           tr("一步失败以后", "After a failed step"), tr("结论", "Verdict"))


def tokens_cell(count: dict) -> str:
    """The tokens as the server reported them; the offline model's are estimates, and said to be."""
    cell = f"{count['prompt_tokens']} + {count['completion_tokens']}"
    if count["estimated"]:
        cell += tr("（离线模型的估算）", " (the offline model's estimate)")
    if count["unreported"]:
        cell += tr("（{n} 次回答服务端没报 usage，没算进来）", " ({n} answer(s) without usage from the server, not "
                                                     "counted)").format(n=count["unreported"])
    return cell


def after_failure(count: dict) -> str:
    """What followed a failed call: a replan, steps marked completed all the same, or nothing failed."""
    if not count["failed_calls"]:
        return tr("没有失败的调用", "no call failed")
    said = []
    if count["replanned_after_failure"]:
        said.append(tr("🔁 模型改了计划", "🔁 the model changed its plan"))
    if count["completed_despite_failure"]:
        said.append(tr("照样标成 completed：{items}", "marked completed all the same: {items}").format(
            items=tr("、", ", ").join(map(str, count["completed_despite_failure"]))))
    return tr("；", "; ").join(said) or tr("计划没有改", "the plan did not change")


def plan_cell(approach: str, count: dict) -> str:
    """How often the plan was written, refused and changed; the fixed plan is written once and never changes."""
    if approach == "fixed":
        return tr("规划器写了 1 次，之后不再改", "written once by the planner, never changed")
    return f"{count['plan_writes']} / {count['rejected']} / {count['replans']}"


def comparison(rows: list[dict], note: str = "") -> str:
    """The two runs of one task side by side (runs/planning_backend.compare), as a table."""
    if note:
        return f'<div class="tw-note tw-compare-note">{esc(note)}</div>'
    if not rows:
        return ('<div class="tw-note">' + esc(tr(
            "点「两种写法各跑一遍」：同一个问题、同一个源码、同一个失败设定，两种写法各跑一次，数字并排。",
            "Click «Run both approaches»: the same question, source and failure setting, run once each way, the "
            "counts side by side.")) + "</div>")
    head = "".join(f"<th>{esc(now(column))}</th>" for column in COLUMNS)
    body = []
    for row in rows:
        name = esc(now(APPROACH_NAMES.get(row["approach"], row["approach"])))
        if row["tally"] is None:
            error = row.get("error") or {}
            body.append(f'<tr class="tw-compare-{esc(row["approach"])}"><td>{name}</td><td colspan="6" class="tw-bad">'
                        f"{esc(tr('没有开始：', 'did not start: '))}{esc(error.get('message'))}</td></tr>")
            continue
        count, verdict = row["tally"], row["verdict"] or {}
        cells = [name, esc(count["rounds"]), esc(tokens_cell(count)),
                 esc(f"{count['tool_calls']}（{count['failed_calls']}）"),
                 esc(plan_cell(row["approach"], count)),
                 esc(after_failure(count)), esc(f"{verdict.get('icon', '')} {verdict.get('title', '')}")]
        body.append(f'<tr class="tw-compare-{esc(row["approach"])}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<table class="tw-context-table tw-compare"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
            "</tbody></table>")
