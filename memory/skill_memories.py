"""The skills lesson's memories kept in the browser, through browser_memory.py, as the shared part
"memories": the facts the model remembered in this page's session (runs/skills_backend.memory_of)
are saved after every run and every correction or deletion, and put into a new session's memory
before the lesson is restored. So they outlive a reload, a server restart or an expired session, as
the course's memory file outlives a restart of its program; another browser never sees them.

What comes back is untrusted like any kept value: a memory is kept only if it is an object with a
text fact, and the page says how many were left out."""
from __future__ import annotations

from typing import Any

import skills

from i18n import tr
from memory.browser_memory import BrowserMemory
from runs import skills_backend

PART = "memories"
MEMORY_NOTE = tr("💾 记下的事实自动保存在**本浏览器**（localStorage）：刷新页面、服务器重启或会话过期后还在；"
                 "别的浏览器看不到。",
                 "💾 The facts remembered are saved in **this browser** (localStorage): they are still here after a "
                 "reload, a server restart or an expired session; no other browser sees them.")


def read(session_id: str | None) -> tuple[dict | None, list[str]]:
    """The memories of this session to keep (None: no session, nothing to keep)."""
    if not session_id:
        return None, []
    return {"facts": skills_backend.memory_of(session_id).all()}, []


def text(value: Any) -> bool:
    """A string that can be written as UTF-8 (JSON may carry a lone surrogate, which cannot)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def usable(item: Any) -> bool:
    return (isinstance(item, dict) and text(item.get("fact")) and bool(item["fact"].strip())
            and all(text(item.get(key, "")) for key in ("source", "at")))


def apply(fields: dict, session_id: str | None) -> list[str]:
    """Puts the kept memories into this session's; what to tell the student."""
    facts = fields.get("facts") if isinstance(fields, dict) else None
    if not isinstance(facts, list):
        return [tr("⚠️ 本浏览器里保存的记忆格式不对，已忽略。", "⚠️ The memories this browser kept are malformed: ignored.")]
    if not session_id:
        return [tr("⚠️ 这个页面没有会话标识，记忆没有恢复：请刷新页面。",
                   "⚠️ This page has no session id, so the memories were not restored: reload the page.")]
    kept = [item for item in facts if usable(item)][:skills.Memory.COUNT_LIMIT]
    skills_backend.memory_of(session_id).put_back(kept)
    notes = []
    if kept:
        notes.append(tr("↩ 记忆已恢复：本浏览器保存的 {n} 条。", "↩ The memories are back: the {n} this browser kept.").format(
            n=len(kept)))
    if len(kept) < len(facts):
        notes.append(tr("⚠️ 另有 {n} 条不是有效的记忆（或超出 {limit} 条），没有恢复。",
                        "⚠️ {n} more were not valid memories (or beyond {limit}) and were not restored.").format(
            n=len(facts) - len(kept), limit=skills.Memory.COUNT_LIMIT))
    return notes


def keep(memory: BrowserMemory, page: Any, triggers: list, note: Any, after: str | None = None) -> None:
    """Registers the memories, then the skills lesson after them (call before memory.wire). `triggers`:
    the events after which the memories may have changed; `note`: where the page says what was kept;
    `after`: a shared part put back before the memories (the workspace's files)."""
    memory.keep_shared(PART, tr("记忆", "the memories"), MEMORY_NOTE, read, apply, [(event, note) for event in triggers],
                       after=after)
    memory.keep_lesson(page, note=note, base=MEMORY_NOTE, after=PART)
