"""计划与执行 (8.3): the same task run both ways, side by side. code/planning.py's tally() counts
each run (rounds, tokens as the server reported them or flagged as estimates, calls that failed,
what followed a failure); the headline judges each as the page would."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import examples_weather
from planning import MISTAKE_ASKS, tally

from runs import backend, headline, starters
from access.clients import Settings

APPROACHES = ("todos", "fixed")     # write_todos (the plan is a tool) / the course's plan-then-execute
# The lesson's task: code/planning.py's, on the weather tools alone (a source in the editor is one example set).
TRIP = "出差前准备：查北京今天的天气，再查上海未来3天的天气预报"
# The preset questions: the task, and the task asking the offline model for each mistake the tool refuses.
QUESTIONS = (TRIP, TRIP + MISTAKE_ASKS["two_in_progress"], TRIP + MISTAKE_ASKS["unchecked"])


def weather_source() -> str:
    """The example set «天气» as the editor starts it: the task's tools, for a caller that sends no source."""
    return Path(examples_weather.__file__).read_text(encoding="utf-8")


def compare(source: str, question: str, settings: Settings, broken: str = "", *, session_key: str = "",
            secrets: Mapping[str, str] | None = None, session_id: str | None = None, request: Any = None,
            class_code: str = "", purpose: dict | None = None) -> list[dict]:
    """One run per approach, to the end: [{"approach", "tally", "verdict", "error"}], each judged against
    `purpose` (runs/purposes.py's event) as the page judges a run. A run that could not start (a broken
    source, no key) has its error and no tally."""
    rows = []
    for approach in APPROACHES:
        run = backend.run_to_end(backend.start_run(
            starters.planning, source, question, settings, {"approach": approach, "broken": broken or ""},
            session_key=session_key, secrets=secrets, session_id=session_id, request=request,
            class_code=class_code, purpose=purpose))
        if run.error is not None:
            rows.append({"approach": approach, "tally": None, "verdict": None, "error": run.error})
            continue
        events = [e for e in run.events if e.get("type") != "delta"]
        rows.append({"approach": approach, "tally": tally(events), "verdict": headline.verdict(events),
                     "error": None})
    return rows
