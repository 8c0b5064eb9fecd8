"""A session's workspace: the starter project, a real edit-and-test cycle through the sandboxed
bash, snapshots and diffs, reset, import and export (with hostile archives), and forgetting."""
import io
import os
import stat
import zipfile

import pytest
import skills

import workspace
from workspace import store


def test_the_starter_project(session):
    paths = [entry["path"] for entry in workspace.tree(session)]
    skills_files = [f"skills/{name}/SKILL.md" for name in sorted(skills.EXAMPLES)]
    assert [p for p in paths if not p.startswith("skills/")] == [
        "notes.md", "src/", "src/__init__.py", "src/calc.py", "tests/", "tests/__init__.py", "tests/test_calc.py"]
    assert [p for p in paths if p.endswith("SKILL.md")] == skills_files   # the skills lesson's, in the same workspace
    assert "len(numbers) - 1" in workspace.read_file(session, "src/calc.py")
    assert workspace.read_file(session, "skills/sql-style/SKILL.md") == skills.EXAMPLES["sql-style"] + "\n"


def test_update_files_writes_some_removes_others_and_keeps_the_rest(ws, session):
    ws.bash(session, "printf '\\000\\001' > blob.bin && ln -s notes.md link.md")
    before = workspace.snapshot(session)
    workspace.update_files(session, {"skills/new/SKILL.md": "新的", "notes.md": "改过"},
                           ["skills/sql-style/SKILL.md"])
    after = workspace.snapshot(session)
    assert after["skills/new/SKILL.md"] == "新的".encode() and after["notes.md"] == "改过".encode()
    assert "skills/sql-style/SKILL.md" not in after and "skills/sql-style/" not in after   # no empty folder left
    assert after["blob.bin"] == b"\0\1" and after["link.md"] == ("link", "notes.md")       # the rest as it was
    assert {p for p in before if p not in ("notes.md", "skills/sql-style/SKILL.md")} <= set(after)


@pytest.mark.parametrize("written, removed, words", [
    ({"../escape.md": "x"}, [], ".."),
    ({"notes.md/inside.md": "x"}, [], "notes.md 不是一个真的文件夹"),
    ({}, ["src"], "src 不是普通文件"),
    ({"skills/" + "长" * 100 + "/SKILL.md": "x"}, [], "超过 255 个字节"),
    ({"a\ud800.md": "x"}, [], "UTF-8"),
    ({"big.md": "x" * 900_000, "big2.md": "x" * 900_000, "big3.md": "x" * 900_000, "big4.md": "x" * 900_000,
      "big5.md": "x" * 900_000}, [], "内容太大"),
    ({"a.md": "x" * (2 << 20)}, [], "单个文件上限"),
    ({}, ["/etc/passwd"], "相对路径"),
])
def test_a_refused_update_changes_nothing(session, written, removed, words):
    before = workspace.snapshot(session)
    with pytest.raises(workspace.WorkspaceError, match=words):
        workspace.update_files(session, written, removed)
    assert workspace.snapshot(session) == before


