"""The four atomic tools (code/atomic_tools.py) on a session's workspace, with a jailed bash.

read, write and edit run here, in the app process, as plain file operations: paths are
confined by atomic_tools.inside (no absolute path, no `..`, no link leading out, checked
on the real path) and files are opened with O_NOFOLLOW, regular files with one link only.
That is safe because a workspace never changes under them: every operation holds the
session's lock, and no process of the shell outlives its command.  Only bash runs
student-controlled code, so only bash goes through the sandbox (sandbox/shell.py).

Every step is snapshotted before and after: the outcome carries the unified diff of what
it changed, and a bash command that leaves the workspace over its limits is undone.
"""
import atomic_tools
from tool_outcome import failure

from . import changes, store

TOOL_NAMES = ("read", "write", "edit", "bash")
_CHANGES_FILES = {"write", "edit", "bash"}


def _shell_for(workspace):
    from sandbox import shell

    def run_shell(command, cwd, timeout):
        try:
            reply = shell.run(command, cwd, workspace.tmp, timeout, session_id=workspace.charged_to)
            workspace.shell_layers = reply.get("layers") or {}
            return reply
        finally:
            store.clear(workspace.tmp)    # TMPDIR lives for one command

    return run_shell


def tools_of(workspace):
    if workspace.tools is None:
        workspace.tools = atomic_tools.make_tools(workspace.project, shell=_shell_for(workspace))
    return workspace.tools


def tool_schemas():
    """The OpenAI `tools` list of the four tools (the same for every session)."""
    return atomic_tools.make_tools("/nonexistent").to_schemas()


def _over_limits(project):
    size, count = atomic_tools.usage(project)
    return size > atomic_tools.MAX_WORKSPACE_BYTES or count > atomic_tools.MAX_FILES


_NOTHING = {"added": [], "removed": [], "modified": []}


def run_workspace_tool(session_id, name, args):
    """Runs one of read / write / edit / bash on the session's workspace. Never raises.
    -> a ToolOutcome dict (see code/tool_outcome.py) plus "diff" (unified diff of what the
    step changed, "" if nothing), "changed" ({"added", "removed", "modified"}) and, for bash,
    "layers" (the sandbox layers that held for this command, see sandbox/shell.py)."""
    try:
        workspace = store.get(session_id)
        with workspace.lock:
            return _run_step(workspace, name, args)
    except (store.WorkspaceError, OSError) as exc:
        return dict(failure("invalid_request", f"工作区不可用：{exc}", "请刷新页面后重试").to_dict(),
                    diff="", changed=dict(_NOTHING))


def _run_step(workspace, name, args):
    limit = 4 * atomic_tools.MAX_WORKSPACE_BYTES
    before = changes.snapshot(workspace.project, limit) if name in _CHANGES_FILES else None
    workspace.shell_layers = {}
    outcome = atomic_tools.run(tools_of(workspace), name, args)
    if before is None:
        return dict(outcome.to_dict(), diff="", changed=dict(_NOTHING))
    store.hand_over(workspace)
    try:
        over = _over_limits(workspace.project)
        after = None if over else changes.snapshot(workspace.project, limit)
    except (OSError, store.WorkspaceError):
        over = True
    if over:   # a step may not leave the workspace over its limits: undo all of it
        changes.restore(workspace.project, before)
        store.hand_over(workspace)
        outcome = failure("workspace_full",
                          f"这一步之后工作区超过上限（{atomic_tools.MAX_WORKSPACE_BYTES >> 20} MB、"
                          f"{atomic_tools.MAX_FILES} 个文件），它的改动已全部撤销",
                          "请删掉不需要的文件，或只生成需要的数据",
                          arguments=outcome.arguments, duration_ms=outcome.duration_ms)
        after = before
    step = dict(outcome.to_dict(), diff=changes.diff(before, after), changed=changes.changed_paths(before, after))
    if name == "bash":
        step["layers"] = workspace.shell_layers
    return step
