"""The sandbox as one object: its settings, its pool of workers and its admission gate,
and the two jobs it runs (describe a module's tools, run one tool).

Only JSON crosses the boundary.  Every failure comes back as data with a Chinese
message and an error code; nothing here raises for bad student code.
"""
import dataclasses
import json
import threading

from hooks import ANSWERS as HOOK_ANSWERS
from tool_outcome import ToolOutcome, error_text, failure

from . import messages
from .admission import Gate, Refusal
from .mcp_host import McpHost
from .pool import Pool, WorkerError
from .settings import Settings

MAX_SOURCE_CHARS = 200_000
MAX_ARGS_CHARS = 100_000
MAX_HOOKS = 20            # hooks one hooks source may register
HOOK_EVENTS = tuple(HOOK_ANSWERS)


class Sandbox:
    def __init__(self, settings=None):
        self._lock = threading.Lock()
        self._settings = settings or Settings()
        self._pool = None
        self._pool_built = None           # the shape the current pool was started with
        self.gate = Gate(self.settings, self.pool)
        self.shell_gate = Gate(self.settings, kind="shell")     # bash commands (sandbox/shell.py)
        self.mcp = McpHost(self.settings)                        # MCP servers (sandbox/mcp_host.py)

    # ------------------------------------------------------------ settings and the pool

    def settings(self):
        return self._settings

    def configure(self, settings=None, **changes):
        """Replaces the settings (`settings`, then `changes` on top); returns the ones replaced."""
        with self._lock:
            previous = self._settings
            self._settings = (settings or previous).changed(**changes)
        self._restart_if_changed()
        return previous

    def _pool_shape(self):
        """What the workers are started with (the time limit is not: it is set per job)."""
        settings = self._settings
        return {"pool_size": settings.pool_size, "limits": settings.limits,
                "require_seccomp": settings.serving_publicly(), "nice": settings.job_nice,
                "schema_methods": dict(settings.schema_methods)}

    @staticmethod
    def _same_workers(shape, other):
        untimed = [dict(each, limits=dataclasses.replace(each["limits"], wall_seconds=0)) for each in (shape, other)]
        return untimed[0] == untimed[1]

    def pool(self):
        with self._lock:
            if self._pool is None:
                self._pool_built = self._pool_shape()
                self._pool = Pool(**self._pool_built)
            pool = self._pool
        pool.start()
        return pool

    def _restart_if_changed(self):
        """A new pool when the workers would be started differently."""
        with self._lock:
            old = self._pool
            if old is None or self._same_workers(self._pool_shape(), self._pool_built):
                return
            self._pool = None
        old.close()

    def start(self, wait=True):
        pool = self.pool()
        if wait and pool.pool_size:
            pool.wait_warm(timeout=15.0)
        return pool

    def shutdown(self):
        with self._lock:
            pool, self._pool = self._pool, None
        if pool:
            pool.close()
        self.mcp.shutdown()

    # ------------------------------------------------------------ status

    def status(self):
        try:
            pool = self.pool()
            if pool.last_layers is None:
                try:
                    worker = pool.spawn()
                    worker.kill()
                    worker.close()
                except (WorkerError, OSError) as exc:
                    pool.start_error = str(exc)
        except Exception as exc:  # the zygote could not even start
            layers, start_error = None, str(exc)
        else:
            layers, start_error = pool.last_layers, pool.start_error
        return messages.describe_mode(layers, self._settings.serving_publicly(), start_error)

    def _check_request(self, source):
        if not isinstance(source, str):
            raise Refusal("invalid_request", "源码必须是字符串。")
        if len(source) > MAX_SOURCE_CHARS:
            raise Refusal("source_too_large", f"源码超过 {MAX_SOURCE_CHARS} 个字符，请精简后再试。")
        mode = self.status()
        if mode["mode"] == "refused":
            raise Refusal("sandbox_refused", mode["notice"])

    # ------------------------------------------------------------ the two jobs

    def extract_schemas(self, source, method="registry", strict=False, session_id=None):
        """Runs the module in a worker and returns its tools' schemas (or why it could not).
        With a `session_id` the run is charged to that session's budget like a tool run."""
        empty = {"ok": False, "tools": [], "warnings": {}, "error": None, "stdout": ""}
        methods = ("registry", *self._settings.schema_methods)
        if method not in methods:
            names = "、".join(f"\"{name}\"" for name in methods)
            return dict(empty, error=messages.verdict("invalid_request", f"method 只能是 {names}。"))
        try:
            self._check_request(source)
            with self.gate.admit(session_id, counts_as_run=False, job="生成 schema 时导入的源码") as admission:
                outcome = admission.run({"op": "extract", "source": source, "method": method,
                                         "strict": bool(strict)})
        except Refusal as refusal:
            return dict(empty, error=messages.verdict(refusal.code, refusal.message))
        except (WorkerError, OSError) as exc:
            return dict(empty, error=messages.verdict(*messages.worker_unavailable(exc)))
        stdout = _text(outcome.stdout)
        reply = outcome.result
        empty["worker_pid"] = outcome.worker_pid
        if reply is None or outcome.too_large:
            return dict(empty, stdout=stdout, error=messages.verdict(*_machine_failure(outcome, admission)))
        tools, warnings, error = reply.get("tools"), reply.get("warnings"), reply.get("error")
        if not isinstance(tools, list) or not isinstance(warnings, dict) or \
                (error is not None and not isinstance(error, dict)):
            return dict(empty, stdout=stdout, error=messages.verdict(*messages.BAD_REPLY))
        return {"ok": bool(reply.get("ok")) and error is None, "tools": tools, "warnings": warnings,
                "error": error, "stdout": stdout, "duration_ms": outcome.wall_ms,
                "worker_pid": outcome.worker_pid}

    def run_tool(self, source, name, args, session_id=None):
        """Runs one tool of the module in a fresh worker: every ToolOutcome field (what the model
        is fed) plus what only the sandbox knows: stdout, stderr, wall_ms, worker_pid, error."""
        result = dict(ToolOutcome(False, "").to_dict(), stdout="", stderr="", wall_ms=0.0,
                      worker_pid=None, error=None)

        def failed(code, message, **fields):
            return {**result, **failure(code, message).to_dict(), "error": messages.verdict(code, message),
                    **fields}

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
            self._check_request(source)
            with self.gate.admit(session_id, job=f"工具 {name}") as admission:
                outcome = admission.run({"op": "run", "source": source, "name": name,
                                         "args": args if args is not None else {}})
        except Refusal as refusal:
            return failed(refusal.code, refusal.message)
        except (WorkerError, OSError) as exc:
            return failed(*messages.worker_unavailable(exc))
        seen = {"stdout": _text(outcome.stdout), "stderr": _text(outcome.stderr),
                "wall_ms": outcome.wall_ms, "worker_pid": outcome.worker_pid}
        reply = outcome.result
        if reply is None or outcome.too_large:
            return failed(*_machine_failure(outcome, admission), duration_ms=outcome.wall_ms, **seen)
        result.update(seen)
        error = reply.get("error") if isinstance(reply.get("error"), dict) else None
        content = reply.get("content")
        if not isinstance(content, str) or not content:
            if error:
                content = error_text(str(error.get("code")), str(error.get("message", "")))
            else:
                content = "" if content is None else str(content)
        clipped_from = reply.get("clipped_from")
        result.update({
            "ok": reply.get("ok") is True,
            "content": content,
            "error_code": reply.get("error_code") if isinstance(reply.get("error_code"), str) else None,
            "duration_ms": float(reply.get("duration_ms") or 0.0),
            "arguments": reply.get("arguments") if isinstance(reply.get("arguments"), dict) else None,
            "problems": [str(p) for p in reply.get("problems") or []],
            "coercions": [str(c) for c in reply.get("coercions") or []],
            "clipped_from": clipped_from if isinstance(clipped_from, int) else None,
            "error": error,
        })
        if not result["ok"] and result["error_code"] is None:
            result["error_code"] = (error or {}).get("code") or "tool_exception"
        return result

    # ------------------------------------------------------------ hooks (code/hooks.py)

    def list_hooks(self, source, session_id=None):
        """The hooks a hooks source registers, in order: {"ok", "hooks": [{"event", "name", "fail"}],
        "error", "stdout"}. Charged to the session like a schema extraction."""
        empty = {"ok": False, "hooks": [], "error": None, "stdout": ""}
        reply, stdout, error = self._hooks_job({"op": "hooks", "source": source}, session_id,
                                               "生成钩子列表时导入的源码", counts_as_run=False)
        if error is None and reply.get("ok") is not True:
            error = reply["error"]
        if error is None:
            error = _listing_error(reply.get("hooks"))
        if error is not None:
            return dict(empty, stdout=stdout, error=error)
        return {"ok": True, "hooks": reply["hooks"], "error": None, "stdout": stdout}

    def run_hook(self, source, index, event, name, payload, session_id=None):
        """Runs the source's `index`-th hook (registered for `event` as `name`) on `payload` in a fresh
        worker: {"ok", "answer", "error" {code, message, line, type?}, "stdout", "wall_ms"}."""
        try:
            refused = None if len(json.dumps(payload, ensure_ascii=False)) <= MAX_ARGS_CHARS else messages.verdict(
                "invalid_request", "钩子的输入太长，请精简后再试。")
        except (TypeError, ValueError) as exc:
            refused = messages.verdict("invalid_request", f"钩子的输入无法转成 JSON：{exc}")
        if refused is not None:
            return {"ok": False, "answer": None, "error": refused, "stdout": "", "wall_ms": 0.0}
        reply, stdout, error = self._hooks_job({"op": "hook", "source": source, "index": index, "event": event,
                                                "name": name, "payload": payload}, session_id, f"钩子 {name}")
        if error is None and reply.get("ok") is not True:
            error = reply["error"] if isinstance(reply.get("error"), dict) else messages.verdict(*messages.BAD_REPLY)
        return {"ok": error is None, "answer": reply.get("answer") if error is None else None, "error": error,
                "stdout": stdout, "wall_ms": reply.get("wall_ms", 0.0)}

    def _hooks_job(self, job, session_id, what, counts_as_run=True):
        """(the worker's reply, its stdout, None) or ({}, stdout, the error of a job that gave no usable reply)."""
        try:
            self._check_request(job["source"])
            with self.gate.admit(session_id, counts_as_run=counts_as_run, job=what) as admission:
                outcome = admission.run(job)
        except Refusal as refusal:
            return {}, "", messages.verdict(refusal.code, refusal.message)
        except (WorkerError, OSError) as exc:
            return {}, "", messages.verdict(*messages.worker_unavailable(exc))
        stdout = _text(outcome.stdout)
        if outcome.result is None or outcome.too_large:
            return {}, stdout, messages.verdict(*_machine_failure(outcome, admission, "钩子进程"))
        reply = outcome.result if isinstance(outcome.result, dict) else {}
        if not reply.get("ok") and not isinstance(reply.get("error"), dict):
            return {}, stdout, messages.verdict(*messages.BAD_REPLY)
        return dict(reply, wall_ms=outcome.wall_ms), stdout, None


