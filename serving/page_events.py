"""What every event handler of the page shares.

PRIVATE: the api_visibility of the page's own events. The named endpoints a script may call
are api.py's (and workspace_api.py's); every other event (a button, a dropdown, the browser's
memory) exists for the page alone, so it stays out of "Use via API" and gradio_client, and its
name cannot take one of the named endpoints'.

SILENT: the settings of a page event that only moves data in the page (a script, a mark, a
write to the browser's storage): private, not queued behind runs, with no progress drawn.

session_of: the browser tab's session id (Gradio's session_hash), None when the request has
none (a direct call in a test, an API client without a session).
"""
from __future__ import annotations

from typing import Any

PRIVATE = "private"
SILENT = dict(queue=False, show_progress="hidden", api_visibility=PRIVATE)


def session_of(request: Any) -> str | None:
    return getattr(request, "session_hash", None) or None
