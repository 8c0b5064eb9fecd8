"""What the page keeps in the student's browser (localStorage), as plain data: one
record per part of the page, with a format name, a version, caps and checks.

Each record is one JSON text under one localStorage key:

    {"format": "tool-workshop-browser-memory", "version": 1, "part": "lesson:function_calling",
     "saved_at": 1764530000.0, "writer": "<browser tab id>", "fields": {...}, "run": {...} | absent}

`fields` holds named values of the page's controls (source, question, options...). A run
record's `run` is a session document (session_io.session_document), replayed on load.
The "workspace" record's fields are {"files": {relative path: text}, "left_out": [path...]}:
the files that fit FILES_LIMIT, and the ones that did not (said again when they come back).
Nothing here knows gradio: browser_memory.py turns components into FieldSpecs and back.

A stored value is untrusted: it may be corrupted, from an older or newer version of the
page, or edited by hand. decode() never raises; it hands back what can be used and a
Chinese notice for what could not.
"""
from __future__ import annotations

import dataclasses
import json
import time
from typing import Any, Callable, Mapping

from i18n import now, tr

FORMAT = "tool-workshop-browser-memory"
VERSION = 1
PREFIX = "tool-workshop:"          # every localStorage key of this page starts with it
SOURCE_LIMIT = 100_000             # characters of a tool source kept
TEXT_LIMIT = 4_000                 # characters of any other text (a question, a model name...)
VALUE_LIMIT = 200_000              # characters of JSON of any other value (registered extras)
RUN_LIMIT = 600_000                # characters of JSON of a kept run
FILES_LIMIT = 500_000              # characters of JSON of a workspace's kept files (the workspace lessons share them, and the skills lesson's skills/ is among them)
# Versions this code can still read, each turned into the next one. Adding version 2:
# bump VERSION and add MIGRATIONS[1] = a function from a version-1 record to a version-2 one.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}


class Unreadable(ValueError):
    """A stored value that cannot be used (message in Chinese, for the page)."""


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """What a kept value may be. kind: "text", "bool", "number", "choice" or "json"."""
    kind: str
    limit: int = TEXT_LIMIT
    choices: tuple | None = None          # "choice": the allowed values (None: any text)
    minimum: float | None = None
    maximum: float | None = None
    label: str = ""                       # how the notice names it ("源码", "问题"...)


@dataclasses.dataclass
class Record:
    part: str
    fields: dict = dataclasses.field(default_factory=dict)
    run: dict | None = None
    saved_at: float = 0.0
    writer: str = ""

    def to_json(self) -> str:
        document = {"format": FORMAT, "version": VERSION, "part": self.part, "saved_at": self.saved_at,
                    "writer": self.writer, "fields": self.fields}
        if self.run is not None:
            document["run"] = self.run
        return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def storage_key(part: str) -> str:
    return PREFIX + part


# ---------------------------------------------------------------- values

def check_value(spec: FieldSpec, value: Any) -> tuple[bool, Any]:
    """(ok, value made sane) for one kept value against its spec."""
    if spec.kind == "bool":
        return (True, value) if isinstance(value, bool) else (False, None)
    if spec.kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return False, None
        if (spec.minimum is not None and value < spec.minimum) or (spec.maximum is not None and value > spec.maximum):
            return False, None
        return True, value
    if spec.kind in ("text", "choice"):
        if value is None and spec.kind == "choice":
            return (True, None) if spec.choices is None or None in spec.choices else (False, None)
        if not isinstance(value, str) or len(value) > spec.limit:
            return False, None
        if spec.kind == "choice" and spec.choices is not None and value not in spec.choices:
            return False, None
        return True, value
    try:
        return (len(json.dumps(value, ensure_ascii=False)) <= spec.limit), value
    except (TypeError, ValueError):
        return False, None


# Words that the notes below contain, looked for when a note is stale (browser_memory.py).
NOT_KEPT_FIELD = tr("没有保存在本浏览器里", "not saved in this browser")
NOT_KEPT_FILES = tr("没有存进本浏览器", "not kept in this browser")
RUN_NOT_KEPT = tr("运行的记录", "record of this run")


