"""A key typed in one lesson's page, usable from the student's other lesson pages in the same
browser tab, without the key ever going back to the browser.

Each lesson is its own page, and each page load its own Gradio session: the session's gr.State
that holds a typed key is gone once the student opens the next lesson. The key therefore also
stays here, on the server, under a random handle; the browser tab keeps only that handle, in
sessionStorage (one browser tab, gone when it closes, never in localStorage). A page loaded in
that tab sends the handle back and its session gets the key again. The handle is worth nothing
on another server or after its entry expired: an entry lasts as long as an idle session does
(serving/expiry.py's TTL) from its last use, and "清除本会话密钥" deletes it.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict

# A classroom's worth of students, each with a key or two, many times over; the oldest go first.
MAX_ENTRIES = 10_000
HANDLE_LENGTH = 43          # secrets.token_urlsafe(32)


class TypedKeys:
    def __init__(self, ttl: float | None = None, max_entries: int = MAX_ENTRIES, clock=time.monotonic):
        self._ttl, self.max_entries, self.clock = ttl, max_entries, clock
        self._entries: OrderedDict[str, tuple[str, float]] = OrderedDict()   # handle -> (key, last used)
        self._lock = threading.Lock()

    @property
    def ttl(self) -> float:
        if self._ttl is None:
            from serving.expiry import session_ttl
            return session_ttl()
        return self._ttl

    def hold(self, key: str, handle: str = "") -> str:
        """Keeps `key` and returns its handle (a new one: an older handle of the tab is dropped)."""
        new = secrets.token_urlsafe(32)
        with self._lock:
            self._entries.pop(handle or "", None)
            self._entries[new] = (key, self.clock())
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return new

    def key(self, handle: str) -> str:
        """The key kept under `handle` ("" if none, or expired); a use keeps it another TTL."""
        if not isinstance(handle, str) or len(handle) != HANDLE_LENGTH:
            return ""
        now = self.clock()
        with self._lock:
            entry = self._entries.get(handle)
            if entry is None:
                return ""
            if now - entry[1] >= self.ttl:
                del self._entries[handle]
                return ""
            self._entries[handle] = (entry[0], now)
            self._entries.move_to_end(handle)
            return entry[0]

    def drop(self, handle: str) -> None:
        with self._lock:
            self._entries.pop(handle or "", None)

    def __len__(self) -> int:
        return len(self._entries)


TYPED_KEYS = TypedKeys()
