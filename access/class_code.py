"""The class code: with `TOOL_WORKSHOP_CLASS_CODE` set, the server's keys serve only a
browser session that entered the code, or an API call that passes it.

Codes are compared in constant time. Wrong codes are slowed down per session and per
client address: after each wrong code the next try is accepted only after a pause that
doubles (1 s, 2 s, 4 s … up to 5 minutes); a try during the pause is refused without
being compared, so guessing by script gets nowhere. A right code clears the pauses.
A whole classroom often shares one public address (the school's NAT): the address pause
starts only after ADDRESS_GRACE wrong codes, so one student's typos do not lock out the
others, while a script that opens a fresh session for every guess still slows down.
"""
from __future__ import annotations

import hmac
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

CLASS_CODE_ENV = "TOOL_WORKSHOP_CLASS_CODE"
FIRST_PAUSE_S = 1.0
MAX_PAUSE_S = 300.0
FORGET_AFTER_S = 24 * 3600.0
ADDRESS_GRACE = 20          # wrong codes from one address before it pauses too


class CodeRefused(ValueError):
    """str() is the Chinese message for the student."""


@dataclass
class _Failures:
    count: int = 0
    next_try: float = 0.0
    last: float = 0.0


@dataclass
class ClassCode:
    code: str = field(default="", repr=False)
    clock: Callable[[], float] = time.monotonic
    _failures: dict = field(default_factory=dict, init=False, repr=False)   # ("session"|"address", id) -> _Failures
    _unlocked: dict = field(default_factory=dict, init=False, repr=False)   # session id -> when
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def required(self) -> bool:
        return bool(self.code)

    def check(self, typed: str, session: str | None, address: str | None) -> None:
        """Accepts the code or raises CodeRefused (wrong, or asked again too soon)."""
        now = self.clock()
        keys = [("session", session), ("address", address)]
        keys = [k for k in keys if k[1]]
        with self._lock:
            self._forget_old(now)
            waits = [self._failures[k].next_try - now for k in keys if k in self._failures]
            wait = max(waits, default=0.0)
            if wait > 0:
                raise CodeRefused(f"课堂口令错误次数太多，请 {math.ceil(wait)} 秒后再试。")
            if hmac.compare_digest((typed or "").strip().encode(), self.code.encode()):
                for key in keys:
                    self._failures.pop(key, None)
                if session:
                    self._unlocked[session] = now
                return
            pauses = []
            for key in keys:
                record = self._failures.setdefault(key, _Failures())
                record.count += 1
                record.last = now
                over = record.count - (ADDRESS_GRACE if key[0] == "address" else 0)
                if over <= 0:
                    continue
                pause = min(MAX_PAUSE_S, FIRST_PAUSE_S * 2 ** (over - 1))
                record.next_try = now + pause
                pauses.append(pause)
        raise CodeRefused(f"课堂口令不对（请向老师确认）。{math.ceil(max(pauses, default=FIRST_PAUSE_S))} 秒后可以再试。")

    def unlocked(self, session: str | None) -> bool:
        with self._lock:
            return bool(session) and session in self._unlocked

    def _forget_old(self, now: float) -> None:
        for key in [k for k, r in self._failures.items() if now - r.last > FORGET_AFTER_S]:
            del self._failures[key]
        for session in [s for s, when in self._unlocked.items() if now - when > FORGET_AFTER_S]:
            del self._unlocked[session]
