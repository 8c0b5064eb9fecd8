"""Compressed answers for the page itself: its HTML, /config, /gradio_api/info and JSON replies.

Gradio already compresses its static assets (brotli, or gzip as a fallback), but only for paths
that end in a text file's extension (.js, .css, .json, ...). The page (`/`, with the whole
config and the API description inlined: about 555 KB for this app) and every other answer
without such an extension went out uncompressed, even when the browser asked for gzip.

`PageCompression` gzips exactly those, when the request accepts gzip, and leaves alone:
- paths Gradio's own brotli layer handles (the assets keep their brotli encoding);
- event streams (`text/event-stream`: the queue's results and the heartbeat must arrive event
  by event, not once a compressor's buffer fills) and binary types (Starlette's defaults);
- answers that already carry a Content-Encoding, partial (206) answers, and small answers.

`AssetCache` keeps each frontend asset brotli-compressed once, instead of once per visitor.
"""
from __future__ import annotations

import threading

import anyio.to_thread
import brotli
from gradio.brotli_middleware import BrotliMiddleware
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware

# Level 6 compresses the page to within a few percent of level 9 in about half the time: the
# page is compressed again for each student who opens it.
COMPRESS_LEVEL = 6
MINIMUM_SIZE = 1024


class PageCompression(GZipMiddleware):
    def __init__(self, app, minimum_size: int = MINIMUM_SIZE, compresslevel: int = COMPRESS_LEVEL):
        super().__init__(app, minimum_size=minimum_size, compresslevel=compresslevel)
        # Gradio's own rule for which paths its brotli layer takes (it sits outside this one).
        self._gradio_compresses = BrotliMiddleware(app)._is_compressible_file_type

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self._gradio_compresses(scope):
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


async def plain_answer(app, scope, receive) -> tuple[list, dict | None, bytes | None]:
    """Runs `app` for `scope` to its end: (every message it sent, its start, its whole body), with
    start and body None unless the answer is a plain 200 (not encoded, its body sent as body
    messages rather than a file by path)."""
    messages = []

    async def keep(message):
        messages.append(message)

    await app(scope, receive, keep)
    start = messages[0] if messages and messages[0]["type"] == "http.response.start" else None
    if (start is None or start["status"] != 200 or "content-encoding" in Headers(raw=start.get("headers", []))
            or not all(m["type"] == "http.response.body" for m in messages[1:])):
        return messages, None, None
    return messages, start, b"".join(m.get("body", b"") for m in messages[1:])


# The frontend's assets (/assets/<name>-<hash>.js|css) never change while the server runs, but
# Gradio brotli-compresses each again for every visitor: about 2 MB of script per page, some
# tenths of a second of a core on a busy host, every time a student opens the tab. Each is
# compressed once here, a little harder than Gradio does (quality 5 against 4: a few percent
# smaller, about as fast), and the same bytes served to everyone after.
ASSET_PREFIX = "/assets/"
ASSET_QUALITY = 5
ASSET_CACHE_BYTES = 16 * 1024 * 1024     # compressed; the page uses about 1 MB of them


class AssetCache:
    def __init__(self, app, quality: int = ASSET_QUALITY, limit: int = ASSET_CACHE_BYTES):
        self.app, self.quality, self.limit = app, quality, limit
        self._gradio_compresses = BrotliMiddleware(app)._is_compressible_file_type
        self._answers: dict[str, tuple[list, bytes]] = {}   # path -> (response headers, brotli body)
        self._size = 0
        self._lock = threading.Lock()

    def _applies(self, scope) -> bool:
        if scope["type"] != "http" or scope["method"] != "GET" or not scope["path"].startswith(ASSET_PREFIX):
            return False
        headers = Headers(scope=scope)
        # Conditional and range requests get Gradio's own answer (304, 206).
        if any(name in headers for name in ("if-none-match", "if-modified-since", "range")):
            return False
        return "br" in headers.get("accept-encoding", "") and self._gradio_compresses(scope)

    async def __call__(self, scope, receive, send):
        if not self._applies(scope):
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        cached = self._answers.get(path)
        if cached is None:
            messages, start, body = await plain_answer(self.app, scope, receive)
            if start is None:                     # an error, a redirect, a file sent by path: as it came
                for message in messages:
                    await send(message)
                return
            compressed = await anyio.to_thread.run_sync(
                lambda: brotli.compress(body, quality=self.quality, mode=brotli.MODE_TEXT))
            headers = MutableHeaders(raw=list(start.get("headers", [])))
            headers["content-encoding"] = "br"
            headers["content-length"] = str(len(compressed))
            headers.add_vary_header("Accept-Encoding")
            cached = (headers.raw, compressed)
            with self._lock:
                if path not in self._answers and self._size + len(compressed) <= self.limit:
                    self._answers[path] = cached
                    self._size += len(compressed)
        headers, body = cached
        await send({"type": "http.response.start", "status": 200, "headers": list(headers)})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def app_kwargs(keep_pages_when=lambda: True) -> dict:
    """For `demo.launch(app_kwargs=...)`: the FastAPI app Gradio builds gets the middleware, an
    older link's lesson sent on to its page first, then the page cache (it keeps the answers as sent, compressed), from when `keep_pages_when()`,
    and the frontend's fixes innermost (the asset cache compresses the fixed files)."""
    from serving.frontend_fixes import FrontendFixes
    from serving.lesson_addresses import LessonAddresses
    from serving.page_cache import PageCache

    return {"middleware": [Middleware(LessonAddresses), Middleware(PageCache, ready=keep_pages_when),
                           Middleware(PageCompression),
                           Middleware(AssetCache), Middleware(FrontendFixes)]}
