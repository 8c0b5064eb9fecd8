"""The page tests' own helpers wait for what they say they wait for: a helper that returned early would
let a test act on the page before it shows what the test believes it shows."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.app.harness import CODE_SHOWN, LessonPage

pytestmark = pytest.mark.browser
WAIT = 60_000


def test_picking_an_example_set_returns_only_once_its_source_is_on_the_page(browser, app_url):
    """天气 and 天气（描述含糊） share get_forecast: while the server's answer to the pick is held, the helper
    keeps waiting (its schema has not changed yet); once the answer comes, the new schema is drawn."""
    with LessonPage(browser, app_url, "evaluation") as lesson:
        page, panel = lesson.page, lesson.panel
        lesson.choose_example("天气（描述含糊）", "get_forecast")
        vague = panel.locator(f".tw-schema-json {CODE_SHOWN}").first.text_content()
        assert '"description": "天气"' in vague
        held, holding = [], [True]
        for pattern in ("**/queue/join*", "**/run/predict*"):
            page.route(pattern, lambda route: held.append(route) if holding[0] else route.continue_())
        try:
            with pytest.raises(AssertionError, match="expected not to have text"):
                lesson.choose_example("天气", "get_forecast", timeout=3_000)
        finally:
            holding[0] = False
            for route in held:
                route.continue_()
        assert held, "the pick sent nothing to the server"
        schema = panel.locator(f".tw-schema-json {CODE_SHOWN}").first
        expect(schema).not_to_have_text(vague, timeout=WAIT)
        assert '"description": "天气"' not in schema.text_content()
