"""Each lesson's page, /config and /gradio_api/info, made once for a class instead of once per visitor.

For each visitor Gradio copies the whole config (about 770 KB as JSON), shapes the page's copy
(serving/gradio_patches.install_page_config), renders it into the HTML of `/` and gzips it
(serving/page_compression): some tens of ms of a core each time. When a lecture hall opens the
link within half a minute, those copies are the same few answers made hundreds of times over,
while the first lessons of the students who are already in wait behind them.

`PageCache` keeps each finished answer (status, headers, body as sent: compressed when asked)
for `TTL` seconds. Its key is everything that can change the answer:
- the path and the whole query string (a link's ?lang= and ?lesson=…);
- the page's language, resolved the way i18n resolves it for the request (Accept-Language has
  too many spellings to be a key itself);
- what Gradio builds the page's root URL from (the scheme, the root path, and the headers host,
  x-forwarded-host, x-forwarded-proto and x-gradio-server): a made-up Host gets its own entry,
  never another visitor's page;
- whether the request accepts gzip.
Requests that carry cookies or an Authorization header are never cached (this app has no login,
but a proxy in front of it might), nor are answers that set a cookie or are not a plain 200.

Until the sandbox has made the examples' schemas (a few seconds after the start), a page comes
without them: nothing is kept before `ready()` says the page is complete. After that the answers
do not change while the server runs; each is still made again after TTL seconds, so that a
page is never much older than the server's own knowledge. At most `MAX_ENTRIES` answers are
kept, and `MAX_BYTES` in all (a page is about 70 KB gzipped, 500 KB plain): a stranger's made-up
query strings or hosts evict each other, and each one costs what it cost before.
"""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict

from starlette.datastructures import Headers
from starlette.requests import Request

import i18n

from catalogue import LESSONS

# Every lesson's page, and the config and API description the frontend may ask for.
PATHS = frozenset({lesson.address for lesson in LESSONS.values()} | {"/config", "/gradio_api/info"})
TTL = 60.0
MAX_ENTRIES = 64
MAX_BYTES = 8 * 1024 * 1024
ROOT_HEADERS = ("host", "x-forwarded-host", "x-forwarded-proto", "x-gradio-server")
PRIVATE_HEADERS = ("cookie", "authorization")


class PageCache:
    def __init__(self, app, ready=lambda: True, ttl: float = TTL, max_entries: int = MAX_ENTRIES,
                 clock=time.monotonic):
        self.app, self.ready, self.ttl, self.max_entries, self.clock = app, ready, ttl, max_entries, clock
        # key -> (made at, response start message, body)
        self._answers: OrderedDict[tuple, tuple[float, dict, bytes]] = OrderedDict()
        self._size = 0
        self._making: dict[tuple, asyncio.Event] = {}   # key -> set when the answer being made is done

    def key(self, scope) -> tuple | None:
        """The cache key of a request, None for one that is never cached."""
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] not in PATHS or not self.ready():
            return None
        headers = Headers(scope=scope)
        if any(name in headers for name in PRIVATE_HEADERS):
            return None
        return (scope["path"], scope.get("query_string", b""), scope.get("scheme"), scope.get("root_path", ""),
                i18n.of_request(Request(scope)), *(headers.get(name) for name in ROOT_HEADERS),
                "gzip" in headers.get("accept-encoding", ""))

    def _fresh(self, key) -> tuple[dict, bytes] | None:
        kept = self._answers.get(key)
        if kept is None or self.clock() - kept[0] >= self.ttl:
            return None
        self._answers.move_to_end(key)
        return kept[1], kept[2]

    async def __call__(self, scope, receive, send):
        key = self.key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        # Visitors who arrive while the same answer is being made wait for it rather than
        # making it again (a hall opening the link within a second).
        while (answer := self._fresh(key)) is None and key in self._making:
            await self._making[key].wait()
        if answer is not None:
            start, body = answer
            await send(start)
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        self._making[key] = made = asyncio.Event()
        try:
            await self._make(key, scope, receive, send)
        finally:
            del self._making[key]
            made.set()

    async def _make(self, key, scope, receive, send) -> None:
        now = self.clock()
        messages = []

        async def keep(message):
            messages.append(message)
            await send(message)

        await self.app(scope, receive, keep)
        if not messages or messages[0]["type"] != "http.response.start" or messages[0]["status"] != 200:
            return
        if "set-cookie" in Headers(raw=messages[0].get("headers", [])):
            return
        if not all(m["type"] == "http.response.body" for m in messages[1:]):
            return
        body = b"".join(m.get("body", b"") for m in messages[1:])
        if len(body) > MAX_BYTES:
            return
        old = self._answers.pop(key, None)
        self._size += len(body) - (len(old[2]) if old else 0)
        self._answers[key] = (now, messages[0], body)
        while len(self._answers) > self.max_entries or self._size > MAX_BYTES:
            _, (_, _, dropped) = self._answers.popitem(last=False)
            self._size -= len(dropped)