def test_an_update_never_writes_through_a_link(ws, session, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    ws.bash(session, f"rm -rf skills && ln -s {outside} skills")
    with pytest.raises(workspace.WorkspaceError, match="skills 不是一个真的文件夹"):
        workspace.update_files(session, {"skills/x/SKILL.md": "x"})
    assert list(outside.iterdir()) == []


def test_an_update_leaves_modes_and_other_kinds_of_entry_alone(session):
    project = store.get(session).project
    os.chmod(os.path.join(project, "notes.md"), 0o755)
    os.chmod(os.path.join(project, "src/calc.py"), 0o750)
    os.mkfifo(os.path.join(project, "pipe"))
    workspace.update_files(session, {"src/calc.py": "X = 1\n"}, ["skills/sql-style/SKILL.md"])
    listing = {entry["path"]: entry for entry in workspace.tree(session)}
    assert listing["pipe"]["type"] == "other"                    # still there
    assert os.stat(os.path.join(project, "notes.md")).st_mode & 0o777 == 0o755
    assert os.stat(os.path.join(project, "src/calc.py")).st_mode & 0o777 == 0o750    # replaced, mode kept
    assert workspace.read_file(session, "src/calc.py") == "X = 1\n"
    assert not [p for p in listing if ".draft-" in p]


def test_read_edit_test_cycle(ws, session):
    """What the lesson does: the test fails, an edit fixes the bug, the test passes."""
    red = ws.bash(session, "python3 -m unittest")
    assert not red["ok"] and red["error_code"] == "exit_status"            # ran, and failed: its output still there
    assert red["content"].splitlines()[1] == "退出码：1"
    assert "FAIL: test_average" in red["content"] and "3.3333333333333335 != 2.5" in red["content"]
    assert red["diff"] == "" and red["changed"] == {"added": [], "removed": [], "modified": []}
    assert red["layers"]["cleanup"] in ("pid_namespace", "subreaper")    # which layers held, for the page
    assert "13\t    return sum(numbers) / (len(numbers) - 1)" in \
        workspace.run_workspace_tool(session, "read", {"path": "src/calc.py"})["content"]
    fixed = workspace.run_workspace_tool(session, "edit", {"path": "src/calc.py", "old": "len(numbers) - 1",
                                                           "new": "len(numbers)"})
    assert fixed["ok"] and fixed["changed"]["modified"] == ["src/calc.py"]
    assert "-    return sum(numbers) / (len(numbers) - 1)\n+    return sum(numbers) / (len(numbers))" in fixed["diff"]
    green = ws.bash(session, "python3 -m unittest")
    assert green["content"].startswith("退出码：0") and "Ran 3 tests" in green["content"] and "OK" in green["content"]
    assert green["changed"]["added"] == []    # no __pycache__ left in the workspace


def test_files_written_by_the_app_are_the_shells_to_change(ws, session):
    workspace.run_workspace_tool(session, "write", {"path": "made/by/app.txt", "content": "one\n"})
    step = ws.bash(session, "echo two >> made/by/app.txt && mkdir made/by/shell && cat made/by/app.txt")
    assert step["content"].startswith("退出码：0") and "one\ntwo" in step["content"]
    assert step["changed"] == {"added": ["made/by/shell/"], "removed": [], "modified": ["made/by/app.txt"]}
    assert "+two" in step["diff"]


def test_a_step_that_changes_nothing_has_no_diff_and_reads_have_none(ws, session):
    assert workspace.run_workspace_tool(session, "read", {"path": "notes.md"})["diff"] == ""
    assert ws.bash(session, "ls")["diff"] == ""


def test_bash_removals_and_binary_files_show_in_the_diff(ws, session):
    step = ws.bash(session, "rm notes.md && printf '\\000\\001' > data.bin")
    assert step["changed"] == {"added": ["data.bin"], "removed": ["notes.md"], "modified": []}
    assert "--- a/notes.md\n+++ /dev/null" in step["diff"] and "二进制文件 data.bin 已改变" in step["diff"]


def test_snapshot_and_diff_by_hand(session):
    before = workspace.snapshot(session)
    workspace.run_workspace_tool(session, "write", {"path": "notes.md", "content": "新的笔记\n"})
    text = workspace.diff(before, workspace.snapshot(session))
    assert text.startswith("--- a/notes.md\n+++ b/notes.md") and "+新的笔记" in text


def test_reset_brings_back_the_starter(ws, session):
    ws.bash(session, "rm -r src tests && echo x > other.txt")
    workspace.reset(session)
    assert [entry["path"] for entry in workspace.tree(session)][0] == "notes.md"
    assert "other.txt" not in [entry["path"] for entry in workspace.tree(session)]
    assert "len(numbers) - 1" in workspace.read_file(session, "src/calc.py")


def test_a_command_that_overfills_the_workspace_is_undone(ws, session):
    before = workspace.snapshot(session)
    step = ws.bash(session, "for i in $(seq 1 40); do head -c 300000 /dev/zero > f$i.bin; done; echo done")
    assert step["error_code"] == "workspace_full" and "已全部撤销" in step["content"]
    assert workspace.snapshot(session) == before and step["diff"] == ""


def test_too_many_files_are_undone_too(ws, session):
    before = workspace.snapshot(session)
    step = ws.bash(session, "mkdir many && cd many && for i in $(seq 1 400); do : > f$i; done")
    assert step["error_code"] == "workspace_full"
    assert workspace.snapshot(session) == before


# ---------------------------------------------------------------- import and export

def test_files_round_trip(session):
    files = workspace.export_files(session)
    assert set(files) == {"notes.md", "src/__init__.py", "src/calc.py", "tests/__init__.py", "tests/test_calc.py",
                          *(f"skills/{name}/SKILL.md" for name in skills.EXAMPLES)}
    workspace.import_files(session, {"a.py": "print('a')\n", "pkg/b.py": "B = 1\n"})
    assert workspace.export_files(session) == {"a.py": "print('a')\n", "pkg/b.py": "B = 1\n"}
    workspace.import_files(session, files)
    assert workspace.export_files(session) == files


def test_zip_round_trip(ws, session):
    ws.bash(session, "mkdir empty && printf '\\377\\376' > raw.bin")
    data = workspace.export_zip(session)
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "src/calc.py" in names and "empty/" in names and "raw.bin" in names
    workspace.import_files(session, {"x.txt": "x"})
    workspace.import_zip(session, data)
    assert workspace.snapshot(session)["raw.bin"] == b"\xff\xfe"
    assert {"path": "empty/", "type": "dir", "size": 0} in workspace.tree(session)


def _zip(*members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for member in members:
            if isinstance(member, zipfile.ZipInfo):
                archive.writestr(member, b"target")
            else:
                archive.writestr(*member)
    return buffer.getvalue()


def _symlink_member(name):
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize("data, words", [
    (_zip(("/etc/cron.d/x", "x")), "相对路径"),
    (_zip(("../escape.txt", "x")), ".."),
    (_zip(("a/../../escape.txt", "x")), ".."),
    (_zip(("C:\\windows\\x", "x")), "反斜杠"),
    (_zip(_symlink_member("link")), "符号链接"),
    (_zip(*[(f"f{i}.txt", "x") for i in range(400)]), "文件太多"),
    (_zip(("zeros.txt", b"\0" * (2 << 20))), "单个文件上限"),
    (_zip(*[(f"z{i}.txt", b"\0" * (900 << 10)) for i in range(6)]), "内容太大"),
    (_zip(("a", "file"), ("a/b", "beneath a file")), "既是文件又是文件夹"),
    (b"not a zip at all", "不是一个有效的 zip"),
])
def test_hostile_zips_are_refused_and_change_nothing(session, data, words):
    before = workspace.snapshot(session)
    with pytest.raises(workspace.WorkspaceError, match=words):
        workspace.import_zip(session, data)
    assert workspace.snapshot(session) == before


@pytest.mark.parametrize("files, words", [
    ({"/abs.txt": "x"}, "相对路径"),
    ({"../up.txt": "x"}, ".."),
    ({"ok.txt": b"bytes"}, "必须是文本"),
    ({f"f{i}": "x" for i in range(301)}, "文件太多"),
    (["not", "a", "dict"], "需要一个"),
])
def test_hostile_dicts_are_refused(session, files, words):
    with pytest.raises(workspace.WorkspaceError, match=words):
        workspace.import_files(session, files)


def test_read_file_keeps_the_tool_rules(session):
    with pytest.raises(workspace.WorkspaceError, match="绝对路径"):
        workspace.read_file(session, "/etc/hostname")


def test_forget_removes_the_folder(session):
    home = store.get(session).home
    assert os.path.isdir(home)
    workspace.forget(session)
    assert not os.path.exists(home)
    assert workspace.tree(session)[0]["path"] == "notes.md"   # a later request starts afresh


def test_a_folder_is_made_only_when_something_needs_it(session):
    """Files put back (from the browser) into a session that has no folder yet wait for it: reading
    them makes none; the first tool, tree or write makes it from them, and forgetting drops them."""
    count = workspace.known_sessions()
    assert workspace.export_files(session) == workspace.starter_files() and not workspace.made(session)
    workspace.put_back(session, {"notes.md": "kept in the browser", "src/calc.py": "x = 1\n"})
    assert workspace.export_files(session) == {"notes.md": "kept in the browser", "src/calc.py": "x = 1\n"}
    assert workspace.known_sessions() == count and not workspace.made(session)
    assert workspace.read_file(session, "notes.md") == "kept in the browser"
    assert workspace.known_sessions() == count + 1 and workspace.made(session)
    assert [entry["path"] for entry in workspace.tree(session)] == ["notes.md", "src/", "src/calc.py"]
    workspace.put_back(session, {"notes.md": "again"})            # a made folder takes them at once
    assert workspace.export_files(session) == {"notes.md": "again"}
    workspace.forget(session)
    workspace.put_back(session, {"notes.md": "waiting"})
    workspace.forget(session)
    assert workspace.export_files(session)["notes.md"] == workspace.starter_files()["notes.md"]
    with pytest.raises(workspace.WorkspaceError, match="只接受相对路径"):
        workspace.put_back(session, {"/etc/passwd": "x"})        # checked before it waits
    assert not workspace.made(session)


def test_sessions_do_not_share_files(session):
    workspace.run_workspace_tool(session, "write", {"path": "mine.txt", "content": "mine"})
    other = session + "-other"
    try:
        assert "mine.txt" not in [entry["path"] for entry in workspace.tree(other)]
    finally:
        workspace.forget(other)


def test_tool_schemas_name_the_four_tools():
    schemas = workspace.tool_schemas()
    assert [schema["function"]["name"] for schema in schemas] == ["read", "write", "edit", "bash"]
    assert schemas[2]["function"]["parameters"]["required"] == ["path", "old", "new"]


def test_the_notice_names_each_missing_layer():
    from sandbox import shell

    full = {"uid": 65534, "rlimits": True, "landlock": 7, "seccomp": True, "isolated_signals": True,
            "cleanup": "pid_namespace"}
    assert shell.describe(full, public=True)["mode"] == "sandboxed"
    assert "PID 命名空间" in shell.describe(full, public=True)["notice"]
    weak = dict(full, landlock=0, isolated_signals=False, cleanup="subreaper")
    refused = shell.describe(weak, public=True)
    assert refused["mode"] == "refused" and "Landlock 文件隔离" in refused["notice"] and "信号隔离" in refused["notice"]
    local = shell.describe(weak, public=False)
    assert local["mode"] == "unsandboxed" and "子进程收割" in local["notice"]


def test_status_on_this_machine_names_the_layers():
    state = workspace.shell_status()
    assert set(state) == {"mode", "layers", "notice", "notice_en", "public"}
    assert state["layers"].get("cleanup") in ("pid_namespace", "subreaper")


def test_the_number_of_workspaces_is_bounded(session, monkeypatch):
    monkeypatch.setattr(store, "MAX_SESSIONS", workspace.known_sessions())
    with pytest.raises(workspace.WorkspaceError, match="太多"):
        workspace.tree(session)
    refused = workspace.run_workspace_tool(session, "read", {"path": "notes.md"})
    assert refused["error_code"] == "invalid_request" and "工作区不可用" in refused["content"]


def test_a_write_that_fails_says_so_and_leaves_the_old_file_and_no_draft(session, monkeypatch):
    from workspace import changes

    before = workspace.read_file(session, "notes.md")

    def full_disk(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(changes.os, "replace", full_disk)
    with pytest.raises(workspace.WorkspaceError, match="notes.md 没有写成（No space left on device）"):
        workspace.update_files(session, {"notes.md": "新的"})
    assert workspace.read_file(session, "notes.md") == before
    assert not [e["path"] for e in workspace.tree(session) if ".draft-" in e["path"]]
