"""The page, its config and JSON answers come back gzip-encoded when asked for; event streams still
arrive event by event, uncompressed; Gradio's brotli assets keep their encoding."""
from __future__ import annotations

import gzip
import json
import re
import time

import brotli
import gradio as gr
import httpx
import pytest

from serving import page_compression
from tests.app.harness import free_port

GZIP = {"Accept-Encoding": "gzip"}
BROWSER = {"Accept-Encoding": "gzip, deflate, br, zstd"}


def raw(url: str, headers: dict) -> httpx.Response:
    """The answer as it came over the wire (httpx would otherwise decode it)."""
    with httpx.Client(timeout=30) as client:
        with client.stream("GET", url, headers=headers) as response:
            response.wire = b"".join(response.iter_raw())
            return response


@pytest.mark.parametrize("path", ["", "config", "gradio_api/info"])
@pytest.mark.parametrize("accept", [GZIP, BROWSER], ids=["gzip", "browser"])
def test_page_and_config_are_gzipped_when_asked(app_url, path, accept):
    response = raw(app_url + path, accept)
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in response.headers["vary"].lower()
    body = gzip.decompress(response.wire)
    assert len(response.wire) * 4 < len(body), (len(response.wire), len(body))
    if path == "":
        assert b"window.gradio_config" in body
    else:
        json.loads(body)


def test_plain_when_gzip_is_not_asked(app_url):
    response = raw(app_url + "config", {"Accept-Encoding": "identity"})
    assert "content-encoding" not in response.headers
    assert json.loads(response.wire)["components"]


def test_assets_stay_brotli_and_are_compressed_once(app_url):
    page = raw(app_url, {"Accept-Encoding": "identity"}).wire.decode()
    script = re.search(r'assets/index-[\w-]+\.js', page).group(0)
    plain = raw(app_url + script, {"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    first, again = raw(app_url + script, BROWSER), raw(app_url + script, BROWSER)
    for answer in (first, again):
        assert answer.headers["content-encoding"] == "br"
        assert answer.headers["content-type"] == plain.headers["content-type"]
        assert int(answer.headers["content-length"]) == len(answer.wire)
        assert brotli.decompress(answer.wire) == plain.wire
    assert again.wire == first.wire
    assert len(first.wire) * 2 < len(plain.wire)
    assert raw(app_url + script, GZIP).headers["content-encoding"] == "gzip"   # Gradio's own fallback
    # A revalidation gets Gradio's own answer (compressed by Gradio, not from the cache).
    revalidated = raw(app_url + script, dict(BROWSER, **{"If-None-Match": plain.headers["etag"]}))
    assert revalidated.status_code in (200, 304)
    if revalidated.status_code == 200:
        assert brotli.decompress(revalidated.wire) == plain.wire
    assert raw(app_url + "assets/no-such-file.js", BROWSER).status_code == 404


def join(url: str, fn_index: int, data: list, session: str) -> None:
    reply = httpx.post(url + "gradio_api/queue/join", timeout=30, json={
        "data": data, "fn_index": fn_index, "session_hash": session, "event_data": None, "trigger_id": None})
    assert reply.status_code == 200, reply.text


def events(url: str, session: str, until: str = "process_completed"):
    """(seconds since the stream opened, message, raw headers) for each event as it arrives."""
    started = time.monotonic()
    with httpx.Client(timeout=30) as client:
        with client.stream("GET", url + f"gradio_api/queue/data?session_hash={session}", headers=BROWSER) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            assert "content-encoding" not in response.headers
            for line in response.iter_lines():   # read raw: an encoded stream would not parse
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    yield time.monotonic() - started, message
                    if message.get("msg") == until:
                        return


@pytest.fixture(scope="module")
def slow_stream():
    """A generator that yields every 0.4 s, served with the app's middleware."""
    def count(n):
        for i in range(int(n)):
            time.sleep(0.4)
            yield f"step {i}"

    with gr.Blocks() as demo:
        box = gr.Textbox()
        gr.Button().click(count, gr.Number(value=4), box, api_name="count")
    demo.queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, ssr_mode=False,
                app_kwargs=page_compression.app_kwargs())
    yield f"http://127.0.0.1:{port}/"
    demo.close()


def test_a_streamed_run_arrives_event_by_event(slow_stream):
    fn_index = next(i for i, d in enumerate(httpx.get(slow_stream + "config").json()["dependencies"])
                    if d.get("api_name") == "count")
    join(slow_stream, fn_index, [4], "stream-check")
    arrivals = [(at, m) for at, m in events(slow_stream, "stream-check") if m.get("msg") == "process_generating"]
    assert len(arrivals) >= 4, arrivals
    times = [at for at, _ in arrivals]
    # Each step on screen as it is made: 0.4 s apart, the first long before the last.
    assert times[-1] - times[0] > 0.9, times
    assert all(later - earlier > 0.2 for earlier, later in zip(times, times[1:4])), times


def test_the_apps_own_queue_stream_is_not_compressed(app_url):
    config = httpx.get(app_url + "config").json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "echo")
    join(app_url, fn_index, ["ping"], "echo-check")
    messages = [m for _, m in events(app_url, "echo-check")]
    assert messages[-1]["success"] and messages[-1]["output"]["data"] == ["ping"], messages[-1]
