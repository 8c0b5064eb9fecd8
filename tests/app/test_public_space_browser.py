"""A public Space in headless chromium: base URLs typed in 模型设置 that point at this
machine are refused before any connection, and the server's key (the project's own
OpenAI-compatible server standing in for the provider) serves only a tab that entered
the class code, within the session's hourly count shown in 模型设置; the offline model
and a student's own key keep working when the count is used up."""
from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from access import class_code
from offline.server import OfflineServer

from tests.access.listener import Listener, spellings
from tests.app.harness import open_page, pick_provider, run_panel, screenshot, start_app, tab

pytestmark = pytest.mark.browser
WAIT = 30_000
CODE = "蓝鲸-42"
PAUSE_S = 3.0


@pytest.fixture(scope="module")
def provider():
    server = OfflineServer(slow_seconds=1.0).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def space(provider):
    """The app as a Space serves it (SPACE_ID set: serving publicly), on a loopback port."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPACE_ID", "teacher/tool-workshop")
        patch.delenv("TOOL_WORKSHOP_ALLOW_PRIVATE_URLS", raising=False)
        demo, url = start_app({"OPENAI_API_KEY": "sk-server-configured-9d8c7b", "OPENAI_BASE_URL": provider.url + "/v1",
                               "TOOL_WORKSHOP_CLASS_CODE": CODE, "TOOL_WORKSHOP_KEY_REQUESTS_PER_SESSION": "3",
                               "TOOL_WORKSHOP_KEY_REQUESTS_PER_IP": "100"})
        yield url
        demo.close()


@pytest.fixture
def listener():
    opened = Listener()
    yield opened
    opened.close()


def open_settings(page):
    page.get_by_text("⚙️ 模型设置").click()
    page.locator("#provider").wait_for(state="visible")


def set_model(page, name="offline-rule-model"):
    model = page.locator("#model input")
    model.fill(name)
    model.press("Enter")


def run(panel):
    """Clicks 运行 on the timeline tab and waits for this run's headline; the timeline's text."""
    panel.get_by_role("tab", name="协议时间线").click()
    run_panel(panel, timeout=2 * WAIT)
    return panel.locator(".tw-protocol").text_content()


def shows_usage(page, expected: str) -> bool:
    """Folds 模型设置 and opens it again (opening it refreshes the session's use), then
    waits for the expected line."""
    page.get_by_text("⚙️ 模型设置").click()
    page.get_by_text("⚙️ 模型设置").click()
    page.locator("#key-usage").filter(has_text=expected).first.wait_for(timeout=WAIT)
    return True


def test_typed_base_urls_pointing_at_this_machine_are_refused(browser, space, listener):
    watched = open_page(browser, space)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        open_settings(page)
        pick_provider(page, "openai")
        set_model(page)
        key = page.locator("#api-key input")
        key.fill("sk-student-own-1234")
        key.press("Enter")
        page.locator("#key-status").filter(has_text="已保存你输入的密钥").wait_for(timeout=WAIT)
        status = panel.locator(".tw-status")
        # Four spellings through the page; every spelling is refused where each client is made
        # (tests/access/test_outbound.py), and the listener below sees no connection from any of them.
        shown = [u for u in spellings(listener.port, listener.ipv6)
                 if any(form in u for form in ("//2130706433:", "[::ffff:", "//localhost:", "https://"))]
        for url in shown:
            page.locator("#base-url textarea, #base-url input").first.fill(url)
            panel.locator(".tw-run").click()
            status.filter(has_text=f"内部地址：{urlsplit(url).hostname}").first.wait_for(timeout=WAIT)
            assert "在自己的电脑上运行" in status.first.inner_text()
        page.locator("#base-url textarea, #base-url input").first.fill("ftp://example.com/v1")
        panel.locator(".tw-run").click()
        status.filter(has_text="只能以 http:// 或 https:// 开头").first.wait_for(timeout=WAIT)
        assert listener.connections == []
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_the_server_key_needs_the_class_code_and_is_metered(browser, space, provider, monkeypatch):
    # A first pause long enough that the next try surely falls inside it, however busy the machine.
    monkeypatch.setattr(class_code, "FIRST_PAUSE_S", PAUSE_S)
    provider.reset()
    watched = open_page(browser, space, keep_bodies=True)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        open_settings(page)
        pick_provider(page, "openai")
        set_model(page)
        assert shows_usage(page, "这个浏览器标签页已用 0/3 次服务器密钥请求")
        assert "需要先输入课堂口令" in page.locator("#key-usage").first.inner_text()
        panel.locator(".tw-run").click()
        panel.locator(".tw-status").filter(has_text="课堂口令").first.wait_for(timeout=WAIT)
        assert provider.requests == []

        code = page.locator("#class-code input")
        code.fill("猜一猜")
        code.press("Enter")
        page.locator("#key-usage").filter(has_text="课堂口令不对").wait_for(timeout=WAIT)
        # The pause began when the server refused the code, before the page said so; the app runs in
        # this process, on this clock: it is surely over at `paused_until`.
        paused_until = time.monotonic() + PAUSE_S
        assert code.input_value() == ""
        code.fill(CODE)
        code.press("Enter")                        # too soon after a wrong code: not even compared
        page.locator("#key-usage").filter(has_text="次数太多").wait_for(timeout=WAIT)
        page.wait_for_timeout(max(0.0, paused_until - time.monotonic()) * 1000)   # the first pause is over
        code.fill(CODE)
        code.press("Enter")
        page.locator("#key-usage").filter(has_text="课堂口令正确").wait_for(timeout=WAIT)
        page.locator("#settings-panel").scroll_into_view_if_needed()
        screenshot(page, "settings-class-code-1280x800")

        assert "出错" not in run(panel)
        assert len(provider.requests) == 2         # a tool call, then the answer
        assert shows_usage(page, "这个浏览器标签页已用 2/3 次服务器密钥请求")
        text = run(panel)                          # one round left: the second is refused unsent
        assert "这个浏览器标签页的服务器密钥额度（每小时 3 次）已用完" in text and "恢复" in text
        assert len(provider.requests) == 3
        assert shows_usage(page, "这个浏览器标签页已用 3/3")

        # The offline model still works ...
        pick_provider(page, "offline")
        assert "出错" not in run(panel)
        assert len(provider.requests) == 3
        # ... and so does the student's own key, towards the operator's address, unmetered.
        pick_provider(page, "openai")
        set_model(page)
        key = page.locator("#api-key input")
        key.fill("sk-student-own-5678")
        key.press("Enter")
        page.locator("#key-status").filter(has_text="已保存你输入的密钥").wait_for(timeout=WAIT)
        assert "出错" not in run(panel)
        assert len(provider.requests) == 5
        assert shows_usage(page, "这个浏览器标签页已用 3/3")

        # The next lesson is a page (and a session) of its own: the tab's accepted code lets it in too,
        # its key is the one typed above, held for the tab, and the tab's count goes on: a new page
        # is not a new hour of the server's key.
        tab(page, "正则 ReAct")
        page.get_by_text("⚙️ 模型设置").click()
        page.locator("#key-status").filter(has_text="🔑").wait_for(timeout=WAIT)      # the tab's settings are back
        assert shows_usage(page, "这个浏览器标签页已用 3/3")
        assert "课堂口令" not in page.locator("#key-usage").first.inner_text()
        assert not [b for b in watched.bodies if CODE.encode() in b or b"sk-server-configured" in b
                    or b"sk-student-own-5678" in b]
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_an_evaluation_is_capped_and_the_page_says_so_before_it_runs(browser, space, provider):
    """On a public Space one evaluation runs at most 60 times; the page says so, and a bigger one runs nothing."""
    provider.reset()
    watched = open_page(browser, space)
    try:
        page = watched.page
        panel = tab(page, "评估")
        assert "这是公开的 Space：每次评估最多跑 60 次" in panel.locator(".tw-eval-cap").first.inner_text()
        trials = panel.locator(".tw-eval-trials input[type=number]")
        trials.fill("5")
        trials.press("Enter")
        panel.locator(".tw-eval-compare input").check()
        panel.locator(".tw-eval-run").click()
        refused = panel.locator(".tw-eval-progress").filter(has_text="超过了上限 60 次")
        refused.first.wait_for(timeout=WAIT)
        assert "这次评估要跑 80 次（8 个用例 × 5 次 × 2 个模型）" in refused.first.inner_text()
        assert provider.requests == []
    finally:
        watched.context.close()
