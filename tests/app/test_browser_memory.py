"""A student's work kept in the browser (memory/browser_memory.py), in real chromium: an edit
and the last run come back after a reload and after the server restarts, two browsers keep
their own work, a key is stored only when the student asks (and only as the session's key),
a corrupted or old-format stored value gives a notice and a working page, and the explicit
resets do what they say."""
from __future__ import annotations

import json

import pytest

from tests.app.harness import (KEY_NEEDED, choose_openai, code_text, free_port, open_page, ready, set_code, storage, tab,
                               type_key, wait_stored)

pytestmark = pytest.mark.browser
WAIT = 60_000
KEY = "sk-remember-me-4b1d9e77c2"
MINE = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("把两个整数相加，返回它们的和")
def student_add(a: int, b: int) -> int:
    return a + b
'''
THEIRS = MINE.replace("student_add", "other_student_add")


def note(panel):
    return panel.locator(".tw-memory-note").first


def reload(page, name: str = "Function Calling"):
    page.reload()
    page.wait_for_selector(".tw-lesson", timeout=WAIT)
    return tab(page, name)


def edit_and_run(page, source: str, tool: str, question: str = "把 3 和 4 相加"):
    panel = tab(page, "Function Calling")
    panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
    set_code(page, panel.locator(".tw-editor"), source)
    panel.locator(".tw-schema-json").filter(has_text=tool).wait_for(timeout=WAIT)
    panel.locator(".tw-question textarea").fill(question)
    panel.locator(".tw-run").click()
    panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
    wait_stored(page, tool)
    wait_stored(page, '"type":"final"')   # the run record
    return panel


def expect_restored(panel, tool: str, question: str):
    note(panel).filter(has_text="已恢复本浏览器保存的内容").wait_for(timeout=WAIT)
    assert tool in code_text(panel.locator(".tw-editor"))
    assert panel.locator(".tw-question textarea").input_value() == question
    # The schema panel shows the student's source, not the example's.
    panel.locator(".tw-schema-json").filter(has_text=tool).wait_for(timeout=WAIT)
    assert "get_weather" not in code_text(panel.locator(".tw-schema-json"))


def test_an_edit_and_the_last_run_come_back_after_a_reload(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        panel = edit_and_run(page, MINE, "student_add")
        answer = panel.locator(".tw-protocol .tw-final").first.inner_text()
        verdict = panel.locator(".tw-status").first.inner_text().strip()
        assert "7" in answer and verdict.startswith("✅")
        panel = reload(page)
        expect_restored(panel, "student_add", "把 3 和 4 相加")
        # The last run is replayed from the stored events, not run again: said once, over its steps,
        # while the headline is the run's verdict, as it was.
        panel.locator(".tw-protocol .tw-pause").filter(has_text="没有再调用模型").first.wait_for(timeout=WAIT)
        assert panel.locator(".tw-status").first.inner_text().strip() == verdict
        assert panel.locator(".tw-protocol .tw-final").first.inner_text() == answer
        assert "student_add" in panel.locator(".tw-protocol").text_content()
        panel.get_by_role("tab", name="对话视图").click()
        panel.locator(".tw-chat").filter(has_text="调用 student_add").first.wait_for(timeout=WAIT)
        panel.get_by_role("tab", name="查看代码").click()
        panel.locator(".tw-code").filter(has_text="from openai import OpenAI").first.wait_for(timeout=WAIT)
        # Other tabs were not touched: once put back as kept, they still show their examples.
        react = ready(tab(page, "正则 ReAct"), WAIT)
        assert "get_weather" in code_text(react.locator(".tw-schema-json"))
        assert "student_add" not in code_text(react.locator(".tw-editor"))
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_the_run_buttons_wait_for_what_the_browser_kept_and_what_is_typed_meanwhile_stays(browser, app_url):
    """运行 and 单步 work once the kept settings and lesson are back: clicked while the page is still
    restoring, a run would ask the example's question on the default model. A question typed while the
    page restores is not replaced by the kept one: it is what the run asks, and the note says so."""
    watched = open_page(browser, app_url)
    page = watched.page
    held = []
    try:
        panel = tab(page, "Function Calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
        panel.locator(".tw-question textarea").fill("上海今天天气怎么样？")
        wait_stored(page, "上海今天天气怎么样？")
        holding = [True]                               # the server is slow to answer the page's restore
        for events in ("**/queue/join*", "**/run/predict*"):   # queued events, and those answered at once
            page.route(events, lambda route: held.append(route) if holding[0] else route.continue_())
        page.goto(page.url)                            # a new visit (a reload would keep the form's text)
        panel = tab(page, "Function Calling")
        for _ in range(200):
            if held:
                break
            page.wait_for_timeout(50)
        buttons = [panel.locator(f"button.{name}, .{name} button").first for name in ("tw-run", "tw-step-btn")]
        assert held and all(button.is_disabled() for button in buttons)
        question = panel.locator(".tw-question textarea")
        assert question.input_value() != "上海今天天气怎么样？"   # not back yet
        question.click()
        question.fill("广州今天天气怎么样？")             # typed before the kept question is back
        holding[0] = False
        for route in held:
            route.continue_()
        note(panel).filter(has_text="保留了你的改动").filter(has_text="问题").wait_for(timeout=WAIT)
        assert question.input_value() == "广州今天天气怎么样？"
        buttons[0].click()                             # waits until it works
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        assert "广州" in panel.locator(".tw-protocol .tw-final").first.inner_text()
        assert "上海今天" not in panel.locator(".tw-protocol").text_content()
        assert all(button.is_enabled() for button in buttons)
        wait_stored(page, "广州今天天气怎么样？")          # and it is what the browser keeps from now on
    finally:
        watched.context.close()


def test_an_edit_survives_a_restart_of_the_server(browser):
    import app

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    demo = app.build_demo()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    watched = open_page(browser, url)
    page = watched.page
    try:
        panel = tab(page, "Function Calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
        set_code(page, panel.locator(".tw-editor"), MINE)
        panel.locator(".tw-question textarea").fill("重启之前写的问题")
        wait_stored(page, "重启之前写的问题")
        wait_stored(page, "student_add")
        demo.close()
        demo = app.build_demo()
        app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        panel = reload(page)
        expect_restored(panel, "student_add", "重启之前写的问题")
    finally:
        watched.context.close()
        demo.close()


def test_two_browsers_keep_their_own_work(browser, app_url):
    a, b = open_page(browser, app_url), open_page(browser, app_url)
    try:
        edit_and_run(a.page, MINE, "student_add")
        edit_and_run(b.page, THEIRS, "other_student_add", "把 5 和 6 相加")
        panel_a, panel_b = reload(a.page), reload(b.page)
        expect_restored(panel_a, "student_add", "把 3 和 4 相加")
        expect_restored(panel_b, "other_student_add", "把 5 和 6 相加")
        assert "other_student_add" not in code_text(panel_a.locator(".tw-editor"))
        assert "11" in panel_b.locator(".tw-protocol .tw-final").first.inner_text()
        assert not any("other_student_add" in v for v in storage(a.page).values())
    finally:
        a.context.close()
        b.context.close()


def test_two_tabs_of_one_browser_share_one_copy_and_say_so(browser, app_url):
    first = open_page(browser, app_url)
    try:
        panel = tab(first.page, "Function Calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
        set_code(first.page, panel.locator(".tw-editor"), MINE)
        wait_stored(first.page, "student_add")
        second = first.context.new_page()
        second.goto(app_url)
        second.wait_for_selector("[role=tab]", timeout=WAIT)
        other = tab(second, "Function Calling")
        note(other).filter(has_text="由另一个标签页").wait_for(timeout=WAIT)
        assert "student_add" in code_text(other.locator(".tw-editor"))
        # The second tab saves over it: the first, reloaded, gets that work and says whose it is.
        set_code(second, other.locator(".tw-editor"), THEIRS)
        wait_stored(second, "other_student_add")
        panel = reload(first.page)
        note(panel).filter(has_text="由另一个标签页").wait_for(timeout=WAIT)
        assert "other_student_add" in code_text(panel.locator(".tw-editor"))
    finally:
        first.context.close()


def test_a_key_is_kept_only_when_the_student_asks(browser, app_url):
    from offline.server import OfflineServer

    server = OfflineServer().start()
    watched = open_page(browser, app_url, keep_bodies=True)
    page = watched.page
    try:
        choose_openai(page, server.url + "/v1")
        wait_stored(page, "offline-rule-model")     # the settings are kept...
        type_key(page, KEY)
        page.locator("#stream input").check()       # a later change: once it is kept, the key's events are done
        wait_stored(page, '"stream":true')
        assert not any(KEY in v for v in storage(page).values())   # ...the key is not
        assert len(watched.bodies) > 10
        assert not [body for body in watched.bodies if KEY.encode() in body]   # nor sent back to the browser
        page.unroute("**/gradio_api/queue/data**")
        page.locator("#stream input").uncheck()

        page.locator("#remember-key input").check()
        wait_stored(page, KEY)
        stored_key = json.loads(storage(page)["tool-workshop:key"])
        assert stored_key["fields"] == {"key": KEY} and stored_key["version"] == 1

        page.reload()
        page.wait_for_selector(".tw-lesson", timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#memory-note").filter(has_text="用的是本浏览器记住的密钥").wait_for(timeout=WAIT)
        page.locator("#key-status").filter(has_text="🔑").wait_for(timeout=WAIT)
        assert page.locator("#api-key input").input_value() == ""
        assert page.locator("#remember-key input").is_checked()
        assert page.locator("#model input").input_value() == "offline-rule-model"
        # The remembered key is this session's key again: a run reaches the local server with it. The
        # lesson is a page of its own, with its own settings panel (folded): they are restored once the
        # page has loaded, which the key's 🔑 line shows.
        before = len(server.requests)
        panel = tab(page, "Function Calling")
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#key-status").filter(has_text="🔑").wait_for(timeout=WAIT)
        panel.locator(".tw-run").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        sent = server.requests[before:]
        assert sent and all(r["auth_scheme"] == "Bearer" for r in sent)

        page.locator("#forget-key").click()
        wait_stored(page, KEY, present=False)
        assert not page.locator("#remember-key input").is_checked()
        # Forgotten by the browser; the key typed in this browser tab is still the tab's until cleared.
        page.reload()
        page.wait_for_selector(".tw-lesson", timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#key-status").filter(has_text="🔑").wait_for(timeout=WAIT)
        page.get_by_role("button", name="清除本会话密钥").click()
        page.locator("#key-status").filter(has_text=KEY_NEEDED).wait_for(timeout=WAIT)
        page.reload()
        page.wait_for_selector(".tw-lesson", timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#key-status").filter(has_text=KEY_NEEDED).wait_for(timeout=WAIT)
        assert not any(KEY in v for v in storage(page).values())
    finally:
        watched.context.close()
        server.stop()


@pytest.mark.parametrize("stored_text, reason", [
    ("{this is not json", "已损坏"),
    (json.dumps({"format": "tool-workshop-browser-memory", "version": 0, "part": "lesson:function_calling",
                 "fields": {"source": "old"}}), "旧版本"),
])
def test_a_corrupted_or_old_stored_value_gives_a_notice_and_a_working_page(browser, app_url, stored_text, reason):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        page.evaluate("""([value]) => {
            localStorage.setItem("tool-workshop:lesson:function_calling", value);
            localStorage.setItem("tool-workshop:run:function_calling", '{"format": "tool-workshop-browser-memory"');
            localStorage.setItem("tool-workshop:settings", JSON.stringify({format: "tool-workshop-browser-memory",
                version: 1, part: "settings", fields: {provider: "no-such-provider", max_turns: 3}}));
        }""", [stored_text])
        page.reload()
        page.wait_for_selector(".tw-lesson", timeout=WAIT)
        # A settings record with one unusable value: the rest is used, the bad one named (on the page
        # that read it; the record it then saves is a good one).
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#memory-note").filter(has_text="提供方").wait_for(timeout=WAIT)
        assert page.locator("#provider input").input_value() == "离线演示模型"
        assert page.locator("#settings-panel input[type=number]").nth(1).input_value() == "3"
        wait_stored(page, '"max_turns":3', key="tool-workshop:settings")
        panel = tab(page, "Function Calling")
        note(panel).filter(has_text=reason).wait_for(timeout=WAIT)
        assert "上次运行内容已损坏" in note(panel).inner_text()
        # The page works: the example is shown, its schema appears and it runs.
        panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
        panel.locator(".tw-run").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").click()
        assert page.locator("#settings-panel input[type=number]").nth(1).input_value() == "3"
        # Editing saves a fresh, readable record over the broken one.
        set_code(page, panel.locator(".tw-editor"), MINE)
        wait_stored(page, "student_add")
        assert json.loads(storage(page)["tool-workshop:lesson:function_calling"])["version"] == 1
    finally:
        watched.context.close()


def test_reset_and_clear_say_what_they_did(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        edit_and_run(page, MINE, "student_add")
        panel = tab(page, "Function Calling")
        panel.locator(".tw-reset").click()
        note(panel).filter(has_text="已把源码恢复为示例「天气」").wait_for(timeout=WAIT)
        wait_stored(page, "student_add", present=False, key="tool-workshop:lesson:function_calling")
        panel = reload(page)
        note(panel).filter(has_text="已恢复").wait_for(timeout=WAIT)
        assert "get_weather" in code_text(panel.locator(".tw-editor"))

        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#clear-saved").click()
        page.locator("#memory-note").filter(has_text="已清除").wait_for(timeout=WAIT)
        page.wait_for_function("() => !Object.keys(localStorage).some(k => k.startsWith('tool-workshop:'))",
                               timeout=WAIT)
        panel = reload(page)
        panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
        assert "已恢复" not in note(panel).inner_text()
    finally:
        watched.context.close()
