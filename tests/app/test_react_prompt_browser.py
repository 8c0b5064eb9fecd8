"""ReAct's system prompt (lessons/react/page.py) in real chromium: it is written from the schema shown, so
while the source does not parse it keeps the last good tools, and picking another approach rewrites it in
that approach's format from those same tools."""
from __future__ import annotations

import pytest

from tests.app.harness import code_text, open_page, set_code

pytestmark = pytest.mark.browser
WAIT = 60_000
BROKEN = "from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\ndef tide_table(city: str:\n"


def test_a_broken_source_leaves_the_last_tools_in_the_prompt_of_either_approach(browser, app_url):
    watched = open_page(browser, app_url)          # ReAct's page is at /
    try:
        page = watched.page
        panel = page.locator(".tw-lesson").first
        prompt = panel.locator(".tw-system-prompt")
        prompt.filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        set_code(page, panel.locator(".tw-editor"), BROKEN)
        panel.locator(".tw-schema-status").filter(has_text="上一次成功生成的 schema").first.wait_for(timeout=WAIT)
        assert "Action: 工具名[" in code_text(prompt) and "get_weather" in code_text(prompt)
        panel.get_by_text("从文本中解析 JSON").click()
        prompt.filter(has_text='"tool": "工具名"').first.wait_for(timeout=WAIT)
        shown = code_text(prompt)
        assert "get_weather" in shown and "tide_table" not in shown and "Action: 工具名[" not in shown
    finally:
        watched.context.close()
