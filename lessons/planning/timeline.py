"""8.3 Planning's part of the timeline: the plan board after each change (or a change the rules refused)."""
from __future__ import annotations

from lessons.planning import plan_view
from lessons.html_bits import cut
from lessons.timeline import CHAT, Conversation, Round, register


@register("plan")
def draw_plan(event: dict, round_: Round) -> str:
    return plan_view.render(event)


@register("plan", CHAT)
def chat_plan(event: dict, conversation: Conversation) -> list[dict]:
    return [{"role": "assistant", "content": cut(plan_view.text(event), 3000),
             "metadata": {"title": plan_view.headline_of(event), "status": "done"}}]