def _listing_error(listed):
    """Why a worker's list of hooks cannot be used (None when it can): student code may append to
    its Hooks' list anything at all, and the app builds on every entry."""
    if not isinstance(listed, list) or not all(isinstance(hook, dict) for hook in listed):
        return messages.verdict(*messages.BAD_REPLY)
    if len(listed) > MAX_HOOKS:
        return messages.verdict("hooks_invalid", f"源码登记了 {len(listed)} 个钩子，最多 {MAX_HOOKS} 个。")
    for number, hook in enumerate(listed, 1):
        if hook.get("event") not in HOOK_EVENTS or hook.get("fail") not in ("open", "closed") or \
                not isinstance(hook.get("name"), str) or not hook["name"]:
            said = {key: hook.get(key) for key in ("event", "name", "fail")}
            return messages.verdict("hooks_invalid", f"第 {number} 个钩子的登记不对（{json.dumps(said, ensure_ascii=False, default=repr)[:200]}）："
                                                     f"event 应为 {' / '.join(HOOK_EVENTS)}，fail 应为 open 或 closed，"
                                                     "name 是非空的文字。请用 hooks.add 或 @hooks.on 登记。")
    return None


def _machine_failure(outcome, admission, process="工具进程"):
    """(code, message) of a job that produced no usable reply. On probation its time and memory
    limits were probation's smaller ones: said, with why (so the headline names the sandbox)."""
    code, message = messages.machine_failure(outcome, admission.settings.limits,
                                             admission.wall_seconds, admission.memory_bytes, process)
    if admission.on_probation and code in ("timeout", "memory_limit"):
        return "probation", messages.limit_on_probation(message, admission.probation_note)
    return code, message


def _text(data):
    return data.decode("utf-8", "replace")
