"""A workspace in and out of the browser: a zip file, or a `{relative path: text}` dict.

Everything that comes in is checked before anything is written: member names (relative,
no `..`, no backslash or drive, no NUL), kinds (plain files and folders only: no links,
no devices), counts and sizes (declared and actually read, so a zip bomb stops at the
limit).  An import replaces the whole project; a refused one changes nothing.
"""
import io
import posixpath
import stat
import zipfile

from atomic_tools import MAX_FILE_BYTES, MAX_FILES, MAX_WORKSPACE_BYTES

from .store import WorkspaceError

MAX_ZIP_BYTES = 2 * MAX_WORKSPACE_BYTES


def check_path(path):
    """A relative POSIX path that stays inside the project, or WorkspaceError naming it."""
    if not isinstance(path, str) or not path.strip("/") or "\0" in path:
        raise WorkspaceError(f"文件名 {path!r} 无效。")
    if path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        raise WorkspaceError(f"{path}：只接受相对路径（不能以 / 开头，不能有反斜杠或盘符）。")
    parts = path.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise WorkspaceError(f"{path}：路径里不能有 ..、. 或空的部分。")
    if len(path) > 300 or len(parts) > 12:
        raise WorkspaceError(f"{path}：路径太长或层级太深。")
    try:
        longest = max(len(part.encode("utf-8")) for part in parts)
    except UnicodeEncodeError:
        raise WorkspaceError(f"{path!r}：文件名里有不能写成 UTF-8 的字符。") from None
    if longest > 255:          # what a folder or file name may be on disk, in bytes
        raise WorkspaceError(f"{path}：有一段名字超过 255 个字节。")
    return posixpath.normpath(path) + ("/" if path.endswith("/") else "")


def check_totals(count, size):
    if count > MAX_FILES:
        raise WorkspaceError(f"文件太多：{count} 个，上限 {MAX_FILES} 个。")
    if size > MAX_WORKSPACE_BYTES:
        raise WorkspaceError(f"内容太大：{size} 字节，上限 {MAX_WORKSPACE_BYTES >> 20} MB。")


def files_from_dict(files):
    """{path: text} checked -> {path: bytes} for changes.restore."""
    if not isinstance(files, dict):
        raise WorkspaceError("需要一个 {相对路径: 文本} 的对象。")
    taken, size = {}, 0
    for path, text in files.items():
        path = check_path(path)
        if path.endswith("/"):
            raise WorkspaceError(f"{path}：只需要文件，文件夹会自动创建。")
        if not isinstance(text, str):
            raise WorkspaceError(f"{path} 的内容必须是文本。")
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > MAX_FILE_BYTES:
            raise WorkspaceError(f"{path} 超过单个文件上限 {MAX_FILE_BYTES >> 20} MB。")
        size += len(data)
        taken[path] = data
    _check_conflicts(taken)
    check_totals(len(taken), size)
    return taken


def files_from_zip(data):
    """A zip's bytes, checked -> {path: bytes} (folders as "path/": b"")."""
    if not isinstance(data, (bytes, bytearray)) or len(data) > MAX_ZIP_BYTES:
        raise WorkspaceError(f"zip 文件不能超过 {MAX_ZIP_BYTES >> 20} MB。")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise WorkspaceError("这不是一个有效的 zip 文件。") from None
    with archive:
        members = archive.infolist()
        check_totals(len(members), sum(member.file_size for member in members))
        taken, size = {}, 0
        for member in members:
            path = check_path(member.filename)
            kind = stat.S_IFMT(member.external_attr >> 16)
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise WorkspaceError(f"{path}：zip 里只能有普通文件和文件夹（不能有符号链接等）。")
            if member.is_dir():
                taken[path if path.endswith("/") else path + "/"] = b""
                continue
            if member.file_size > MAX_FILE_BYTES:
                raise WorkspaceError(f"{path} 超过单个文件上限 {MAX_FILE_BYTES >> 20} MB。")
            try:
                with archive.open(member) as handle:
                    content = handle.read(MAX_FILE_BYTES + 1)   # never trust the declared size
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as exc:
                raise WorkspaceError(f"{path} 无法解压（{exc}）。") from None
            size += len(content)
            if len(content) > MAX_FILE_BYTES or size > MAX_WORKSPACE_BYTES:
                raise WorkspaceError(f"解压后内容超过上限（{MAX_WORKSPACE_BYTES >> 20} MB）。")
            taken[path] = content
    _check_conflicts(taken)
    return taken


def _check_conflicts(taken):
    """"a" as a file and "a/b" beneath it cannot both exist."""
    files = {path for path in taken if not path.endswith("/")}
    for path in taken:
        parent = posixpath.dirname(path.rstrip("/"))
        while parent:
            if parent in files:
                raise WorkspaceError(f"{parent} 既是文件又是文件夹。")
            parent = posixpath.dirname(parent)


def to_zip(taken):
    """A snapshot -> zip bytes (links are left out: the zip holds files and folders only)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(taken.items()):
            if isinstance(content, tuple):
                continue
            if path.endswith("/"):
                archive.writestr(zipfile.ZipInfo(path), b"")
            else:
                info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, content)
    return buffer.getvalue()


def to_dict(taken):
    """A snapshot -> {path: text} for the UTF-8 text files (binary files and links left out)."""
    files = {}
    for path, content in sorted(taken.items()):
        if isinstance(content, tuple) or path.endswith("/") or b"\0" in content:
            continue
        try:
            files[path] = content.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return files
