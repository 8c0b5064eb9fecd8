"""8.11 会话与分支 on the server: runs of code/sessions.py's Session, for the page and the named API.

The session travels as its JSONL text (the page's session box, the API's `session` parameter) and
nothing of it stays on the server: a run loads the text with the course's loader (every check of
sessions.loads, so a file someone uploaded or edited is read as data or refused with the line and
the reason), runs on the chosen branch, and the session after the run is the text before plus the
entries the run wrote (its entry events), read once more through the same loader.

A fork of a tool result starts its run from a history the loop never saw being made: the call is
on the path, the result is the student's. So the run first says so in the loop's own events (the
call, and its result marked as written by a person), and the verdict of the branch (runs/headline.py)
judges an answer built on a hand-written result as such, not as an answer without a tool.
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterator

import events
import sessions
import tool_outcome
from import_paths import CODE_DIR
from sessions import Session, SessionProblem

HAND_WRITTEN = "结果由学生在分叉时改写，不是工具这次给的"
# The named API's tools when no source is given: the course's weather example.
with open(os.path.join(CODE_DIR, "examples_weather.py"), encoding="utf-8") as example:
    WEATHER_SOURCE = example.read()


def session_from(text: str | None) -> Session:
    """The session a text holds (empty: a new one). Raises SessionProblem."""
    return sessions.loads(text) if (text or "").strip() else Session()


def on_branch(text: str | None, branch: str | None) -> Session:
    """The session with `branch` (an entry's id) current, when it names one. Raises SessionProblem."""
    session = session_from(text)
    if branch:
        session.switch(branch)
    return session


def session_loop(client: Any, question: str, tools: list, execute: Any, options: dict,
                 **loop_options: Any) -> Iterator[dict]:
    """The lesson's loop: options["session"] (JSONL) on options["branch"]; with options["fork"]
    ({"entry", "content"}) the entry is edited into a new branch and the run goes on from it,
    otherwise `question` is asked on the branch's leaf."""
    fork = options.get("fork") if isinstance(options.get("fork"), dict) else None
    try:
        session = on_branch(options.get("session"), options.get("branch"))
        written = session.fork(str(fork.get("entry")), fork.get("content")) if fork else []
    except SessionProblem as problem:
        yield events.error(0, "session", problem.zh)
        return
    if fork:
        for entry in written:
            yield session.entry_event(0, entry)
        yield from carried_over(session, written[0])
        yield from session.run_on(client, tools, execute, **loop_options)
    else:
        yield from session.run(client, tools, execute, question=question, **loop_options)


def carried_over(session: Session, edited: dict) -> Iterator[dict]:
    """For an edited tool result: the call it answers (from the path) and the result as the student
    wrote it, marked so; nothing for an edited question or message (the run makes its own events)."""
    message = edited["message"]
    if message["role"] != "tool":
        return
    path = session.path(edited["id"])
    asked = next(entry for entry in reversed(path) if entry["message"].get("tool_calls"))
    call = next(c for c in asked["message"]["tool_calls"] if c["id"] == message["tool_call_id"])
    name, raw = call["function"]["name"], call["function"]["arguments"]
    try:
        arguments = json.loads(raw)
    except (TypeError, ValueError):
        arguments = None
    arguments = arguments if isinstance(arguments, dict) else None
    branch, turn = session.branch_of(edited["id"]), round_of(session, asked["id"])
    yield {**events.tool_call(turn, call["id"], name, raw, arguments, []), "branch": branch}
    result = events.tool_result(turn, call["id"], name, tool_outcome.success(message["content"], arguments=arguments),
                                message)
    yield {**result, "overridden": HAND_WRITTEN, "branch": branch}


def round_of(session: Session, entry_id: str) -> int:
    """The round an assistant message was written in: its place among the model's messages since the
    last user message on its path."""
    count = 0
    for message in session.messages(entry_id):
        count = 0 if message["role"] == "user" else count + (message["role"] == "assistant")
    return count


def written_by(run_events: list[dict]) -> list[dict]:
    return [event["entry"] for event in run_events if event.get("type") == "entry" and isinstance(event.get("entry"), dict)]


def session_after(text: str | None, run_events: list[dict], branch: str | None = None) -> Session:
    """The session once a run is done (or paused): `text` plus the entries the run wrote, read again
    by the loader. A run that wrote nothing leaves `branch` current. Raises SessionProblem."""
    base = text if (text or "").strip() else Session().dumps()
    written = written_by(run_events)
    session = sessions.loads(base.rstrip("\n") + "\n" + "".join(json.dumps(e, ensure_ascii=False) + "\n"
                                                              for e in written))
    if not written and branch and branch in session.entries:
        session.switch(branch)
    return session


def branch_of_run(run_events: list[dict]) -> str | None:
    """The branch a run went on (the branch its events carry)."""
    return next((e["branch"] for e in reversed(run_events) if e.get("branch")), None)


def own_events(run_events: list[dict], branch: str) -> list[dict]:
    """What a branch's verdict is judged on: the run's purpose and the events on that branch."""
    return [e for e in run_events if e.get("type") == "purpose" or e.get("branch") == branch]


def last_request(branch_events: list[dict]) -> list[dict] | None:
    """The messages of the last request a branch's run sent (None: it sent none)."""
    found = next((e for e in reversed(branch_events) if e.get("type") == "request"), None)
    return None if found is None else found.get("messages")


def fork_question(session: Session, entry_id: str, content: str) -> str:
    """What the run after a fork answers, which its verdict is judged against: the new text when a user
    message (the question, or one asked later) is edited, otherwise the last user message before it."""
    if session.entries[entry_id]["message"]["role"] == "user":
        return content
    asked = [m for m in session.messages(entry_id) if m["role"] == "user"]
    return str(asked[-1].get("content") or "") if asked else ""


def asked_by_fork(text: str | None, branch: str | None, entry_id: str, content: str) -> str:
    """fork_question for a session still in its text; "" when the text or the entry cannot be read
    (the run then says what is wrong)."""
    try:
        session = on_branch(text, branch)
        session.get(entry_id)
    except SessionProblem:
        return ""
    return fork_question(session, entry_id, content)


def outcome(text: str | None, run_events: list[dict], branch: str | None) -> dict:
    """What the named API returns of the session after a run: its JSONL, the current branch and every
    branch (sessions.branches()); a session that could not be read comes back as it was, with why."""
    try:
        session = session_after(text, run_events, branch)
    except SessionProblem as problem:
        return {"session": text or "", "branch": branch or None, "branches": [],
                "session_problem": {"zh": problem.zh, "en": problem.en, "line": problem.line}}
    return {"session": session.dumps(), "branch": session.branch_of(), "branches": session.branches(),
            "session_problem": None}


def editable(session: Session) -> list[dict]:
    """The entries of the current branch a fork may edit and run on from: the question, a later user
    message, a tool result, the system prompt. (An answer of the model's, edited, would leave a branch
    that has its answer already: nothing to run.)"""
    return [entry for entry in session.path() if entry["message"]["role"] != "assistant"]
