"""What a student typed in one lesson's page that the student's other lesson pages in the same
browser tab need too (a key, the class code), without it ever going back to the browser.

Each lesson is its own page, and each page load its own Gradio session: the session's gr.State
that holds a typed key is gone once the student opens the next lesson. So what was typed also
stays here, on the server, under a random handle; the browser tab keeps only that handle, in
sessionStorage (one browser tab, gone when it closes, never in localStorage). A page loaded in
that tab sends the handle back and its session gets the key again (and, with the class code, is
let in again). The handle is worth nothing on another server or once its entry expired: an entry
lasts as long as an idle session does (access/tab_lifetime.py's TTL) from its last use, and
"清除本会话密钥" deletes the key.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict

from access.tab_lifetime import session_ttl

# A classroom's worth of students, each with a key or two, many times over; the oldest go first.
MAX_ENTRIES = 10_000
HANDLE_LENGTH = 43          # secrets.token_urlsafe(32)
KEY, CLASS_CODE = "key", "class_code"


class TypedKeys:
    def __init__(self, ttl: float | None = None, max_entries: int = MAX_ENTRIES, clock=time.monotonic):
        self._ttl, self.max_entries, self.clock = ttl, max_entries, clock
        # handle -> ({name: value}, last used)
        self._entries: OrderedDict[str, tuple[dict[str, str], float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def ttl(self) -> float:
        if self._ttl is None:
            return session_ttl()
        return self._ttl

    def hold(self, value: str, handle: str = "", name: str = KEY) -> str:
        """Keeps `value` as the tab's `name` under its `handle` (a new handle when it has none that
        lives) and returns the handle; an empty value forgets that name (and the handle, "" then,
        once the tab holds nothing)."""
        now = self.clock()
        with self._lock:
            entry = self._live(handle, now)
            if entry is None:
                if not value:
                    return ""
                handle, entry = secrets.token_urlsafe(32), {}
            if value:
                entry[name] = value
            else:
                entry.pop(name, None)
                if not entry:            # nothing left for the tab: the handle goes too
                    del self._entries[handle]
                    return ""
            self._entries[handle] = (entry, now)
            self._entries.move_to_end(handle)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return handle

    def key(self, handle: str, name: str = KEY) -> str:
        """What the tab with `handle` holds as `name` ("" if nothing, or expired); a use keeps it another TTL."""
        now = self.clock()
        with self._lock:
            entry = self._live(handle, now)
            if entry is None:
                return ""
            self._entries[handle] = (entry, now)
            self._entries.move_to_end(handle)
            return entry.get(name, "")

    def _live(self, handle: str, now: float) -> dict | None:
        if not isinstance(handle, str) or len(handle) != HANDLE_LENGTH:
            return None
        kept = self._entries.get(handle)
        if kept is None:
            return None
        if now - kept[1] >= self.ttl:
            del self._entries[handle]
            return None
        return kept[0]

    def drop(self, handle: str) -> None:
        with self._lock:
            self._entries.pop(handle or "", None)

    def __len__(self) -> int:
        return len(self._entries)


TYPED_KEYS = TypedKeys()
