"""投影模式 in headless chromium: ?present=1 or the toggle makes the type larger, folds the model
settings away and keeps the newest round of the timeline in view; off again, all comes back."""
from __future__ import annotations

import pytest

from tests.app.harness import open_page, tab

pytestmark = pytest.mark.browser
WAIT = 60_000


def font_px(page) -> float:
    return page.evaluate("parseFloat(getComputedStyle(document.querySelector('.gradio-container')).fontSize)")


def in_view(page, locator) -> bool:
    """Some of it on screen (a round taller than the screen shows its end)."""
    box = locator.bounding_box()
    return box is not None and box["y"] < page.viewport_size["height"] and box["y"] + box["height"] > 0


def run_three_cities(page):
    panel = tab(page, "Function Calling")
    panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
    panel.get_by_role("tab", name="协议时间线").click()
    panel.locator(".tw-question textarea").fill("北京、上海和广州今天天气怎么样？")
    page.evaluate("window.scrollTo(0, 0)")
    panel.locator(".tw-run").evaluate("button => button.click()")   # a click that scrolls nothing itself
    panel.locator(".tw-status").filter(has_text="轮，").first.wait_for(timeout=WAIT)
    page.wait_for_timeout(300)
    return panel.locator(".tw-protocol .tw-round").last


def test_a_present_link_and_the_toggle(browser, app_url):
    plain = open_page(browser, app_url)
    shown = open_page(browser, app_url + "?present=1")
    try:
        plain.page.locator("#present-toggle").wait_for(timeout=WAIT)
        normal = font_px(plain.page)
        page = shown.page
        page.wait_for_function("document.body.classList.contains('tw-present')", timeout=WAIT)
        assert page.locator("#present-toggle input").is_checked()
        assert font_px(page) >= normal * 1.2
        assert not page.get_by_text("⚙️ 模型设置").is_visible()

        last = run_three_cities(page)
        assert in_view(page, last) and page.evaluate("window.scrollY") > 0
        # Without projector mode the page stays where the reader left it.
        unmoved = run_three_cities(plain.page)
        assert plain.page.evaluate("window.scrollY") == 0 and not in_view(plain.page, unmoved)

        page.locator("#present-toggle input").uncheck()
        page.wait_for_function("!document.body.classList.contains('tw-present')", timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").wait_for(state="visible", timeout=WAIT)
        assert font_px(page) == pytest.approx(normal, rel=0.01)
        page.locator("#present-toggle input").check()
        page.wait_for_function("document.body.classList.contains('tw-present')", timeout=WAIT)
        assert plain.foreign_requests() == [] and shown.foreign_requests() == []
    finally:
        plain.context.close()
        shown.context.close()
