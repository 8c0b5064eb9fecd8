"""8.10 Sub-agents' part of the timeline: a sub-agent's whole run, folded inside the task call that started it.

Its events carry "child" (code/subagents.py); the renderer is registered under that field's name and
draws from the task call, the one event that knows which child run is its own."""
from __future__ import annotations

from i18n import tr
from lessons import token_count
from lessons.html_bits import esc
from lessons.timeline import SUMMARY, Round, Said, child_of, register, render_protocol


@register("child")
def draw_child(call: dict, round_: Round) -> str:
    return render_child(child_of(round_.children, call), round_.results.get(call.get("id")))


def render_child(events: list[dict], result: dict | None) -> str:
    """A sub-agent's whole run, folded under the task call that started it: its own timeline, and what
    it cost against what it handed back (the parent's context was spared the difference). Only the
    requests the model answered are counted: a request the budget stopped first cost nothing."""
    events = [{k: v for k, v in e.items() if k not in ("child", "child_turn")} for e in events]   # a run of its own
    answered = {e.get("turn") for e in events if e.get("type") == "response"}
    rows = [row for row in token_count.per_turn(events) if row["turn"] in answered]
    used = None if any(row["input"] is None for row in rows) else sum(row["input"] for row in rows)
    calls = sum(1 for e in events if e.get("type") == "tool_call")
    title = tr("🧒 子代理的运行：模型答了 {rounds} 轮，{calls} 次工具调用",
               "🧒 The sub-agent's run: the model answered {rounds} round(s), {calls} tool call(s)").format(
                   rounds=len(answered), calls=calls)
    if used is not None:
        title += tr("，它的请求共 {used} 个 token（分词器计数）", ", {used} tokens in its requests (tokenizer count)"
                    ).format(used=used)
    if result is None:
        title += tr("；⏳ 还在做", "; ⏳ still at it")
    elif not result.get("ok"):
        title += tr("；主代理收到的是一条失败结果", "; the parent got a failed result")
    else:
        back = token_count.count(str(result.get("content") or ""))
        if back is not None:
            title += tr("；交回给主代理的只有 {back} 个 token", "; only {back} tokens went back to the parent").format(
                back=back)
    return (f'<details class="tw-child"><summary>{esc(title)}</summary>'
            f'{render_protocol(events, "function_calling")}</details>')


@register("child", SUMMARY)
def child_said(round_: Round) -> Said | None:
    """A round that started a sub-agent stays open: the sub-agent's run is the lesson."""
    return Said(keeps_open=True) if any(child_of(round_.children, c) for c in round_.calls) else None
