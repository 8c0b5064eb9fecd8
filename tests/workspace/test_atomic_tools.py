"""The four tools as course code (code/atomic_tools.py) on a temporary folder: messages and rules."""
import os

import pytest

import atomic_tools


@pytest.fixture
def tools(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    return atomic_tools.make_tools(str(tmp_path)), tmp_path


def call(tools, name, **args):
    return atomic_tools.run(tools[0], name, args)


def test_the_four_tools_have_schemas():
    names = [tool["function"]["name"] for tool in atomic_tools.make_tools("/nonexistent").to_schemas()]
    assert names == ["read", "write", "edit", "bash"]


def test_read_numbers_lines_and_pages(tools):
    outcome = call(tools, "read", path="src/calc.py")
    assert outcome.ok and "     2\t    return a - b" in outcome.content
    assert "共 6 行" in outcome.content
    page = call(tools, "read", path="src/calc.py", offset=2, limit=2)
    assert "     2\t" in page.content and "     3\t" in page.content and "     4\t" not in page.content
    assert "offset=4" in page.content


def test_read_past_the_end_and_missing_files(tools):
    assert call(tools, "read", path="src/calc.py", offset=99).error_code == "invalid_arguments"
    missing = call(tools, "read", path="src/nope.py")
    assert missing.error_code == "not_found" and "src/nope.py" in missing.content
    folder = call(tools, "read", path="src")
    assert folder.error_code == "invalid_arguments" and "文件夹" in folder.content


@pytest.mark.parametrize("path, words", [
    ("/etc/passwd", "绝对路径"),
    ("../outside.txt", ".."),
    ("src/../../outside.txt", ".."),
    ("~/x", "绝对路径"),
])
def test_paths_must_stay_in_the_workspace(tools, path, words):
    for name, args in (("read", {"path": path}), ("write", {"path": path, "content": "x"}),
                       ("edit", {"path": path, "old": "a", "new": "b"})):
        outcome = atomic_tools.run(tools[0], name, args)
        assert outcome.error_code == "path_outside" and words in outcome.content
    assert not (tools[1].parent / "outside.txt").exists()


def test_a_link_that_leads_out_is_named(tools, tmp_path_factory):
    secret = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    secret.write_text("TOP-SECRET")
    os.symlink(secret, tools[1] / "leak.txt")
    os.symlink(secret.parent, tools[1] / "door")
    os.symlink("src/calc.py", tools[1] / "inside.py")
    leak = call(tools, "read", path="leak.txt")
    assert leak.error_code == "path_outside" and "leak.txt 是符号链接" in leak.content
    assert "TOP-SECRET" not in leak.content
    through = call(tools, "write", path="door/secret.txt", content="changed")
    assert through.error_code == "path_outside" and "door 是符号链接" in through.content
    assert secret.read_text() == "TOP-SECRET"
    assert call(tools, "read", path="inside.py").ok   # a link that stays inside is fine


def test_hard_links_are_refused(tools, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "other.txt"
    outside.write_text("OUTSIDE")
    os.link(outside, tools[1] / "twin.txt")
    outcome = call(tools, "write", path="twin.txt", content="overwritten")
    assert outcome.error_code == "path_outside" and "硬链接" in outcome.content
    assert outside.read_text() == "OUTSIDE"


def test_write_creates_folders_and_reports(tools):
    outcome = call(tools, "write", path="pkg/new.py", content="x = 1\ny = 2\n")
    assert outcome.ok and "pkg/new.py：2 行" in outcome.content and "新文件" in outcome.content
    assert (tools[1] / "pkg" / "new.py").read_text() == "x = 1\ny = 2\n"
    again = call(tools, "write", path="pkg/new.py", content="z = 3\n")
    assert "覆盖了原来的 2 行" in again.content


def test_write_respects_the_quota(tools, monkeypatch):
    monkeypatch.setattr(atomic_tools, "MAX_WORKSPACE_BYTES", 200)
    outcome = call(tools, "write", path="big.txt", content="x" * 300)
    assert outcome.error_code == "workspace_full" and not (tools[1] / "big.txt").exists()
    monkeypatch.setattr(atomic_tools, "MAX_FILES", 3)
    assert call(tools, "write", path="one-more.txt", content="x").error_code == "workspace_full"


def test_edit_replaces_a_unique_match_and_shows_the_diff(tools):
    outcome = call(tools, "edit", path="src/calc.py", old="def add(a, b):\n    return a - b",
                   new="def add(a, b):\n    return a + b")
    assert outcome.ok
    assert "-    return a - b" in outcome.content and "+    return a + b" in outcome.content
    assert (tools[1] / "src" / "calc.py").read_text().startswith("def add(a, b):\n    return a + b\n")


def test_edit_says_how_many_times_and_where(tools):
    outcome = call(tools, "edit", path="src/calc.py", old="return a - b", new="return a + b")
    assert outcome.error_code == "ambiguous_match"
    assert "出现了 2 次（第 2、6 行）" in outcome.content
    assert (tools[1] / "src" / "calc.py").read_text().count("return a - b") == 2


def test_edit_without_a_match_points_at_the_closest_line(tools):
    outcome = call(tools, "edit", path="src/calc.py", old="def add(a,b):", new="def add(x, y):")
    assert outcome.error_code == "no_match"
    assert "最接近的是第 1 行：def add(a, b):" in outcome.content


def test_edit_notices_an_indentation_slip(tools):
    outcome = call(tools, "edit", path="src/calc.py", old="def sub(a, b):\nreturn a - b", new="x")
    assert outcome.error_code == "no_match" and "第 5 行起" in outcome.content and "缩进" in outcome.content


def test_edit_refuses_empty_and_identical_text(tools):
    assert call(tools, "edit", path="src/calc.py", old="", new="x").error_code == "invalid_arguments"
    assert call(tools, "edit", path="src/calc.py", old="add", new="add").error_code == "invalid_arguments"


def test_wrong_arguments_come_back_from_the_registry(tools):
    outcome = atomic_tools.run(tools[0], "read", {"path": "src/calc.py", "offset": "two"})
    assert outcome.error_code == "invalid_arguments" and "offset" in outcome.content
    assert atomic_tools.run(tools[0], "rm", {}).error_code == "unknown_tool"


def test_bash_reports_exit_code_and_both_streams(tools):
    outcome = call(tools, "bash", command="echo out; echo err >&2; exit 0")
    assert outcome.ok
    assert outcome.content.splitlines()[0] == "退出码：0"
    assert "[stdout]\nout" in outcome.content and "[stderr]\nerr" in outcome.content


def test_a_command_that_ran_and_failed_is_a_failed_result_with_its_output(tools):
    # `cat` of a file that cannot be read: the command ran, exited 1 and said why on stderr.
    outcome = call(tools, "bash", command="echo out; echo 'Permission denied' >&2; exit 3")
    assert not outcome.ok and outcome.error_code == "exit_status"
    first, *rest = outcome.content.splitlines()
    assert first == "❌ [命令失败] 命令运行了，但退出码是 3（不是 0），没有成功。原因见下面的输出。"
    assert rest[0] == "退出码：3" and "[stdout]\nout" in outcome.content and "Permission denied" in outcome.content


def test_bash_output_is_clipped_with_a_note(tools):
    outcome = call(tools, "bash", command="seq 1 5000")
    assert outcome.ok and outcome.clipped_from and "结果过长已截断" in outcome.content


def test_bash_timeout_keeps_the_partial_output(tools):
    outcome = call(tools, "bash", command="echo begun; sleep 30", timeout=1)
    assert outcome.error_code == "timeout" and "超过 1 秒" in outcome.content and "begun" in outcome.content


def test_bash_timeout_is_bounded(tools):
    outcome = call(tools, "bash", command="true", timeout=600)
    assert outcome.error_code == "invalid_arguments" and "1 到 30 秒" in outcome.content
