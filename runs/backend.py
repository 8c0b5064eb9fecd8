"""What the page and the named API ask of the server, in one place: the schemas of a
tool source, one call of a tool, and a run of a lesson's loop.

Extraction results are kept in one small cache shared by every tab, keyed by the
source's hash, the method and strict. A class starts from the same example sources
and a run asks again for the schemas the panel has just shown, so most requests are
answered from here: a hit runs nothing in the sandbox and charges nobody's budget.
Only successful extractions are kept (a refusal or a timeout must be asked again).

Nothing here raises for a broken source, a broken worker or a failing model: every
failure comes back as data, in the shape the rest of the page already shows.
"""
from __future__ import annotations

import collections
import copy
import dataclasses
import hashlib
import json
import threading
from typing import Any, Callable, Iterator, Mapping

import i18n
import sandbox
import events as loop_events
import tool_outcome
from i18n import tr

from access.clients import Settings, make_client

CACHE_SIZE = 256          # extraction results kept (a schema list is a few KB)
_cache: collections.OrderedDict = collections.OrderedDict()
_cache_lock = threading.Lock()
NEXT = object()           # advance(): "go on" rather than "send this override"


# ------------------------------------------------------------------ schemas

def error_text(error: dict | None) -> str:
    """An extraction's error (line and message) as the one failure text of the project (tool_outcome.error_text)."""
    if not error:
        return ""
    line, message = error.get("line"), str(error.get("message") or "")
    where = tr("第 {line} 行：", "line {line}: ").format(line=line) if line and f"第 {line} 行" not in message else ""
    return tool_outcome.error_text(error.get("code") or "", where + (message or tr("没有说明原因", "no reason given")))


def remembered(source: str, kind: tuple, ask: Callable[[], dict]) -> dict:
    """What `ask()` (one sandboxed job on `source`: its schemas by some method, its hooks) answers,
    from the cache when this source was asked the same `kind` of question before. Only an answer
    with "ok" is kept: a refusal or a timeout must be asked again."""
    key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest(), *kind)
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return copy.deepcopy(found)
    answer = ask()
    if answer.get("ok"):
        with _cache_lock:
            _cache[key] = copy.deepcopy(answer)
            _cache.move_to_end(key)
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return answer


def extract(source: str, method: str = "registry", strict: bool = False, session_id: str | None = None) -> dict:
    """{"ok", "tools", "warnings", "error", "stdout"} of a tool source. A source seen before
    is answered from the cache; otherwise one sandboxed extraction charged to `session_id`."""
    source = source or ""

    def ask() -> dict:
        try:
            result = sandbox.extract_schemas(source, method=method, strict=bool(strict), session_id=session_id)
        except Exception as exc:  # the sandbox is a boundary: report, never crash the page
            result = {"ok": False, "error": {"code": "sandbox", "line": None,
                                             "message": f"schema 没有生成（{exc}）。请稍后重试"}}
        return {"ok": bool(result.get("ok")) and not result.get("error"), "tools": result.get("tools") or [],
                "warnings": result.get("warnings") or {}, "error": result.get("error"),
                "stdout": result.get("stdout") or ""}

    return remembered(source, ("schemas", method, bool(strict)), ask)


# ------------------------------------------------------------------ one tool call

def call_tool(source: str, name: str, arguments: Any, session_id: str | None = None) -> dict:
    """One call of a tool in the sandbox: the fields of tool_outcome.ToolOutcome plus the
    sandbox's stdout/stderr. `arguments` is a dict or the JSON text a student typed."""
    if not name:
        return dict(tool_outcome.failure("invalid_request", "还没有选择工具", "先在列表里选一个工具").to_dict(),
                    stdout="", stderr="")
    try:
        result = sandbox.run_tool(source or "", name, arguments if arguments is not None else {},
                                  session_id=session_id)
    except Exception as exc:  # a broken worker is one failed call, not a broken page
        failed = tool_outcome.failure("sandbox", f"工具没有运行（{exc}）", "请重试")
        return dict(failed.to_dict(), stdout="", stderr="")
    return result


# What a JSON value is, said in a sentence: (Chinese, English). null is named by its own text.
JSON_KINDS = {str: ("字符串", "the string"), bool: ("布尔值", "the boolean"), int: ("数字", "the number"),
              float: ("数字", "the number"), list: ("数组", "the array"), type(None): ("", "")}


def not_an_object(typed: str) -> str:
    """Arguments typed as JSON that is valid but not an object ("hello", 3, [1, 2], null, true):
    what was expected and what came, in the tab's language. "" for an object, or for text that
    is not JSON at all (the registry's own message says where it breaks)."""
    try:
        value = json.loads(typed)
    except (TypeError, ValueError):
        return ""
    if isinstance(value, dict):
        return ""
    zh, en = JSON_KINDS.get(type(value), ("值", "the value"))
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    return tr("参数应是 JSON 对象 {{\"参数名\": 值}}，收到的是{kind} {value}：它是合法的 JSON，但不是对象。",
              "The arguments must be a JSON object {{\"name\": value}}; this is {kind}{value}: valid JSON, but "
              "not an object.").format(kind=i18n.pick(zh, f"{en} " if en else ""), value=shown)


def executor(source: str, session_id: str | None = None) -> Callable[[str, Any], dict]:
    """The `execute(name, args)` a loop is given: tools always run in the sandbox."""
    def execute(name: str, args: Any) -> dict:
        return call_tool(source, name, args, session_id)
    execute.max_parallel = sandbox.current_settings().tool.per_session_concurrent   # parallel calls beyond it are refused
    # A loop that serves the tools elsewhere (the MCP lesson: a server for this source) starts from these.
    execute.source, execute.session_id = source, session_id
    return execute


# ------------------------------------------------------------------ a run of a loop

