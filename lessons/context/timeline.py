"""8.8 Context's part of the timeline: the context shrunk before a request, as the step ahead of it."""
from __future__ import annotations

from lessons import context_view
from i18n import tr
from lessons.timeline import CHAT, SUMMARY, Conversation, Round, Said, register


@register("context")
def draw_context(event: dict, round_: Round) -> str:
    return f'<div class="tw-step">{context_view.render(event)}</div>'


@register("context", CHAT)
def chat_context(event: dict, conversation: Conversation) -> list[dict]:
    return [{"role": "assistant", "content": "\n".join(event.get("notes") or []) or context_view.line(event),
             "metadata": {"title": "📦 " + context_view.line(event), "status": "done"}}]


@register("context", SUMMARY)
def context_said(round_: Round) -> Said | None:
    """A round that shrank the context is about it: titled so, its tokens before and after, and open."""
    shrunk = round_.of("context")
    if not shrunk:
        return None
    tokens = tr("{before} → {after} 个 token", "{before} → {after} tokens").format(
        before=shrunk[0].get("before_tokens"), after=shrunk[0].get("after_tokens"))
    return Said(meta=(tokens,), title=tr("发出之前：收拾上下文", "Before sending: the context shrunk"), keeps_open=True)
