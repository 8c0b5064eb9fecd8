"""/run_workspace and /run_mini_agent: one unattended run on a workspace of its own.

The caller's files (or the starter project) go into a fresh workspace with its own id,
never a page's; the run goes through the same gate as the 权限与确认 tab (MiniAgent: its own
gate, code/mini_agent.py), with nobody to ask (an "ask" is refused); the workspace's files
come back and the folder is removed."""
from __future__ import annotations

import secrets as token
from typing import Any, Mapping

import contextlib

import permissions
import workspace

from runs import headline, purposes, starters, workspace_backend
from serving.page_events import session_of
from access.clients import Settings

MAX_EVENTS = 2_000


def refused(message: str) -> dict:
    return {"ok": False, "final": "", "error": {"code": "invalid_request", "message": message}, "verdict": None,
            "events": [], "files": {}}


@contextlib.contextmanager
def own_workspace(files: Mapping | None, request: Any):
    """A fresh workspace (the caller's files, or the starter project) for one call, removed after it.
    Raises workspace.WorkspaceError, or TypeError for files that are not an object."""
    session_id = "api-" + token.token_hex(16)
    try:
        if files is not None:
            if not isinstance(files, Mapping):
                raise TypeError("files 应是 {\"相对路径\": \"文件内容\"} 的对象。")
            workspace.import_files(session_id, dict(files))
        # The workspace is the call's own, the bash budget is the caller's: a script that
        # calls again and again still shares one budget (anonymous callers share one too).
        workspace.charge_to(session_id, session_of(request) or "api-anonymous")
        yield session_id
    finally:
        workspace.forget(session_id)


def run_mini_agent(question: str, options: Mapping[str, Any], files: Mapping | None, settings: Settings, *,
                   secrets: Mapping[str, str], request: Any = None, class_code: str = "") -> dict:
    """MiniAgent (8.13) on a workspace of its own, with the parts `options` choose (mini_agent_backend:
    a missing one is DEMO's): {"ok", "final", "error", "verdict", "events", "files"}. Choices that do not
    fit are refused before anything runs; a rule's "ask" has nobody to answer it, so the call does not run."""
    if not (question or "").strip():
        return refused("question 不能为空：请写一件要做的事，如「找出失败的测试并修好它」。")
    try:
        with own_workspace(files, request) as session_id:
            purpose = purposes.event(purposes.purpose_for("mini_agent", question.strip(), options))
            run = workspace_backend.start_run(session_id, question.strip(), settings, secrets=secrets,
                                              request=request, class_code=class_code, start=starters.mini_agent,
                                              options=options, purpose=purpose)
            if run.error is not None:
                return {**refused(run.error["message"]), "error": run.error}
            while workspace_backend.advance(run) is not None:    # an ask gets no answer: the call does not run
                pass
            events = [e for e in run.events if e.get("type") != "delta"][:MAX_EVENTS]
            return {**headline.summary(events), "events": events, "files": workspace.export_files(session_id)}
    except TypeError as exc:
        return refused(str(exc))
    except workspace.WorkspaceError as exc:
        return refused(f"工作区没有准备好：{exc}")


def run(question: str, files: Mapping | None, rules: Mapping | None, settings: Settings, *,
        secrets: Mapping[str, str], request: Any = None, class_code: str = "") -> dict:
    """{"ok", "final", "error", "verdict", "events", "files"} (ok and verdict as headline.summary says);
    bad files or rules are refused before anything runs."""
    if not (question or "").strip():
        return refused("question 不能为空：请写一个问题，如「运行测试」。")
    if rules is not None:
        problems = permissions.validate_rules(rules)
        if problems:
            return refused("rules 有问题：" + "；".join(problems))
    try:
        with own_workspace(files, request) as session_id:
            run = workspace_backend.run_unattended(session_id, question.strip(), settings, rules, secrets=secrets,
                                                   request=request, class_code=class_code)
            if run.error is not None:
                return {**refused(run.error["message"]), "error": run.error}
            events = [e for e in run.events if e.get("type") != "delta"][:MAX_EVENTS]
            return {**headline.summary(events), "events": events, "files": workspace.export_files(session_id)}
    except TypeError as exc:
        return refused(str(exc))
    except workspace.WorkspaceError as exc:
        return refused(f"工作区没有准备好：{exc}")
