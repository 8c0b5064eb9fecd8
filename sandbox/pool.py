"""The parent side: a zygote process, a warm pool of hardened workers, and job collection.

The app process never forks itself and never runs student code.  It starts one
`python -I -B` zygote (as an unprivileged user when the app is root, with a minimal
environment) that has every library imported; each worker is a fresh fork of it
that hardens itself and then waits for exactly one job.  A background thread keeps
`pool_size` such workers ready, so a job costs a few milliseconds.
"""
import ast
import collections
import importlib.util
import json
import os
import pwd
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from .cpu_share import CpuShare, lower
from .settings import Limits

HERE = os.path.dirname(os.path.abspath(__file__))
# The worker program, its hardening and its priority: always in the runtime folder.
SANDBOX_FILES = ("worker.py", "hardening.py", "cpu_share.py")
# Course modules every worker needs (the registry a tool source builds on, the shape of a
# tool's outcome, and the hooks a hooks source registers); the modules they import from their
# own folder come along.
COURSE_MODULES = ("tool_registry", "tool_outcome", "hooks")


def module_file(name):
    """The source file of a top-level module the app can import (course modules are single files)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise WorkerError(f"module {name!r} is not a single Python file on the app's path")
    return spec.origin


def _sibling_imports(path):
    """Modules in the same folder as `path` that it imports at its top level."""
    folder = os.path.dirname(path)
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return {name: os.path.join(folder, f"{name}.py") for name in names
            if os.path.exists(os.path.join(folder, f"{name}.py"))}


def runtime_files(modules=(), program="worker.py"):
    """(source path, name in the runtime folder) of everything a worker imports: the sandbox's
    own files (and `program`, the zygote's, if another), the course modules and `modules` (e.g.
    the configured schema methods), with every module they import from their own folder."""
    files = [(os.path.join(HERE, name), name) for name in dict.fromkeys((*SANDBOX_FILES, program))]
    found, queue = {}, [(name, module_file(name)) for name in (*COURSE_MODULES, *modules)]
    while queue:
        name, path = queue.pop()
        if name not in found:
            found[name] = path
            queue.extend(_sibling_imports(path).items())
    return files + [(path, f"{name}.py") for name, path in sorted(found.items())]


class WorkerError(Exception):
    """The worker machinery itself failed (not the student's code)."""


class Worker:
    __slots__ = ("pid", "job_w", "out_r", "err_r", "res_r", "layers", "workdir")

    def __init__(self, pid, job_w, out_r, err_r, res_r, workdir):
        self.pid, self.job_w, self.out_r, self.err_r, self.res_r = pid, job_w, out_r, err_r, res_r
        self.workdir = workdir
        self.layers = None

    def kill(self):
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL),
                       lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass

    def hold(self, paused):
        """Stops the worker, threads and all (SIGSTOP), or lets it go on (SIGCONT)."""
        try:
            os.killpg(self.pid, signal.SIGSTOP if paused else signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self):
        for fd in (self.job_w, self.out_r, self.err_r, self.res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)


