"""The worker program: runs one job on a student's tool source, inside its own limits.

Started by the app as `python -I -B -X utf8 worker.py zygote '<config json>'` from a
private runtime directory that also holds hardening.py, cpu_share.py and the course modules the
student's source may import (tool_registry.py and the modules it imports, tool_outcome.py,
hooks.py and its modules, and the modules of the configured schema methods).  The zygote imports everything once,
then forks one child per requested worker.  Each child puts itself in its own session, hardens itself
(rlimits, non-dumpable, Landlock, seccomp, audit hook), reports which layers hold,
and waits for exactly one job.  It never runs a second one.

File descriptors of a child: 0 job (one JSON line in), 1 and 2 the student's output,
3 the result channel (a "ready" JSON line, then one result JSON line).  Only JSON
crosses the boundary.
"""
import gc
import json
import os
import signal
import socket
import sys
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cpu_share  # noqa: E402  (needs the path above)
import hardening  # noqa: E402
from tool_outcome import FIELDS, ToolOutcome, error_text, failure  # noqa: E402

FILENAME = "<工具源码>"
MODULE_NAME = "student_tools"
RESULT_FD = 3
_memory_bytes = [256 << 20]   # this worker's memory budget, for the error message
_schema_methods = {}          # method name -> "module:function" (from the zygote's config)


# ------------------------------------------------------------------ start-up

def preload():
    """Everything student code commonly imports, loaded before any restriction."""
    import asyncio  # noqa: F401
    import collections, dataclasses, datetime, decimal, enum, fractions, functools  # noqa: F401,E401
    import inspect, itertools, math, random, re, statistics, string, textwrap  # noqa: F401,E401
    import typing, uuid, zoneinfo, resource, selectors, threading  # noqa: F401,E401
    import concurrent.futures, difflib, copy, operator, heapq, bisect, csv, io  # noqa: F401,E401
    hardening.preload()
    for name in ("typing_extensions", "jsonschema", "docstring_parser", "docstring_parser.rest",
                 "docstring_parser.numpydoc", "docstring_parser.google", "pydantic"):
        try:
            __import__(name)
        except ImportError:
            pass
    try:
        import pydantic
        pydantic.TypeAdapter(int).json_schema()  # pydantic imports its parts lazily
        pydantic.BaseModel  # noqa: B018
    except Exception:
        pass
    for name in course_modules():   # the registry, its own modules, the schema methods' modules
        try:
            __import__(name)
        except Exception:
            traceback.print_exc()
    try:
        import tool_registry

        _warm_registry(tool_registry)
    except Exception:
        traceback.print_exc()


def course_modules():
    """The modules copied next to this file (the parent copies exactly what workers import)."""
    return sorted(entry[:-3] for entry in os.listdir(HERE)
                  if entry.endswith(".py") and entry not in ("worker.py", "hardening.py", "cpu_share.py", "mcp_worker.py"))


def _warm_registry(tool_registry):
    """One throw-away tool, so lazy imports and caches inside the registry are filled now."""
    registry = tool_registry.ToolRegistry()

    @registry.tool("预热")
    def _warm(count: int, label: str = "x") -> str:
        """预热。

        Args:
            count: 次数
            label: 标签
        """
        return label * count

    registry.to_schemas()
    registry.to_schemas(strict=True)
    registry.call("_warm", {"count": "2"})
    registry.call("_warm", '{"count": 1}')


_WARM_SOURCE = """
from typing import Literal, Optional
from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("预热用的工具")
def warm(city: str, count: int = 1, unit: Literal["c", "f"] = "c", note: Optional[str] = None) -> dict:
    \"\"\"预热。

    Args:
        city: 城市
        count: 次数
    \"\"\"
    return {"city": city, "count": count, "unit": unit}
"""


def warm_child():
    """Runs a throw-away job in the fresh child: the copy-on-write page faults and first-call
    caches are paid while the worker waits in the pool, not during the student's job."""
    try:
        module, error = load_module(_WARM_SOURCE)
        if error is None:
            registry = find_registry(module)
            registry.to_schemas()
            _json_line(registry.call("warm", {"city": "北京", "count": "2"}).to_dict())
            _json_line(registry.call("warm", {"count": "x"}).to_dict())
        sys.modules.pop(MODULE_NAME, None)
    except Exception:
        pass


