"""Runs the tool source typed in the browser in hardened, single-use worker processes.

Public calls:
    seal_secrets(names) -> dict
    extract_schemas(source, method="registry", strict=False) -> {"ok", "tools", "warnings", "error"}
    run_tool(source, name, args, session_id=None) -> {"ok", "content", "error_code", "stdout",
             "duration_ms", "arguments", "problems", "coercions", ...}
    session_usage(session_id), forget_session(session_id), known_sessions()
    status() -> {"mode", "layers", "notice"}
    configure(public=None, server_name=None, pool_size=None, ...) and shutdown()

Only JSON crosses the boundary.  Every failure comes back as data with a Chinese
message and an error code; nothing here raises for bad student code.
"""
import atexit
import collections
import copy
import hashlib
import ipaddress
import json
import os
import threading
import time

from .pool import Limits, Pool, WorkerError
from .sealing import seal_secrets

__all__ = ["seal_secrets", "extract_schemas", "run_tool", "status", "configure", "shutdown", "start",
           "session_usage", "forget_session", "known_sessions"]

MAX_SOURCE_CHARS = 200_000
MAX_ARGS_CHARS = 100_000

_settings = {
    "public": None,            # None: decide from SPACE_ID / the bound address
    "server_name": None,
    "pool_size": 2,
    "max_concurrent": 4,       # jobs running at once, all sessions together
    "per_session_concurrent": 2,
    "per_session_per_minute": 120,
    # Fairness: worker wall-seconds one session may use in any 60 s; past it, its jobs are
    # refused at once (a tool stuck in a loop costs 2 s a call, a working tool milliseconds).
    "per_session_seconds_per_minute": 8.0,
    # A session whose job hit a limit (time, memory, output) is on probation for a while:
    # its jobs run one at a time across all such sessions, in a slot and a freshly forked
    # worker of their own (never a slot or a warm worker the others were going to use),
    # only when a CPU is otherwise idle (SCHED_IDLE), with a shorter time limit and a
    # smaller budget. A loop that keeps coming back then costs the others next to nothing;
    # fixed code runs in milliseconds and never notices.
    "probation_seconds": 120.0,
    "probation_concurrent": 1,
    "probation_wall_seconds": 0.5,
    "probation_seconds_per_minute": 1.0,
    "probation_memory_bytes": 64 << 20,     # a memory bomb on probation costs a quarter
    "probation_nice": 19,
    # Every student's tool runs below the web server's priority, so even a tool's first
    # run, before its session has a record, cannot take CPU from the page at equal weight.
    "job_nice": 10,
    # A job still running after this long moves to SCHED_IDLE (its tools' threads too) and
    # gives its slot back for one of the slow lane's, if one is free: a looping tool's first
    # run, before its session is on probation, then neither takes CPU from the quick jobs of
    # the others nor keeps them waiting for a slot. Working tools answer in milliseconds.
    "demote_after_seconds": 0.2,
    "slow_concurrent": 4,
    # A refusal for an exhausted budget is answered after this pause (no CPU spent): a
    # hammered button or a script in a loop then cannot turn cheap refusals into a flood
    # of requests that slows the server for everyone. Each further refusal in a row
    # doubles it, up to the maximum; a job that runs starts the count again.
    "refusal_pause_seconds": 1.5,
    "refusal_pause_max_seconds": 6.0,
    "queue_wait_seconds": 10.0,
}
_limits = Limits()
_state_lock = threading.Lock()
_pool = None
_slots = threading.BoundedSemaphore(_settings["max_concurrent"])
_probation_slots = threading.BoundedSemaphore(_settings["probation_concurrent"])
_slow_slots = threading.BoundedSemaphore(_settings["slow_concurrent"])
_sessions_lock = threading.Lock()
_ledgers = {}                  # session id -> _Ledger, forgotten once idle
_last_prune = [0.0]
WINDOW_SECONDS = 60.0
SCHEMAS_REMEMBERED = 4


# ------------------------------------------------------------------ configuration

