"""8.1 First call's part of the timeline: the request body as sent (raw, and as SDK code), and how the reply
arrived: each streamed fragment on a time axis, the assembled calls and finish_reason (first_call_view)."""
from __future__ import annotations

from lessons.first_call import first_call_view
from lessons.timeline import Round, register

CSS = first_call_view.CSS


@register("body")
def draw_body(request: dict, round_: Round) -> str:
    return first_call_view.render_request(request)


@register("assembled")
def draw_arrival(event: dict, round_: Round) -> str:
    """Drawn once a round (the timeline passes its last timed event), from all of the round's."""
    return first_call_view.render_arrival(round_.events)
