"""Links that open a scenario (lessons/deep_links.py), in real chromium: a Function Calling link
runs and shows its headline on that tab, an unknown lesson gives a note and the default tab (a
mistake the lesson does not offer, a note listing those it does), a link beats what the browser kept (its lesson shows the link alone, the banner says so once, the
browser keeps the link's scenario), and 复制本页链接 writes a link without the key that reproduces
the scenario in a fresh browser."""
from __future__ import annotations

import re

import pytest

from memory.memory_format import storage_key
from tests.app.harness import banner, choose, choose_openai, code_text, link, nav_link, open_page, set_code, storage, tab, toasts, type_key, visible_panel, wait_stored, watch_toasts

pytestmark = pytest.mark.browser
WAIT = 60_000
KEY = "sk-link-must-not-carry-7e41c0"
EDITED = ("from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"
          '@registry.tool("加法")\ndef edited_by_me(a: int, b: int) -> int:\n    return a + b\n')


def test_a_function_calling_link_runs_on_its_tab(browser, app_url):
    watched = open_page(browser, link(app_url, lesson="function_calling", example="计算器",
                                      question="帮我算一下 (3+5)*12", run="1"))
    page = watched.page
    try:
        panel = page.locator("#tab-function-calling")
        panel.locator(".tw-status").filter(has_text="次工具调用").first.wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-function-calling"
        assert "96" in panel.locator(".tw-protocol .tw-final").first.inner_text()
        assert panel.locator(".tw-question textarea").input_value() == "帮我算一下 (3+5)*12"
        assert panel.locator(".tw-example-set input").input_value() == "计算器"
        assert not banner(page).is_visible()      # nothing to tell: every value was used
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_an_unknown_lesson_gives_a_note_and_the_default_tab(browser, app_url):
    watched = open_page(browser, link(app_url, lesson="<b>xyz</b>", example="计算器", run="1"))
    page = watched.page
    try:
        banner(page).filter(has_text="不认识").wait_for(timeout=WAIT)
        text = banner(page).inner_text()
        assert "xyz" in text and "function_calling" in text and "其余按默认打开" in text
        assert banner(page).locator("b").count() == 0          # shown as text, never as HTML
        assert visible_panel(page) == "tab-react"
        react = page.locator("#tab-react")
        assert react.locator(".tw-example-set input").input_value() == "天气"
        page.wait_for_timeout(500)
        assert react.locator(".tw-status").first.inner_text().strip() == ""   # no run

        # A mistake of another loop: the note offers only what this lesson's selector offers.
        page.goto(link(app_url, lesson="function_calling", mistake="bold_action"))
        banner(page).filter(has_text="bold_action").wait_for(timeout=WAIT)
        text = banner(page).inner_text()
        assert "不是「Function Calling」能选的失误" in text and "wrong_type" in text and "endless" in text
        assert not {"no_action_line", "multi_step", "paren_call", "invented_observation"} & set(re.findall(r"\w+", text))
        assert page.locator("#tab-function-calling .tw-mistake input").input_value() == "不模拟（模型表现正常）"
    finally:
        watched.context.close()


