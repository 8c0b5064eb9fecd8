"""The page, /config and /gradio_api/info are made once per language and host, not once per visitor."""
from __future__ import annotations

import asyncio
import gzip
import json
import re
import time

import httpx
import pytest

from serving import page_cache
from serving.page_cache import PageCache

BROWSER = {"Accept-Encoding": "gzip, deflate, br", "Accept-Language": "zh-CN,zh;q=0.9"}


class Made:
    """A stand-in for the app behind the cache: counts the answers it makes and says which request."""

    def __init__(self, status: int = 200, headers: list | None = None, delay: float = 0.0):
        self.count, self.status, self.headers, self.delay = 0, status, headers or [], delay

    async def __call__(self, scope, receive, send):
        self.count += 1
        await asyncio.sleep(self.delay)
        body = f"{scope['path']}?{scope['query_string'].decode()} #{self.count}".encode()
        await send({"type": "http.response.start", "status": self.status,
                    "headers": [(b"content-type", b"text/html"), *self.headers]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def request(cache, path: str = "/", query: str = "", headers: dict | None = None, method: str = "GET") -> bytes:
    return asyncio.run(ask(cache, path, query, headers, method))


async def ask(cache, path="/", query="", headers=None, method="GET") -> bytes:
    scope = {"type": "http", "method": method, "path": path, "query_string": query.encode(), "scheme": "http",
             "root_path": "", "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or BROWSER).items()]}
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    await cache(scope, receive, send)
    assert sent[0]["type"] == "http.response.start"
    return b"".join(m.get("body", b"") for m in sent[1:])


def test_the_same_answer_is_made_once_per_language_query_and_host():
    made = Made()
    cache = PageCache(made)
    first = request(cache)
    assert request(cache) == first and made.count == 1
    assert request(cache, headers=dict(BROWSER, **{"Accept-Language": "zh-TW,zh"})) == first   # still Chinese
    english = request(cache, headers=dict(BROWSER, **{"Accept-Language": "en-US,en;q=0.9"}))
    assert english != first and made.count == 2
    assert request(cache, query="lang=en") != english and made.count == 3                       # its own query
    assert request(cache, path="/config") != first and made.count == 4
    # A made-up Host (Gradio writes it into the page's root URL) never gets another visitor's page.
    assert request(cache, headers=dict(BROWSER, Host="evil.example")) != first and made.count == 5
    assert request(cache, headers=dict(BROWSER, **{"X-Forwarded-Host": "evil.example"})) != first
    assert request(cache, headers={"Accept-Language": "zh-CN"}) != first                       # no gzip asked
    assert made.count == 7


@pytest.mark.parametrize("case", ["cookie", "authorization", "post", "other path", "not ready", "error", "set-cookie"])
def test_what_is_never_kept(case):
    made = Made(status=500 if case == "error" else 200,
                headers=[(b"set-cookie", b"a=b")] if case == "set-cookie" else None)
    cache = PageCache(made, ready=lambda: case != "not ready")
    headers = dict(BROWSER, **({"Cookie": "x=1"} if case == "cookie" else {}),
                   **({"Authorization": "Bearer t"} if case == "authorization" else {}))
    path = "/gradio_api/queue/join" if case == "other path" else "/"
    method = "POST" if case == "post" else "GET"
    assert request(cache, path, headers=headers, method=method) != request(cache, path, headers=headers, method=method)
    assert made.count == 2


def test_answers_are_made_again_after_the_ttl_and_the_oldest_go_first():
    now = [0.0]
    made = Made()
    cache = PageCache(made, ttl=60, max_entries=2, clock=lambda: now[0])
    first = request(cache)
    now[0] = 59.0
    assert request(cache) == first
    now[0] = 61.0
    assert request(cache) != first and made.count == 2
    request(cache, query="a=1")
    request(cache, query="a=2")        # three kept at most two: "/" (the oldest) goes
    request(cache, query="a=2")
    assert made.count == 4
    request(cache)
    assert made.count == 5


def test_a_body_too_big_is_not_kept(monkeypatch):
    monkeypatch.setattr(page_cache, "MAX_BYTES", 3)     # the answers here are 5 bytes
    made = Made()
    cache = PageCache(made)
    request(cache)
    request(cache)
    assert made.count == 2


def test_visitors_arriving_together_wait_for_one_answer():
    made = Made(delay=0.2)
    cache = PageCache(made)

    async def hall():
        return await asyncio.gather(*(ask(cache) for _ in range(20)))

    bodies = asyncio.run(hall())
    assert made.count == 1 and len(set(bodies)) == 1


def page_config(html: str) -> dict:
    return json.loads(re.search(r"window\.gradio_config = (.*?);</script>", html, re.S).group(1))


def test_the_served_page_is_kept_after_warm_up_and_still_shows_the_first_schema(app_url):
    """The app's own pages: each visitor of a language gets the same bytes, with the examples' schemas."""
    with httpx.Client(timeout=30) as client:
        def wire(url, headers=BROWSER):
            with client.stream("GET", url, headers=headers) as response:
                assert response.status_code == 200
                return response.headers, b"".join(response.iter_raw())

        for _ in range(600):                       # the shared app has finished warming up
            headers, first = wire(app_url)
            if "已生成" in gzip.decompress(first).decode() and wire(app_url)[1] == first:
                break
            time.sleep(0.1)
        assert headers["content-encoding"] == "gzip" and int(headers["content-length"]) == len(first)
        html = gzip.decompress(first).decode()
        assert '<html\n\tlang="zh-CN"' in html and "✅ 已生成 " in html
        assert wire(app_url)[1] == first
        english = gzip.decompress(wire(app_url + "?lang=en")[1]).decode()
        assert page_config(english)["title"] == "Tool Use Workshop" and "✅ Schema generated for " in english
        assert page_config(html)["title"] == "工具调用教学工坊"
        # gradio_client's config keeps the API's descriptions; the page's copy does not.
        config = json.loads(gzip.decompress(wire(app_url + "config")[1]))
        assert any("api_info" in entry for entry in config["components"])
        assert wire(app_url + "config")[1] == wire(app_url + "config")[1]
