"""What a student reads on screen is true and readable, in real chromium: the page's subtitle names
no lesson it leaves out, an export keeps the run's headline and says where the file is, a replay
says which step it showed and ends on the run's verdict with the recorded options back, the schema
error note points the right way, a mistake's name fits its selector, and no label of a code box runs
under the box's icons."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from catalogue import LESSONS

from tests.app.harness import code_text, lesson_labels, open_in, ready, run_panel, set_code, tab, titled_address

pytestmark = pytest.mark.browser
WAIT = 60_000
TITLES = {lang: [getattr(lesson.title, lang) for lesson in LESSONS.values()] for lang in ("zh", "en")}
# The kinds of event a replay walks over: none of these raw names may be what a student reads.
RAW_EVENT_NAMES = re.compile(r"(：|: )(request|response|parse|tool_call|tool_result|final|error)\b")

WIDTHS = (1280, 800)
# Text of a label over a code box that lies under the box's icons (copy, download), read once the page
# has drawn two more frames: what a resize changes is laid out by then.
LABELS_UNDER_ICONS = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
  const hits = [];
  for (const icons of document.querySelectorAll('.icon-button-wrapper.top-panel')) {
    const label = icons.parentElement.querySelector(':scope > label[data-testid="block-label"]');
    if (!label || !icons.getClientRects().length || !label.getClientRects().length) continue;
    const box = icons.getBoundingClientRect(), range = document.createRange();
    range.selectNodeContents(label);
    if ([...range.getClientRects()].some(r => r.width && r.right > box.left && r.left < box.right
                                           && r.bottom > box.top && r.top < box.bottom)) hits.push(label.innerText);
  }
  done(hits);
})))"""


def status_of(panel) -> str:
    return panel.locator(".tw-status").first.inner_text().strip()


def run(panel, question: str | None = None) -> str:
    return run_panel(panel, question, timeout=WAIT)


def choose(page, dropdown, index: int):
    dropdown.locator("input").blur()
    dropdown.locator("input").click()
    option = page.get_by_role("option").nth(index)
    option.wait_for(timeout=WAIT)
    option.dispatch_event("mousedown")   # Gradio's dropdown picks on mousedown
    page.get_by_role("option").first.wait_for(state="detached", timeout=WAIT)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_subtitle_names_every_lesson_or_none(browser, app_url, lang):
    watched = open_in(browser, app_url, lang)
    try:
        page = watched.page
        shown = [name.split(" ", 1)[1] for name in lesson_labels(page)]
        assert shown == TITLES[lang]        # the lesson list as the page draws it
        subtitle = page.locator("#header p").first.inner_text()
        named = [title for title in TITLES[lang] if title in subtitle]
        assert named in ([], TITLES[lang]), f"the subtitle names only {named}"
    finally:
        watched.context.close()


