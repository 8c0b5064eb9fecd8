"""A run with skills (code/skills.py): the skills arrive as texts, one SKILL.md per folder name, and
are read as data (YAML front matter and Markdown), never run. load_skill only hands back one of
those texts, so it runs here, not in the sandbox; so do the memory tools, over one file per page
session (the student sees, corrects and deletes them on the page).

On the page the skills are files of the session's workspace, skills/<name>/SKILL.md, the same
workspace the atomic-tools and permission lessons work in: the page's box shows them
(workspace_text) and writes them back as the student edits (write_to_workspace). The named API
takes them as texts and touches no workspace."""
from __future__ import annotations

import functools
import hashlib
import json
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator

import skills
import workspace

from i18n import Text, tr

FOLDER = "skills"
MAX_SKILLS = 20
MAX_SKILL_CHARS = 20_000


HEADER = re.compile(rf"^==> {FOLDER}/([^/\n]*)/SKILL\.md <==[ \t]*$", re.M)


def files_from_text(text: str) -> tuple[dict[str, str], list[str]] | None:
    """The page's one box of skills, each file after its header line (as `head` prints several files):

        ==> skills/release-notes/SKILL.md <==
        ---
        name: release-notes
        ...

    -> ({folder: text}, problems: text before the first header, a folder given twice); None when the
    text has no such header."""
    heads = list(HEADER.finditer(text or ""))
    if not heads:
        return None
    problems = []
    if text[:heads[0].start()].strip():
        problems.append("第一行 ==> skills/<名字>/SKILL.md <== 之前还有文字，它不属于任何技能，没有读。")
    files: dict[str, str] = {}
    ends = [h.start() for h in heads[1:]] + [len(text)]
    for head, end in zip(heads, ends):
        if head.group(1) in files:
            problems.append(f"skills/{head.group(1)}/SKILL.md 出现了不止一次：只读了第一个。")
            continue
        files[head.group(1)] = text[head.end():end].strip("\n") + "\n"
    return files, problems


def text_from_files(files: dict[str, str]) -> str:
    return "\n".join(f"==> {FOLDER}/{folder}/SKILL.md <==\n{text.strip()}\n" for folder, text in files.items())


def is_skill_file(path: str) -> bool:
    """skills/<folder>/SKILL.md, not a file deeper in a skill's folder."""
    parts = path.split("/")
    return len(parts) == 3 and parts[0] == FOLDER and parts[2] == "SKILL.md"


