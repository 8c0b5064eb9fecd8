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
"""
from __future__ import annotations

from gradio.brotli_middleware import BrotliMiddleware
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


def app_kwargs() -> dict:
    """For `demo.launch(app_kwargs=...)`: the FastAPI app Gradio builds gets the middleware."""
    return {"middleware": [Middleware(PageCompression)]}
