"""English beside Chinese (i18n/), in real chromium: the link's lang= and the browser's own language
choose the page's language, labels and lesson texts follow it, and so do the texts the server writes
(a run's verdict, the timeline, a link's notes); a copied link keeps lang=. Also the parts of a link
that set the Function Calling checkboxes and the permission rules (what is on screen is what the
copied link reopens), a link to a workspace lesson's scenario, and lesson=registry&run=1."""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.app.harness import READY, banner, link, nav_link, open_page, ready, run_panel, screenshot, tab, visible_panel

pytestmark = pytest.mark.browser
WAIT = 60_000
CJK = re.compile(r"[\u4e00-\u9fff]")


def header(page) -> str:
    page.locator("#header").filter(has_text="🧰").wait_for(timeout=WAIT)
    return page.locator("#header").inner_text()


def wait_english(page):
    """The page, once drawn in English (its labels come with the page's config)."""
    page.locator("#header").filter(has_text="Tool Use Workshop").wait_for(timeout=WAIT)


def run_status(panel) -> str:
    """Runs and returns this run's headline (not one left from before: run_panel waits for the run's own)."""
    run_panel(panel, timeout=WAIT)
    return panel.locator(".tw-status").first.inner_text()


def test_lang_en_shows_english_labels_lesson_text_and_verdict(browser, app_url):
    watched = open_page(browser, link(app_url, lang="en"))       # a Chinese browser: the link wins
    page = watched.page
    try:
        wait_english(page)
        assert "One page per lesson" in header(page)
        for name in ("Regex ReAct", "Tool registry", "Function Calling", "Atomic tools", "Permissions"):
            nav_link(page, name).wait_for(timeout=WAIT)
        react = page.locator("#tab-react")
        assert react.locator(".tw-run").inner_text().strip() == "▶ Run"
        react.get_by_text("📖 Lesson: calling tools by a text convention").click()
        react.get_by_text("Before models supported function calling natively").wait_for(timeout=WAIT)
        assert "在模型原生支持" not in react.inner_text()
        nav_link(page, "Function Calling").click()
        panel = page.locator("#tab-function-calling")
        panel.get_by_text("Allow parallel calls parallel_tool_calls").wait_for(timeout=WAIT)
        status = run_status(panel)
        # The verdict is the server's: English words, the model's own answer stays Chinese.
        assert status.startswith("✅") and "round(s)" in status and "tool call(s)" in status
        assert not CJK.search(status.split(". ", 1)[0])
        timeline = panel.locator(".tw-protocol").text_content()      # folded rounds too
        assert "Handshake step one" in timeline and "Final answer" in timeline and "握手" not in timeline
        screenshot(page, "language-en")
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_an_english_browser_gets_english_without_lang(browser, app_url):
    watched = open_page(browser, app_url, locale="en-US")
    page = watched.page
    try:
        wait_english(page)
        nav_link(page, "Regex ReAct").wait_for(timeout=WAIT)
        react = page.locator("#tab-react")
        react.locator(".tw-presets").get_by_text("Preset questions").wait_for(timeout=WAIT)
        assert "💾 The source, example set" in react.locator(".tw-memory-note").first.inner_text()
        assert page.evaluate("() => [document.documentElement.lang, document.title]") == ["en", "Tool Use Workshop"]
    finally:
        watched.context.close()


def test_lang_zh_in_an_english_browser_is_chinese_and_other_languages_get_chinese(browser, app_url):
    for url, locale in ((link(app_url, lang="zh"), "en-US"), (app_url, "fr-FR")):
        watched = open_page(browser, url, locale=locale)
        page = watched.page
        try:
            nav_link(page, "正则 ReAct").wait_for(timeout=WAIT)
            assert "工具调用教学工坊" in header(page) and "Tool Use Workshop" not in header(page)
            assert page.locator("#tab-react .tw-run").inner_text().strip() == "▶ 运行"
            assert page.evaluate("() => [document.documentElement.lang, document.title]") == ["zh-CN", "工具调用教学工坊"]
        finally:
            watched.context.close()


