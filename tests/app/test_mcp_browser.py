"""The MCP tab as the other tabs, in real chromium: a link with lesson=mcp opens and runs it,
and the browser keeps its source, its annotations switch and its last run (JSON-RPC messages
included) across a reload."""
from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest

from tests.app.harness import code_text, open_page, set_code, tab, wait_stored

pytestmark = pytest.mark.browser
WAIT = 60_000
MINE = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("把两个整数相加，返回它们的和", read_only=True)
def mcp_student_add(a: int, b: int) -> int:
    return a + b
'''


def test_a_link_opens_the_mcp_tab_and_runs_its_question(browser, app_url):
    query = urlencode({"lesson": "mcp", "example": "计算器", "question": "帮我算一下 (3+5)*12", "run": "1"},
                      quote_via=quote)
    watched = open_page(browser, f"{app_url}?{query}")
    page = watched.page
    try:
        panel = page.locator("#tab-mcp")
        panel.locator(".tw-status").filter(has_text="次工具调用").first.wait_for(timeout=WAIT)
        assert panel.is_visible() and panel.locator(".tw-status").first.inner_text().startswith("✅")
        assert "96" in panel.locator(".tw-protocol .tw-final").first.inner_text()
        assert "请求 tools/call" in "".join(panel.locator(".tw-protocol details.tw-round").all_text_contents())
        assert panel.locator(".tw-example-set input").input_value() == "计算器"
        assert not page.locator("#deep-link-note").is_visible()
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()


def test_the_source_the_switch_and_the_last_run_come_back_after_a_reload(browser, app_url):
    watched = open_page(browser, app_url, height=1600)
    page = watched.page
    try:
        panel = tab(page, "MCP")
        panel.locator(".tw-mcp-compare").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        set_code(page, panel.locator(".tw-editor"), MINE)
        panel.locator(".tw-mcp-compare").filter(has_text="mcp_student_add").first.wait_for(timeout=WAIT)
        panel.locator(".tw-mcp-annotations input").check()
        panel.locator(".tw-question textarea").fill("把 3 和 4 相加")
        panel.locator(".tw-run").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        wait_stored(page, "mcp_student_add")
        wait_stored(page, '"method":"tools/call"')      # the run record keeps the JSON-RPC messages
        page.reload()
        page.wait_for_selector(".tw-lesson", timeout=WAIT)
        panel = tab(page, "MCP")
        panel.locator(".tw-memory-note").filter(has_text="已恢复本浏览器保存的内容").first.wait_for(timeout=WAIT)
        assert "mcp_student_add" in code_text(panel.locator(".tw-editor"))
        assert panel.locator(".tw-mcp-annotations input").is_checked()
        panel.locator(".tw-mcp-compare").filter(has_text="mcp_student_add").first.wait_for(timeout=WAIT)
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        assert "请求 initialize" in "".join(panel.locator(".tw-protocol details.tw-round").all_text_contents())
    finally:
        watched.context.close()