def harden(config):
    """Applies every layer it can; returns what holds (JSON-ready)."""
    layers = {"uid": os.getuid()}
    limits = config["limits"]
    try:
        hardening.apply_rlimits(limits["cpu_seconds"], limits["memory_bytes"],
                                limits["file_bytes"], limits["open_files"])
        layers["rlimits"] = True
    except Exception as exc:
        layers["rlimits"] = False
        layers["rlimits_error"] = repr(exc)
    try:
        hardening.set_non_dumpable()
        layers["non_dumpable"] = True
    except Exception:
        layers["non_dumpable"] = False
    try:
        layers["landlock"] = hardening.apply_landlock(config["read_only_paths"])
    except Exception as exc:
        layers["landlock"] = 0
        layers["landlock_error"] = repr(exc)
    try:
        layers["seccomp"] = hardening.apply_seccomp()
    except Exception as exc:
        layers["seccomp"] = False
        layers["seccomp_error"] = f"{type(exc).__name__}: {exc}"
    layers["audit_hook"] = hardening.install_audit_hook()
    return layers


# ------------------------------------------------------------------ the job

def _student_line(tb):
    """Line number of the innermost frame that belongs to the student's source."""
    line = None
    for frame in traceback.extract_tb(tb):
        if frame.filename == FILENAME:
            line = frame.lineno
    return line


def _describe(exc):
    text = str(exc)
    if len(text) > 500:
        text = text[:500] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _classify(exc):
    """(error code, Chinese sentence) for an exception raised by student code."""
    if isinstance(exc, hardening.BlockedAction):
        return "blocked", str(exc)
    if isinstance(exc, PermissionError):
        return "blocked", (f"沙箱拒绝了这个操作（{_describe(exc)}）。工具不能访问网络、写文件、"
                           f"读取源码以外的文件、启动子进程或发送信号，请使用参数或示例数据。")
    if isinstance(exc, MemoryError):
        return "memory_limit", (f"内存超过上限（约 {_memory_bytes[0] >> 20} MB）。"
                                "请减少数据量，避免一次性构造巨大的列表或字符串。")
    if isinstance(exc, RecursionError):
        return "recursion", "递归太深（RecursionError）。请检查递归是否有终止条件，或改用循环。"
    return None, _describe(exc)


def _error(code, message, line):
    return {"code": code, "message": message, "line": line}


