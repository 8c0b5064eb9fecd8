"""Who may use the keys configured on the server, and how much.

One policy per app (per set of server secrets): the class code, the meter, and caps on
each request made with a server key. `metered(client, ...)` wraps an llm_clients client
so that every model request (each round of a loop is one) is charged before it is sent;
loops need no change.

Limits come from the server's environment (or, for tests, from the secrets mapping
handed to the app): TOOL_WORKSHOP_KEY_REQUESTS_PER_SESSION / _PER_IP / _PER_DAY,
TOOL_WORKSHOP_KEY_MAX_TOKENS, TOOL_WORKSHOP_KEY_MAX_QUESTION_CHARS.
"""
from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping

from i18n import tr
from llm_clients import LLMError

from access.class_code import CLASS_CODE_ENV, ClassCode, CodeRefused
from access.key_meter import KeyMeter, LimitReached, Limits

LIMIT_ENV = {"per_session": "TOOL_WORKSHOP_KEY_REQUESTS_PER_SESSION",
             "per_address": "TOOL_WORKSHOP_KEY_REQUESTS_PER_IP",
             "per_day": "TOOL_WORKSHOP_KEY_REQUESTS_PER_DAY"}
MAX_TOKENS_ENV = "TOOL_WORKSHOP_KEY_MAX_TOKENS"
MAX_QUESTION_ENV = "TOOL_WORKSHOP_KEY_MAX_QUESTION_CHARS"
DEFAULT_MAX_TOKENS = 1024
DEFAULT_MAX_QUESTION_CHARS = 2000
# The id a browser tab keeps in sessionStorage (memory/browser_memory.py READ_JS): base-36 time and randomness.
TAB_ID = re.compile(r"[0-9a-z]{6,32}")
MAX_TABS = 10_000           # pages remembered as a tab's; the longest unused go first
TAB_PREFIX = "tab:"         # a count kept for a browser tab, not for one page's session
NEEDS_CODE = ("服务器的密钥只给输入了课堂口令的同学使用：请在「模型设置」里输入老师给的课堂口令，"
              "或者填写你自己的密钥，或改用「离线演示模型」。")


def _number(name: str, default: int, secrets: Mapping[str, str], environ: Mapping[str, str]) -> int:
    text = str(secrets.get(name) or environ.get(name) or "").strip()
    try:
        return max(0, int(text)) if text else default
    except ValueError:
        return default


def session_of(request: Any) -> str | None:
    return getattr(request, "session_hash", None) or None


def holder(counted: str | None) -> tuple[str, str]:
    """Whose hourly count `counted` (ServerKeyPolicy.counted_as) is, as a sentence's subject: (Chinese, English)."""
    if counted and counted.startswith(TAB_PREFIX):
        return "这个浏览器标签页", "This browser tab"
    return "本会话", "This session"


def client_address(request: Any) -> str | None:
    """The caller's address. On a Space the app sits behind the Space's proxy, which
    appends the address it saw to x-forwarded-for: only that last entry is trusted
    (anything before it was written by the client). Elsewhere: the peer address."""
    if request is None:
        return None
    if os.environ.get("SPACE_ID") or os.environ.get("MODELSCOPE_ENVIRONMENT") == "studio":
        headers = getattr(request, "headers", None) or {}
        entries = [e.strip() for e in (headers.get("x-forwarded-for") or "").split(",") if e.strip()]
        if entries:
            return entries[-1]
    return getattr(getattr(request, "client", None), "host", None)


