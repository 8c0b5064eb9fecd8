"""One small folder on disk per browser session, under a private temporary root.

    <root>/<hash of the session id>/project/   the files the four tools work on
    <root>/<hash of the session id>/tmp/       the shell's TMPDIR, emptied after every command

The root is created on first use (mode 0711: the sandbox user may pass through it to its
own session folder, never list it); session folders belong to the user the shell runs as,
mode 0700.  Every operation on a session holds that session's lock, so a file tool never
sees the folder change under it (and no process of the shell outlives its command).
"""
import atexit
import hashlib
import os
import shutil
import stat
import tempfile
import threading

import skills

STARTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "starter")
MAX_SESSIONS = 400          # folders on disk at once (each at most a few MB); expiry frees them


class WorkspaceError(ValueError):
    """A request on a workspace that cannot be done; the message is Chinese, for the student."""


class Workspace:
    __slots__ = ("session_id", "home", "project", "tmp", "lock", "tools", "shell_layers", "charged_to")

    def __init__(self, session_id, home):
        self.session_id = session_id
        self.home = home
        self.project = os.path.join(home, "project")
        self.tmp = os.path.join(home, "tmp")
        self.lock = threading.RLock()
        self.tools = None           # the session's ToolRegistry, made on first use
        self.shell_layers = {}      # the sandbox layers that held for its last bash command
        self.charged_to = session_id    # whose bash budget its commands use (see charge_to)


_lock = threading.Lock()
_root = [None]
_sessions = {}
# Files a session's folder is to be made from, put back (from the browser) before anything needed the
# folder: a page that only shows them takes no folder. Checked {relative path: bytes}.
_waiting = {}


def owner():
    """(uid, gid) the shell runs as; files the app writes are handed to it."""
    from sandbox.shell import sandbox_user
    return sandbox_user()


def _private_root():
    if _root[0] is None or not os.path.isdir(_root[0]):
        _root[0] = tempfile.mkdtemp(prefix="tool-workshop-workspaces-")
        os.chmod(_root[0], 0o711)
    return _root[0]


@atexit.register
def _remove_all():
    if _root[0]:
        shutil.rmtree(_root[0], ignore_errors=True)


def get(session_id):
    """The session's workspace, made the first time from the files waiting for it (wait_with), or
    else from the starter project."""
    if not isinstance(session_id, str) or not session_id:
        raise WorkspaceError("会话标识无效。")
    with _lock:
        found = _sessions.get(session_id)
        if _made(session_id):
            return found
        if found is None and len(_sessions) >= MAX_SESSIONS:
            raise WorkspaceError("服务器上的工作区已经太多了，请过几分钟再试。")
        home = os.path.join(_private_root(), hashlib.sha256(session_id.encode()).hexdigest()[:32])
        workspace = Workspace(session_id, home)
        shutil.rmtree(home, ignore_errors=True)
        os.mkdir(home, 0o700)
        os.mkdir(workspace.project, 0o700)
        os.mkdir(workspace.tmp, 0o700)
        waiting = _waiting.pop(session_id, None)
        if waiting is None:
            fill_from_starter(workspace)
        else:
            fill(workspace, waiting)
        _sessions[session_id] = workspace
        return workspace


def _made(session_id):
    found = _sessions.get(session_id)
    return found is not None and os.path.isdir(found.project)


def made(session_id):
    """Whether the session's folder has been made (it takes one of the MAX_SESSIONS)."""
    with _lock:
        return _made(session_id)


def wait_with(session_id, taken):
    """Keeps `taken` ({relative path: bytes}, checked) as what the session's folder is made from when
    something first needs it. False when the folder is already made, or when as many sessions wait as
    there may be folders: the caller then puts the files in place now."""
    if not isinstance(session_id, str) or not session_id:
        raise WorkspaceError("会话标识无效。")
    with _lock:
        if _made(session_id) or (session_id not in _waiting and len(_waiting) >= MAX_SESSIONS):
            return False
        _waiting[session_id] = dict(taken)
        return True


def unmade(session_id):
    """While the session's folder is not made: what it will be made from ({relative path: bytes}).
    None once it is made."""
    if not isinstance(session_id, str) or not session_id:
        raise WorkspaceError("会话标识无效。")
    with _lock:
        if _made(session_id):
            return None
        waiting = _waiting.get(session_id)
    return waiting if waiting is not None else {path: text.encode("utf-8") for path, text in starter_files().items()}


def forget(session_id):
    """Removes the session's folder (and the files waiting for it); called when the session expires."""
    with _lock:
        _waiting.pop(session_id, None)
        workspace = _sessions.pop(session_id, None)
    if workspace is not None:
        with workspace.lock:
            shutil.rmtree(workspace.home, ignore_errors=True)


def known_sessions():
    with _lock:
        return len(_sessions)


def clear(folder):
    """Empties a folder without following any link in it."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def starter_files():
    """The starter project as {relative path: text}: the practice project in workspace/starter/, and
    the skills lesson's examples where the course keeps skills, skills/<name>/SKILL.md (from
    code/skills.py's EXAMPLES, so the course code and the workspace show the same ones)."""
    files = {}
    for base, dirs, names in os.walk(STARTER):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as handle:
                files[os.path.relpath(path, STARTER).replace(os.sep, "/")] = handle.read()
    files.update({f"skills/{name}/SKILL.md": text + "\n" for name, text in skills.EXAMPLES.items()})
    return files


def fill_from_starter(workspace):
    fill(workspace, {path: text.encode("utf-8") for path, text in starter_files().items()})


def fill(workspace, files):
    """Makes the project hold exactly `files` ({relative path: bytes}, checked)."""
    clear(workspace.project)
    for path, data in files.items():
        full = os.path.join(workspace.project, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as handle:
            handle.write(data)
    hand_over(workspace)


def hand_over(workspace):
    """Gives every entry to the shell's user (only changes anything when the app is root), and
    makes sure the owner may read and write it: the app and the shell take turns on it."""
    uid, gid = owner()
    for folder in (workspace.home, workspace.project, workspace.tmp):
        _own(folder, uid, gid)
    for base, dirs, files in os.walk(workspace.project):
        for name in dirs + files:
            _own(os.path.join(base, name), uid, gid)


def _own(path, uid, gid):
    info = os.lstat(path)
    if (info.st_uid, info.st_gid) != (uid, gid) and os.geteuid() == 0:
        os.lchown(path, uid, gid)
    needed = stat.S_IRWXU if stat.S_ISDIR(info.st_mode) else stat.S_IRUSR | stat.S_IWUSR
    if not stat.S_ISLNK(info.st_mode) and info.st_mode & needed != needed:
        os.chmod(path, info.st_mode | needed)   # a `chmod 000` must not lock the app out
