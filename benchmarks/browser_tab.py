"""One browser tab's session on a Gradio app's queue, the way Gradio's own page talks to it, for
simulating many students in one process.

A call is a POST to `queue/join` (the event's id comes back at once); its result arrives on the
session's stream of messages (`queue/data`, server-sent events), which is open while any call of
the session is pending: the server closes it (`close_stream`) once the session has none left, and
the next call opens it again. The page also opens a heartbeat stream, which the server holds open.

Every tab of a class shares one asyncio loop and one aiohttp session: a waiting call costs a
suspended coroutine, not a thread that polls (gradio_client gives each call its own threads,
which wake to look for the answer every 50 ms, every 5 ms as classroom.py used to set it so as
not to round each latency up to a 50 ms step), and aiohttp's requests cost the
simulated students about a third of httpx's (one tab calling /echo 50 times in a row: 2.4 ms of
CPU a call against 7.4 ms). On a 2-core machine shared with the app, what the simulated
students spend is taken from the app.

The connections the students keep idle are dropped after 4 s, before the server's 5 s: a call
does not meet a connection the server has timed out, and is sent once (a second POST to
queue/join would run the event twice). A call whose answer cannot come (the stream broke, or
the server said it failed unexpectedly) fails at once with what happened, instead of waiting.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
import urllib.request
from typing import Any

import aiohttp

API = "gradio_api/"


class CallFailed(Exception):
    """The app ran the call and reported an error (the message it sent, or "" when it sent none)."""


@dataclasses.dataclass(frozen=True)
class Endpoint:
    fn_index: int
    defaults: tuple            # the values of the parameters after the given ones, as the API describes them


def named_endpoints(url: str) -> dict[str, Endpoint]:
    """The app's named endpoints (api_name -> Endpoint), read once from its config and API description
    (gradio_client reads both on every connect; a browser has them inline in the page)."""
    def read(path: str) -> dict:
        with urllib.request.urlopen(url + path, timeout=60) as answer:
            return json.loads(answer.read())

    ids = {"/" + d["api_name"]: d["id"] for d in read("config")["dependencies"] if d.get("api_name")}
    described = read(API + "info")["named_endpoints"]
    return {name: Endpoint(ids[name], tuple(p.get("parameter_default") for p in info["parameters"]))
            for name, info in described.items() if name in ids}


def session() -> aiohttp.ClientSession:
    """The connections of a whole class: one browser per student, so no cap on how many are open (each
    tab holds two long-lived streams), idle ones dropped before uvicorn's 5 s keep-alive ends, and room
    for a long message (a run's events) on one line."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=4),
                                 read_bufsize=2 ** 22)


class Tab:
    def __init__(self, http: aiohttp.ClientSession, url: str, endpoints: dict[str, Endpoint]):
        self.http, self.url, self.endpoints = http, url, endpoints
        self.session = secrets.token_hex(8)
        self.waiting: dict[str, asyncio.Future] = {}
        self.early: dict[str, dict] = {}       # completions read before their POST had answered
        self.reader: asyncio.Task | None = None
        self.heartbeat: asyncio.Task | None = None

    async def open(self) -> None:
        self.heartbeat = asyncio.create_task(self._beat())

    async def close(self) -> None:
        tasks = [task for task in (self.heartbeat, self.reader) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def call(self, api_name: str, *data: Any, timeout: float = 300.0) -> Any:
        """The endpoint's output (a tuple when it has several), as gradio_client's predict returns it;
        parameters not given take their defaults, as there."""
        endpoint = self.endpoints[api_name]
        body = {"data": [*data, *endpoint.defaults[len(data):]], "fn_index": endpoint.fn_index,
                "session_hash": self.session, "event_data": None, "trigger_id": None}
        async with self.http.post(self.url + API + "queue/join", json=body,
                                  timeout=aiohttp.ClientTimeout(total=timeout)) as answer:
            answer.raise_for_status()
            event_id = (await answer.json())["event_id"]
        done = self.early.pop(event_id, None)
        if done is None:
            future = asyncio.get_running_loop().create_future()
            self.waiting[event_id] = future
            if self.reader is None or self.reader.done():
                self.reader = asyncio.create_task(self._read())
            try:
                done = await asyncio.wait_for(future, timeout)
            finally:
                self.waiting.pop(event_id, None)
        output = done.get("output") or {}
        if not done.get("success", False):
            raise CallFailed(str(output.get("error") or ""))
        values = output.get("data") or [None]
        return values[0] if len(values) == 1 else tuple(values)

    async def _read(self) -> None:
        """Reads the session's stream until the server closes it (close_stream), and opens it again while
        calls still wait (one registered just as the server decided it had none left). Anything else
        that ends it fails the calls still waiting: the server drops a session's events once its
        stream is gone."""
        while True:
            try:
                closed = await self._read_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:            # a dropped connection, an unreadable line
                closed = f"the event stream broke: {type(exc).__name__}: {exc}"
            if closed is not None:
                for future in self.waiting.values():
                    if not future.done():
                        future.set_exception(CallFailed(closed))
                return
            if not self.waiting:
                return

    async def _read_once(self) -> str | None:
        """One stream, to its end: None when the server closed it with close_stream, or why it ended otherwise."""
        async with self.http.get(self.url + API + "queue/data", params={"session_hash": self.session},
                                 timeout=aiohttp.ClientTimeout(total=None)) as stream:
            stream.raise_for_status()
            async for line in stream.content:
                if not line.startswith(b"data:"):
                    continue
                message = json.loads(line[5:])
                kind = message.get("msg")
                if kind == "close_stream":
                    return None
                if kind == "unexpected_error":
                    return f"the server failed: {message.get('message')}"
                if kind == "process_completed":
                    future = self.waiting.get(message.get("event_id"))
                    if future is None:
                        self.early[message.get("event_id")] = message
                    elif not future.done():
                        future.set_result(message)
        return "the event stream ended without close_stream"

    async def _beat(self) -> None:
        try:
            async with self.http.get(self.url + API + "heartbeat/" + self.session,
                                     timeout=aiohttp.ClientTimeout(total=None)) as stream:
                async for _ in stream.content.iter_any():
                    pass
        except (aiohttp.ClientError, asyncio.CancelledError):
            pass
