"""On the page: a call whose argument nobody said carries the note, in the timeline and in the chat
view, beside the question, and the headline is a doubt, not a ✅. The run is a recorded session (a
model that called get_weather with the template example's "Tokyo" for a Beijing question) imported on
the Function Calling tab: the replay goes through the same drawing code as a live run. Imported again
with the accent a client writes when the server's chat template holds the value, both say so."""
from __future__ import annotations

import json

import pytest

from lessons.editor_panel import EXAMPLE_SETS, example_text
from runs import session_io
from tests.app.harness import open_page, screenshot, tab
from tests.models.test_unsaid_arguments import WEATHER_TOOL, invented_run

pytestmark = pytest.mark.browser
WAIT = 30_000


def imported(panel, tmp_path, events: list[dict], name: str):
    """Imports `events` as a recorded Function Calling run and shows all of it."""
    document = session_io.session_document("function_calling", example_text(EXAMPLE_SETS["天气"]), WEATHER_TOOL,
                                           "北京今天天气怎么样？", events, {"provider": "offline"})
    saved = tmp_path / name
    saved.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    panel.get_by_role("tab", name="导出/导入").click()
    cleared = panel.locator(".tw-import button[aria-label='清除']")
    if cleared.count():             # a file imported before: its ✕ (shown on hover) empties the box
        cleared.dispatch_event("click")
    panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
    panel.locator(".tw-status").filter(has_text="已导入录制的运行").first.wait_for(timeout=WAIT)
    panel.locator(".tw-all").click()
    panel.locator(".tw-status").filter(has_text="⚠️").first.wait_for(timeout=WAIT)     # every step shown: the verdict
    panel.get_by_role("tab", name="协议时间线").click()
    panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)      # the last round is drawn, open
    panel.locator(".tw-protocol .tw-round > summary").first.click()         # round 1, with the call, opens
    note = panel.locator(".tw-protocol .tw-call .tw-unsaid")
    note.first.wait_for(timeout=WAIT)
    assert note.count() == 1
    return note.inner_text(), panel.locator(".tw-status").first.inner_text()


def test_the_note_on_a_call_with_an_argument_nobody_said(browser, app_url, tmp_path):
    watched = open_page(browser, app_url)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        text, headline = imported(panel, tmp_path, invented_run("北京今天天气怎么样？"), "session.json")
        assert 'city="Tokyo" 在对话里没有出现过（问题、系统提示、之前的消息、工具结果和工具清单里都没有）' in text
        assert "问题是「北京今天天气怎么样？」" in text
        # Not a plain ✅ over it: the headline names the argument, and does not say who is to blame.
        assert headline.startswith('⚠️ get_weather 的参数 city="Tokyo" 在对话里没有出现过（问题是「北京今天天气怎么样？」）：'
                                   "下面的回答用的是它，核对一下")
        panel.locator(".tw-protocol .tw-call .tw-unsaid").scroll_into_view_if_needed()
        screenshot(page, "unsaid-argument-1280x800")
        panel.get_by_role("tab", name="对话视图").click()
        chat = panel.locator(".tw-chat")
        chat.get_by_text("🛠️ 调用 get_weather").first.click()          # the call's step unfolds
        chat.get_by_text('city="Tokyo" 在对话里没有出现过').first.wait_for(timeout=WAIT)
        # The same run where the server's answer said the value is its chat template's example (llama-server's
        # /props gives the template): the note and the headline say where it came from.
        copied = invented_run("北京今天天气怎么样？")
        response = next(e for e in copied if e["type"] == "response")
        response["accents"] = [{"code": "template_example", "values": ["Tokyo"],
                                "message": '参数里的 "Tokyo" 不在对话里，却在服务端的聊天模板里'}]
        text, headline = imported(panel, tmp_path, copied, "copied.json")
        assert 'city="Tokyo" 在对话里没有出现过，却在服务端的聊天模板里：模型照抄了模板里示范调用的例子' in text
        assert "它在服务端聊天模板的示例里：模型照抄了模板的例子" in headline and headline.startswith("⚠️")
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()