@dataclass
class ServerKeyPolicy:
    class_code: ClassCode
    meter: KeyMeter
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_question_chars: int = DEFAULT_MAX_QUESTION_CHARS
    # Each lesson page is a session of its own: session id -> the browser tab it was loaded in.
    _tabs: OrderedDict = field(default_factory=OrderedDict, init=False, repr=False)
    _tabs_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def from_settings(cls, secrets: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> "ServerKeyPolicy":
        defaults = Limits()
        limits = Limits(**{field: _number(env, getattr(defaults, field), secrets, environ)
                           for field, env in LIMIT_ENV.items()})
        return cls(class_code=ClassCode((secrets.get(CLASS_CODE_ENV) or "").strip()),
                   meter=KeyMeter(limits),
                   max_tokens=_number(MAX_TOKENS_ENV, DEFAULT_MAX_TOKENS, secrets, environ) or DEFAULT_MAX_TOKENS,
                   max_question_chars=_number(MAX_QUESTION_ENV, DEFAULT_MAX_QUESTION_CHARS, secrets, environ)
                   or DEFAULT_MAX_QUESTION_CHARS)

    def enter_code(self, typed: str, request: Any) -> None:
        """The page's class code field; raises CodeRefused."""
        self.class_code.check(typed, session_of(request), client_address(request))

    def admit(self, request: Any, typed_code: str | None = None) -> None:
        """May this caller use a server key at all? Raises CodeRefused before any request."""
        if not self.class_code.required:
            return
        if (typed_code or "").strip():
            self.enter_code(typed_code, request)
        elif not self.class_code.unlocked(session_of(request)):
            raise CodeRefused(NEEDS_CODE)

    def join_tab(self, tab: Any, request: Any) -> None:
        """A lesson page loaded in the browser tab `tab`: its requests are counted with the tab's other
        pages, so opening the next lesson does not start a new hourly count. The id comes from the
        browser, which could send a new one as easily as it reloads: the address and the day still count."""
        session = session_of(request)
        if not session or not isinstance(tab, str) or not TAB_ID.fullmatch(tab):
            return
        with self._tabs_lock:
            self._tabs[session] = tab
            self._tabs.move_to_end(session)
            while len(self._tabs) > MAX_TABS:
                self._tabs.popitem(last=False)

    def counted_as(self, request: Any) -> str | None:
        """Whose hourly count a request goes to: the page's browser tab, or the session when its tab is unknown (an API call)."""
        session = session_of(request)
        with self._tabs_lock:
            tab = self._tabs.get(session)
            if tab:                     # a page in use is the last to be forgotten, however early it joined
                self._tabs.move_to_end(session)
        return f"{TAB_PREFIX}{tab}" if tab else session

    def metered(self, client: Any, request: Any) -> "MeteredClient":
        return MeteredClient(client, self, self.counted_as(request), client_address(request))

    def usage_line(self, request: Any) -> str:
        limits, counted = self.meter.limits, self.counted_as(request)
        line = tr("{who}已用 {used}/{n} 次服务器密钥请求（每个网络地址每小时 {address} 次，全站每天 {day} 次）。",
                  "{who} has used {used}/{n} server-key requests ({address} an hour per network address, "
                  "{day} a day for the whole site).").format(
            who=tr(*holder(counted)), used=self.meter.used(counted), n=limits.per_session,
            address=limits.per_address, day=limits.per_day)
        if self.class_code.required and not self.class_code.unlocked(session_of(request)):
            line += tr(" 使用服务器密钥需要先输入课堂口令。", " The server key needs the class code first.")
        return line


class MeteredClient:
    """Same interface as an llm_clients client (`complete`, `stream`, `model`, …); each
    request is checked (question length) and charged to the meter before it is sent,
    and asks for at most `max_tokens`."""

    def __init__(self, inner: Any, policy: ServerKeyPolicy, session: str | None, address: str | None):
        self.inner, self.policy, self.session, self.address = inner, policy, session, address
        build = inner.request_body

        def capped_body(*args, **kwargs):
            body = build(*args, **kwargs)
            body["max_tokens"] = min(int(body.get("max_tokens") or policy.max_tokens), policy.max_tokens)
            return body

        inner.request_body = capped_body

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _charge(self, messages: list) -> None:
        question = next((m.get("content") for m in messages if m.get("role") == "user"), "") or ""
        if isinstance(question, str) and len(question) > self.policy.max_question_chars:
            raise LLMError("question_too_long", f"用服务器密钥时问题最长 {self.policy.max_question_chars} 个字，"
                                                f"这个问题有 {len(question)} 个字：请缩短，或改用自己的密钥。")
        try:
            self.policy.meter.charge(self.session, self.address, holder=holder(self.session)[0])
        except LimitReached as exc:
            raise LLMError(exc.code, exc.message) from None

    def complete(self, messages, *args, **kwargs):
        self._charge(messages)
        return self.inner.complete(messages, *args, **kwargs)

    def stream(self, messages, *args, **kwargs):
        self._charge(messages)
        yield from self.inner.stream(messages, *args, **kwargs)


_policies: dict = {}
_policies_lock = threading.Lock()


def policy_for(secrets: Mapping[str, str]) -> ServerKeyPolicy:
    """The one policy of the app serving with these secrets (the page and the named
    endpoints share it, so they share the meter)."""
    key = tuple(sorted((str(k), str(v)) for k, v in secrets.items()))
    with _policies_lock:
        if key not in _policies:
            _policies[key] = ServerKeyPolicy.from_settings(secrets)
        return _policies[key]


__all__ = ["ServerKeyPolicy", "MeteredClient", "policy_for", "client_address", "session_of", "CodeRefused",
           "LimitReached", "NEEDS_CODE"]
