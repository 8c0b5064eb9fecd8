"""The skills lesson's box and the workspace's skills/ folder: what the box shows is read from the
workspace, and what the student writes in it goes back there, nothing else touched."""
import pytest
import skills

import workspace
from runs import skills_backend


def test_the_box_shows_the_workspaces_skills_in_folder_order(session):
    text, hidden = skills_backend.workspace_text(session)
    assert text == skills_backend.text_from_files(dict(sorted(skills.EXAMPLES.items()))) and hidden == []
    assert [line.split("/")[1] for line in text.splitlines() if line.startswith("==> ")] == sorted(skills.EXAMPLES)


def test_an_edit_is_written_and_a_dropped_skill_loses_only_its_skill_md(session):
    workspace.update_files(session, {"skills/code-review/checklist.md": "- 边界条件\n",
                                     "skills/release-notes/SKILL.md": "\n\n" + skills.EXAMPLES["release-notes"] + "  \n"})
    text, _ = skills_backend.workspace_text(session)
    kept = {folder: body for folder, body in skills_backend.files_from_text(text)[0].items() if folder != "code-review"}
    kept["sql-style"] = kept["sql-style"].replace("关键字大写", "关键字小写")
    kept["new-one"] = "---\nname: new-one\ndescription: 新的。\n---\n正文\n"
    assert skills_backend.write_to_workspace(session, skills_backend.text_from_files(kept)) is None
    files = workspace.export_files(session)
    assert "关键字小写" in files["skills/sql-style/SKILL.md"] and files["skills/new-one/SKILL.md"].startswith("---")
    assert "skills/code-review/SKILL.md" not in files
    assert files["skills/code-review/checklist.md"] == "- 边界条件\n"      # not a SKILL.md: left alone
    assert files["notes.md"] and files["src/calc.py"]
    assert files["skills/release-notes/SKILL.md"].startswith("\n\n---")     # unchanged in the box: not rewritten
    assert skills_backend.write_to_workspace(session, "") is None         # an empty box: no skill left
    assert not [path for path in workspace.export_files(session) if path.endswith("SKILL.md")]


def test_skill_files_the_box_cannot_show_are_said_and_left_alone(session):
    tricky = "---\nname: about-box\ndescription: 框的格式。\n---\n像这样：\n==> skills/sql-style/SKILL.md <==\n然后是正文。\n"
    crlf = skills.EXAMPLES["code-review"].replace("\n", "\r\n")
    workspace.update_files(session, {"skills/about-box/SKILL.md": tricky, "skills/odd\nname/SKILL.md": "x\n",
                                     "skills/odd\rname/SKILL.md": "x\n", "skills/code-review/SKILL.md": crlf})
    text, hidden = skills_backend.workspace_text(session)
    assert hidden == ["skills/about-box/SKILL.md", "skills/odd\nname/SKILL.md", "skills/odd\rname/SKILL.md"]
    assert "about-box" not in text and "odd" not in text
    assert skills_backend.write_to_workspace(session, text.replace("关键字大写", "关键字小写")) is None
    files = workspace.export_files(session)
    assert files["skills/about-box/SKILL.md"] == tricky and files["skills/odd\nname/SKILL.md"] == "x\n"
    assert files["skills/odd\rname/SKILL.md"] == "x\n" and files["skills/code-review/SKILL.md"] == crlf   # untouched
    assert "关键字小写" in files["skills/sql-style/SKILL.md"]


@pytest.mark.parametrize("text, words", [
    ("==> skills/a/SKILL.md <==\n---\nname: a\n---\n==> skills/a/SKILL.md <==\n---\n", "不止一次"),
    ("==> skills/../SKILL.md <==\n---\nname: x\n---\n", ".."),
    ("==> skills//SKILL.md <==\n---\nname: x\n---\n", "空的部分"),
    ("随便写的几行字，没有文件头", "没有一行 ==> skills/"),
])
def test_a_box_that_cannot_be_written_changes_nothing_and_says_why(session, text, words):
    before = workspace.snapshot(session)
    said = skills_backend.write_to_workspace(session, text)
    assert said is not None and words in said
    assert workspace.snapshot(session) == before


def test_an_older_pages_kept_box_is_taken_only_into_untouched_examples(session):
    text, _ = skills_backend.workspace_text(session)
    old = text.replace("关键字大写", "关键字小写")
    assert skills_backend.adopt_old_box(session, text) is None             # the examples themselves: nothing to take
    assert skills_backend.adopt_old_box(session, ["not", "text"]) is None
    assert "已写进 skills/" in skills_backend.adopt_old_box(session, old)
    assert "关键字小写" in workspace.read_file(session, "skills/sql-style/SKILL.md")
    newer = old.replace("关键字小写", "关键字随意")
    assert skills_backend.adopt_old_box(session, newer) is None             # the workspace holds newer work: it wins
    assert "关键字小写" in workspace.read_file(session, "skills/sql-style/SKILL.md")