def _worker_user():
    """(uid, gid) to drop to when running as root, else None."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def _minimal_env():
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": os.environ.get("TZ", "UTC")}


class Outcome:
    """What came back from one job, before it is turned into a student-facing message."""

    def __init__(self):
        self.result = None      # the parsed JSON reply, or None
        self.stdout = b""
        self.stderr = b""
        self.timed_out = False
        self.too_large = None   # "stdout" | "stderr" | "result" when a cap was hit
        self.bad_reply = None   # why the reply was rejected
        self.wall_ms = 0.0
        self.own_seconds = 0.0  # from the job's start to its end, less its waits for a CPU
        self.worker_pid = None


class Pool:
    def __init__(self, pool_size=2, limits=None, require_seccomp=False, nice=0, schema_methods=None,
                 program="worker.py", modules=()):
        self.pool_size = pool_size
        self.program = program                 # the zygote's program in the runtime folder
        self.modules = tuple(modules)          # course modules it needs besides COURSE_MODULES
        self.schema_methods = dict(schema_methods or {})   # method name -> "module:function"
        self.nice = nice                       # the zygote's and every worker's priority
        self.limits = limits or Limits()
        self.require_seccomp = require_seccomp
        self._lock = threading.Lock()          # zygote conversation
        self._ready = collections.deque()
        self._cond = threading.Condition()
        self._zygote = None
        self._control = None
        self._runtime = None
        self._workbase = None
        self._refiller = None
        self._closed = False
        self.last_layers = None
        self.start_error = None

    # ------------------------------------------------------------ start-up

    def _make_runtime(self):
        user = _worker_user()
        modules = sorted({target.split(":", 1)[0] for target in self.schema_methods.values()} | set(self.modules))
        files = runtime_files(modules, self.program)
        runtime = tempfile.mkdtemp(prefix="tool-workshop-runtime-")
        for source, name in files:
            shutil.copyfile(source, os.path.join(runtime, name))
            os.chmod(os.path.join(runtime, name), 0o644)
        os.chmod(runtime, 0o755)
        workbase = tempfile.mkdtemp(prefix="tool-workshop-work-")
        if user:
            os.chown(workbase, *user)
        os.chmod(workbase, 0o700)
        self._runtime, self._workbase = runtime, workbase

    def _start_zygote(self):
        if self._runtime is None:
            self._make_runtime()
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        config = {"limits": self.limits.for_worker(), "workdir": self._workbase,
                  "require_seccomp": self.require_seccomp, "nice": self.nice,
                  "schema_methods": self.schema_methods}
        kwargs = {}
        user = _worker_user()
        if user:
            kwargs.update(user=user[0], group=user[1], extra_groups=[])
        try:
            self._zygote = subprocess.Popen(
                [sys.executable, "-I", "-B", "-X", "utf8", os.path.join(self._runtime, self.program),
                 "zygote", json.dumps(config)],
                stdin=child_end, stdout=subprocess.DEVNULL, env=_minimal_env(), cwd=self._workbase,
                # A process group of its own (Ctrl-C in the app's terminal is the app's to handle),
                # in the server's session: see cpu_share.lower_priority.
                process_group=0, close_fds=True, **kwargs)
        finally:
            child_end.close()
        self._control = parent_end
        self._control_buffer = b""

    def start(self):
        """Starts the zygote and the refill thread (idempotent). Every job calls this: when
        the zygote is running it returns at once, without waiting for the zygote lock (which
        a fork in progress holds)."""
        zygote = self._zygote
        if zygote is not None and zygote.poll() is None and (self._refiller or not self.pool_size):
            return
        with self._lock:
            if self._zygote is None or self._zygote.poll() is not None:
                self._start_zygote()
        if self._refiller is None and self.pool_size > 0:
            self._refiller = threading.Thread(target=self._refill_loop, name="sandbox-pool", daemon=True)
            self._refiller.start()

    def close(self):
        self._closed = True
        with self._cond:
            self._cond.notify_all()
            workers = list(self._ready)
            self._ready.clear()
        for worker in workers:
            worker.kill()
            worker.close()
        with self._lock:
            if self._control:
                self._control.close()
                self._control = None
            if self._zygote:
                try:
                    os.killpg(self._zygote.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                self._zygote.wait()
                self._zygote = None
        for path in (self._runtime, self._workbase):
            if path:
                shutil.rmtree(path, ignore_errors=True)

    # ------------------------------------------------------------ workers

    def spawn(self, memory_bytes=None):
        """Forks one fresh worker from the zygote and waits until it has hardened itself;
        `memory_bytes` gives it a smaller memory budget than the pool's."""
        request = b"F" + (str(int(memory_bytes)).encode() if memory_bytes else b"")
        pipes = [os.pipe() for _ in range(4)]
        job_r, job_w = pipes[0]
        out_r, out_w = pipes[1]
        err_r, err_w = pipes[2]
        res_r, res_w = pipes[3]
        child_ends = (job_r, out_w, err_w, res_w)
        try:
            with self._lock:
                if self._zygote is None or self._zygote.poll() is not None:
                    self._start_zygote()
                try:
                    socket.send_fds(self._control, [request], list(child_ends))
                    pid = self._read_pid()
                except OSError as exc:
                    self._zygote.kill()
                    raise WorkerError(f"zygote unavailable: {exc}") from exc
        finally:
            for fd in child_ends:
                os.close(fd)
        worker = Worker(pid, job_w, out_r, err_r, res_r, os.path.join(self._workbase, f"w{pid}"))
        try:
            line = self._read_ready(res_r, timeout=30.0)
            hello = json.loads(line)
            worker.layers = hello.get("layers") or {}
            self.last_layers = worker.layers
            if not hello.get("ready"):
                raise WorkerError("worker refused to run without its seccomp layer")
        except Exception:
            worker.kill()
            worker.close()
            raise
        return worker

    def _read_pid(self):
        while b"\n" not in self._control_buffer:
            chunk = self._control.recv(64)
            if not chunk:
                raise OSError("zygote closed its control socket")
            self._control_buffer += chunk
        line, self._control_buffer = self._control_buffer.split(b"\n", 1)
        return int(line)

    @staticmethod
    def _read_ready(fd, timeout):
        deadline = time.monotonic() + timeout
        data = b""
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not data.endswith(b"\n"):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(remaining):
                    raise WorkerError("worker did not report ready in time")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise WorkerError("worker exited during start-up")
                data += chunk
                if len(data) > 65536:
                    raise WorkerError("worker start-up reply too large")
        return data

    def _refill_loop(self):
        failures = 0
        while not self._closed:
            with self._cond:
                while not self._closed and len(self._ready) >= self.pool_size:
                    self._cond.wait()
            if self._closed:
                return
            try:
                worker = self.spawn()
                failures = 0
            except Exception as exc:
                self.start_error = str(exc)
                failures += 1
                time.sleep(min(0.05 * 2 ** failures, 5.0))
                continue
            with self._cond:
                if self._closed:
                    worker.kill()
                    worker.close()
                    return
                self._ready.append(worker)
                self._cond.notify_all()

    def take(self):
        """A warm worker if one is ready, else a freshly forked one (cold)."""
        with self._cond:
            worker = self._ready.popleft() if self._ready else None
        return worker if worker is not None else self.spawn()

    def _refill_soon(self):
        with self._cond:
            self._cond.notify_all()

    def warm_count(self):
        """Workers ready for a job now."""
        with self._cond:
            return len(self._ready)

    def wait_warm(self, timeout=10.0):
        """Blocks until the pool is full (for start-up, measurements and an idle job's fork).
        Wakes the refill thread first: workers taken since the last job ended are replaced now."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._cond.notify_all()
            while len(self._ready) < self.pool_size and time.monotonic() < deadline:
                self._cond.wait(0.05)
            return len(self._ready)

    # ------------------------------------------------------------ one job

    def run(self, job, wall_seconds=None, nice=0, idle=False, memory_bytes=None, demote_after=None,
            on_demote=None):
        """Runs one job in a fresh worker. `wall_seconds` overrides the time limit for this
        job; `nice` lowers its CPU priority and `idle` makes it SCHED_IDLE (both set before
        the job is sent, so every thread and process the student's code starts inherits them).
        The time limit and `demote_after` count the job's own time, and a job still running
        at `demote_after` is moved to SCHED_IDLE and the demoted jobs' tick (sandbox/cpu_share.py
        states the rules); `on_demote()` is called then. An idle job (its session is on
        probation) is demoted from its start and runs in the probation tick.
        An idle job, or one with less `memory_bytes` than the pool's, forks its own worker:
        the warm ones are kept for everybody else."""
        smaller = memory_bytes if memory_bytes and memory_bytes < self.limits.memory_bytes else None
        if idle:
            # An idle job first lets the zygote refill the warm pool (for at most half a
            # second): its own fork then never delays a worker the others' quick jobs need.
            self.wait_warm(timeout=0.5)
        worker = self.spawn(smaller) if (idle or smaller) else self.take()
        outcome = Outcome()
        outcome.worker_pid = worker.pid
        if nice > self.nice or idle:   # the worker has the zygote's nice value, self.nice
            lower([worker.pid], nice, idle)      # before the job: all it starts inherits it
        started = time.perf_counter()
        try:
            self._exchange(worker, job, outcome, wall_seconds, demote_after, on_demote, idle)
        finally:
            worker.kill()
            outcome.wall_ms = (time.perf_counter() - started) * 1000
            worker.close()
            # Replace it only now, so the fork does not compete with the job for the CPU.
            self._refill_soon()
        return outcome

    def _exchange(self, worker, job, outcome, wall_seconds=None, demote_after=None, on_demote=None,
                  on_probation=False):
        limits = self.limits
        data = json.dumps(job, ensure_ascii=False).encode("utf-8") + b"\n"
        buffers = {worker.out_r: bytearray(), worker.err_r: bytearray(), worker.res_r: bytearray()}
        caps = {worker.out_r: limits.output_bytes, worker.err_r: limits.output_bytes,
                worker.res_r: limits.result_bytes}
        names = {worker.out_r: "stdout", worker.err_r: "stderr", worker.res_r: "result"}
        os.set_blocking(worker.job_w, False)
        pending = memoryview(data)
        with selectors.DefaultSelector() as sel:
            for fd in buffers:
                sel.register(fd, selectors.EVENT_READ)
            if pending:
                sel.register(worker.job_w, selectors.EVENT_WRITE)
            finished = held = False
            share = CpuShare(limits.wall_seconds if wall_seconds is None else wall_seconds,
                             demote_after, on_probation, existing=[worker.pid])
            while not finished:
                decision = share.decide(lambda: (worker.pid,))
                if decision.timed_out:
                    outcome.timed_out = True
                    break
                if decision.demote:
                    lower([worker.pid], 19, idle=True, every_thread=True)
                    if on_demote is not None:
                        on_demote()
                if decision.hold is not None and decision.hold != held:
                    held = decision.hold
                    worker.hold(held)
                for key, _ in sel.select(decision.wait):
                    fd = key.fd
                    if fd == worker.job_w:
                        try:
                            pending = pending[os.write(fd, pending):]
                        except BrokenPipeError:
                            pending = pending[:0]
                        if not pending:
                            sel.unregister(fd)
                        continue
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        sel.unregister(fd)
                        if fd == worker.res_r:
                            finished = True
                        continue
                    buffers[fd] += chunk
                    if len(buffers[fd]) > caps[fd]:
                        outcome.too_large = names[fd]
                        finished = True
                        break
                    if fd == worker.res_r and buffers[fd].endswith(b"\n"):
                        finished = True
            # Whatever happened, the whole group goes now; then collect what is left.
            worker.kill()
            outcome.own_seconds = share.own_seconds()
            # The worker flushed its output before replying, so what is already in the pipes is
            # all of it; without a reply, give the kernel a moment to deliver the rest.
            drain_until = time.monotonic() + (0.0 if buffers[worker.res_r].endswith(b"\n") else 0.2)
            while outcome.too_large is None and sel.get_map():
                remaining = drain_until - time.monotonic()
                events = sel.select(max(remaining, 0))
                if not events:
                    break
                for key, _ in events:
                    if key.fd == worker.job_w:
                        sel.unregister(key.fd)
                        continue
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(key.fd)
                        continue
                    room = caps[key.fd] - len(buffers[key.fd])
                    buffers[key.fd] += chunk[:max(room, 0)]
                    if len(chunk) > room:
                        outcome.too_large = names[key.fd]
                        break
        outcome.stdout = bytes(buffers[worker.out_r])
        outcome.stderr = bytes(buffers[worker.err_r])
        reply = bytes(buffers[worker.res_r])
        if reply.endswith(b"\n") and outcome.too_large != "result":
            try:
                parsed = json.loads(reply)
            except ValueError as exc:
                outcome.bad_reply = f"invalid JSON: {exc}"
            else:
                if isinstance(parsed, dict):
                    outcome.result = parsed
                else:
                    outcome.bad_reply = "reply is not an object"
        elif not outcome.timed_out and outcome.too_large is None:
            outcome.bad_reply = "no reply"
