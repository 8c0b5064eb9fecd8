"""The workspace lessons kept in the browser (memory/workspace_memory.py), in real chromium:
a file written by a run is back in the tree after a reload (with the run's timeline, replayed)
and after the server restarts, with the loop and the permission rules; 重置 keeps the starter
project; a workspace too big to keep whole says which files were left out and the page works;
two browsers keep their own workspaces."""
from __future__ import annotations

import json
import zipfile

import pytest

import workspace
from tests.app.harness import ask, code_text, free_port, open_page, show_file, wait_final, workspace_lesson

pytestmark = pytest.mark.browser
WAIT = 60_000
HELLO = "新建文件 hello.py，内容是 print('你好，工作区')"
FILES_KEY = "tool-workshop:workspace"


def storage(page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")


def wait_stored(page, text: str, key: str, present: bool = True):
    page.wait_for_function("([t, key, present]) => (localStorage.getItem(key) || '').includes(t) === present",
                           arg=[text, key, present], timeout=WAIT)


def kept_files(page) -> dict:
    return json.loads(storage(page)[FILES_KEY])["fields"]["files"]


def memory_note(panel):
    return panel.locator(".tw-ws-memory").first


def tree_text(panel) -> str:
    return panel.locator(".tw-ws-tree").first.inner_text()


def reload(page, title: str = "原子工具"):
    page.reload()
    page.wait_for_selector(".tw-lesson", timeout=WAIT)
    panel = workspace_lesson(page, title)
    memory_note(panel).filter(has_text="本浏览器").wait_for(timeout=WAIT)
    return panel


def write_hello(page):
    panel = workspace_lesson(page, "原子工具")
    ask(panel, HELLO)
    answer = wait_final(panel)
    panel.locator(".tw-ws-tree").filter(has_text="hello.py").first.wait_for(timeout=WAIT)
    wait_stored(page, "hello.py", FILES_KEY)
    wait_stored(page, '"type":"final"', "tool-workshop:run:workspace")
    return panel, answer


def test_a_file_written_by_a_run_and_the_run_come_back_after_a_reload(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        panel, answer = write_hello(page)
        # The files are kept once, in their own record; the kept run carries only its events.
        assert kept_files(page)["hello.py"].startswith("print('你好，工作区')")
        assert "workspace" not in json.loads(storage(page)["tool-workshop:run:workspace"])["run"]
        panel.locator(".tw-ws-approach label").filter(has_text="正则 ReAct").click()
        wait_stored(page, '"option.approach":"react"', "tool-workshop:lesson:workspace")

        panel = reload(page)
        memory_note(panel).filter(has_text="工作区已恢复").wait_for(timeout=WAIT)
        assert "hello.py" in tree_text(panel)
        show_file(panel, "hello.py", "你好，工作区")
        # The last run is replayed from the kept events, not run again; the headline is its verdict.
        panel.locator(".tw-protocol .tw-pause").filter(has_text="没有再调用模型").first.wait_for(timeout=WAIT)
        assert panel.locator(".tw-status").first.inner_text().strip().startswith("✅")
        assert "上次的运行" not in panel.locator(".tw-status").first.inner_text()
        assert panel.locator(".tw-protocol .tw-final").first.inner_text() == answer
        assert "write" in panel.locator(".tw-protocol").text_content()
        assert "hello.py" in panel.locator(".tw-ws-diff").first.inner_text()
        assert panel.locator(".tw-question textarea").input_value() == HELLO
        assert panel.locator(".tw-ws-approach label").filter(has_text="正则 ReAct").locator("input").is_checked()
        # The other workspace tab shows the same restored workspace.
        other = workspace_lesson(page, "权限与确认")
        other.locator(".tw-ws-tree").filter(has_text="hello.py").first.wait_for(timeout=WAIT)
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_the_files_and_the_rules_survive_a_restart_of_the_server(browser):
    import app

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    demo = app.build_demo()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    watched = open_page(browser, url)
    page = watched.page
    try:
        write_hello(page)
        rules = workspace_lesson(page, "权限与确认")
        rules.locator(".tw-rules-preset label").filter(has_text="只读").click()
        rules.locator(".tw-rules .cm-content").filter(has_text='"bash": "deny"').first.wait_for(timeout=WAIT)
        wait_stored(page, '"rules_preset":"只读"', "tool-workshop:lesson:permissions")
        page.wait_for_function("() => (JSON.parse(localStorage.getItem('tool-workshop:lesson:permissions'))"
                               ".fields.rules || '').includes('\"bash\": \"deny\"')", timeout=WAIT)
        demo.close()
        demo = app.build_demo()
        app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        panel = reload(page, "权限与确认")
        memory_note(panel).filter(has_text="工作区已恢复").wait_for(timeout=WAIT)
        show_file(panel, "hello.py", "你好，工作区")
        assert panel.locator(".tw-rules-preset label").filter(has_text="只读").locator("input").is_checked()
        assert '"bash": "deny"' in code_text(panel.locator(".tw-rules"))
        panel.locator(".tw-rules-status").filter(has_text="规则有效").first.wait_for(timeout=WAIT)
        panel = workspace_lesson(page, "原子工具")
        assert "hello.py" in tree_text(panel)
    finally:
        watched.context.close()
        demo.close()


def test_reset_keeps_the_starter_project(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        panel, _ = write_hello(page)
        panel.locator(".tw-ws-reset").click()
        panel.locator(".tw-ws-note").filter(has_text="已重置为初始练习项目").first.wait_for(timeout=WAIT)
        wait_stored(page, "hello.py", FILES_KEY, present=False)
        assert kept_files(page) == workspace.starter_files()
        panel = reload(page)
        memory_note(panel).filter(has_text="工作区已恢复").wait_for(timeout=WAIT)
        assert "notes.md" in tree_text(panel) and "hello.py" not in tree_text(panel)
        show_file(panel, "src/calc.py", "(len(numbers) - 1)")
    finally:
        watched.context.close()


def test_a_workspace_too_big_to_keep_says_so_and_the_page_works(browser, app_url, tmp_path):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        panel = workspace_lesson(page, "原子工具")
        upload = tmp_path / "big.zip"
        with zipfile.ZipFile(upload, "w", zipfile.ZIP_DEFLATED) as archive:
            for path, text in workspace.starter_files().items():
                archive.writestr(path, text)
            archive.writestr("data/big.txt", "x" * 600_000)
            archive.writestr("docs/mine.md", "# 我自己的文件\n")
        panel.locator(".tw-ws-upload").locator("xpath=..").locator("input[type=file]").set_input_files(str(upload))
        panel.locator(".tw-ws-tree").filter(has_text="data/big.txt").first.wait_for(timeout=WAIT)
        memory_note(panel).filter(has_text="没有存进本浏览器：data/big.txt").wait_for(timeout=WAIT)
        wait_stored(page, "docs/mine.md", FILES_KEY)
        assert "data/big.txt" not in kept_files(page)

        panel = reload(page)
        memory_note(panel).filter(has_text="没有存进本浏览器：data/big.txt").wait_for(timeout=WAIT)
        show_file(panel, "docs/mine.md", "我自己的文件")
        assert "data/big.txt" not in tree_text(panel)
        ask(panel, "读一下 notes.md，告诉我练习要做什么")
        wait_final(panel)
        # Everything there now fits again: the warning goes.
        memory_note(panel).filter(has_text="没有存进本浏览器").wait_for(state="detached", timeout=WAIT)
    finally:
        watched.context.close()


def test_two_browsers_keep_their_own_workspaces(browser, app_url):
    a, b = open_page(browser, app_url), open_page(browser, app_url)
    try:
        write_hello(a.page)
        panel_b = workspace_lesson(b.page, "原子工具")
        ask(panel_b, "把 notes.md 里的“修一个 bug”改成“修好一个 bug”")
        wait_final(panel_b)
        wait_stored(b.page, "修好一个 bug", FILES_KEY)
        panel_a, panel_b = reload(a.page), reload(b.page)
        memory_note(panel_a).filter(has_text="工作区已恢复").wait_for(timeout=WAIT)
        memory_note(panel_b).filter(has_text="工作区已恢复").wait_for(timeout=WAIT)
        assert "hello.py" in tree_text(panel_a) and "hello.py" not in tree_text(panel_b)
        show_file(panel_a, "notes.md", "修一个 bug")
        assert "修好一个 bug" not in code_text(panel_a.locator(".tw-ws-file"))
        show_file(panel_b, "notes.md", "修好一个 bug")
        assert "hello.py" not in kept_files(b.page) and "修好一个 bug" not in kept_files(a.page)["notes.md"]
    finally:
        a.context.close()
        b.context.close()
