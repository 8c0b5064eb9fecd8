"""Each lesson on its own page, in real chromium: every page lists the course's lessons in order
with their sections and marks its own, carries no other lesson, and its list's links lead on; an
older `?lesson=` link lands on that lesson's address with its scenario; the model settings and a
typed key follow the student to the next lesson of the same browser tab, the key through a handle
in sessionStorage (never the key itself, never to another browser or tab)."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from catalogue import LESSONS
from offline.server import OfflineServer

from tests.app.harness import KEY_NEEDED, lesson_address, lesson_labels, open_page, pick_provider, ready, run_panel, tab

pytestmark = pytest.mark.browser
WAIT = 60_000
KEY = "sk-student-typed-7a1c"


class Recording(OfflineServer):
    """The offline server, also keeping each request's Authorization header."""

    def __init__(self):
        super().__init__()
        self.authorizations: list[str] = []

    def record(self, path, headers, body):
        self.authorizations.append(headers.get("Authorization") or "")
        super().record(path, headers, body)


@pytest.fixture(scope="module")
def model_server():
    server = Recording().start()
    yield server
    server.stop()


def test_every_page_lists_the_lessons_in_order_and_carries_only_its_own(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        for lesson in LESSONS.values():
            if urlsplit(page.url).path != lesson.address:     # the page at / (catalogue.ROOT) opens first
                page.goto(lesson_address(app_url, lesson.id))
            page.locator("#" + lesson.panel).wait_for(state="visible", timeout=WAIT)
            # Ready, not only shown: the next address is opened once this page's own events on load are done.
            ready(page.locator("#" + lesson.panel), WAIT)
            assert lesson_labels(page) == [spec.label() for spec in LESSONS.values()]
            assert page.locator('#lesson-nav a[aria-current="page"]').get_attribute("data-lesson") == lesson.id
            assert page.locator(".tw-lesson").count() == 1      # no other lesson's components on this page
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_the_lesson_list_leads_to_each_page_keeping_the_language(browser, app_url):
    watched = open_page(browser, app_url + "?lang=en")
    page = watched.page
    try:
        page.locator("#lesson-nav a").filter(has_text="8.4 Function Calling").click()
        page.locator("#tab-function-calling").wait_for(state="visible", timeout=WAIT)
        assert urlsplit(page.url).path == "/function-calling" and urlsplit(page.url).query == "lang=en"
        page.locator("#header").filter(has_text="Tool Use Workshop").wait_for(timeout=WAIT)
    finally:
        watched.context.close()


def test_an_older_lesson_link_opens_that_lesson_s_address_with_its_scenario(browser, app_url):
    watched = open_page(browser, app_url + "?lesson=function_calling&example=%E5%A4%A9%E6%B0%94"
                                           "&question=%E6%9D%AD%E5%B7%9E%E5%86%B7%E4%B8%8D%E5%86%B7")
    page = watched.page
    try:
        panel = page.locator("#tab-function-calling")
        panel.wait_for(state="visible", timeout=WAIT)
        assert urlsplit(page.url).path == "/function-calling" and "lesson=" not in page.url
        page.wait_for_function("() => document.querySelector('#tab-function-calling .tw-question textarea')?"
                               ".value === '杭州冷不冷'", timeout=WAIT)
    finally:
        watched.context.close()


def storage_text(page) -> str:
    return page.evaluate("""() => JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])""")


def test_a_typed_key_follows_the_browser_tab_and_only_it(browser, app_url, model_server):
    watched = open_page(browser, app_url)
    page = watched.page
    other = None
    try:
        page.get_by_text("⚙️ 模型设置").click()
        pick_provider(page, "openai")
        base = page.locator("#base-url textarea, #base-url input").first
        base.fill(model_server.url + "/v1")
        base.press("Enter")
        page.locator("#api-key input").fill(KEY)
        page.locator("#api-key input").press("Enter")
        page.locator("#key-status").filter(has_text="已保存你输入的密钥").wait_for(timeout=WAIT)
        page.wait_for_function("() => (sessionStorage.getItem('tool-workshop:key-handle') || '').length > 20",
                               timeout=WAIT)
        page.wait_for_function("() => (localStorage.getItem('tool-workshop:settings') || '').includes('openai')",
                               timeout=WAIT)
        assert KEY not in storage_text(page)

        panel = tab(page, "Function Calling")
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#key-status").filter(has_text="🔑").wait_for(timeout=WAIT)
        model_server.authorizations.clear()
        headline = run_panel(panel, timeout=WAIT)      # a run that fails says how
        assert headline.startswith("✅"), headline
        assert set(model_server.authorizations) == {"Bearer " + KEY}
        assert KEY not in storage_text(page) and KEY not in page.content()

        # Another browser tab of the same browser shares the settings but not the key.
        other = watched.context.new_page()
        other.goto(lesson_address(app_url, "function_calling"))
        other.locator("#tab-function-calling").wait_for(state="visible", timeout=WAIT)
        other.get_by_text("⚙️ 模型设置").click()
        other.locator("#key-status").filter(has_text=KEY_NEEDED).wait_for(timeout=WAIT)

        # Cleared here, it is gone from the server too: the next lesson has no key.
        page.get_by_role("button", name="清除本会话密钥").click()
        page.locator("#key-status").filter(has_text=KEY_NEEDED).wait_for(timeout=WAIT)
        page.wait_for_function("() => !sessionStorage.getItem('tool-workshop:key-handle')", timeout=WAIT)
        tab(page, "工具注册")
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#key-status").filter(has_text=KEY_NEEDED).wait_for(timeout=WAIT)
    finally:
        watched.context.close()


def test_the_workspace_follows_from_one_workspace_lesson_to_the_others(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "workspace"))
    page = watched.page
    try:
        panel = page.locator("#tab-workspace")
        panel.locator(".tw-question textarea").fill("新建文件 hello.py，内容是 print('两课共用')")
        panel.locator(".tw-run").click()
        panel.locator(".tw-ws-tree").filter(has_text="hello.py").first.wait_for(timeout=WAIT)
        page.wait_for_function("() => (localStorage.getItem('tool-workshop:workspace') || '').includes('hello.py')",
                               timeout=WAIT)
        panel = tab(page, "权限与确认")
        panel.locator(".tw-ws-tree").filter(has_text="hello.py").first.wait_for(timeout=WAIT)
        panel = tab(page, "MiniAgent")      # 「原子工具、权限与确认、MiniAgent 三课共用同一个工作区」
        panel.locator(".tw-ws-tree").filter(has_text="hello.py").first.wait_for(timeout=WAIT)
    finally:
        watched.context.close()


