"""A meter on the server's keys: model requests counted before they are sent, in sliding
windows per browser session (hour), per client address (hour) and for the whole app
(day). A new session starts its own hourly count but not a new address or day count."""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

HOUR = 3600.0
DAY = 24 * HOUR


class LimitReached(Exception):
    """str() says which limit and when it reopens, in Chinese."""

    code = "key_limit"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Limits:
    per_session: int = 60
    per_address: int = 120
    per_day: int = 2000


def _reopens_in(seconds: float) -> str:
    minutes = math.ceil(max(seconds, 1.0) / 60)
    return f"约 {minutes} 分钟后" if minutes < 120 else f"约 {math.ceil(minutes / 60)} 小时后"


@dataclass
class KeyMeter:
    limits: Limits = field(default_factory=Limits)
    clock: Callable[[], float] = time.monotonic
    _windows: dict = field(default_factory=dict, init=False, repr=False)   # (kind, id) -> deque of times
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _window(self, key, span: float, now: float) -> deque:
        times = self._windows.setdefault(key, deque())
        while times and now - times[0] >= span:
            times.popleft()
        return times

    def charge(self, session: str | None, address: str | None, holder: str = "本会话") -> None:
        """Counts one request, or raises LimitReached without counting it. `holder` names whose
        hourly count `session` is (a browser tab's pages share one)."""
        now = self.clock()
        checks = [(("day", ""), DAY, self.limits.per_day,
                   "服务器密钥的全站额度（每天 {n} 次）已用完"),
                  (("address", address or "?"), HOUR, self.limits.per_address,
                   "你所在网络地址的服务器密钥额度（每小时 {n} 次）已用完"),
                  (("session", session or "?"), HOUR, self.limits.per_session,
                   holder + "的服务器密钥额度（每小时 {n} 次）已用完")]
        with self._lock:
            self._prune(now)
            windows = []
            for key, span, limit, text in checks:
                times = self._window(key, span, now)
                if len(times) >= limit:
                    reopens = span - (now - times[len(times) - limit]) if limit else span
                    raise LimitReached(f"{text.format(n=limit)}，{_reopens_in(reopens)}恢复。"
                                       "现在仍可以用「离线演示模型」，或在「模型设置」里填写你自己的密钥。")
                windows.append(times)
            for times in windows:
                times.append(now)

    def used(self, session: str | None) -> int:
        with self._lock:
            return len(self._window(("session", session or "?"), HOUR, self.clock()))

    def _prune(self, now: float) -> None:
        stale = [k for k, times in self._windows.items() if k[0] != "day" and (not times or now - times[-1] >= HOUR)]
        for key in stale:
            del self._windows[key]