def keep_fields(values: Mapping[str, Any], specs: Mapping[str, FieldSpec]) -> tuple[dict, list[str]]:
    """Saving: (the values that fit, a notice for each one too big or not storable)."""
    kept, notices = {}, []
    for name, spec in specs.items():
        if name not in values:
            continue
        ok, value = check_value(spec, values[name])
        if ok:
            kept[name] = value
        elif isinstance(values[name], str) and len(values[name]) > spec.limit:
            notices.append(tr("{what}超过 {n} 个字符，太长，{not_kept}（刷新后会回到上一次保存的内容）。",
                              "{what} is over {n} characters, too long: {not_kept} (a reload brings back what was "
                              "saved last).").format(what=now(spec.label) or name, n=spec.limit,
                                                     not_kept=now(NOT_KEPT_FIELD)))
    return kept, notices


def restore_fields(fields: Any, specs: Mapping[str, FieldSpec]) -> tuple[dict, list[str]]:
    """Loading: (the stored values that pass their spec, the labels of those that did not).
    Names this page no longer has are dropped without a word (a removed control)."""
    if not isinstance(fields, dict):
        return {}, [spec.label or name for name, spec in specs.items()]
    good, bad = {}, []
    for name, spec in specs.items():
        if name not in fields:
            continue
        ok, value = check_value(spec, fields[name])
        if ok:
            good[name] = value
        else:
            bad.append(spec.label or name)
    return good, bad


# ---------------------------------------------------------------- records

def migrate(document: dict) -> dict:
    """A stored document brought up to VERSION, or Unreadable saying why not."""
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise Unreadable(tr("没有版本号，不是本页保存的格式", "has no version number: not a format this page saves"))
    if version > VERSION:
        raise Unreadable(tr("来自更新版本的页面（格式 {v}，本页只认识到 {known}）",
                            "comes from a newer page (format {v}; this page knows up to {known})").format(
                                v=version, known=VERSION))
    while version < VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise Unreadable(tr("来自旧版本的页面（格式 {v}），这一版已不能读取",
                                "comes from an old page (format {v}) this version can no longer read").format(v=version))
        document = step(dict(document))
        new_version = document.get("version")
        if not isinstance(new_version, int) or new_version <= version:
            raise Unreadable(tr("格式 {v} 的内容没能升级", "could not be brought up from format {v}").format(v=version))
        version = new_version
    return document


def decode(text: str | None, part: str) -> tuple[Record | None, str]:
    """(the stored record, '') or (None, why it was ignored: '' when nothing was stored).
    Never raises: whatever is in the browser, the page keeps working."""
    if not text:
        return None, ""
    try:
        document = json.loads(text)
    except (TypeError, ValueError):
        return None, tr("内容已损坏（不是合法的 JSON）", "is damaged (not valid JSON)")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return None, tr("内容已损坏（不是本页保存的格式）", "is damaged (not a format this page saves)")
    try:
        document = migrate(document)
    except Unreadable as exc:
        return None, str(exc)
    if document.get("part") != part:
        return None, tr("内容属于别的部分（{part}）", "belongs to another part ({part})").format(part=repr(document.get("part")))
    saved_at = document.get("saved_at")
    run = document.get("run")
    if run is not None and not isinstance(run, dict):
        return None, tr("内容已损坏（run 不是对象）", "is damaged (run is not an object)")
    return Record(part=part, fields=document.get("fields") if isinstance(document.get("fields"), dict) else {},
                  run=run, saved_at=float(saved_at) if isinstance(saved_at, (int, float)) else 0.0,
                  writer=str(document.get("writer") or "")), ""


def run_text(record: Record, secret: str = "") -> tuple[str | None, str]:
    """A run record's JSON text if it fits RUN_LIMIT (stream fragments are dropped first
    when that makes it fit), else (None, a notice). The session key, should an endpoint
    have echoed it into a response, is blanked as in an exported file."""
    text = record.to_json()
    if len(text) > RUN_LIMIT and record.run is not None:
        events = [e for e in record.run.get("events") or [] if e.get("type") != "delta"]
        text = Record(record.part, record.fields, {**record.run, "events": events}, record.saved_at,
                      record.writer).to_json()
    if len(text) > RUN_LIMIT:
        return None, tr("这次{run}有 {n} 个字符，超过本浏览器保存上限 {limit}，"
                        "没有保存（刷新后看不到这次运行；源码、问题和选项照常保存）。需要留下它请用「导出本次运行」。",
                        "The {run} has {n} characters, over this browser's limit of {limit}: not saved (after a "
                        "reload this run is gone; the source, question and options are saved as usual). To keep it, "
                        "use «Export this run».").format(run=now(RUN_NOT_KEPT), n=len(text), limit=RUN_LIMIT)
    if secret:
        text = text.replace(secret, "***")
    return text, ""


