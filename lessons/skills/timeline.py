"""8.9 Skills' part of the timeline: the skills a run starts with, as the step ahead of its first request."""
from __future__ import annotations

from i18n import tr
from lessons.skills import skills_view
from lessons.timeline import SUMMARY, Round, Said, register


@register("skills")
def draw_skills(event: dict, round_: Round) -> str:
    return f'<div class="tw-step">{skills_view.render(event)}</div>'


@register("skills", SUMMARY)
def skills_said(round_: Round) -> Said | None:
    return Said(title=tr("发出之前：技能", "Before sending: the skills")) if round_.of("skills") else None
