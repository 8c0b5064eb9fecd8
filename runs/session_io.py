"""导出/导入: a whole run as one JSON file (tools, source, events, messages, raw
responses, settings without keys), and a replay that walks the recorded events one
step at a time with no model involved."""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

import events as loop_events

from i18n import now, tr

FORMAT = "tool-workshop-session"
VERSION = 1
MAX_IMPORT_BYTES = 8 * 1024 * 1024
# Events that make a visible step when replaying (stream fragments are skipped over).
STEP_TYPES = {"request", "response", "parse", "tool_call", "tool_result", "plan", "final", "error"}
# What a replay step shows, in words (the replay's line says which step just appeared).
STEP_NAMES = {"request": tr("发给模型的请求", "the request to the model"),
              "response": tr("模型的回复", "the model's reply"),
              "parse": tr("解析模型的文字", "parsing the model's text"),
              "tool_call": tr("工具调用", "a tool call"),
              "tool_result": tr("工具结果", "a tool result"),
              "plan": tr("计划板（写计划之后）", "the plan board (after a write)"),
              "final": tr("最终回答", "the final answer"),
              "error": tr("错误", "an error")}


def session_document(lesson: str, source: str, tools: list | None, question: str,
                     events: list[dict], settings: dict | None, options: dict | None = None,
                     workspace: dict | None = None) -> dict:
    """The session file's content; `workspace` ({relative path: text}) is the workspace
    lessons' files, left out for the other lessons."""
    mine = loop_events.own(events)      # a sub-agent's conversation is not the run's
    messages = next((e.get("messages") for e in reversed(mine) if e.get("type") == "final"), None)
    if messages is None:
        last = next((e for e in reversed(mine) if e.get("type") == "request"), None)
        messages = (last or {}).get("messages") or []
    document = {
        "format": FORMAT,
        "version": VERSION,
        "lesson": lesson,
        "exported_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "settings": settings or {},
        "options": options or {},
        "source": source,
        "tools": tools or [],
        "question": question,
        "events": events,
        "messages": messages,
        "raw_responses": [e.get("raw") for e in events if e.get("type") == "response"],
    }
    if workspace is not None:
        document["workspace"] = workspace
    return document


def export_file(document: dict, secret: str = "") -> str:
    """Writes the document to a fresh temporary file and returns its path. Any
    occurrence of the session's key is blanked, in case an endpoint echoed it."""
    text = json.dumps(document, ensure_ascii=False, indent=2, default=str)
    if secret:
        text = text.replace(secret, "***")
    folder = tempfile.mkdtemp(prefix="tool-workshop-")
    path = os.path.join(folder, f"session-{document.get('lesson', 'run')}-{time.strftime('%Y%m%d-%H%M%S')}.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


class ImportProblem(ValueError):
    """The file is not a session this page can replay (the message in the page's language)."""


# What a field of the file holds, in words: the value itself is never quoted back (the status line
# is Markdown, and the file is anyone's).
JSON_KINDS = {str: ("文字", "text"), list: ("列表", "a list"), dict: ("对象", "an object"), bool: ("true / false", "true / false"),
              int: ("数字", "a number"), float: ("数字", "a number"), type(None): ("null", "null")}
# The fields a replay hands to the page, and what each must be: a file is untrusted input.
FIELDS = (("source", str, "文字", "text"), ("question", str, "文字", "text"), ("tools", list, "列表", "a list"),
          ("settings", dict, "对象", "an object"), ("options", dict, "对象", "an object"))


def load_document(path_or_text: Any) -> dict:
    """Reads and checks a session file (a path, or the JSON text itself)."""
    if isinstance(path_or_text, dict):
        document = path_or_text
    else:
        text = str(path_or_text or "")
        if text and not text.lstrip().startswith("{") and os.path.exists(text):
            if os.path.getsize(text) > MAX_IMPORT_BYTES:
                raise ImportProblem(tr("文件太大（超过 {mb} MB），不像是一次运行的记录。",
                                       "The file is too large (over {mb} MB) to be the record of a run.").format(
                    mb=MAX_IMPORT_BYTES // 1024 // 1024))
            with open(text, encoding="utf-8") as handle:
                text = handle.read()
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportProblem(tr("不是合法的 JSON：第 {line} 行第 {column} 列，{why}。",
                                   "Not valid JSON: line {line}, column {column}, {why}.").format(
                line=exc.lineno, column=exc.colno, why=exc.msg)) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ImportProblem(tr("这不是本工坊导出的会话文件（缺少 \"format\": \"{format}\"）。",
                               "This is not a session file of this workshop (\"format\": \"{format}\" is missing)."
                               ).format(format=FORMAT))
    if document.get("version") != VERSION:
        version = document.get("version")
        shown = str(version) if isinstance(version, int) and not isinstance(version, bool) else "?"
        raise ImportProblem(tr("会话文件版本 {got} 不受支持（需要 {version}）。",
                               "Session file version {got} is not supported (it must be {version})."
                               ).format(got=shown, version=VERSION))
    events = document.get("events")
    if not isinstance(events, list) or not all(isinstance(e, dict) and "type" in e for e in events):
        raise ImportProblem(tr("会话文件里的 events 应是事件列表，每个事件都有 type 字段。",
                               "The session file's events must be a list of events, each with a type."))
    for field, kind, zh, en in FIELDS:
        if field in document and not isinstance(document[field], kind):
            got_zh, got_en = JSON_KINDS.get(type(document[field]), ("别的值", "something else"))
            raise ImportProblem(tr("会话文件里的 {field} 应是{zh}，收到的是{got}。",
                                   "The session file's {field} must be {en}; it is {got}.").format(
                field=field, zh=zh, en=en, got=tr(got_zh, got_en)))
    if not all(isinstance(tool, dict) for tool in document.get("tools", [])):
        raise ImportProblem(tr("会话文件里的 tools 应是工具 schema（对象）的列表。",
                               "The session file's tools must be a list of tool schemas (objects)."))
    files = document.get("workspace")
    if files is not None and not (isinstance(files, dict)
                                  and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
        raise ImportProblem(tr("会话文件里的 workspace 应是 {\"相对路径\": \"文件内容\"} 的对象。",
                               "The session file's workspace must be an object {\"relative path\": \"content\"}."))
    return document


def next_position(events: list[dict], position: int) -> int:
    """How many events to show after one more 下一步: up to and including the next
    visible step (fragments before it come along); after the last step, every event (what
    follows it belongs to the run's end, and 下一步 has nothing left to show)."""
    position = max(0, position)
    while position < len(events):
        position += 1
        if events[position - 1].get("type") in STEP_TYPES:
            break
    if not any(e.get("type") in STEP_TYPES for e in events[position:]):
        return len(events)
    return position


def step_label(events: list[dict], position: int) -> str:
    """The replay's line after `position` events: which step of how many, and what it showed.
    "" once every step is shown: the status line then shows the run's verdict, as after a live run."""
    steps = [e.get("type") for e in events[:position] if e.get("type") in STEP_TYPES]
    total = sum(1 for e in events if e.get("type") in STEP_TYPES)
    if len(steps) >= total:
        return ""
    last = now(STEP_NAMES[steps[-1]]) if steps else "—"
    return tr("回放：第 {shown} / {total} 步，刚显示：{last}",
              "Replay: step {shown} of {total}, just shown: {last}").format(shown=len(steps), total=total, last=last)
