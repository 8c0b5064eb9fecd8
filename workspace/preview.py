"""What a tool call would do, shown before it runs (the approval box shows it).

write and edit are rehearsed: the file they touch is copied into a throw-away folder and the
real tool (code/atomic_tools.py) runs there, so the preview carries exactly the tool's own
checks and error texts, and the session's workspace is never changed.  Confinement (paths,
links, hard links) is checked on the real workspace first, since the copy has none of it.
"""
import os
import tempfile

import atomic_tools
from tool_outcome import error_text

from . import changes, store
from .tools import TOOL_NAMES

_FAILS = "这次调用执行时会失败：\n"


def preview(session_id, name, args):
    """-> a unified diff of what `write` / `edit` would change (without applying it), or a Chinese
    sentence saying why it would fail; for `bash`, the command itself.  Never raises."""
    if name not in TOOL_NAMES:
        return f"{name} 不是工作区的工具（可用：{'、'.join(TOOL_NAMES)}），无法预览。"
    with tempfile.TemporaryDirectory(prefix="tool-workshop-preview-") as rehearsal:
        registry = atomic_tools.make_tools(rehearsal, shell=_no_shell)
        check = registry.validate(name, args)
        if not check.ok:             # run() stops at the same check, with the tool's own words
            return _FAILS + atomic_tools.run(registry, name, args).content
        arguments = check.arguments
        if name == "bash":
            return arguments["command"]
        path = arguments["path"]
        if name == "read":
            return f"read 只读取 {path}，不改动任何文件。"
        try:
            relative, current = _current(session_id, path)
        except atomic_tools.ToolFailure as problem:
            return _FAILS + error_text(problem.code, problem.conclusion, problem.hint)
        except (store.WorkspaceError, OSError) as problem:
            return f"工作区不可用，无法预览：{problem}"
        before = {} if current is None else {relative: current.encode("utf-8")}
        if current is not None:
            full = os.path.join(rehearsal, relative)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", newline="") as handle:
                handle.write(current)
        outcome = atomic_tools.run(registry, name, dict(arguments, path=relative))
        if not outcome.ok:
            return _FAILS + outcome.content
        after = changes.snapshot(rehearsal, 2 * atomic_tools.MAX_FILE_BYTES)
        shown = changes.diff(before, after)
        return shown or f"新内容与 {path} 现在的内容完全相同，文件不会有变化。"


def _current(session_id, path):
    """(the path relative to the project, after links inside it are followed; the file's text or
    None if it does not exist).  Raises ToolFailure with the tool's own words."""
    workspace = store.get(session_id)
    with workspace.lock:
        full = atomic_tools.inside(workspace.project, path)
        relative = os.path.relpath(full, os.path.realpath(workspace.project))
        if not os.path.lexists(full):
            return relative, None
        return relative, atomic_tools.read_text(full, path)


def _no_shell(command, cwd, timeout):
    raise RuntimeError("a preview never runs a command")