UNSAVED = "() => Object.keys(window.twUnsaved || {})"


def test_a_setting_changed_just_before_a_lesson_link_is_on_the_next_page(browser, app_url):
    watched = open_page(browser, app_url)
    page = watched.page
    held = []
    try:
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#provider input").click()
        page.get_by_role("option", name="OpenAI 兼容接口").click()
        base = page.locator("#base-url textarea, #base-url input").first
        base.wait_for(timeout=WAIT)
        page.wait_for_function(UNSAVED + ".length === 0", timeout=WAIT)   # nothing left marked once stored
        # The server is slow to take this change: its save is held until the click has been made.
        holding = True
        page.route("**/queue/join*", lambda route: held.append(route) if holding else route.continue_())
        base.fill("http://127.0.0.1:9/v1")
        base.press("Enter")
        page.wait_for_function(UNSAVED + ".includes('settings')", timeout=WAIT)
        page.locator('#lesson-nav a[data-lesson="function_calling"]').click()
        page.wait_for_timeout(500)
        assert urlsplit(page.url).path == "/" and page.locator('#lesson-nav a[aria-busy="true"]').count() == 1
        holding = False
        for route in held:
            route.continue_()
        page.locator("#tab-function-calling").wait_for(state="visible", timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#base-url textarea, #base-url input").first.wait_for(timeout=WAIT)
        assert page.locator("#base-url textarea, #base-url input").first.input_value() == "http://127.0.0.1:9/v1"
    finally:
        watched.context.close()
