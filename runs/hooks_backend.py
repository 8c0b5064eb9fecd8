"""Hooks typed by a student, around a real loop: code/hooks.py's `run_with_hooks`, unchanged,
with a `Hooks` whose every hook is a call into the sandbox.

The hooks source is student code like the tools source: the app never imports it. The sandbox
lists what it registers (event, name, fail) once per run, then runs each hook call in a fresh
worker, as it runs each tool call. So a hook keeps nothing between calls: a timing or audit
hook says what it saw by printing, and what a call printed comes with its hook event, under
"printed" (the one key this module adds to code/events.py's HookEvent).
"""
from __future__ import annotations

from typing import Any, Iterator

import events as loop_events
import hooks
import sandbox

from runs import backend

# The name a hook's failure goes by when the sandbox stopped or refused it (no exception of the
# student's own): hooks.consult writes "沙箱: 运行超过 2 秒…".
SANDBOX = "沙箱"


def raised(error: dict) -> Exception:
    """A hook's error from the sandbox, as an exception of the same name as the student's, so
    hooks.consult says it as for a hook run in this process: "KeyError: 'x'（钩子源码第 3 行）"."""
    where = f"（钩子源码第 {error['line']} 行）" if error.get("line") else ""
    name = error.get("type") if isinstance(error.get("type"), str) and error["type"].isidentifier() else SANDBOX
    return type(name, (Exception,), {})(f"{error.get('message') or ''}{where}")


def listed(source: str, session_id: str | None = None) -> dict:
    """sandbox.list_hooks(source), {"ok", "hooks", "error", "stdout"}, from the backend's cache when
    this source was listed before: the page's panel lists on every edit, and a run lists again."""
    source = source or ""
    if not source.strip():        # nothing written yet: no hooks, and nothing to run in the sandbox
        return {"ok": True, "hooks": [], "error": None, "stdout": ""}
    return backend.remembered(source, ("hooks",), lambda: sandbox.list_hooks(source, session_id))


class Sandboxed:
    """The hooks a source registers, each run in the sandbox; `printed` holds what each call
    printed, in the order the calls ran, until `printed_by` takes it."""

    def __init__(self, source: str, session_id: str | None):
        self.source, self.session_id = source, session_id
        self.hooks, self.printed = hooks.Hooks(), []
        listing = listed(source, session_id)
        self.error = None if listing["ok"] else listing["error"]
        for index, item in enumerate(listing["hooks"]):     # checked by the sandbox (service.list_hooks)
            self.hooks.registered.append(hooks.Registered(item["event"], item["name"], self._caller(index, item),
                                                          item["fail"]))

    def _caller(self, index: int, item: dict):
        def run(payload: dict) -> Any:
            reply = sandbox.run_hook(self.source, index, item["event"], item["name"], payload, self.session_id)
            self.printed.append(reply.get("stdout") or "")
            if not reply["ok"]:
                raise raised(reply["error"])
            return reply["answer"]
        return run

    def with_printed(self, event: dict) -> dict:
        """A hook event with what its call printed (each hook event follows exactly one call)."""
        if event.get("type") == "hook" and self.printed:
            return {**event, "printed": self.printed.pop(0)}
        return event


def hooked_loop(execute, client, question: str, tools: list, source: str, **options: Any) -> Iterator:
    """hooks.run_with_hooks around the tools that `execute` (backend.executor) runs, with the hooks
    of `source` in the sandbox; a source whose hooks cannot be listed ends the run before the model
    is asked, saying why. A reply sent to the loop (a person's answer to an "ask") goes through.
    `options` go to the loop as they are (max_turns, temperature, stream, tool_choice)."""
    registered = Sandboxed(source, execute.session_id)
    if registered.error is not None:
        yield {**loop_events.error(None, "hooks_source", f"加载钩子源码时：{registered.error['message']}"),
               "cause": registered.error["code"]}
        return None
    steps = hooks.run_with_hooks(client, question, tools, execute, registered.hooks, **options)
    return (yield from backend.relayed(steps, registered.with_printed))
