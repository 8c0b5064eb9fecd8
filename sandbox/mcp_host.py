"""MCP servers for the editor's source, each in a hardened process: the app side.

    server = McpHost(...).transport(source, session_id)   # sandbox.mcp_transport(...) in the package
    async with server as (read_stream, write_stream):     # what mcp.client.stdio.stdio_client yields
        ...ClientSession(read_stream, write_stream)...
    server.log()                                          # the server's stderr, and why it was ended

The server is `code/mcp_server.py`'s (`build_server` on the source's ToolRegistry), run by
sandbox/mcp_worker.py in a fork of a zygote of its own that has already imported the `mcp`
SDK: opening a server costs a fork, not an interpreter and an SDK import, and with a server
kept waiting (`Settings.mcp_pool_size`) not even that. The zygote starts on the first MCP
server (about 1.5 s, once) and holds the imports for every later one.
A server has a tool worker's layers (rlimits, non-dumpable, Landlock, seccomp, audit hook;
as an unprivileged user when the app is root; the minimal environment of the zygote) and:

- a time to answer each request (`Settings.mcp_request_seconds`: initialize, so the source's
  import, and every tools/call), a wall-clock limit from its start (`Settings.mcp_wall_seconds`,
  shorter on probation), both kept here, and a CPU limit in all (`Settings.mcp_cpu_seconds`, an
  rlimit); after
  `Settings.mcp.demote_after_seconds` of CPU it runs at SCHED_IDLE;
- stderr kept up to `Limits.output_bytes` and one message up to `Limits.result_bytes`: past
  either, the server is ended (a tool's result is already cut by the registry, as always);
- admission by the gate for "mcp" jobs (rules in `Settings.mcp`): the servers alive at once
  for the class, per session at once and per minute, and a budget of CPU seconds; a refusal
  raises `Refusal` (its `message` in Chinese) from `__aenter__`;
- an end with the `async with` (killed at once: its process group, and anything it left),
  or with its session (`McpHost.forget(session_id)`), or at its limits.

Only bytes of JSON-RPC cross the boundary; the SDK types are imported on the first server,
so an app that never opens one never imports `mcp`.
"""
import contextlib
import dataclasses
import json
import os
import threading
import time

import anyio

from . import messages
from .admission import Gate, Refusal
from .cpu_share import lower, process_clocks
from .pool import Pool, WorkerError

WATCH_SECONDS = 0.1        # how often a server's clocks are read
CPU_SLACK_SECONDS = 0.3    # an ended server that had used its CPU limit less this was ended by it


class McpHost:
    """The MCP servers' zygote (started with the first server) and the servers alive now."""

    def __init__(self, settings):
        self.settings = settings                 # a callable: the settings in force
        self.gate = Gate(settings, kind="mcp")
        self._lock = threading.Lock()
        self._pool = None
        self._pool_built = None
        self._live = {}                          # session id (or None) -> set of live servers

    def _shape(self):
        settings = self.settings()
        limits = dataclasses.replace(settings.limits, cpu_seconds=settings.mcp_cpu_seconds)
        return {"pool_size": settings.mcp_pool_size, "limits": limits, "require_seccomp": settings.serving_publicly(),
                "nice": settings.job_nice, "program": "mcp_worker.py", "modules": ("mcp_server",)}

    def pool(self):
        """The zygote and `Settings.mcp_pool_size` servers waiting for a source, rebuilt when the
        settings would start them differently."""
        shape = self._shape()
        with self._lock:
            old = None
            if self._pool is not None and shape != self._pool_built:
                old, self._pool = self._pool, None
            if self._pool is None:
                self._pool, self._pool_built = Pool(**shape), shape
            pool = self._pool
        if old is not None:
            old.close()
        pool.start()
        return pool

    def started(self):
        """Whether the zygote has been started (it costs memory only from the first server)."""
        return self._pool is not None

    def zygote_pid(self):
        pool = self._pool
        zygote = pool and pool._zygote
        return zygote.pid if zygote else None

    def transport(self, source, session_id=None):
        return ContainedServer(self, source, session_id)

    def live(self, session_id=None):
        """The servers alive now (of one session, or of all)."""
        with self._lock:
            if session_id is not None:
                return list(self._live.get(session_id, ()))
            return [server for servers in self._live.values() for server in servers]

    def _enter(self, server):
        with self._lock:
            self._live.setdefault(server.session_id, set()).add(server)

    def _leave(self, server):
        with self._lock:
            servers = self._live.get(server.session_id)
            if servers is not None:
                servers.discard(server)
                if not servers:
                    del self._live[server.session_id]

    def forget(self, session_id):
        """The app let the session go: its servers end now."""
        for server in self.live(session_id):
            server.kill("session_ended")
        self.gate.forget(session_id)

    def shutdown(self):
        for server in self.live():
            server.kill()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


