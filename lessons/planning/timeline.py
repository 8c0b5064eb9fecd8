"""8.3 Planning's part of the timeline: the plan board after each change (or a change the rules refused)."""
from __future__ import annotations

from lessons.planning import plan_view
from lessons.html_bits import cut
from i18n import tr
from lessons.timeline import CHAT, SUMMARY, Conversation, Round, Said, register

CSS = plan_view.CSS


@register("plan")
def draw_plan(event: dict, round_: Round) -> str:
    return plan_view.render(event)


@register("plan", CHAT)
def chat_plan(event: dict, conversation: Conversation) -> list[dict]:
    return [{"role": "assistant", "content": cut(plan_view.text(event), 3000),
             "metadata": {"title": plan_view.headline_of(event), "status": "done"}}]


@register("plan", SUMMARY)
def plan_said(round_: Round) -> Said | None:
    """A plan the rules refused, or one the model rewrote, is news on the round's line."""
    plans = round_.of("plan")
    meta = ([tr("计划被退回", "plan refused")] if any(not e.get("accepted") for e in plans) else []) + \
        ([tr("🔁 改了计划", "🔁 replanned")] if any(e.get("replanned") for e in plans) else [])
    return Said(meta=tuple(meta)) if meta else None
