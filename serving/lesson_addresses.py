"""Older links named the lesson in the query (`/?lesson=function_calling&example=…`), from when
every lesson was a tab of one page. Each lesson now has its own page: such a link is sent on to
that page's address with the rest of its query (`/function-calling?example=…`), so links handed
out before keep opening what they opened. A `lesson` that names no lesson is left to the page,
which says so in its link banner (lessons/deep_links.py).

An API client (gradio_client, or anything reading `/config` without naming a page) gets the page at
the root (catalogue.ROOT), which carries the named API (endpoints/api.py): Gradio's answer for no page holds
every lesson's components and events, five times as much JSON for each client to read."""
from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode

from catalogue import LESSONS, ROOT

ADDRESSES = frozenset(lesson.address for lesson in LESSONS.values())


def forwarded(path: str, query: str) -> str | None:
    """Where a request for `path?query` belongs, relative to the app's root, or None: it is already there."""
    if path not in ADDRESSES or "lesson=" not in query:
        return None
    pairs = parse_qsl(query, keep_blank_values=True)
    lesson = next((value for name, value in pairs if name == "lesson"), None)
    if lesson not in LESSONS:
        return None
    rest = [(name, value) for name, value in pairs if name != "lesson"]
    # Every page sits right under the root, so a relative address works behind any proxy prefix.
    return "./" + LESSONS[lesson].path + ("?" + urlencode(rest, quote_via=quote) if rest else "")


CONFIG_PATHS = ("/config", "/config/")


def with_page(path: str, query: bytes) -> bytes:
    """The query of a request for `path`: a config request that names no page names the root page's."""
    if path not in CONFIG_PATHS or any(name == "page" for name, _ in parse_qsl(query.decode("latin-1"),
                                                                              keep_blank_values=True)):
        return query
    return (query + b"&" if query else b"") + urlencode({"page": LESSONS[ROOT].path}).encode("ascii")


class LessonAddresses:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            target = forwarded(scope["path"], scope.get("query_string", b"").decode("latin-1"))
            if target is not None:
                await send({"type": "http.response.start", "status": 307,
                            "headers": [(b"location", target.encode("latin-1")), (b"content-length", b"0"),
                                        (b"cache-control", b"no-store")]})
                await send({"type": "http.response.body", "body": b""})
                return
            query = scope.get("query_string", b"")
            paged = with_page(scope["path"], query)
            if paged != query:
                scope = {**scope, "query_string": paged}
        await self.app(scope, receive, send)