def configure(public=None, server_name=None, pool_size=None, max_concurrent=None,
              per_session_concurrent=None, per_session_per_minute=None, wall_seconds=None,
              per_session_seconds_per_minute=None, probation_seconds=None, probation_concurrent=None,
              probation_wall_seconds=None, probation_seconds_per_minute=None, probation_nice=None,
              refusal_pause_seconds=None, job_nice=None):
    """Sets how the sandbox runs; call before serving. `public=True` (or a non-loopback
    `server_name`) makes the sandbox refuse to run code when seccomp cannot load."""
    global _slots, _probation_slots
    with _state_lock:
        if public is not None:
            _settings["public"] = bool(public)
        if server_name is not None:
            _settings["server_name"] = server_name
        if pool_size is not None:
            _settings["pool_size"] = int(pool_size)
        if max_concurrent is not None:
            _settings["max_concurrent"] = int(max_concurrent)
            _slots = threading.BoundedSemaphore(int(max_concurrent))
        if per_session_concurrent is not None:
            _settings["per_session_concurrent"] = int(per_session_concurrent)
        if per_session_per_minute is not None:
            _settings["per_session_per_minute"] = int(per_session_per_minute)
        if wall_seconds is not None:
            _limits.wall_seconds = float(wall_seconds)
        for name, value in (("per_session_seconds_per_minute", per_session_seconds_per_minute),
                            ("probation_seconds", probation_seconds),
                            ("probation_wall_seconds", probation_wall_seconds),
                            ("probation_seconds_per_minute", probation_seconds_per_minute),
                            ("refusal_pause_seconds", refusal_pause_seconds)):
            if value is not None:
                _settings[name] = float(value)
        if probation_nice is not None:
            _settings["probation_nice"] = min(19, max(0, int(probation_nice)))
        if job_nice is not None:
            _settings["job_nice"] = min(19, max(0, int(job_nice)))
        if probation_concurrent is not None:
            _settings["probation_concurrent"] = max(1, int(probation_concurrent))
            _probation_slots = threading.BoundedSemaphore(_settings["probation_concurrent"])
    _restart_if_changed()


def serving_publicly():
    if _settings["public"] is not None:
        return _settings["public"]
    if os.environ.get("SPACE_ID"):
        return True
    name = _settings["server_name"] or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    return not _is_loopback(name)


def _is_loopback(name):
    if name in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _current_pool():
    global _pool
    with _state_lock:
        if _pool is None:
            _pool = Pool(pool_size=_settings["pool_size"], limits=_limits,
                         require_seccomp=serving_publicly(), nice=_settings["job_nice"])
        pool = _pool
    pool.start()
    return pool


def _restart_if_changed():
    global _pool
    with _state_lock:
        old = _pool
        if old is None:
            return
        if (old.pool_size, old.require_seccomp, old.nice) == \
                (_settings["pool_size"], serving_publicly(), _settings["job_nice"]):
            return
        _pool = None
    old.close()


def start(wait=True):
    """Starts the zygote and fills the pool (optional; the first job does it otherwise)."""
    pool = _current_pool()
    if wait and pool.pool_size:
        pool.wait_warm(timeout=15.0)
    return pool


def shutdown():
    """Stops the zygote and the ready workers and removes the runtime directories."""
    global _pool
    with _state_lock:
        pool, _pool = _pool, None
    if pool:
        pool.close()


atexit.register(shutdown)


# ------------------------------------------------------------------ status

def _layers_of(pool):
    if pool.last_layers is None:
        try:
            worker = pool.spawn()
            worker.kill()
            worker.close()
        except WorkerError as exc:
            pool.start_error = str(exc)
        except OSError as exc:
            pool.start_error = str(exc)
    return pool.last_layers


def status():
    try:
        pool = _current_pool()
        layers = _layers_of(pool)
    except Exception as exc:  # the zygote could not even start
        layers, pool = None, None
        start_error = str(exc)
    else:
        start_error = pool.start_error
    return describe_mode(layers, serving_publicly(), start_error)


def describe_mode(layers, public, start_error=None):
    """The mode and the notice for the layers a worker reported (None: no worker started)."""
    if not layers:
        return {"mode": "refused", "layers": {}, "public": public,
                "notice": f"无法启动运行工具的工作进程，暂时不能运行工具代码（{start_error}）。"}
    layers = dict(layers)
    if layers.get("seccomp"):
        parts = ["seccomp 系统调用过滤"]
        if layers.get("landlock"):
            parts.append(f"Landlock 文件与网络限制（ABI {layers['landlock']}）")
        if layers.get("rlimits"):
            parts.append("CPU、内存、文件与输出上限")
        if layers.get("uid") not in (None, 0) and os.geteuid() == 0:
            parts.append("以无特权用户运行")
        return {"mode": "sandboxed", "layers": layers, "public": public,
                "notice": "工具代码在一次性的隔离进程中运行：" + "、".join(parts) + "。"}
    if public:
        return {"mode": "refused", "layers": layers, "public": public,
                "notice": ("这台服务器无法加载 seccomp 沙箱（" + layers.get("seccomp_error", "未知原因")
                           + "）。应用正在公开提供服务，为安全起见不运行任何工具代码。"
                           "请在自己的电脑上运行本应用来体验。")}
    return {"mode": "unsandboxed", "layers": layers, "public": public,
            "notice": ("注意：本机没有可用的 seccomp 沙箱（" + layers.get("seccomp_error", "未知原因")
                       + "），工具代码只在带资源限制的子进程中运行，没有隔离。"
                       "只适合在自己的电脑上运行自己信任的代码。")}


