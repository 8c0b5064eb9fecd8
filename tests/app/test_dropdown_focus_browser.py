"""A dropdown that is only clicked into and left (no option chosen) changes nothing: Gradio's dropdown
sends `input` again whenever it loses focus, so a listener meant for "a person chose" is wired to
`select` (tests/app/test_gradio_patches.py checks every dropdown's listeners). Here in real chromium:
the student's edited source, typed question and hooks stay when the box next to them loses focus."""
from __future__ import annotations

import pytest

from tests.app.harness import lesson_address, open_page, ready, run_panel, set_code

pytestmark = pytest.mark.browser
WAIT = 60_000
EDITED = "from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n@registry.tool\ndef tide_table(port: str) -> str:\n    \"\"\"潮汐表\"\"\"\n    return port\n"


def focus_and_leave(page, dropdown, elsewhere):
    dropdown.locator("input").click()
    elsewhere.click()


def test_leaving_the_example_and_preset_boxes_keeps_the_edited_source_and_question(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "function_calling"))
    try:
        page = watched.page
        panel = ready(page.locator(".tw-lesson").first)
        editor = panel.locator(".tw-editor")
        set_code(page, editor, EDITED)
        question = panel.locator(".tw-question textarea")
        question.fill("潮汐什么时候最高？")
        focus_and_leave(page, panel.locator(".tw-example-set"), question)
        focus_and_leave(page, panel.locator(".tw-presets"), question)
        # The student runs: by the end of the run, any reply to the two boxes' focus has long arrived.
        run_panel(panel)
        assert "tide_table" in editor.locator(".cm-content").inner_text()
        assert question.input_value() == "潮汐什么时候最高？"
        assert "tide_table" in panel.locator(".tw-timeline, .tw-protocol").first.inner_text()
    finally:
        watched.context.close()
