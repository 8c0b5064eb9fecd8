"""The workspace lessons kept in the browser, through browser_memory.py: each tab's question,
loop, rules (权限与确认) and last run as its own lesson parts, and the workspace's files once,
as the shared part "workspace" (both tabs work on the session's one workspace). The skills
lesson's page keeps the same part, since its skills are the workspace's skills/ folder
(keep_shared_files: its edits, ↺ and an imported session are its triggers).

Saving: after every event that may change the files (a run or its pause for a rule's "ask",
an answer to it, an imported session, 重置, a zip upload, an edit of the skills) the files are read back with
workspace.export_files and kept if they fit memory_format.FILES_LIMIT; the ones that do not
fit are named, the rest are kept. Text files only: the page says which others were left out.

Restoring, in this order: the kept files are imported into the new session's workspace, then
原子工具 and 权限与确认 are restored one after the other (their kept runs are replayed, not
rerun), and only then does each tab show its tree (app.py chains it on what `keep` returns)."""
from __future__ import annotations

import functools

import workspace

from memory.browser_memory import BrowserMemory
from i18n import now, tr
from memory.memory_format import NOT_KEPT_FILES, files_notice, keep_files, listed, restore_files

# What this browser keeps of the workspace lessons (saved and restored here).
MEMORY_NOTE = tr("💾 工作区的文件（用工作区的几课共用，技能课的 skills/ 也在里面，只存一份）、问题、这一页的选项（循环方式、权限规则、"
                 "MiniAgent 的零件）和上次运行自动保存在**本浏览器**（localStorage），刷新页面、服务器重启或会话过期后恢复；"
                 "「↺ 重置工作区」后保存的是初始练习项目。",
                 "💾 The workspace's files (shared by the lessons with a workspace, the skills lesson's skills/ among "
                 "them, kept once), the question, this page's options (the loop, the permission rules, MiniAgent's "
                 "parts) and the last run are saved in **this browser** (localStorage) and come back after a reload, a "
                 "server restart or an expired session; after «↺ Reset workspace» the original practice project is "
                 "what is kept.")

PART = "workspace"


def read(session_id: str | None) -> tuple[dict | None, list[str]]:
    """The fields to keep for this session's workspace (None: nothing to keep), and notices."""
    if not session_id:
        return None, []
    try:
        if not workspace.made(session_id):   # only looked at: nothing changed, and no folder is taken to say so
            return None, []
        files = workspace.export_files(session_id)
        shown = [e["path"] for e in workspace.tree(session_id) if e.get("type") == "file"]
    except workspace.WorkspaceError:
        return None, []
    kept, left_out = keep_files(files)
    notices = [files_notice(left_out)] if left_out else []
    binary = sorted(set(shown) - set(files))
    if binary:
        notices.append(tr("这些不是文本的文件{not_kept}：{shown}。", "These files are not text, so {not_kept}: {shown}."
                          ).format(not_kept=now(NOT_KEPT_FILES), shown=listed(binary)))
    return {"files": kept, "left_out": left_out}, notices


START_OVER = tr("想从头开始：点「↺ 重置工作区」。", "To start over: «↺ Reset workspace».")


def apply(fields: dict, session_id: str | None, start_over: str = START_OVER) -> list[str]:
    """Puts the kept files into this session's workspace; what to tell the student (`start_over`: how
    this page gets back its starting files)."""
    files, left_out, why = restore_files(fields)
    if why:
        return [tr("⚠️ 本浏览器里保存的工作区文件{why}，已忽略：工作区是初始练习项目。",
                   "⚠️ The workspace files this browser kept {why}: ignored; the workspace is the original practice "
                   "project.").format(why=why)]
    if not session_id:
        return [tr("⚠️ 这个页面没有会话标识，工作区文件没有恢复：请刷新页面。",
                   "⚠️ This page has no session id, so the workspace files were not restored: reload the page.")]
    try:
        workspace.put_back(session_id, files)    # the folder is made from them once something needs it
    except workspace.WorkspaceError as exc:
        return [tr("⚠️ 本浏览器里保存的工作区文件没有恢复（{exc}），工作区是初始练习项目。",
                   "⚠️ The workspace files this browser kept were not restored ({exc}); the workspace is the original "
                   "practice project.").format(exc=exc)]
    notes = [tr("↩ 工作区已恢复为本浏览器保存的 {n} 个文件。", "↩ The workspace holds the {n} files this browser kept. "
                ).format(n=len(files)) + now(start_over)]
    if left_out:
        notes.append("⚠️ " + files_notice(left_out))
    return notes


def keep_shared_files(memory: BrowserMemory, triggers: list, base: str = MEMORY_NOTE,
                      start_over: str = START_OVER) -> None:
    """Registers the shared files alone: `triggers` are (event, note) pairs after which they may have
    changed (the skills lesson writes its skills/ folder); `base` is what those notes say of them, and
    `start_over` how the page gets back its starting files."""
    memory.keep_shared(PART, tr("工作区文件", "the workspace files"), base, read,
                       functools.partial(apply, start_over=start_over), triggers)


def keep(memory: BrowserMemory, tabs: list) -> None:
    """Registers the shared files and then each workspace tab, in this order (call before memory.wire)."""
    keep_shared_files(memory, [(event, tab.run.workspace.memory_note) for tab in tabs for event in tab.run.changed_files])
    for tab in tabs:
        memory.keep_lesson(tab, note=tab.run.workspace.memory_note, base=MEMORY_NOTE, after=PART)