class ContainedServer:
    """One MCP server process for one source: an async context manager like `stdio_client`."""

    def __init__(self, host, source, session_id=None):
        self.host, self.source, self.session_id = host, source, session_id
        self.pid = None
        self.layers = None
        self.ended = None          # why the sandbox ended it: "request_timeout", "timeout", "cpu_limit",
        #                            "output_too_large", "message_too_large", "session_ended" (None: it ended with the run)
        self.cpu_seconds = 0.0
        self._stderr = bytearray()
        self._worker = None
        self._pool = None          # the pool it came from
        self._kill_lock = threading.Lock()
        self._context = None
        self._wall_seconds = None
        self._late_method = None   # the request it did not answer in time

    # ------------------------------------------------------------ what the app reads

    def log(self):
        """The server's stderr (the source's print() and errors, bounded), then the sandbox's
        sentence when the sandbox ended it."""
        text = self._stderr.decode("utf-8", "replace")
        note = self._note()
        if note:
            text = f"{text.rstrip()}\n{note}" if text.strip() else note
        return text

    def _note(self):
        settings = self.host.settings()
        return messages.mcp_ended(self.ended, settings.limits, self._wall_seconds, settings.mcp_cpu_seconds,
                                  settings.mcp_request_seconds, self._late_method)

    def kill(self, reason=None):
        """Ends the server's whole process group now (from any thread); `reason` is kept as
        `ended` unless one is known already."""
        with self._kill_lock:
            if self._worker is None:
                return
            if reason and self.ended is None:
                self.ended = reason
            self._worker.kill()

    # ------------------------------------------------------------ the context manager

    async def __aenter__(self):
        self._context = self._connected()
        return await self._context.__aenter__()

    async def __aexit__(self, *exc):
        return await self._context.__aexit__(*exc)

    @contextlib.asynccontextmanager
    async def _connected(self):
        from .service import MAX_SOURCE_CHARS

        if not isinstance(self.source, str):
            raise Refusal("invalid_request", "源码必须是字符串。")
        if len(self.source) > MAX_SOURCE_CHARS:
            raise Refusal("source_too_large", f"源码超过 {MAX_SOURCE_CHARS} 个字符，请精简后再试。")
        admission = self.host.gate.admit(self.session_id, job=messages.MCP_SERVER)
        await anyio.to_thread.run_sync(admission.__enter__)
        try:
            worker = await anyio.to_thread.run_sync(self._spawn, admission)
            try:
                async with self._streams(worker, admission) as streams:
                    yield streams
            finally:
                with self._kill_lock:
                    self._read_cpu()
                    worker.kill()
                    worker.close()
                    self._worker = None
                self.host._leave(self)
                self._pool._refill_soon()          # the next one is forked now, not during this run
        finally:
            admission.note_own_time(self.cpu_seconds)
            if self.ended not in (None, "session_ended"):
                admission.note_limit_hit()
            admission.__exit__(None, None, None)

    def _spawn(self, admission):
        settings = admission.settings
        self._wall_seconds = settings.mcp_wall_seconds
        if admission.on_probation:
            self._wall_seconds = min(self._wall_seconds, admission.budget.probation_wall_seconds)
        smaller = admission.memory_bytes if admission.memory_bytes < settings.limits.memory_bytes else None
        pool = self.host.pool()
        try:
            worker = pool.spawn(smaller) if smaller else pool.take()
        except (WorkerError, OSError) as exc:
            mode = messages.describe_mode(pool.last_layers, settings.serving_publicly(), str(exc))
            if mode["mode"] == "refused" and pool.last_layers:     # no seccomp on a public server
                raise Refusal("sandbox_refused", mode["notice"]) from exc
            raise Refusal(*messages.worker_unavailable(exc)) from exc
        self._pool = pool
        self.pid, self.layers = worker.pid, worker.layers
        if admission.nice > pool.nice or admission.on_probation:
            lower([worker.pid], admission.nice, idle=admission.on_probation)
        with self._kill_lock:
            self._worker = worker
        self.host._enter(self)
        return worker

    @contextlib.asynccontextmanager
    async def _streams(self, worker, admission):
        from mcp import types
        from mcp.shared.message import SessionMessage

        for fd in (worker.job_w, worker.out_r, worker.err_r):
            os.set_blocking(fd, False)
        limits = admission.settings.limits
        read_writer, read_stream = anyio.create_memory_object_stream(0)
        write_stream, write_reader = anyio.create_memory_object_stream(0)

        pending = {}          # id of a request to the server -> (its method, when it was sent)

        async def protocol_out():
            """The server's lines -> SessionMessage (or the exception for a line that is not JSON-RPC)."""
            async with read_writer:
                buffer = bytearray()
                while chunk := await _read(worker.out_r):
                    buffer += chunk
                    too_large = False
                    while (cut := buffer.find(b"\n")) >= 0:
                        line, buffer = bytes(buffer[:cut]), buffer[cut + 1:]
                        too_large = len(line) > limits.result_bytes
                        if too_large:
                            break
                        try:
                            item = SessionMessage(types.JSONRPCMessage.model_validate_json(line))
                        except Exception as exc:    # what stdio_client does with a bad line
                            item = exc
                        else:
                            if isinstance(item.message.root, (types.JSONRPCResponse, types.JSONRPCError)):
                                pending.pop(item.message.root.id, None)
                        await read_writer.send(item)
                    if too_large or len(buffer) > limits.result_bytes:
                        self.kill("message_too_large")
                        return
                # The server has ended: at its CPU limit, if it had used (about) all of it.
                self._read_cpu()
                if self.ended is None and self.cpu_seconds >= admission.settings.mcp_cpu_seconds - CPU_SLACK_SECONDS:
                    self.ended = "cpu_limit"

        async def protocol_in():
            """The source first (one JSON line), then every message the session sends."""
            async with write_reader:
                job = {"source": self.source, "wall_seconds": self._wall_seconds}
                if not await _write(worker.job_w, json.dumps(job).encode() + b"\n"):
                    return
                async for message in write_reader:
                    if isinstance(message.message.root, types.JSONRPCRequest):
                        pending[message.message.root.id] = (message.message.root.method, time.monotonic())
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    if not await _write(worker.job_w, data.encode("utf-8") + b"\n"):
                        return

        async def stderr():
            while chunk := await _read(worker.err_r):
                room = limits.output_bytes - len(self._stderr)
                self._stderr += chunk[:max(room, 0)]
                if len(chunk) > room:
                    self.kill("output_too_large")
                    return

        async def watch():
            deadline = time.monotonic() + self._wall_seconds
            answer_within = admission.settings.mcp_request_seconds
            demote_after, demoted = admission.demote_after, admission.on_probation
            while (left := deadline - time.monotonic()) > 0:
                self._read_cpu()
                if not demoted and self.cpu_seconds >= demote_after:
                    lower([worker.pid], 19, idle=True, every_thread=True)
                    demoted = True
                late = [method for method, sent in list(pending.values())
                        if time.monotonic() - sent > answer_within]
                if late:
                    self._late_method = late[0]
                    self.kill("request_timeout")
                    return
                await anyio.sleep(min(WATCH_SECONDS, left))
            self.kill("timeout")

        async with anyio.create_task_group() as group:
            group.start_soon(protocol_out)
            group.start_soon(protocol_in)
            group.start_soon(stderr)
            group.start_soon(watch)
            try:
                yield read_stream, write_stream
            finally:
                self._read_cpu()
                self.kill()
                group.cancel_scope.cancel()
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()

    def _read_cpu(self):
        clocks = process_clocks(self.pid) if self.pid else None
        if clocks is not None:
            self.cpu_seconds = max(self.cpu_seconds, clocks[1])


async def _read(fd):
    """Bytes from a non-blocking pipe, waiting without a thread; b"" at its end."""
    while True:
        try:
            return os.read(fd, 65536)
        except BlockingIOError:
            await anyio.wait_readable(fd)
        except OSError:
            return b""


async def _write(fd, data):
    """Writes all of `data`; False when the server has gone."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            await anyio.wait_writable(fd)
        except OSError:        # BrokenPipeError: the server ended
            return False
    return True
