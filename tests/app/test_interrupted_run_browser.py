"""A page reloaded while a run goes on, or while a run waits for the student's approval, in real
chromium (memory/browser_memory.py): the page opens again on the lesson the student was on, says
that the run was interrupted, never shows the run before it as this one's, and a workspace shows
the files that go with what it shows."""
from __future__ import annotations

import pytest

from memory.memory_format import storage_key
from tests.app.harness import ask, calls, choose_openai, open_page, show_file, tab, type_key, visible_panel, wait_ask, wait_stored

pytestmark = pytest.mark.browser
WAIT = 60_000
KEY = "sk-interrupted-run-5d21"


def reloaded(page):
    page.reload()
    page.wait_for_selector("[role=tab]", timeout=WAIT)


def test_a_reload_during_a_run_says_it_was_interrupted_and_shows_no_older_run(browser, app_url):
    from offline.server import OfflineServer

    server = OfflineServer().start()
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        choose_openai(page, server.url + "/v1")
        type_key(page, KEY)
        panel = tab(page, "Function Calling")
        panel.locator(".tw-run").click()                         # a whole run first: the one kept
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        wait_stored(page, '"type":"final"', key=storage_key("run:function_calling"))

        server.queue({"fault": "slow", "seconds": 30})           # the model takes its time now
        panel.locator(".tw-question textarea").fill("北京今天天气怎么样？")
        wait_stored(page, "北京今天天气怎么样？", key=storage_key("lesson:function_calling"))
        panel.locator(".tw-run").click()
        panel.locator(".tw-status").filter(has_text="⏳").first.wait_for(timeout=WAIT)
        wait_stored(page, '"running":"北京今天天气怎么样？"', key=storage_key("run:function_calling"))

        reloaded(page)
        panel = page.locator("#tab-function-calling")
        status = panel.locator(".tw-status").filter(has_text="上次的运行被中断了").first
        status.wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-function-calling"      # the lesson the student was on
        assert "北京今天天气怎么样？" in status.inner_text() and "再点「▶ 运行」" in status.inner_text()
        assert "这是上次的运行" not in panel.locator(".tw-status").first.inner_text()
        assert panel.locator(".tw-protocol .tw-round").count() == 0   # not the run before, shown as this one
        assert panel.locator(".tw-question textarea").input_value() == "北京今天天气怎么样？"
    finally:
        watched.context.close()
        server.stop()


def test_a_reload_while_a_run_waits_for_approval_keeps_its_steps_and_their_files(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        panel = tab(page, "权限与确认")
        panel.locator(".tw-ws-tree").filter(has_text="notes.md").first.wait_for(timeout=WAIT)
        ask(panel, "找到失败的测试并修好它")
        assert "python3 -m unittest" in wait_ask(panel)
        panel.locator(".tw-approve").click()
        # It fixes src/calc.py (src/ is allowed) and asks again before running the tests.
        panel.locator(".tw-protocol .tw-call").filter(has_text="edit").first.wait_for(state="attached", timeout=WAIT)
        wait_ask(panel)
        # Kept as far as it went: the second pause, after the edit (the first pause was kept before it).
        wait_stored(page, '"paused":"ask"', key=storage_key("run:permissions"))
        wait_stored(page, '"name":"edit"', key=storage_key("run:permissions"))
        page.wait_for_function("(key) => (localStorage.getItem(key) || '').includes('/ len(numbers)\\\\n')",
                               arg=storage_key("workspace"), timeout=WAIT)

        reloaded(page)
        panel = page.locator("#tab-permissions")
        status = panel.locator(".tw-status").filter(has_text="上次的运行被中断了").first
        status.wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-permissions"
        assert "等你确认一个调用" in status.inner_text() and "不能接着做" in status.inner_text()
        assert not panel.locator(".tw-ask").first.is_visible()
        # Shown as far as it went: no 下一步 / 全部显示 that would only take the notice away.
        assert not panel.locator(".tw-replay").first.is_visible()
        # Its steps up to the pause, and the workspace as those steps left it.
        assert "edit" in calls(panel)
        show_file(panel, "src/calc.py", "/ len(numbers)")
        assert "(len(numbers) - 1)" not in panel.locator(".tw-ws-file").first.inner_text()
    finally:
        watched.context.close()

