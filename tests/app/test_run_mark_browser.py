"""The run area's mark (lessons/run_views.py), in real chromium: every drawing of a run changes it, so
whoever clicked 运行 can wait for this run's headline even when it reads exactly as the last run's, and
a run that fails at once ends with its ❌ headline like any other: run_panel (tests/app/harness.py) returns
with it instead of waiting for words that never change."""
from __future__ import annotations

import pytest

from tests.app.harness import RUN_MARK, LessonPage, run_panel, set_code

pytestmark = pytest.mark.browser
QUESTION = "北京今天天气怎么样？"


def test_the_same_run_twice_is_told_apart_by_its_mark(browser, app_url):
    with LessonPage(browser, app_url, "function_calling") as lesson:
        first = lesson.run(QUESTION)
        mark = lesson.panel.evaluate(RUN_MARK)
        again = lesson.run(QUESTION)
        assert again == first and again.startswith("✅")     # the same verdict, word for word
        assert lesson.panel.evaluate(RUN_MARK) != mark       # and still this run's drawing


def test_a_run_refused_twice_the_same_way_ends_each_time(browser, app_url):
    """Rules that are not JSON: 运行 says so at once, twice in the same words, and nothing runs."""
    with LessonPage(browser, app_url, "permissions") as lesson:
        set_code(lesson.page, lesson.panel.locator(".tw-rules"), "{不是 JSON")
        first = run_panel(lesson.panel, "读一下 notes.md")
        assert first.startswith("❌ 规则有问题")
        assert run_panel(lesson.panel) == first