@pytest.mark.parametrize("locale, said", [("zh-CN", "⚠️ 本浏览器没能保存（QuotaExceededError）"),
                                          ("en-US", "⚠️ This browser could not save (QuotaExceededError)")])
def test_a_browser_that_refuses_to_store_is_told_in_its_language(browser, app_url, locale, said):
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 800})
    context.add_init_script("""Storage.prototype.setItem = function () {
        throw new DOMException("full", "QuotaExceededError"); };""")
    page = context.new_page()
    try:
        page.goto(app_url)
        panel = page.locator("#tab-react")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        # Typed once the page has restored: the restore's own note would otherwise replace the warning.
        page.wait_for_function(READY, arg=panel.element_handle(), timeout=WAIT)
        panel.locator(".tw-question textarea").fill("上海今天天气怎么样？")
        panel.locator(".tw-memory-note").filter(has_text=said).first.wait_for(timeout=WAIT)
    finally:
        context.close()


def test_a_links_notes_are_english_and_the_copied_link_keeps_lang(browser, app_url):
    watched = open_page(browser, link(app_url, lang="en", lesson="nowhere"))
    page = watched.page
    watched.context.grant_permissions(["clipboard-read", "clipboard-write"])
    fresh = None
    try:
        banner(page).filter(has_text="Opened from a link").wait_for(timeout=WAIT)
        text = banner(page).inner_text()
        assert "is unknown" in text and "function_calling (Function Calling)" in text and not CJK.search(
            text.replace("「nowhere」", ""))
        # Moving on is a page load, and the page left has a copy button too: the new page first, ready.
        ready(tab(page, "Function Calling"), WAIT)
        page.locator("#copy-page-link").click()
        page.locator("#page-link-note").filter(has_text="Copied to the clipboard").wait_for(timeout=WAIT)
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert parse_qs(urlsplit(copied).query)["lang"] == ["en"]
        fresh = open_page(browser, copied)
        wait_english(fresh.page)
        fresh.page.locator("#tab-function-calling").wait_for(state="visible", timeout=WAIT)   # the link's lesson
        assert visible_panel(fresh.page) == "tab-function-calling"
    finally:
        watched.context.close()
        if fresh is not None:
            fresh.context.close()


def test_the_function_calling_checkboxes_travel_in_the_link(browser, app_url):
    watched = open_page(browser, link(app_url, lesson="function_calling", parallel="0", envelope="1",
                                      question="北京和上海今天天气怎么样？", run="1"))
    page = watched.page
    watched.context.grant_permissions(["clipboard-read", "clipboard-write"])
    fresh = None
    try:
        panel = page.locator("#tab-function-calling")
        panel.locator(".tw-status").filter(has_text="次工具调用").first.wait_for(timeout=WAIT)
        parallel = panel.get_by_label("允许并行调用 parallel_tool_calls")
        assert not parallel.is_checked() and panel.locator(".tw-envelope input").is_checked()
        # Two calls one per round (parallel off), each result sent back in the envelope.
        protocol = panel.locator(".tw-protocol").text_content()      # folded parts too
        assert '"parallel_tool_calls": false' in protocol and '{\\"status\\": \\"ok\\"' in protocol
        assert not banner(page).is_visible()
        # What is on screen is what the copied link reopens: both values differ from the page's defaults.
        page.locator("#copy-page-link").click()
        page.locator("#page-link-note").filter(has_text="已复制到剪贴板").wait_for(timeout=WAIT)
        copied = page.evaluate("() => navigator.clipboard.readText()")
        query = parse_qs(urlsplit(copied).query)
        assert query["parallel"] == ["0"] and query["envelope"] == ["1"]
        fresh = open_page(browser, copied)
        fresh.page.wait_for_function("() => document.querySelector('#tab-function-calling .tw-envelope input')"
                                     "?.checked === true", timeout=WAIT)
        assert not fresh.page.locator("#tab-function-calling").get_by_label(
            "允许并行调用 parallel_tool_calls").is_checked()
        # And a change on screen is a change in the next copied link.
        parallel.check()
        panel.locator(".tw-envelope input").uncheck()
        page.locator("#copy-page-link").click()
        page.locator("#page-link textarea, #page-link input").first.wait_for(timeout=WAIT)
        page.wait_for_function("() => (document.querySelector('#page-link textarea, #page-link input') || {})"
                               ".value?.includes('envelope=0')", timeout=WAIT)
        query = parse_qs(urlsplit(page.locator("#page-link textarea, #page-link input").first.input_value()).query)
        assert query["parallel"] == ["1"] and query["envelope"] == ["0"]
    finally:
        watched.context.close()
        if fresh is not None:
            fresh.context.close()


