"""How long the server remembers an idle browser tab, and how many tabs at most.

Everything a tab leaves on the server lives this long from its last use: its Gradio state
and workspace (serving/expiry.py forgets them) and a key it typed (typed_keys.py). Both read it
here, so a teacher's TOOL_WORKSHOP_SESSION_TTL means the same for each.
"""
from __future__ import annotations

import os

DEFAULT_TTL_SECONDS = 2 * 3600
DEFAULT_MAX_SESSIONS = 500


def _positive(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return float(default)
    return value if value > 0 else float(default)


def session_ttl() -> float:
    """Seconds an idle tab is remembered (TOOL_WORKSHOP_SESSION_TTL)."""
    return _positive("TOOL_WORKSHOP_SESSION_TTL", DEFAULT_TTL_SECONDS)


def max_sessions() -> int:
    """Tabs remembered at most; past it the least recently used is forgotten first."""
    return int(_positive("TOOL_WORKSHOP_MAX_SESSIONS", DEFAULT_MAX_SESSIONS))
