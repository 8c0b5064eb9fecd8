"""The workspace's files as browser_memory keeps them (memory/workspace_memory.py), without a
browser: read from one session's real workspace, put back into another's, too-big files
left out and named, a tampered record refused without touching the workspace."""
from __future__ import annotations

import secrets

import pytest

import workspace
from memory import memory_format, workspace_memory


@pytest.fixture
def sessions():
    ids = ["test-" + secrets.token_hex(8) for _ in range(2)]
    yield ids
    for sid in ids:
        workspace.forget(sid)


def test_files_read_from_one_session_come_back_in_another(sessions):
    first, second = sessions
    workspace.run_workspace_tool(first, "write", {"path": "hello.py", "content": "print('你好，工作区')\n"})
    fields, notices = workspace_memory.read(first)
    assert notices == [] and fields["left_out"] == []
    assert fields["files"]["hello.py"] == "print('你好，工作区')\n" and "notes.md" in fields["files"]
    notes = workspace_memory.apply(fields, second)
    assert "已恢复" in notes[0] and len(notes) == 1
    assert workspace.export_files(second) == workspace.export_files(first)


def test_a_too_big_workspace_keeps_the_rest_and_says_which_files_are_missing(sessions, monkeypatch):
    first, second = sessions
    monkeypatch.setattr(memory_format, "FILES_LIMIT", 3_000)
    monkeypatch.setattr(workspace_memory, "keep_files",
                        lambda files: memory_format.keep_files(files, limit=3_000))
    workspace.run_workspace_tool(first, "write", {"path": "data/big.txt", "content": "数据\n" * 2_000})
    fields, notices = workspace_memory.read(first)
    assert fields["left_out"] == ["data/big.txt"] and "data/big.txt" not in fields["files"]
    assert len(notices) == 1 and "data/big.txt" in notices[0] and "没有存进本浏览器" in notices[0]
    notes = workspace_memory.apply(fields, second)
    assert any("data/big.txt" in note for note in notes)
    assert "data/big.txt" not in workspace.export_files(second)
    assert workspace.read_file(second, "notes.md") == workspace.read_file(first, "notes.md")


def test_a_tampered_record_leaves_the_starter_project(sessions):
    _, second = sessions
    starter = workspace.export_files(second)
    notes = workspace_memory.apply({"files": {"../escape.py": "x"}, "left_out": []}, second)
    assert len(notes) == 1 and "没有恢复" in notes[0] and "../escape.py" in notes[0]
    assert workspace.export_files(second) == starter
    notes = workspace_memory.apply({"files": "nope"}, second)
    assert "已损坏" in notes[0]
    assert workspace.export_files(second) == starter