def test_a_link_beats_what_the_browser_kept_and_says_so(browser, app_url):
    """A browser that kept an edited source, a question and a run of another example: the link's lesson
    shows only the link's scenario, the page says once what it replaced, and nothing kept comes back."""
    watched = open_page(browser, app_url)
    page = watched.page
    watch_toasts(watched.context)     # from the next page on
    try:
        nav_link(page, "Function Calling").click()
        panel = page.locator("#tab-function-calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        choose(page, panel.locator(".tw-example-set"), "计算器")
        wait_stored(page, '"example_set":"计算器"')
        panel.locator(".tw-run").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        wait_stored(page, '"type":"final"', key=storage_key("run:function_calling"))
        set_code(page, panel.locator(".tw-editor"), EDITED)
        panel.locator(".tw-question textarea").fill("我自己的问题 42")
        wait_stored(page, "我自己的问题 42")
        wait_stored(page, "edited_by_me")

        page.goto(link(app_url, lesson="function_calling", example="工资/员工档案", question="张三的月薪是多少？",
                       mistake="none"))
        banner(page).filter(has_text="链接里的设置覆盖了浏览器保存的内容").wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-function-calling"
        told = banner(page).inner_text()
        assert "改过的源码" in told and "上次运行" in told and told.count("覆盖") == 1
        page.wait_for_function("() => document.querySelector('#tab-function-calling .tw-question textarea')?"
                               ".value === '张三的月薪是多少？'", timeout=WAIT)
        assert panel.locator(".tw-example-set input").input_value() == "工资/员工档案"
        panel.locator(".tw-schema-json").filter(has_text="calculate_salary").first.wait_for(timeout=WAIT)
        assert "edited_by_me" not in code_text(panel.locator(".tw-editor"))
        # What was kept is neither said nor shown: no "restored" note, no last run of the calculator.
        memory_note = panel.locator(".tw-memory-note").first.inner_text()
        assert "已恢复" not in memory_note and "上次的运行" not in panel.locator(".tw-status").first.inner_text()
        assert panel.locator(".tw-protocol .tw-round").count() == 0
        # The link's scenario is what the browser keeps now, and the calculator's run is gone from it.
        wait_stored(page, "张三的月薪是多少？", key=storage_key("lesson:function_calling"))
        assert storage(page).get(storage_key("run:function_calling")) is None
        assert toasts(page) == []

        page.goto(app_url)                        # opened again without the link: still the link's scenario
        panel = tab(page, "Function Calling")
        panel.locator(".tw-memory-note").filter(has_text="已恢复本浏览器保存的内容").first.wait_for(timeout=WAIT)
        assert panel.locator(".tw-question textarea").input_value() == "张三的月薪是多少？"
        assert "上次的运行" not in panel.locator(".tw-status").first.inner_text()
        assert toasts(page) == []
    finally:
        watched.context.close()


def test_a_link_that_only_opens_a_lesson_keeps_what_the_browser_kept(browser, app_url):
    """?lesson= alone sets up no scenario: the lesson opens with the student's own source and question."""
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        panel = tab(page, "Function Calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        set_code(page, panel.locator(".tw-editor"), EDITED)
        panel.locator(".tw-question textarea").fill("我自己的问题 42")
        wait_stored(page, "我自己的问题 42")
        wait_stored(page, "edited_by_me")

        page.goto(link(app_url, lesson="function_calling"))
        page.wait_for_function("() => document.querySelector('#tab-function-calling .tw-question textarea')?"
                               ".value === '我自己的问题 42'", timeout=WAIT)
        assert visible_panel(page) == "tab-function-calling"
        assert "edited_by_me" in code_text(panel.locator(".tw-editor"))
        assert banner(page).filter(has_text="覆盖").count() == 0
        assert "edited_by_me" in str(storage(page).get(storage_key("lesson:function_calling")))
    finally:
        watched.context.close()


def test_the_copied_link_has_no_key_and_reproduces_the_scenario(browser, app_url):
    watched = open_page(browser, link(app_url, lesson="function_calling", example="计算器",
                                      question="5 公里是多少英里？", tool_choice="required"), keep_bodies=True)
    page = watched.page
    watched.context.grant_permissions(["clipboard-read", "clipboard-write"])
    fresh = None
    try:
        panel = page.locator("#tab-function-calling")
        page.wait_for_function("() => document.querySelector('#tab-function-calling .tw-question textarea')?"
                               ".value === '5 公里是多少英里？'", timeout=WAIT)
        choose_openai(page, "http://127.0.0.1:9/v1")
        type_key(page, KEY)
        panel.locator(".tw-question textarea").fill("算一下 2**10 + 24")
        page.locator("#copy-page-link").click()
        page.locator("#page-link-note").filter(has_text="已复制到剪贴板").wait_for(timeout=WAIT)
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied == page.locator("#page-link textarea, #page-link input").first.input_value()
        assert copied.startswith(app_url + "function-calling?") and "tool_choice=required" in copied
        assert KEY not in copied and "key" not in copied.lower() and "def%20" not in copied
        assert not [body for body in watched.bodies if KEY.encode() in body]

        # An edited source is not in the link, and the note says how to share it.
        set_code(page, panel.locator(".tw-editor"), "from tool_registry import ToolRegistry\nregistry = ToolRegistry()\n")
        page.locator("#copy-page-link").click()
        page.locator("#page-link-note").filter(has_text="不在链接里").wait_for(timeout=WAIT)
        assert "导出" in page.locator("#page-link-note").inner_text()

        fresh = open_page(browser, copied)
        again = fresh.page.locator("#tab-function-calling")
        fresh.page.wait_for_function("() => document.querySelector('#tab-function-calling .tw-question textarea')?"
                                     ".value === '算一下 2**10 + 24'", timeout=WAIT)
        assert visible_panel(fresh.page) == "tab-function-calling"
        assert again.locator(".tw-example-set input").input_value() == "计算器"
        assert again.locator(".tw-tool-choice input").input_value().startswith("required")
        assert not banner(fresh.page).is_visible()      # every value of the copied link was used
    finally:
        watched.context.close()
        if fresh is not None:
            fresh.context.close()


def test_a_link_does_not_run_on_the_students_own_model(browser, app_url):
    """run=1 starts a run only with the offline model: a link must not spend a student's key."""
    watched = open_page(browser, app_url)
    page = watched.page
    try:
        choose_openai(page, "http://127.0.0.1:9/v1")
        wait_stored(page, "offline-rule-model")
        page.goto(link(app_url, lesson="function_calling", question="北京今天天气怎么样？", run="1"))
        banner(page).filter(has_text="不是离线演示模型").wait_for(timeout=WAIT)
        panel = page.locator("#tab-function-calling")
        assert panel.locator(".tw-question textarea").input_value() == "北京今天天气怎么样？"
        page.wait_for_timeout(500)
        assert panel.locator(".tw-status").first.inner_text().strip() == ""
    finally:
        watched.context.close()


def test_an_evaluation_link_opens_the_example_set_only_its_editor_offers(browser, app_url):
    """The vague weather set is the evaluation lesson's own (catalogue own_examples): its link opens it there."""
    watched = open_page(browser, link(app_url, lesson="evaluation", example="天气（描述含糊）"))
    page = watched.page
    try:
        panel = page.locator("#tab-evaluation")
        editor = panel.locator(".tw-editor")
        page.wait_for_function("(box) => box.textContent.includes('@registry.tool(\"天气\"')", arg=editor.element_handle(),
                               timeout=WAIT)
        assert panel.locator(".tw-example-set input").input_value() == "天气（描述含糊）"
        assert '@registry.tool("天气", read_only=True)' in code_text(editor)
        assert not banner(page).is_visible()      # every value of the link was used
    finally:
        watched.context.close()
