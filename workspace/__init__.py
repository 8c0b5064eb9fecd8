"""A private workspace per browser session, and the four atomic tools that work on it.

    run_workspace_tool(session_id, name, args) -> dict   read / write / edit / bash; a ToolOutcome
                                                          dict plus "diff" and "changed"
    tool_schemas() -> list                                the OpenAI tools list of the four tools
    tree(session_id) -> [{"path", "type", "size", ...}]
    read_file(session_id, path) -> str
    snapshot(session_id) -> {path: bytes | ("link", target)};  diff(before, after) -> str
    reset(session_id)                                     back to the starter project
    starter_files() -> {path: text}                       the starter project (the practice project
                                                          and the skills lesson's skills/)
    export_zip(session_id) -> bytes;  import_zip(session_id, data)
    export_files(session_id) -> {path: text};  import_files(session_id, files)
    put_back(session_id, files)                           import_files for files kept elsewhere (the
                                                          browser): a session whose folder is not made
                                                          yet gets it from them when first needed
    update_files(session_id, written, removed)            writes some files and removes others,
                                                          the rest of the project as it was
    forget(session_id)                                    when the session expires
    charge_to(session_id, payer)                          whose bash budget the workspace's commands
                                                          use (a private workspace of an API call: the
                                                          caller's session); by default its own id
    shell_status() -> {"mode", "layers", "notice", "public"}   whether bash may run here
    preview(session_id, name, args) -> str               what a call would do, before it runs:
                                                          the diff of a write / edit, a bash command

A session's folder is made when something first needs it (a tool, a write, the tree, a snapshot):
export_files of a session without one reads what it would be made from, and makes none.

Requests that cannot be done raise WorkspaceError with a Chinese message (run_workspace_tool
and preview never raise).  Layout: store.py (folders and locks), changes.py (tree, snapshot, diff,
restore), archive.py (zip and dict, validated), tools.py (the tools on a session), preview.py
(a write or edit rehearsed on a copy).
"""
import atomic_tools

from . import archive, changes, store
from .preview import preview
from .store import WorkspaceError, forget, known_sessions, made, starter_files
from .tools import TOOL_NAMES, run_workspace_tool, tool_schemas

__all__ = ["run_workspace_tool", "tool_schemas", "tree", "read_file", "snapshot", "diff", "reset",
           "export_zip", "import_zip", "export_files", "import_files", "put_back", "made", "update_files", "forget", "shell_status", "charge_to",
           "WorkspaceError", "TOOL_NAMES", "known_sessions", "preview", "starter_files"]

_SNAPSHOT_LIMIT = 4 * atomic_tools.MAX_WORKSPACE_BYTES


def tree(session_id):
    workspace = store.get(session_id)
    with workspace.lock:
        return changes.tree(workspace.project)


def read_file(session_id, path):
    """A file's text, with the same confinement as the read tool."""
    workspace = store.get(session_id)
    with workspace.lock:
        try:
            return atomic_tools.read_text(atomic_tools.inside(workspace.project, path), path)
        except atomic_tools.ToolFailure as problem:
            raise WorkspaceError(f"{problem.conclusion}。") from None


def snapshot(session_id):
    workspace = store.get(session_id)
    with workspace.lock:
        return changes.snapshot(workspace.project, _SNAPSHOT_LIMIT)


diff = changes.diff
changed_paths = changes.changed_paths


def reset(session_id):
    workspace = store.get(session_id)
    with workspace.lock:
        store.fill_from_starter(workspace)
        store.clear(workspace.tmp)


def _replace(session_id, taken):
    workspace = store.get(session_id)
    with workspace.lock:
        changes.restore(workspace.project, taken)
        store.hand_over(workspace)


def import_zip(session_id, data):
    """Replaces the project with a zip's files (checked first; a refused zip changes nothing)."""
    _replace(session_id, archive.files_from_zip(data))


def import_files(session_id, files):
    """Replaces the project with {relative path: text} (checked first)."""
    _replace(session_id, archive.files_from_dict(files))


def put_back(session_id, files):
    """import_files for files kept elsewhere: a session whose folder is not made yet keeps them
    waiting, and its folder is made from them when something first needs it."""
    taken = archive.files_from_dict(files)
    if not store.wait_with(session_id, taken):
        _replace(session_id, taken)


def update_files(session_id, written, removed=()):
    """Writes {relative path: text} and removes the files in `removed`; nothing else is touched.
    Checked first, like an import (paths, sizes, no link or file in the way): a refused update
    changes nothing."""
    taken = archive.files_from_dict(written)
    gone = sorted({archive.check_path(path) for path in removed} - set(taken))
    workspace = store.get(session_id)
    with workspace.lock:     # bash holds it too: nothing changes between the checks and the writes
        try:
            changes.update(workspace.project, taken, gone)
        finally:             # what was written before a failure belongs to the shell's user too
            store.hand_over(workspace)


def export_zip(session_id):
    return archive.to_zip(snapshot(session_id))


def export_files(session_id):
    """{relative path: text} of the text files (binary files and links are left out)."""
    unmade = store.unmade(session_id)
    return archive.to_dict(unmade if unmade is not None else snapshot(session_id))


def charge_to(session_id, payer):
    """The workspace's bash commands are charged to `payer`'s budget in the sandbox."""
    if not isinstance(payer, str) or not payer:
        raise WorkspaceError("会话标识无效。")
    workspace = store.get(session_id)
    with workspace.lock:
        workspace.charged_to = payer


def shell_status():
    from sandbox import shell
    return shell.status()
