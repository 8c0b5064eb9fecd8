"""/run_workspace: one unattended run of the four tools on a workspace of its own.

The caller's files (or the starter project) go into a fresh workspace with its own id,
never a page's; the run goes through the same gate as the 权限与确认 tab, with nobody
to ask (an "ask" is refused); the workspace's files come back and the folder is removed."""
from __future__ import annotations

import secrets as token
from typing import Any, Mapping

import permissions
import workspace

from runs import headline, workspace_backend
from serving.page_events import session_of
from access.clients import Settings

MAX_EVENTS = 2_000


def refused(message: str) -> dict:
    return {"ok": False, "final": "", "error": {"code": "invalid_request", "message": message}, "verdict": None,
            "events": [], "files": {}}


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
    session_id = "api-" + token.token_hex(16)
    try:
        if files is not None:
            if not isinstance(files, Mapping):
                return refused("files 应是 {\"相对路径\": \"文件内容\"} 的对象。")
            workspace.import_files(session_id, dict(files))
        # The workspace is the call's own, the bash budget is the caller's: a script that
        # calls again and again still shares one budget (anonymous callers share one too).
        workspace.charge_to(session_id, session_of(request) or "api-anonymous")
        run = workspace_backend.run_unattended(session_id, question.strip(), settings, rules, secrets=secrets,
                                               request=request, class_code=class_code)
        if run.error is not None:
            return {**refused(run.error["message"]), "error": run.error}
        events = [e for e in run.events if e.get("type") != "delta"][:MAX_EVENTS]
        return {**headline.summary(events), "events": events, "files": workspace.export_files(session_id)}
    except workspace.WorkspaceError as exc:
        return refused(f"工作区没有准备好：{exc}")
    finally:
        workspace.forget(session_id)
