"""8.8 Context's part of the timeline: the context shrunk before a request, as the step ahead of it."""
from __future__ import annotations

from lessons import context_view
from lessons.timeline import CHAT, Conversation, Round, register


@register("context")
def draw_context(event: dict, round_: Round) -> str:
    return f'<div class="tw-step">{context_view.render(event)}</div>'


@register("context", CHAT)
def chat_context(event: dict, conversation: Conversation) -> list[dict]:
    return [{"role": "assistant", "content": "\n".join(event.get("notes") or []) or context_view.line(event),
             "metadata": {"title": "📦 " + context_view.line(event), "status": "done"}}]