def relayed(steps: Iterator, change: Callable[[dict], dict]) -> Iterator:
    """The loop `steps`, each event passed through `change` on its way out, each reply (a person's
    answer, step mode's override) sent back in, and its return value returned; closing this closes
    the loop. What `yield from steps` does, for a backend that adds to the loop's events."""
    reply = None
    try:
        while True:
            try:
                event = steps.send(reply)
            except StopIteration as stop:
                return stop.value
            reply = yield change(event)
    finally:
        steps.close()


def child_turns(steps: Iterator) -> Iterator:
    """The loop `steps` (relayed), each sub-agent event given "child_turn": the round of the parent's
    task call it belongs to. code/subagents.py tags a child's events with "child", the id of that call;
    some servers number call ids from call_0 every round, so the page groups a child's events by the
    call's round and id together. The round is the page's bookkeeping, kept out of the course code."""
    rounds: dict = {}

    def numbered(event: dict) -> dict:
        if "child" in event:
            return {**event, "child_turn": rounds.get(event["child"])}
        if event.get("type") == "tool_call":
            rounds[event.get("id")] = event.get("turn")
        return event
    return relayed(steps, numbered)


def jsonable(event: Any) -> dict:
    """Events go into files and the page: make sure they are plain JSON data."""
    try:
        return json.loads(json.dumps(event, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return loop_events.error(None, "bad_event", f"无法显示的事件：{event!r}"[:500])


@dataclasses.dataclass
class Run:
    """One run of a lesson's loop: the tools it was given, its events so far, and the loop
    itself while it has more to say. `error` says why it could not start; `source_error`
    tells a broken tool source from a client that could not be made."""
    tools: list = dataclasses.field(default_factory=list)
    loop: Iterator | None = None
    events: list = dataclasses.field(default_factory=list)
    error: dict | None = None
    source_error: bool = False
    hand_written: set = dataclasses.field(default_factory=set)   # (turn, id) of calls given a hand-written result

    @property
    def running(self) -> bool:
        return self.loop is not None

    def close(self) -> None:
        """Drops a loop left paused (its generator is closed, not left to the collector)."""
        loop, self.loop = self.loop, None
        if loop is not None:
            try:
                loop.close()
            except Exception:  # a loop that fails while closing is being dropped anyway
                pass


# start(client, question, tools, execute, settings, options) -> the lesson's loop generator
Starter = Callable[[Any, str, list, Callable, Settings, dict], Iterator]


def start_run(start: Starter, source: str, question: str, settings: Settings, options: Mapping | None = None, *,
              session_key: str = "", secrets: Mapping[str, str] | None = None, mistake: str | None = None,
              strict: bool = False, session_id: str | None = None, request: Any = None,
              class_code: str = "", served: bool = False, tools: bool = True, purpose: dict | None = None) -> Run:
    """Extracts the tools (from the cache when the panel just did), makes the client and
    starts the loop. Nothing has run yet: call advance() for each event. `request` and
    `class_code` decide whether the server's keys may be used (see access/). A `served`
    lesson's loop gets its tools from a server that loads the source itself (MCP): a source
    that does not load is then the server's to report, and the loop starts all the same. A loop
    that offers no tools (`tools` False: the context lesson) skips the source altogether. `purpose`
    (runs/purposes.py's event: what the question is for) is the run's first event."""
    report = extract(source, "registry", strict, session_id) if tools else {"ok": True, "tools": []}
    if not report["ok"] and not served:
        return Run(error=report["error"], source_error=True)
    run = Run(tools=report["tools"] if report["ok"] else [], events=[purpose] if purpose else [])
    try:
        client = make_client(settings, session_key, secrets or {}, mistake=mistake or None, request=request,
                             class_code=class_code)
        run.loop = start(client, question, report["tools"], executor(source, session_id), settings, dict(options or {}))
    except Exception as exc:  # a missing key, an unknown provider: said plainly, nothing started
        run.error = {"code": getattr(exc, "code", "client"), "message": str(exc) or exc.__class__.__name__,
                     "line": None}
    return run


def advance(run: Run, override: Any = NEXT) -> dict | None:
    """The loop's next event, recorded in `run.events`; None once the loop has ended.
    `override` is what step mode sends back after a tool_call: {"arguments": {...}} or
    {"result": "..."} (a hand-written result: the tool does not run)."""
    if run.loop is None:
        return None
    if isinstance(override, dict) and "result" in override:
        paused = next((e for e in reversed(run.events) if e.get("type") == "tool_call"), {})
        run.hand_written.add((paused.get("turn"), paused.get("id")))   # parallel calls: results come after all calls
    try:
        event = next(run.loop) if override is NEXT else run.loop.send(override)
    except StopIteration:
        run.loop = None
        return None
    except Exception as exc:  # whatever the client or loop raised: an error event, the page stays alive
        run.loop = None
        event = loop_events.error(None, getattr(exc, "code", "exception"), str(exc) or exc.__class__.__name__)
    event = jsonable(event)
    if event.get("type") == "tool_result" and (event.get("turn"), event.get("id")) in run.hand_written:
        event["overridden"] = "结果由学生手写，没有执行工具"
        run.hand_written.discard((event.get("turn"), event.get("id")))
    run.events.append(event)
    return event


def run_to_end(run: Run) -> Run:
    """Advances until the loop ends (the named API's runs have no step mode)."""
    while advance(run) is not None:
        pass
    return run


def sandbox_status() -> dict:
    """{"mode", "layers", "notice"}: whether student code runs sandboxed, for the page and /status."""
    return sandbox.status()


def forget_session(session_id: str) -> None:
    """A tab has gone: the sandbox forgets its usage (cached schemas are shared, not its own)."""
    sandbox.forget_session(session_id)
