"""8.9 Skills' part of the timeline: the skills a run starts with, as the step ahead of its first request."""
from __future__ import annotations

from lessons.skills import skills_view
from lessons.timeline import Round, register


@register("skills")
def draw_skills(event: dict, round_: Round) -> str:
    return f'<div class="tw-step">{skills_view.render(event)}</div>'
