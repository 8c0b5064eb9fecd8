"""workspace.preview: what a write / edit would change, shown without applying it."""
import os

import workspace

CALC = "src/calc.py"
BUG = "return sum(numbers) / (len(numbers) - 1)"
FIX = "return sum(numbers) / len(numbers)"


def test_edit_preview_is_the_diff_the_edit_would_make_and_changes_nothing(session):
    before = workspace.snapshot(session)
    shown = workspace.preview(session, "edit", {"path": CALC, "old": BUG, "new": FIX})
    assert workspace.snapshot(session) == before
    assert shown.startswith(f"--- a/{CALC}\n+++ b/{CALC}\n")
    assert f"-    {BUG}\n+    {FIX}\n" in shown
    done = workspace.run_workspace_tool(session, "edit", {"path": CALC, "old": BUG, "new": FIX})
    assert done["ok"] and done["diff"] == shown           # the preview is what the step then did


def test_write_preview_of_a_new_file_and_of_an_overwrite(session):
    shown = workspace.preview(session, "write", {"path": "hello.py", "content": 'print("hi")\n'})
    assert shown == '--- /dev/null\n+++ b/hello.py\n@@ -0,0 +1 @@\n+print("hi")\n'
    assert "hello.py" not in {entry["path"] for entry in workspace.tree(session)}
    shown = workspace.preview(session, "write", {"path": "notes.md", "content": "只剩一行\n"})
    assert shown.startswith("--- a/notes.md\n+++ b/notes.md\n") and "+只剩一行\n" in shown and "-# 练习：修一个 bug\n" in shown
    same = workspace.read_file(session, "notes.md")
    assert "不会有变化" in workspace.preview(session, "write", {"path": "notes.md", "content": same})


def test_a_failing_call_is_explained_with_the_tools_own_words(session):
    missing = workspace.preview(session, "edit", {"path": CALC, "old": "return  a + b", "new": "x"})
    assert missing.startswith("这次调用执行时会失败：\n❌ [没有匹配]") and "缩进" in missing
    twice = workspace.preview(session, "edit", {"path": CALC, "old": "numbers", "new": "values"})
    assert "❌ [匹配不唯一]" in twice
    assert "❌ [找不到文件]" in workspace.preview(session, "edit", {"path": "nope.py", "old": "a", "new": "b"})
    assert "❌ [路径越界]" in workspace.preview(session, "write", {"path": "../x.py", "content": ""})
    assert "❌ [参数错误]" in workspace.preview(session, "write", {"path": "x.py"})
    assert "文件夹" in workspace.preview(session, "write", {"path": "src", "content": ""})


def test_a_link_leading_out_is_refused_even_though_the_copy_has_no_links(session):
    os.symlink("/etc", os.path.join(workspace.store.get(session).project, "outside"))
    shown = workspace.preview(session, "write", {"path": "outside/passwd", "content": "x"})
    assert "❌ [路径越界]" in shown and "符号链接" in shown


def test_bash_shows_the_command_and_read_changes_nothing(session):
    assert workspace.preview(session, "bash", {"command": "python3 -m unittest"}) == "python3 -m unittest"
    assert "不改动" in workspace.preview(session, "read", {"path": "notes.md"})
    assert "不是工作区的工具" in workspace.preview(session, "get_weather", {"city": "北京"})
    assert os.path.basename(CALC) in workspace.preview(session, "edit", {"path": f"./{CALC}", "old": BUG, "new": FIX})