def load_module(source):
    """Compiles and runs the student's module. Returns (module, error dict or None)."""
    try:
        code = compile(source, FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"第 {exc.lineno} 行" if exc.lineno else "源码中"
        text = (exc.text or "").strip()
        detail = f"：{text}" if text else ""
        return None, _error("syntax_error",
                            f"{where}有语法错误（{exc.msg}）{detail}。请修正这一行后再试。", exc.lineno)
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = FILENAME
    sys.modules[MODULE_NAME] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included
        line = _student_line(exc.__traceback__)
        where = f"第 {line} 行" if line else "导入时"
        code_, sentence = _classify(exc)
        if code_ is None:
            return None, _error("module_exception",
                                f"源码在导入时出错（{where}）：{sentence.rstrip('。. ')}。请修正后再试。", line)
        return None, _error(code_, f"{where}：{sentence}", line)
    return module, None


def find_registry(module):
    import tool_registry

    found = [(name, value) for name, value in vars(module).items()
             if isinstance(value, tool_registry.ToolRegistry)]
    for name, value in found:
        if name == "registry":
            return value
    return found[0][1] if found else None


NO_REGISTRY = ("源码里没有找到 ToolRegistry 实例。请写 `registry = ToolRegistry()`，"
               "再用 `@registry.tool(...)` 装饰工具函数。")


def extract(job):
    module, error = load_module(job["source"])
    if error:
        return {"ok": False, "tools": [], "warnings": {}, "error": error}
    registry = find_registry(module)
    if registry is None:
        return {"ok": False, "tools": [], "warnings": {}, "error": _error("no_registry", NO_REGISTRY, None)}
    try:
        method = job.get("method") or "registry"
        if method == "registry":
            tools = registry.to_schemas(strict=bool(job.get("strict")))
        else:
            describe = _schema_method(method)
            tools = [describe(tool.func, tool.description) for tool in registry.tools.values()]
        warnings = {name: list(items) for name, items in registry.warnings().items()}
    except BaseException as exc:
        line = _student_line(exc.__traceback__)
        code_, sentence = _classify(exc)
        return {"ok": False, "tools": [], "warnings": {},
                "error": _error(code_ or "schema_error", f"生成工具描述时出错：{sentence}", line)}
    return {"ok": True, "tools": tools, "warnings": warnings, "error": None}


def _schema_method(method):
    """The configured function (func, description) -> schema for `method`."""
    import importlib

    module, _, function = _schema_methods[method].partition(":")
    return getattr(importlib.import_module(module), function)


def _watch_tools(registry, seen):
    """Wraps each tool function so an exception's origin in the student's source is kept."""
    import functools
    import inspect

    for tool in list(registry.tools.values()):
        original = tool.func
        if inspect.iscoroutinefunction(original):
            @functools.wraps(original)
            async def wrapper(*args, __original=original, **kwargs):
                try:
                    return await __original(*args, **kwargs)
                except BaseException as exc:
                    seen.append(exc)
                    raise
        else:
            @functools.wraps(original)
            def wrapper(*args, __original=original, **kwargs):
                try:
                    return __original(*args, **kwargs)
                except BaseException as exc:
                    seen.append(exc)
                    raise
        try:
            object.__setattr__(tool, "func", wrapper)
        except Exception:
            pass  # keep the original; only the line number is lost


def _outcome_fields(outcome):
    """The registry's outcome as the fields of tool_outcome.ToolOutcome (and nothing else)."""
    values = outcome.to_dict() if hasattr(outcome, "to_dict") else dict(outcome)
    return dict(ToolOutcome(False, "").to_dict(), **{key: values[key] for key in FIELDS if key in values})


def run(job):
    """Loads the module and runs one tool through the registry's call(): the reply is the
    registry's outcome (its text already written), plus the error with its line."""
    module, error = load_module(job["source"])
    if error is None and (registry := find_registry(module)) is None:
        error = _error("no_registry", NO_REGISTRY, None)
    if error:
        return dict(failure(error["code"], error["message"]).to_dict(), error=error)
    seen = []
    _watch_tools(registry, seen)
    try:
        result = _outcome_fields(registry.call(job["name"], job["args"]))
    except BaseException as exc:  # e.g. a return value whose str() raises while it is formatted
        seen.append(exc)
        result = failure("tool_exception", f"{job['name']} 的返回值无法转成文本：{_describe(exc)}",
                         "请返回字符串、数字、列表或字典").to_dict()
    result["error"] = None
    if not result["ok"] and seen:
        exc = seen[-1]
        line = _student_line(exc.__traceback__)
        code_, sentence = _classify(exc)
        where = f"（工具源码第 {line} 行）" if line else ""
        if code_ is not None:   # the sandbox stopped it: say so, in the sandbox's words
            result["error_code"] = code_
            result["content"] = _with_location(error_text(code_, sentence), where)
        elif line and f"第 {line} 行" not in result["content"]:
            result["content"] = _with_location(result["content"], where)
        result["error"] = _error(result["error_code"], result["content"], line)
    return result


def _with_location(content, where):
    """Puts "（工具源码第 N 行）" after the conclusion, before the closing advice."""
    body = content.rstrip("。")
    cut = body.rfind("。")
    if cut < 0:
        return content + where
    return body[:cut] + where + content[cut:]


# ------------------------------------------------------------------ hooks (code/hooks.py)

NO_HOOKS = ("源码里没有找到 Hooks 实例。请写 `hooks = Hooks()`，"
            "再用 `@hooks.on(PRE)` 这样的装饰器登记钩子。")


def find_hooks(module):
    """The module's `hooks.Hooks` (the one named `hooks` if there are several), or None."""
    import hooks

    found = [(name, value) for name, value in vars(module).items() if isinstance(value, hooks.Hooks)]
    return next((value for name, value in found if name == "hooks"), found[0][1] if found else None)


def _loaded_hooks(source):
    """(the module's Hooks, None) or (None, the error dict)."""
    module, error = load_module(source)
    if error is None and (registered := find_hooks(module)) is None:
        error = _error("no_hooks", NO_HOOKS, None)
    return (None, error) if error else (registered, None)


def list_hooks(job):
    """The hooks a source registers, in order: [{"event", "name", "fail"}]."""
    registered, error = _loaded_hooks(job["source"])
    if error:
        return {"ok": False, "hooks": [], "error": error}
    return {"ok": True, "error": None,
            "hooks": [{"event": hook.event, "name": hook.name, "fail": hook.fail} for hook in registered.registered]}


def run_hook(job):
    """Runs the source's `index`-th hook on `payload`: {"ok", "answer", "error"}. The answer is
    what the hook returned, unjudged (the app's hooks.consult judges it, as for a hook of its own)."""
    registered, error = _loaded_hooks(job["source"])
    if error:
        return {"ok": False, "answer": None, "error": error}
    index = job.get("index")
    hook = registered.registered[index] if isinstance(index, int) and 0 <= index < len(registered.registered) else None
    if hook is None or (hook.event, hook.name) != (job.get("event"), job.get("name")):
        return {"ok": False, "answer": None,
                "error": _error("hooks_changed", "这段源码登记的钩子和运行开始时不一样了。请重新运行。", None)}
    try:
        answer = hook.run(job["payload"])
    except BaseException as exc:   # the student's hook: anything may be raised
        line = _student_line(exc.__traceback__)
        code_, sentence = _classify(exc)
        text = str(exc)   # the app names the exception itself: "KeyError: 'x'"
        message = sentence if code_ else (text if len(text) <= 500 else text[:500] + "…")
        return {"ok": False, "answer": None,
                "error": _error(code_ or "hook_exception", message, line) | {"type": type(exc).__name__}}
    try:   # what crosses the boundary is JSON: a value that is not (a set, bytes) is a broken hook, said here
        json.dumps(answer, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        return {"ok": False, "answer": None,
                "error": _error("hook_exception", f"返回值不能转成 JSON（{exc}）", None) | {"type": type(exc).__name__}}
    return {"ok": True, "answer": answer, "error": None}


def handle(job):
    if job.get("op") == "extract":
        return extract(job)
    if job.get("op") == "run":
        return run(job)
    if job.get("op") == "hooks":
        return list_hooks(job)
    if job.get("op") == "hook":
        return run_hook(job)
    return {"ok": False, "error": _error("bad_job", "未知的任务类型", None)}


# ------------------------------------------------------------------ plumbing

def _json_line(value):
    text = json.dumps(value, ensure_ascii=False, default=_fallback)
    return text.encode("utf-8", "replace") + b"\n"


def _fallback(value):
    text = repr(value)
    return text if len(text) <= 2000 else text[:2000] + "…"


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_line(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            break
    return b"".join(chunks)


def enter_child(fds, config):
    """What a freshly forked child does first: its four pipes become stdin, stdout, stderr and
    RESULT_FD (nothing else stays open), its own process group (killed as one; still the
    server's session), default signals, and a private working directory."""
    for fd, target in zip(fds, (0, 1, 2, RESULT_FD)):
        os.dup2(fd, target)
    os.closerange(RESULT_FD + 1, 1 << 16)
    os.setpgid(0, 0)
    for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    workdir = os.path.join(config["workdir"], f"w{os.getpid()}")
    os.mkdir(workdir, 0o700)
    os.chdir(workdir)


def child_main(fds, config):
    """Runs in the freshly forked child (fds: job, stdout, stderr, result); never returns."""
    try:
        enter_child(fds, config)
        warm_child()
        layers = harden(config)
        refuse = config.get("require_seccomp") and not layers.get("seccomp")
        _write_all(RESULT_FD, _json_line({"ready": not refuse, "layers": layers}))
        if refuse:
            os._exit(3)
        line = _read_line(0)
        started = time.perf_counter()
        try:
            result = handle(json.loads(line))
        except BaseException as exc:
            result = {"ok": False, "error": _error("worker_error", _describe(exc), None)}
        result["worker_ms"] = (time.perf_counter() - started) * 1000
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        reply = _json_line(result)
        _write_all(RESULT_FD, reply)
        os.close(RESULT_FD)
        # Wait to be killed with the whole group (threads the tool left behind die with us).
        os.read(0, 1)
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
    os._exit(0)


def _with_memory(config, requested):
    """b"F" forks a worker with the configured limits; b"F<bytes>" one with less memory."""
    if not requested.isdigit():
        return config
    limits = dict(config["limits"], memory_bytes=min(int(requested), config["limits"]["memory_bytes"]))
    _memory_bytes[0] = limits["memory_bytes"]
    return dict(config, limits=limits)


def zygote_main(config, child=None, warm=None):
    """Imports everything, then forks a child per request: `child(fds, config)` (a tool worker
    unless given: sandbox/mcp_worker.py passes its MCP server) after `warm()`, more imports."""
    child = child or child_main
    _memory_bytes[0] = config["limits"]["memory_bytes"]
    _schema_methods.update(config.get("schema_methods") or {})
    cpu_share.lower_priority(config.get("nice", 0))     # its forks inherit it
    hardening.detach_terminal()                          # and have no terminal
    preload()
    if warm is not None:
        warm()
    config["read_only_paths"] = hardening.read_only_paths([HERE])
    hardening.prepare_seccomp()
    hardening.set_non_dumpable()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control = socket.socket(fileno=0)
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(control, 64, 4)
        except (ConnectionError, OSError):
            break
        if not message.startswith(b"F") or len(fds) != 4:
            break
        gc.freeze()  # the child's collector then leaves the inherited objects (and their pages) alone
        pid = os.fork()
        if pid == 0:
            child(fds, _with_memory(config, message[1:]))
        for fd in fds:
            os.close(fd)
        try:
            control.sendall(f"{pid}\n".encode())
        except OSError:
            break
    os._exit(0)


if __name__ == "__main__":
    # The parent starts this file as the zygote: `python -I -B worker.py zygote CONFIG_JSON`.
    zygote_main(json.loads(sys.argv[2]))