def shown_files(files: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The workspace's text files -> ({folder: SKILL.md text} the box can show, in folder order; the
    SKILL.md paths it cannot: a folder name with a line break, or a body holding a header line, which
    the box would read back as two files)."""
    shown, hidden = {}, []
    for path in sorted(files):
        if is_skill_file(path):
            folder = path.split("/")[1]
            # The box's editor takes a lone \r for a line break too.
            if "\n" in folder or "\r" in folder or HEADER.search(files[path].replace("\r", "\n")):
                hidden.append(path)
            else:
                shown[folder] = files[path]
    return shown, hidden


def same_text(kept: str, boxed: str) -> bool:
    """A file's text and the box's copy of it are the same but for what the box changes on its own:
    the blank lines around it, and line endings (the editor writes \n)."""
    return kept.replace("\r\n", "\n").replace("\r", "\n").strip() == boxed.replace("\r\n", "\n").strip()


def same_skills(kept: dict[str, str], boxed: dict[str, str]) -> bool:
    """The same folders, each with the same_text."""
    return kept.keys() == boxed.keys() and all(same_text(kept[folder], boxed[folder]) for folder in kept)


def workspace_text(session_id: str) -> tuple[str, list[str]]:
    """The box's text of the workspace's skills, and the SKILL.md files it leaves out (shown_files)."""
    shown, hidden = shown_files(workspace.export_files(session_id))
    return text_from_files(shown), hidden


def write_to_workspace(session_id: str, text: str) -> Text | None:
    """Makes the workspace's skill files those of the box: a SKILL.md the student changed or added is
    written, one taken out of the box is removed; nothing else (another file under skills/, a SKILL.md
    the box could not show) is touched. None when done, or why nothing was written."""
    boxed = files_from_text(text) if (text or "").strip() else ({}, [])
    if boxed is None:
        return tr("框里没有一行 ==> skills/<名字>/SKILL.md <==，工作区里的技能文件没有改。",
                  "The box has no line ==> skills/<name>/SKILL.md <==, so the workspace's skill files were not "
                  "changed.")
    if len(HEADER.findall(text)) != len(boxed[0]):
        return tr("框里有一个技能出现了不止一次，分不清哪个是对的：工作区里的技能文件没有改。",
                  "A skill appears more than once in the box, so which one is meant is unclear: the workspace's "
                  "skill files were not changed.")
    try:
        shown, _ = shown_files(workspace.export_files(session_id))
        written = {f"{FOLDER}/{folder}/SKILL.md": body for folder, body in boxed[0].items()
                   if folder not in shown or not same_text(shown[folder], body)}
        removed = [f"{FOLDER}/{folder}/SKILL.md" for folder in shown if folder not in boxed[0]]
        if written or removed:
            workspace.update_files(session_id, written, removed)
    except workspace.WorkspaceError as exc:
        return tr("技能没有写进工作区：{exc}", "The skills were not written to the workspace: {exc}").format(exc=exc)
    return None


def adopt_old_box(session_id: str, old: Any) -> Text | None:
    """The box's text an older page kept with the lesson, from before the skills lived in the
    workspace: written into the workspace if its skills are still the untouched examples (anything
    else is newer work, which wins). What to tell the student, or None when nothing was taken."""
    if not isinstance(old, str) or len(old) > MAX_SKILLS * MAX_SKILL_CHARS or files_from_text(old) is None:
        return None
    try:
        shown, hidden = shown_files(workspace.export_files(session_id))
    except workspace.WorkspaceError:
        return None
    if hidden or not same_skills(shown, skills.EXAMPLES) or same_skills(shown, files_from_text(old)[0]):
        return None
    problem = write_to_workspace(session_id, old)
    return (tr("⚠️ 本浏览器以前和这一课存在一起的技能没能写进工作区：{problem}",
               "⚠️ The skills this browser kept with the lesson before could not be written to the workspace: "
               "{problem}").format(problem=problem) if problem else
            tr("↩ 本浏览器以前把技能和这一课存在一起，现在技能是工作区里的文件：已写进 skills/。",
               "↩ This browser used to keep the skills with the lesson; skills are files of the workspace now, "
               "so they were written to skills/."))


def skills_from(value: Any) -> tuple[dict[str, skills.Skill], list[str]]:
    """{folder: SKILL.md text}, its JSON, or the page's box of files -> (the skills, the problems, one
    sentence each)."""
    if isinstance(value, str) and len(value) > MAX_SKILLS * MAX_SKILL_CHARS:
        return {}, [f"技能一共超过 {MAX_SKILLS * MAX_SKILL_CHARS} 字，太长了。"]
    problems: list[str] = []
    boxed = files_from_text(value) if isinstance(value, str) else None
    if boxed is not None:
        value, problems = boxed
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except (ValueError, RecursionError):
            return {}, ["没有读到技能：每个技能以一行 ==> skills/<名字>/SKILL.md <== 开头"
                        "（接口也可以给 JSON 对象：{\"文件夹名\": \"SKILL.md 的全文\"}）。"]
    if not isinstance(value, dict):
        return {}, ["技能应是一个对象：{\"文件夹名\": \"SKILL.md 的全文\"}。"]
    found: dict[str, skills.Skill] = {}
    if len(value) > MAX_SKILLS:
        problems.append(f"给了 {len(value)} 个技能，只读前 {MAX_SKILLS} 个。")
    for folder, text in list(value.items())[:MAX_SKILLS]:
        if not isinstance(text, str) or len(text) > MAX_SKILL_CHARS:
            problems.append(f"{folder}/SKILL.md：应是不超过 {MAX_SKILL_CHARS} 字的文字。")
            continue
        skill, said = skills.parse_skill(text, str(folder))
        problems += said
        if skill is not None:
            found[skill.name] = skill
    return found, problems


def skills_loop(client: Any, question: str, options: dict, *, max_turns: int, temperature: float | None,
                stream: bool, session_id: str | None = None) -> Iterator:
    """options["memory"]: the loop also gets remember / recall / forget over the session's memories."""
    found, problems = skills_from(options.get("skills"))
    way = options.get("way") if options.get("way") in skills.WAYS else "catalogue"
    memory = memory_of(session_id) if options.get("memory") else None
    return skills.run_with_skills(client, question, found, memory, way=way, problems=problems, max_turns=max_turns,
                                  temperature=temperature, stream=stream)


# ------------------------------------------------------------------ memories, one file per session

@functools.lru_cache(maxsize=1)
def memory_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="tool-workshop-memories-"))


def memory_of(session_id: str | None) -> skills.Memory:
    """The memories of one page session (a file on the server; never another session's). Without a
    session (a script calling the API without one) the memories last for that one run."""
    if not session_id:
        return skills.Memory(Path(tempfile.mkdtemp(prefix="tool-workshop-memories-")) / "memory.json")
    name = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return skills.Memory(memory_folder() / f"{name}.json")


def forget_memories(session_id: str) -> None:
    """A session has gone: so have its memories."""
    memory_of(session_id).path.unlink(missing_ok=True)
