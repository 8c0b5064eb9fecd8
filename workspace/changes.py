"""What a workspace holds, and what a step changed: tree, snapshot, unified diff, restore.

A snapshot is `{relative path: bytes}` for files and `{relative path: ("link", target)}`
for symbolic links; folders are implied by the paths (empty folders are kept as
`{path + "/": b""}`).  Nothing here follows a link.
"""
import contextlib
import difflib
import os
import stat
import tempfile

from .archive import check_totals
from .store import WorkspaceError, clear

_LINK = "link"


def entries(project):
    """Every entry beneath `project` as (relative path, lstat), folders before what they hold."""
    found, stack = [], [""]
    while stack:
        relative = stack.pop()
        with os.scandir(os.path.join(project, relative)) as items:
            for item in items:
                path = f"{relative}{item.name}"
                info = item.stat(follow_symlinks=False)
                found.append((path, info))
                if stat.S_ISDIR(info.st_mode):
                    stack.append(path + "/")
    return sorted(found, key=lambda pair: pair[0])


def tree(project):
    """[{"path", "type": "dir" | "file" | "link" | "other", "size", "target"?}], sorted by path."""
    listing = []
    for path, info in entries(project):
        if stat.S_ISDIR(info.st_mode):
            listing.append({"path": path + "/", "type": "dir", "size": 0})
        elif stat.S_ISLNK(info.st_mode):
            listing.append({"path": path, "type": "link", "size": 0,
                            "target": os.readlink(os.path.join(project, path))})
        else:
            kind = "file" if stat.S_ISREG(info.st_mode) else "other"
            listing.append({"path": path, "type": kind, "size": info.st_size})
    return listing


def snapshot(project, max_bytes):
    """The workspace's content. Raises WorkspaceError past `max_bytes` (the caller's limit)."""
    taken, total = {}, 0
    for path, info in entries(project):
        full = os.path.join(project, path)
        if stat.S_ISDIR(info.st_mode):
            if not os.listdir(full):
                taken[path + "/"] = b""
        elif stat.S_ISLNK(info.st_mode):
            taken[path] = (_LINK, os.readlink(full))
        elif stat.S_ISREG(info.st_mode):
            total += info.st_size
            if total > max_bytes:
                raise WorkspaceError(f"工作区超过 {max_bytes >> 20} MB。")
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as handle:
                taken[path] = handle.read(max_bytes + 1)
    return taken


def restore(project, taken):
    """Makes `project` hold exactly `taken` again."""
    clear(project)
    for path, content in sorted(taken.items()):
        full = os.path.join(project, path)
        if path.endswith("/"):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if isinstance(content, tuple):
            os.symlink(content[1], full)
        else:
            with open(full, "wb") as handle:
                handle.write(content)


def update(project, taken, gone):
    """Writes `taken` ({path: bytes}) and removes the files `gone`, leaving every other entry as it is
    (its mode too); a folder a removal leaves empty goes with it. Everything is checked before the
    first write: each folder on a path is a real folder (never a link), each file to remove or replace
    a plain file, and the workspace stays within its count and size."""
    listed = {path: info for path, info in entries(project)}
    for path in [*taken, *gone]:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in listed and not stat.S_ISDIR(listed[folder].st_mode):
                raise WorkspaceError(f"{folder} 不是一个真的文件夹（是文件、符号链接或别的），改不了 {path}。")
        if path in listed and not stat.S_ISREG(listed[path].st_mode):
            raise WorkspaceError(f"{path} 不是普通文件，不能覆盖或删除。")
    # Counted as an import counts them (files, not folders), so a workspace an import accepted fits.
    sizes = {path: info.st_size for path, info in listed.items() if not stat.S_ISDIR(info.st_mode)}
    sizes.update({path: len(content) for path, content in taken.items()})
    for path in gone:
        sizes.pop(path, None)
    check_totals(len(sizes), sum(sizes.values()))
    for path, content in taken.items():
        full = os.path.join(project, path)
        try:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            _write_beside(full, content, stat.S_IMODE(listed[path].st_mode) & 0o777 if path in listed else 0o644)
        except OSError as exc:
            raise WorkspaceError(f"{path} 没有写成（{exc.strerror or exc}）。") from None
    for path in gone:
        if path in listed:
            try:
                os.unlink(os.path.join(project, path))
                folder = os.path.dirname(path)
                while folder and not os.listdir(os.path.join(project, folder)):
                    os.rmdir(os.path.join(project, folder))
                    folder = os.path.dirname(folder)
            except OSError as exc:
                raise WorkspaceError(f"{path} 没有删掉（{exc.strerror or exc}）。") from None


def _write_beside(full, content, mode):
    """A new file beside `full`, renamed over it: a failed write leaves the old file (and no draft),
    not half a new one."""
    descriptor, draft = tempfile.mkstemp(dir=os.path.dirname(full), prefix=".draft-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
        os.chmod(draft, mode)
        os.replace(draft, full)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(draft)
        raise


def changed_paths(before, after):
    """{"added": [...], "removed": [...], "modified": [...]} between two snapshots."""
    return {"added": sorted(after.keys() - before.keys()),
            "removed": sorted(before.keys() - after.keys()),
            "modified": sorted(path for path in before.keys() & after.keys() if before[path] != after[path])}


def _lines(content):
    if isinstance(content, tuple):
        return [f"-> {content[1]}\n"], True
    if b"\0" in content:
        return [], False
    try:
        return content.decode("utf-8").splitlines(keepends=True), True
    except UnicodeDecodeError:
        return [], False


def diff(before, after):
    """A unified diff (difflib) of every file a step added, removed or modified."""
    parts = []
    changes = changed_paths(before, after)
    for path in sorted(changes["added"] + changes["removed"] + changes["modified"]):
        old, old_text = _lines(before.get(path, b""))
        new, new_text = _lines(after.get(path, b""))
        source = f"a/{path}" if path in before else "/dev/null"
        target = f"b/{path}" if path in after else "/dev/null"
        if not (old_text and new_text):
            parts.append(f"二进制文件 {path} 已改变\n")
            continue
        if old and not old[-1].endswith("\n"):
            old[-1] += "\n\\ 文件末尾没有换行\n"
        if new and not new[-1].endswith("\n"):
            new[-1] += "\n\\ 文件末尾没有换行\n"
        body = "".join(difflib.unified_diff(old, new, source, target))
        parts.append(body or f"--- {source}\n+++ {target}\n")
    return "".join(parts)