def test_export_keeps_the_headline_and_says_where_the_file_is(browser, app_url):
    watched = open_in(browser, titled_address(app_url, "Function Calling"), "zh")
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        headline = run(panel)
        assert headline.startswith("✅")
        panel.get_by_role("tab", name="导出/导入").click()
        panel.locator(".tw-export").click()
        panel.locator(".tw-export-file a").first.wait_for(timeout=WAIT)
        note = panel.locator(".tw-export-note").filter(has_text="会话文件").first
        note.wait_for(timeout=WAIT)
        assert status_of(panel) == headline
        # The note names the box the file is in, and that box is the one holding the file.
        box_label = panel.locator(".tw-export-file label[data-testid=block-label]").first.inner_text().strip()
        assert f"「{box_label}」框" in note.inner_text()
        assert ".json" in panel.locator(".tw-export-file a").first.get_attribute("href")
    finally:
        watched.context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_replay_names_its_steps_ends_on_the_verdict_and_restores_the_options(browser, app_url, lang, tmp_path):
    watched = open_in(browser, titled_address(app_url, "Function Calling"), lang)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        envelope = panel.locator(".tw-envelope input")
        envelope.check()
        headline = run(panel)
        assert headline.startswith("✅")
        panel.get_by_role("tab", name="导出/导入" if lang == "zh" else "Export/import").click()
        panel.locator(".tw-export").click()
        link = panel.locator(".tw-export-file a").first
        link.wait_for(timeout=WAIT)
        with page.expect_download() as download:
            link.click()
        saved = tmp_path / "session.json"
        download.value.save_as(saved)
        assert json.loads(saved.read_text(encoding="utf-8"))["options"]["envelope"] is True
        envelope.uncheck()
        panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
        panel.locator(".tw-replay").first.wait_for(state="visible", timeout=WAIT)
        page.wait_for_function("el => el.checked", arg=envelope.element_handle(), timeout=WAIT)
        panel.locator(".tw-next").click()
        first = "回放：第 1 / " if lang == "zh" else "Replay: step 1 of "
        panel.locator(".tw-status").filter(has_text=first).first.wait_for(timeout=WAIT)
        said = status_of(panel)
        assert ("刚显示：发给模型的请求" if lang == "zh" else "just shown: the request to the model") in said
        assert not RAW_EVENT_NAMES.search(said)
        panel.locator(".tw-all").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        page.wait_for_function("root => root.querySelector('.tw-status')?.innerText.trim().startsWith('✅')",
                               arg=panel.element_handle(), timeout=WAIT)
        assert status_of(panel) == headline        # the verdict of the run, as it was when it ran
    finally:
        watched.context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_schema_error_note_points_at_the_schema(browser, app_url, lang):
    watched = open_in(browser, titled_address(app_url, "Function Calling"), lang)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        source = code_text(panel.locator(".tw-editor"))
        set_code(page, panel.locator(".tw-editor"), source.replace("def get_weather(", "def get_weather(((", 1))
        note = panel.locator(".tw-schema-status").filter(has_text="schema").filter(
            has_text="上一次成功" if lang == "zh" else "last successful").first
        note.wait_for(timeout=WAIT)
        said = note.inner_text()
        schema_below = (panel.locator(".tw-schema-json").first.bounding_box()["y"]
                        > note.bounding_box()["y"])
        assert schema_below
        assert ("下面" in said and "上面" not in said) if lang == "zh" else ("Below" in said and "Above" not in said)
        assert "get_weather" in code_text(panel.locator(".tw-schema-json"))      # the kept schema is really shown
    finally:
        watched.context.close()


@pytest.mark.parametrize("lang, lesson", [("zh", "Function Calling"), ("en", "Function Calling"),
                                          ("zh", "正则 ReAct"), ("en", "MCP")])
def test_every_mistake_choice_fits_its_selector(browser, app_url, lang, lesson):
    watched = open_in(browser, titled_address(app_url, lesson), lang)
    try:
        page = watched.page
        panel = tab(page, lesson)
        dropdown = panel.locator(".tw-mistake")
        dropdown.locator("input").click()
        page.get_by_role("option").first.wait_for(timeout=WAIT)
        names = [name.strip() for name in page.get_by_role("option").all_inner_texts()]
        page.keyboard.press("Escape")
        dropdown.locator("input").blur()
        assert len(names) > 5
        cut = []
        note = panel.locator(".tw-mistake-note").first
        for index, name in enumerate(names[1:], start=1):
            said_before = note.text_content()
            choose(page, dropdown, index)
            page.wait_for_function("([el, v]) => el.value === v", arg=[dropdown.locator("input").element_handle(), name],
                                   timeout=WAIT)
            fits = dropdown.locator("input").evaluate("el => el.scrollWidth <= el.clientWidth + 1")
            if not fits:
                cut.append(name)
            # What the chosen mistake does is said in full under the selector: this one's, not the last one's.
            expect(note).not_to_have_text(said_before, timeout=WAIT)
            expect(note).to_contain_text("ℹ️")
        assert cut == []
    finally:
        watched.context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_code_box_label_runs_under_its_icons(browser, app_url, lang):
    """Each lesson's page, opened once, at a desktop's width and at a narrow window's."""
    watched = open_in(browser, app_url, lang, width=WIDTHS[0])
    try:
        page = watched.page
        hidden = {}
        for title in TITLES[lang]:
            ready(tab(page, title), WAIT)     # its code boxes hold what the page shows on opening
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 800})
                hidden[(title, width)] = page.evaluate(LABELS_UNDER_ICONS)
            page.set_viewport_size({"width": WIDTHS[0], "height": 800})
        assert all(not labels for labels in hidden.values()), hidden
        tab(page, TITLES[lang][TITLES["zh"].index("权限与确认")])
        rules = page.locator("#tab-permissions .tw-rules label[data-testid=block-label]").first
        assert rules.is_visible() and ("allow / ask / deny" in rules.inner_text())
    finally:
        watched.context.close()
