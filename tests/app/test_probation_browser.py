"""A tool that loops forever, tried in 工具注册, and then an untouched async example. On a local run
the example keeps working, on Function Calling's page as well (no class to protect, so no
probation); on a public server the page's session is on probation (each lesson's page is a
session of its own: the async example run on the same 工具注册 page), and the refusal says which
job ran into a limit, when, and how much longer it lasts, while the headline names the sandbox."""
from __future__ import annotations

import re

import pytest

import sandbox
from tests.app.harness import WAIT, choose, lesson, open_in, rounds, run_panel, set_code, use_examples

pytestmark = pytest.mark.browser
LOOP = ("from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"
        '@registry.tool("一直转圈，不会返回")\ndef spin(n: int) -> int:\n    while True:\n        n += 1\n')
QUESTION = "北京和上海的空气质量怎么样？"


@pytest.fixture
def page(browser, app_url):
    """A browser session of its own: the sandbox's ledger of this session starts empty."""
    watched = open_in(browser, app_url, "zh", height=2400)
    yield watched.page
    watched.context.close()


def async_example(page):
    """Function Calling with the async example picked (its schema is drawn, and so remembered, first)."""
    panel = lesson(page, "Function Calling")
    use_examples(page, panel, "异步工具（async def）", "get_air_quality")
    return panel


def loop_in_the_registry_lesson(page):
    panel = lesson(page, "工具注册")
    set_code(page, panel.locator(".tw-editor"), LOOP)
    panel.locator(".tw-schema-json").filter(has_text='"spin"').first.wait_for(timeout=WAIT)
    choose(page, panel.locator(".tw-try-tool"), "spin")
    set_code(page, panel.locator(".tw-try-args"), '{"n": 1}')
    panel.locator(".tw-try-btn").click()
    content = panel.locator(".tw-try-content textarea")
    page.wait_for_function("e => e.value.startsWith('❌ [超时]')", arg=content.element_handle(), timeout=WAIT)
    return panel


def test_on_a_local_run_a_loop_in_one_lesson_leaves_the_other_lessons_examples_working(page):
    assert not sandbox.current_settings().probation_applies()          # the test app listens on 127.0.0.1
    async_example(page)
    loop_in_the_registry_lesson(page)
    panel = lesson(page, "Function Calling")
    status = run_panel(panel, QUESTION)
    assert status.startswith("✅"), status
    assert "北京当前 AQI" in rounds(panel)[0] and "上海当前 AQI" in rounds(panel)[0]


def test_on_a_public_server_the_refusal_says_where_when_and_how_long_and_the_sandbox_is_named(page, request):
    before = sandbox.configure(probation=True, refusal_pause_seconds=0.0)   # probation as a public server has it
    request.addfinalizer(lambda: sandbox.configure(before))
    panel = loop_in_the_registry_lesson(page)
    use_examples(page, panel, "异步工具（async def）", "get_air_quality")
    panel.locator(".tw-run-opener").get_by_text("▶ 用这些工具跑一次 Function Calling").click()
    status = run_panel(panel, QUESTION)
    assert status.startswith("⚠️") and "✅" not in status
    assert "沙箱拒绝运行 get_air_quality，不是模型或工具出错" in status and "模型放弃" not in status
    refusal = rounds(panel)[0]
    assert "❌ [请稍后再试] 运行太频繁" in refusal
    assert re.search(r"其中最多的一次是工具 spin（(刚才|\d+ 秒前)，用了 \d+\.\d 秒）", refusal)      # where, when
    assert re.search(r"这个会话在观察期：(刚才|\d+ 秒前)，工具 spin 运行时超出了上限", refusal)
    assert "你在这一页里的工具都按观察期的限额运行" in refusal                               # the whole truth
    left = re.search(r"观察期还剩 (\d+) 秒", refusal)
    assert left and 0 < int(left.group(1)) <= sandbox.current_settings().probation_seconds + 1