def keep_files(files: Mapping[str, str], limit: int = FILES_LIMIT) -> tuple[dict, list[str]]:
    """Saving a workspace: (the files that fit `limit`, the paths left out). The smallest files
    are kept first, so one big file cannot push out the student's sources; ties go by path."""
    def size(path: str) -> int:
        return len(json.dumps(path, ensure_ascii=False)) + len(json.dumps(files[path], ensure_ascii=False)) + 2
    kept, left_out, used = {}, [], 1    # "{" and "}", less the comma the last entry does not have
    for path in sorted(files, key=lambda p: (size(p), p)):
        if used + size(path) <= limit:
            kept[path] = files[path]
            used += size(path)
        else:
            left_out.append(path)
    return dict(sorted(kept.items())), sorted(left_out)


def files_notice(left_out: list[str], limit: int = FILES_LIMIT) -> str:
    """Said when some of the workspace's files are not kept (on the save, and again on the restore)."""
    if not left_out:
        return ""
    shown = listed(left_out)
    return tr("工作区太大（本浏览器最多保存约 {limit} 个字符的文件），这些文件{not_kept}：{shown}；"
              "其余文件照常保存，刷新后工作区里没有这几个。需要留下它们请用「打包下载 zip」。",
              "The workspace is too big (this browser keeps about {limit} characters of files): these files are "
              "{not_kept}: {shown}; the others are saved as usual, and after a reload these are missing from the "
              "workspace. To keep them, use «Download as zip».").format(limit=limit, not_kept=now(NOT_KEPT_FILES),
                                                                         shown=shown)


def listed(paths: list[str]) -> str:
    """Up to five paths, and how many there are in all."""
    return tr("、", ", ").join(paths[:5]) + (tr(" 等 {n} 个", " and more: {n} in all").format(n=len(paths))
                                             if len(paths) > 5 else "")


def restore_files(fields: Any, limit: int = FILES_LIMIT) -> tuple[dict | None, list[str], str]:
    """Loading a workspace record: (files, paths left out when saved, '') or (None, [], why not).
    Paths themselves are checked by workspace.import_files, which refuses the whole set."""
    if not isinstance(fields, dict):
        return None, [], tr("内容已损坏（不是对象）", "is damaged (not an object)")
    files, left_out = fields.get("files"), fields.get("left_out") or []
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None, [], tr("内容已损坏（files 应是 {相对路径: 文本}）", "is damaged (files must be {relative path: text})")
    if len(json.dumps(files, ensure_ascii=False, separators=(",", ":"))) > limit:
        return None, [], tr("超过保存上限 {limit} 个字符", "is over the limit of {limit} characters").format(limit=limit)
    if not isinstance(left_out, list):
        left_out = []
    return files, [str(path)[:300] for path in left_out[:300]], ""


def when(saved_at: float, utc_offset_minutes: int = 0) -> str:
    """HH:MM of a save in the browser's own time zone (the server's clock may be UTC)."""
    if not saved_at:
        return tr("某个时间", "at some time")
    return time.strftime("%H:%M", time.gmtime(saved_at + utc_offset_minutes * 60))


def origin_notice(record: Record, writer: str, utc_offset_minutes: int = 0, what: str | None = None) -> str:
    """Said on load when the stored record was written by another browser tab: several tabs
    of the page share one copy per lesson and the last one to save wins."""
    if not record.writer or record.writer == writer:
        return ""
    return tr("{what}在 {when} 由另一个标签页（或之前打开的页面）保存；同一浏览器里的多个标签页共用一份，后保存的会覆盖先保存的。",
              "{what} was saved at {when} by another tab (or a page opened before); all tabs of one browser share "
              "one copy, and the last to save wins.").format(what=what or tr("这份内容", "This content"),
                                                             when=when(record.saved_at, utc_offset_minutes))