def test_permission_rules_travel_in_the_link_and_a_bad_one_is_named(browser, app_url):
    rules = {"read": "allow", "bash": "deny", "write": "ask", "edit": "ask"}
    watched = open_page(browser, link(app_url, lesson="permissions", rules=json.dumps(rules),
                                      question="运行测试", run="1"))
    page = watched.page
    watched.context.grant_permissions(["clipboard-read", "clipboard-write"])
    fresh = None
    try:
        panel = page.locator("#tab-permissions")
        panel.locator(".tw-status").filter(has_text="次工具调用").first.wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-permissions"
        shown = json.loads(panel.locator(".tw-rules .cm-content").inner_text())
        assert shown == rules
        assert "❌ [权限规则拒绝]" in panel.locator(".tw-protocol").text_content()  # bash: deny, by the link's rules
        assert not panel.locator(".tw-rules-preset input:checked").count()     # no preset claims these rules
        page.locator("#copy-page-link").click()
        page.locator("#page-link-note").filter(has_text="已复制到剪贴板").wait_for(timeout=WAIT)
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert json.loads(parse_qs(urlsplit(copied).query)["rules"][0]) == rules
        fresh = open_page(browser, link(app_url, lesson="permissions", rules='{"bash": "allwo"}'))
        banner(fresh.page).filter(has_text="rules").wait_for(timeout=WAIT)
        assert "allow" in banner(fresh.page).inner_text()      # the rules' own check: did you mean allow?
        fresh_rules = json.loads(fresh.page.locator("#tab-permissions .tw-rules .cm-content").inner_text())
        assert fresh_rules.get("bash:rm *") == "deny"            # the default rules stay
    finally:
        watched.context.close()
        if fresh is not None:
            fresh.context.close()


def test_a_link_opens_a_workspace_lessons_scenario(browser, app_url):
    watched = open_page(browser, link(app_url, lesson="workspace", approach="react", question="运行测试", run="1"))
    page = watched.page
    try:
        panel = page.locator("#tab-workspace")
        panel.locator(".tw-status").filter(has_text="次工具调用").first.wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-workspace"
        assert panel.locator(".tw-question textarea").input_value() == "运行测试"
        assert panel.locator(".tw-ws-approach").get_by_label("正则 ReAct（对比）").is_checked()
        assert "Action:" in panel.locator(".tw-protocol").text_content()      # the ReAct loop ran
    finally:
        watched.context.close()


def test_a_registry_link_with_run_1_runs(browser, app_url):
    watched = open_page(browser, link(app_url, lesson="registry", example="计算器",
                                      question="帮我算一下 (3+5)*12", run="1"))
    page = watched.page
    try:
        panel = page.locator("#tab-registry")
        panel.locator(".tw-status").filter(has_text="次工具调用").first.wait_for(timeout=WAIT)
        assert visible_panel(page) == "tab-registry" and panel.locator(".tw-run").is_visible()
        assert "96" in panel.locator(".tw-protocol .tw-final").first.inner_text()
    finally:
        watched.context.close()
