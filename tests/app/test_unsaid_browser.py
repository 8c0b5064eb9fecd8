"""On the page: a call whose argument nobody said carries the note, in the timeline and in the chat
view, beside the question. The run is a recorded session (a model that called get_weather with the
template example's "Tokyo" for a Beijing question) imported on the Function Calling tab: the replay
goes through the same drawing code as a live run."""
from __future__ import annotations

import json

import pytest

from lessons.editor_panel import EXAMPLE_SETS, example_text
from memory import session_io
from tests.app.harness import open_page, screenshot, tab
from tests.models.test_unsaid_arguments import WEATHER_TOOL, invented_run

pytestmark = pytest.mark.browser
WAIT = 30_000


def test_the_note_on_a_call_with_an_argument_nobody_said(browser, app_url, tmp_path):
    events = invented_run("北京今天天气怎么样？")
    document = session_io.session_document("function_calling", example_text(EXAMPLE_SETS["天气"]), WEATHER_TOOL,
                                           "北京今天天气怎么样？", events, {"provider": "offline"})
    saved = tmp_path / "session.json"
    saved.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    watched = open_page(browser, app_url)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        panel.get_by_role("tab", name="导出/导入").click()
        panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
        panel.locator(".tw-status").filter(has_text="已导入录制的运行").first.wait_for(timeout=WAIT)
        panel.locator(".tw-all").click()
        panel.get_by_role("tab", name="协议时间线").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)      # the last round is drawn, open
        panel.locator(".tw-protocol .tw-round > summary").first.click()         # round 1, with the call, opens
        note = panel.locator(".tw-protocol .tw-call .tw-unsaid")
        note.first.wait_for(timeout=WAIT)
        assert note.count() == 1
        text = note.inner_text()
        assert 'city="Tokyo" 在发给模型的内容里没有出现过：可能是模型编的' in text and "问题是「北京今天天气怎么样？」" in text
        note.scroll_into_view_if_needed()
        screenshot(page, "unsaid-argument-1280x800")
        panel.get_by_role("tab", name="对话视图").click()
        chat = panel.locator(".tw-chat")
        chat.get_by_text("🛠️ 调用 get_weather").first.click()          # the call's step unfolds
        chat.get_by_text('city="Tokyo" 在发给模型的内容里没有出现过').first.wait_for(timeout=WAIT)
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()
