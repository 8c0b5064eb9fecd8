"""Runs the tool source typed in the browser in hardened, single-use worker processes.

Public calls:
    seal_secrets(names) -> dict
    extract_schemas(source, method="registry", strict=False) -> {"ok", "tools", "warnings", "error"}
    run_tool(source, name, args, session_id=None) -> {"ok", "content", "error_code", "stdout",
             "duration_ms", "arguments", "problems", "coercions", ...}
    status() -> {"mode", "layers", "notice"}
    configure(public=None, server_name=None, pool_size=None, ...) and shutdown()

Only JSON crosses the boundary.  Every failure comes back as data with a Chinese
message and an error code; nothing here raises for bad student code.
"""
import atexit
import collections
import ipaddress
import json
import os
import threading
import time

from .pool import Limits, Pool, WorkerError
from .sealing import seal_secrets

__all__ = ["seal_secrets", "extract_schemas", "run_tool", "status", "configure", "shutdown", "start"]

MAX_SOURCE_CHARS = 200_000
MAX_ARGS_CHARS = 100_000

_settings = {
    "public": None,            # None: decide from SPACE_ID / the bound address
    "server_name": None,
    "pool_size": 2,
    "max_concurrent": 4,       # jobs running at once, all sessions together
    "per_session_concurrent": 2,
    "per_session_per_minute": 120,
    "queue_wait_seconds": 10.0,
}
_limits = Limits()
_state_lock = threading.Lock()
_pool = None
_slots = threading.BoundedSemaphore(_settings["max_concurrent"])
_sessions_lock = threading.Lock()
_session_running = collections.Counter()
_session_recent = collections.defaultdict(collections.deque)


# ------------------------------------------------------------------ configuration

def configure(public=None, server_name=None, pool_size=None, max_concurrent=None,
              per_session_concurrent=None, per_session_per_minute=None, wall_seconds=None):
    """Sets how the sandbox runs; call before serving. `public=True` (or a non-loopback
    `server_name`) makes the sandbox refuse to run code when seccomp cannot load."""
    global _slots
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
                         require_seccomp=serving_publicly())
        pool = _pool
    pool.start()
    return pool


def _restart_if_changed():
    global _pool
    with _state_lock:
        old = _pool
        if old is None:
            return
        if old.pool_size == _settings["pool_size"] and old.require_seccomp == serving_publicly():
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


class _Admission:
    def __init__(self, session_id):
        self.session_id = session_id
        self.slot = None

    def __enter__(self):
        sid = self.session_id
        if sid is not None:
            now = time.monotonic()
            with _sessions_lock:
                recent = _session_recent[sid]
                while recent and now - recent[0] > 60:
                    recent.popleft()
                if _session_running[sid] >= _settings["per_session_concurrent"]:
                    raise _Refusal("busy", f"你已经有 {_session_running[sid]} 个工具任务在运行，"
                                           "请等它们结束后再试。")
                if len(recent) >= _settings["per_session_per_minute"]:
                    raise _Refusal("rate_limited", "一分钟内运行次数太多，请稍等片刻再试。")
                recent.append(now)
                _session_running[sid] += 1
        self.slot = _slots
        if not self.slot.acquire(timeout=_settings["queue_wait_seconds"]):
            self.slot = None
            self._leave()
            raise _Refusal("busy", "服务器正忙（同时运行的工具任务太多），请几秒后再试。")
        return self

    def _leave(self):
        if self.session_id is not None:
            with _sessions_lock:
                _session_running[self.session_id] -= 1
                if _session_running[self.session_id] <= 0:
                    del _session_running[self.session_id]

    def __exit__(self, *exc):
        if self.slot is not None:
            self.slot.release()
        self._leave()
        return False


# ------------------------------------------------------------------ messages

def _seconds(value):
    return f"{value:g}"


def _failure(code, message, line=None):
    return {"code": code, "message": message, "line": line}


def _machine_failure(outcome):
    """Turns a job that produced no usable reply into (code, Chinese message)."""
    if outcome.timed_out:
        return "timeout", f"运行超过 {_seconds(_limits.wall_seconds)} 秒，检查是否有死循环或长时间等待。"
    if outcome.too_large in ("stdout", "stderr"):
        return "output_too_large", (f"输出超过 {_limits.output_bytes // 1024} KB，已停止运行。"
                                    "请减少 print 的内容，只输出需要的信息。")
    if outcome.too_large == "result":
        return "output_too_large", (f"返回值超过 {_limits.result_bytes // 1024} KB。"
                                    "请只返回模型需要的信息，不要返回整份数据。")
    stderr = outcome.stderr.decode("utf-8", "replace")
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return "memory_limit", (f"内存超过上限（约 {_limits.memory_bytes >> 20} MB），工具进程被终止。"
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

def extract_schemas(source, method="registry", strict=False):
    """Runs the module in a worker and returns its tools' schemas (or why it could not)."""
    empty = {"ok": False, "tools": [], "warnings": {}, "error": None, "stdout": ""}
    if method not in ("registry", "naive"):
        return dict(empty, error=_failure("invalid_request", "method 只能是 \"registry\" 或 \"naive\"。"))
    try:
        _check_request(source)
        with _Admission(None):
            outcome = _current_pool().run({"op": "extract", "source": source, "method": method,
                                           "strict": bool(strict)})
    except _Refusal as refusal:
        return dict(empty, error=_failure(refusal.code, refusal.message))
    except (WorkerError, OSError) as exc:
        return dict(empty, error=_failure("worker_crashed", f"无法启动工作进程：{exc}"))
    stdout = _text(outcome.stdout)
    reply = outcome.result
    empty["worker_pid"] = outcome.worker_pid
    if reply is None or outcome.too_large:
        code, message = _machine_failure(outcome)
        return dict(empty, stdout=stdout, error=_failure(code, message))
    tools = reply.get("tools")
    warnings = reply.get("warnings")
    error = reply.get("error")
    if not isinstance(tools, list) or not isinstance(warnings, dict) or \
            (error is not None and not isinstance(error, dict)):
        return dict(empty, stdout=stdout, error=_failure("worker_crashed", "工作进程的回复格式不对，请重试。"))
    return {"ok": bool(reply.get("ok")) and error is None, "tools": tools, "warnings": warnings,
            "error": error, "stdout": stdout, "duration_ms": outcome.wall_ms,
            "worker_pid": outcome.worker_pid}


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
        with _Admission(session_id):
            outcome = _current_pool().run({"op": "run", "source": source, "name": name,
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
        code, message = _machine_failure(outcome)
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
