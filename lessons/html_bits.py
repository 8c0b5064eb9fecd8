"""Small HTML pieces the run views are written with: escaped text, a cut-off block, a fold,
a time. Every view escapes with esc(): what it shows comes from students and models."""
from __future__ import annotations

import html
import json
from typing import Any

from i18n import tr

SHOW_LIMIT = 12_000  # characters per block; more would only slow the page down


def esc(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def cut(text: str, limit: int = SHOW_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + "\n" + tr("…（已截断，共 {n} 个字符）", "… (cut; {n} characters in all)").format(n=len(text))


def to_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(value)


def pre(text: Any) -> str:
    return f"<pre>{esc(cut(text if isinstance(text, str) else to_json(text)))}</pre>"


def fold(title: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{esc(title)}</summary>{body}</details>"


def seconds(ms: Any) -> str:
    try:
        return f"{float(ms) / 1000:.2f} s"
    except (TypeError, ValueError):
        return "?"


def milliseconds(ms: Any) -> str:
    """A tool call's time (its duration_ms, measured by the loop), written the same way wherever
    it is shown: a call of 0.2 ms is not "0.00 s"."""
    try:
        ms = float(ms)
    except (TypeError, ValueError):
        return "?"
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"