# ------------------------------------------------------------------ admission

class _Refusal(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


class _Ledger:
    """What one session has been using: jobs running now, job starts and worker-seconds
    in the last minute, and until when it is on probation."""
    __slots__ = ("running", "starts", "spent", "probation_until", "last_seen", "schemas", "refused")

    def __init__(self, now):
        self.refused = 0                           # refusals in a row for an exhausted budget
        self.schemas = collections.OrderedDict()   # (source digest, method, strict) -> result
        self.running = 0
        self.starts = collections.deque()      # start times of tool runs
        self.spent = collections.deque()       # (end time, worker seconds) of every job
        self.probation_until = 0.0
        self.last_seen = now

    def forget_old(self, now):
        while self.starts and now - self.starts[0] > WINDOW_SECONDS:
            self.starts.popleft()
        while self.spent and now - self.spent[0][0] > WINDOW_SECONDS:
            self.spent.popleft()

    def seconds_used(self):
        return sum(seconds for _, seconds in self.spent)

    def seconds_until_under(self, budget, now):
        """How long until enough of the last minute's usage has aged out to run again."""
        used = self.seconds_used()
        for ended, seconds in self.spent:
            used -= seconds
            if used < budget:
                return max(1, int(WINDOW_SECONDS - (now - ended)) + 1)
        return int(WINDOW_SECONDS)


def _prune_ledgers(now):
    """Drops sessions that have been idle for longer than anything about them matters."""
    if now - _last_prune[0] < 30:
        return
    _last_prune[0] = now
    keep_for = max(WINDOW_SECONDS, _settings["probation_seconds"])
    for sid in [sid for sid, ledger in _ledgers.items()
                if ledger.running == 0 and now - ledger.last_seen > keep_for]:
        del _ledgers[sid]


class _RunningView:
    """Jobs running now, per session: a read-only view of the ledgers."""

    def get(self, session_id, default=0):
        with _sessions_lock:
            ledger = _ledgers.get(session_id)
            return ledger.running if ledger is not None and ledger.running else default


_session_running = _RunningView()


def session_usage(session_id):
    """What the sandbox currently remembers about a session (for tests and the status line)."""
    now = time.monotonic()
    with _sessions_lock:
        ledger = _ledgers.get(session_id)
        if ledger is None:
            return {"known": False, "running": 0, "runs_last_minute": 0, "seconds_last_minute": 0.0,
                    "on_probation": False}
        ledger.forget_old(now)
        return {"known": True, "running": ledger.running, "runs_last_minute": len(ledger.starts),
                "seconds_last_minute": round(ledger.seconds_used(), 3),
                "on_probation": now < ledger.probation_until}


def forget_session(session_id):
    """Called when the app lets a session go; a running job keeps its ledger until it ends."""
    with _sessions_lock:
        ledger = _ledgers.get(session_id)
        if ledger is not None and ledger.running == 0:
            del _ledgers[session_id]


def known_sessions():
    with _sessions_lock:
        return len(_ledgers)


def refusal_pause(in_a_row):
    """Seconds before the n-th refusal in a row is answered: 1.5, 3, 6, 6, ..."""
    base = _settings["refusal_pause_seconds"]
    return min(base * 2 ** max(0, in_a_row - 1), max(base, _settings["refusal_pause_max_seconds"]))


class _Admission:
    """Decides whether a job may run now, and how: refuses quickly when its session is over
    its limits, puts sessions on probation after a job hit a limit, and charges the time."""

    def __init__(self, session_id, counts_as_run=True):
        self.session_id = session_id
        self.counts_as_run = counts_as_run
        self.slot = None
        self.probation_slot = None
        self.on_probation = False
        self.entered = False
        self.started = 0.0
        self.hit_limit = False

    @property
    def wall_seconds(self):
        if self.on_probation:
            return min(_limits.wall_seconds, _settings["probation_wall_seconds"])
        return _limits.wall_seconds

    @property
    def memory_bytes(self):
        return _settings["probation_memory_bytes"] if self.on_probation else _limits.memory_bytes

    @property
    def nice(self):
        return _settings["probation_nice"] if self.on_probation else _settings["job_nice"]

    def __enter__(self):
        sid = self.session_id
        if sid is not None:
            now = time.monotonic()
            with _sessions_lock:
                _prune_ledgers(now)
                ledger = _ledgers.get(sid)
                if ledger is None:
                    ledger = _ledgers[sid] = _Ledger(now)
                ledger.last_seen = now
                ledger.forget_old(now)
                self.on_probation = now < ledger.probation_until
                budget = _settings["probation_seconds_per_minute" if self.on_probation
                                   else "per_session_seconds_per_minute"]
                used = ledger.seconds_used()
                over_budget = used >= budget
                if over_budget:
                    ledger.refused += 1
                    pause = refusal_pause(ledger.refused)
                    refusal = _Refusal("rate_limited", (
                        f"运行太频繁：你的工具在最近一分钟里累计运行了 {used:.1f} 秒（上限 {budget:g} 秒），"
                        f"请修好死循环或耗时的代码后，约 {ledger.seconds_until_under(budget, now)} 秒后再试。"))
                # Schema refreshes (one per tab on page load) may overlap; they still count
                # against the budget above and queue for the global slots below.
                elif self.counts_as_run and ledger.running >= _settings["per_session_concurrent"]:
                    raise _Refusal("busy", f"你已经有 {ledger.running} 个工具任务在运行，"
                                           "请等它们结束后再试。")
                elif self.counts_as_run and len(ledger.starts) >= _settings["per_session_per_minute"]:
                    raise _Refusal("rate_limited", "一分钟内运行次数太多，请稍等片刻再试。")
                else:
                    if self.counts_as_run:
                        ledger.starts.append(now)
                    ledger.running += 1
                    ledger.refused = 0
                    self.entered = True
            if over_budget:
                time.sleep(pause)
                raise refusal
        try:
            if self.on_probation:
                probation = _probation_slots
                if not probation.acquire(timeout=_settings["queue_wait_seconds"] / 2):
                    raise _Refusal("busy", "你的工具最近超时或超出了资源上限，这类任务需要排队，"
                                           "现在排队的太多了。请修好代码后几秒再试。")
                self.probation_slot = probation
            else:  # probation jobs have their own slot: they never hold one the others need
                slot = _slots
                if not slot.acquire(timeout=_settings["queue_wait_seconds"]):
                    raise _Refusal("busy", "服务器正忙（同时运行的工具任务太多），请几秒后再试。")
                self.slot = slot
        except BaseException:
            self._release()
            self._leave(charge=False)
            raise
        self.started = time.monotonic()
        return self

    def run(self, job):
        """Runs the admitted job in the pool, within this admission's limits."""
        outcome = _current_pool().run(job, wall_seconds=self.wall_seconds, nice=self.nice,
                                      idle=self.on_probation, memory_bytes=self.memory_bytes,
                                      demote_after=_settings["demote_after_seconds"],
                                      on_demote=self.demote)
        self.note(outcome)
        return outcome

    def demote(self):
        """The job has run long enough to be moved to idle CPU: it trades its slot for one
        of the slow lane's, so that the quick jobs behind it need not wait for it to end."""
        if self.slot is not None and self.slot is not _slow_slots and _slow_slots.acquire(blocking=False):
            self.slot.release()
            self.slot = _slow_slots

    def note(self, outcome):
        """The job is over: a job that ran into a limit puts its session on probation."""
        self.hit_limit = outcome is None or outcome.result is None or bool(outcome.too_large)

    def _release(self):
        if self.slot is not None:
            self.slot.release()
            self.slot = None
        if self.probation_slot is not None:
            self.probation_slot.release()
            self.probation_slot = None

    def _leave(self, charge=True):
        if not self.entered:
            return
        self.entered = False
        now = time.monotonic()
        with _sessions_lock:
            ledger = _ledgers.get(self.session_id)
            if ledger is None:
                return
            ledger.running -= 1
            ledger.last_seen = now
            if charge:
                ledger.spent.append((now, now - self.started))
                if self.hit_limit:
                    ledger.probation_until = now + _settings["probation_seconds"]

    def __exit__(self, exc_type, *exc):
        self._release()
        if exc_type is not None and not issubclass(exc_type, _Refusal):
            self.hit_limit = True
        self._leave(charge=True)
        return False


# ------------------------------------------------------------------ messages

def _seconds(value):
    return f"{value:g}"


def _failure(code, message, line=None):
    return {"code": code, "message": message, "line": line}


def _machine_failure(outcome, wall_seconds=None, memory_bytes=None):
    """Turns a job that produced no usable reply into (code, Chinese message)."""
    if outcome.timed_out:
        wall = _limits.wall_seconds if wall_seconds is None else wall_seconds
        return "timeout", f"运行超过 {_seconds(wall)} 秒，检查是否有死循环或长时间等待。"
    if outcome.too_large in ("stdout", "stderr"):
        return "output_too_large", (f"输出超过 {_limits.output_bytes // 1024} KB，已停止运行。"
                                    "请减少 print 的内容，只输出需要的信息。")
    if outcome.too_large == "result":
        return "output_too_large", (f"返回值超过 {_limits.result_bytes // 1024} KB。"
                                    "请只返回模型需要的信息，不要返回整份数据。")
    stderr = outcome.stderr.decode("utf-8", "replace")
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        memory = _limits.memory_bytes if memory_bytes is None else memory_bytes
        return "memory_limit", (f"内存超过上限（约 {memory >> 20} MB），工具进程被终止。"
                                "请减少数据量。")
    if "RecursionError" in stderr or "Fatal Python error" in stderr or not stderr.strip():
        return "worker_crashed", ("工具进程意外退出（常见原因：递归太深、内存耗尽或触碰了系统限制）。"
                                  "请检查代码后重试。")
    return "worker_crashed", "工具进程意外退出。请检查代码后重试。"


_LABELS = {
    "timeout": "运行超时", "output_too_large": "输出过多", "memory_limit": "内存超限",
    "worker_crashed": "运行崩溃", "blocked": "操作被拦截", "syntax_error": "语法错误",
    "module_exception": "源码出错", "no_registry": "缺少注册表", "sandbox_refused": "沙箱不可用",
    "busy": "请稍后再试", "rate_limited": "请稍后再试", "source_too_large": "源码太长",
    "recursion": "递归太深", "invalid_request": "请求无效",
}


def _content(code, message):
    return f"❌ [{_LABELS.get(code, '运行失败')}] {message}"


def _text(data):
    return data.decode("utf-8", "replace")


def _check_request(source):
    if not isinstance(source, str):
        raise _Refusal("invalid_request", "源码必须是字符串。")
    if len(source) > MAX_SOURCE_CHARS:
        raise _Refusal("source_too_large", f"源码超过 {MAX_SOURCE_CHARS} 个字符，请精简后再试。")
    mode = status()
    if mode["mode"] == "refused":
        raise _Refusal("sandbox_refused", mode["notice"])


# ------------------------------------------------------------------ the two calls

def _schema_key(source, method, strict):
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest(), method, bool(strict)


def _recall_schemas(session_id, key):
    """A session's last few successful extractions. The schema panel extracts on every edit
    and 运行 then asks again for the same source: an identical source is answered from here
    without a worker (its module code does not run a second time)."""
    with _sessions_lock:
        ledger = _ledgers.get(session_id)
        found = ledger.schemas.get(key) if ledger is not None else None
        if found is not None:
            ledger.schemas.move_to_end(key)
            ledger.last_seen = time.monotonic()
        return copy.deepcopy(found)


def _remember_schemas(session_id, key, result):
    with _sessions_lock:
        ledger = _ledgers.get(session_id)
        if ledger is None:
            return
        ledger.schemas[key] = copy.deepcopy(result)
        while len(ledger.schemas) > SCHEMAS_REMEMBERED:
            ledger.schemas.popitem(last=False)


def extract_schemas(source, method="registry", strict=False, session_id=None):
    """Runs the module in a worker and returns its tools' schemas (or why it could not).
    With a `session_id` the run is charged to that session's budget like a tool run."""
    empty = {"ok": False, "tools": [], "warnings": {}, "error": None, "stdout": ""}
    if method not in ("registry", "naive"):
        return dict(empty, error=_failure("invalid_request", "method 只能是 \"registry\" 或 \"naive\"。"))
    try:
        _check_request(source)
        key = _schema_key(source, method, strict) if session_id is not None else None
        remembered = _recall_schemas(session_id, key) if key else None
        if remembered is not None:
            return remembered
        with _Admission(session_id, counts_as_run=False) as admission:
            outcome = admission.run({"op": "extract", "source": source, "method": method,
                                     "strict": bool(strict)})
    except _Refusal as refusal:
        return dict(empty, error=_failure(refusal.code, refusal.message))
    except (WorkerError, OSError) as exc:
        return dict(empty, error=_failure("worker_crashed", f"无法启动工作进程：{exc}"))
    stdout = _text(outcome.stdout)
    reply = outcome.result
    empty["worker_pid"] = outcome.worker_pid
    if reply is None or outcome.too_large:
        code, message = _machine_failure(outcome, admission.wall_seconds, admission.memory_bytes)
        return dict(empty, stdout=stdout, error=_failure(code, message))
    tools = reply.get("tools")
    warnings = reply.get("warnings")
    error = reply.get("error")
    if not isinstance(tools, list) or not isinstance(warnings, dict) or \
            (error is not None and not isinstance(error, dict)):
        return dict(empty, stdout=stdout, error=_failure("worker_crashed", "工作进程的回复格式不对，请重试。"))
    result = {"ok": bool(reply.get("ok")) and error is None, "tools": tools, "warnings": warnings,
              "error": error, "stdout": stdout, "duration_ms": outcome.wall_ms,
              "worker_pid": outcome.worker_pid}
    if result["ok"] and key:
        _remember_schemas(session_id, key, result)
    return result


def run_tool(source, name, args, session_id=None):
    """Runs one tool of the module in a fresh worker; the result is what the model is fed."""
    result = {"ok": False, "content": "", "error_code": None, "stdout": "", "stderr": "",
              "duration_ms": 0.0, "arguments": None, "problems": [], "coercions": [],
              "error": None, "wall_ms": 0.0}

    def failed(code, message, line=None):
        return dict(result, error_code=code, content=_content(code, message),
                    error=_failure(code, message, line))

    if not isinstance(name, str):
        return failed("invalid_request", "工具名必须是字符串。")
    if not isinstance(args, (dict, str)) and args is not None:
        return failed("invalid_request", "参数必须是对象（dict）或 JSON 字符串。")
    try:
        encoded = json.dumps(args if args is not None else {}, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        return failed("invalid_request", f"参数无法转成 JSON：{exc}")
    if len(encoded) > MAX_ARGS_CHARS:
        return failed("invalid_request", "参数太长，请精简后再试。")
    try:
        _check_request(source)
        with _Admission(session_id) as admission:
            outcome = admission.run({"op": "run", "source": source, "name": name,
                                     "args": args if args is not None else {}})
    except _Refusal as refusal:
        return failed(refusal.code, refusal.message)
    except (WorkerError, OSError) as exc:
        return failed("worker_crashed", f"无法启动工作进程：{exc}")
    result["stdout"] = _text(outcome.stdout)
    result["stderr"] = _text(outcome.stderr)
    result["wall_ms"] = outcome.wall_ms
    result["worker_pid"] = outcome.worker_pid
    reply = outcome.result
    if reply is None or outcome.too_large:
        code, message = _machine_failure(outcome, admission.wall_seconds, admission.memory_bytes)
        return dict(failed(code, message), stdout=result["stdout"], stderr=result["stderr"],
                    wall_ms=outcome.wall_ms, duration_ms=outcome.wall_ms, worker_pid=outcome.worker_pid)
    error = reply.get("error")
    if error is not None and not isinstance(error, dict):
        error = None
    content = reply.get("content")
    if not isinstance(content, str) or not content:
        if error:
            content = _content(error.get("code"), str(error.get("message", "")))
        else:
            content = "" if content is None else str(content)
    result.update({
        "ok": reply.get("ok") is True,
        "content": content,
        "error_code": reply.get("error_code") if isinstance(reply.get("error_code"), str) else None,
        "duration_ms": float(reply.get("duration_ms") or 0.0),
        "arguments": reply.get("arguments") if isinstance(reply.get("arguments"), dict) else None,
        "problems": [str(p) for p in reply.get("problems") or []],
        "coercions": [str(c) for c in reply.get("coercions") or []],
        "error": error,
    })
    if not result["ok"] and result["error_code"] is None:
        result["error_code"] = (error or {}).get("code") or "tool_exception"
    return result
