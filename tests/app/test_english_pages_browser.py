"""An English page (?lang=en) shows no Chinese of its own, in real chromium, opened by a Chinese browser:
every lesson as it opens, the mistake selectors open, a ReAct run with the naive-regex comparison (both
readings the same, and a reply neither regex reads), the other lessons' runs, a permission rule's question,
a context budget out of range, and Gradio's own frame (its footer, the upload boxes, a toast's heading),
which follows the link, not the browser.

What stays Chinese is the course's own content (the course is Chinese; the header says so), found by where it
is drawn:
  .cm-editor           the course's tool source, the schema made from it (its descriptions are the source's
                       docstrings), the system prompt the course's loop writes, the workspace's files, the
                       arguments of a call, the raw events;
  pre, .tw-pre         the model's raw replies and the messages sent to it (the question, the tools' results);
  .tw-final            the model's final answer;
  code                 values quoted from the course's code (the MCP comparison's schema descriptions);
  .tw-diff             a diff of two schemas or of a workspace file (the source's own descriptions, the files);
  .tw-presets input, .tw-question textarea
                       the lesson's example questions: the course's tools know Chinese city and employee names
                       only, and the offline model answers Chinese questions.
One table is left out: the evaluation lesson's case table, whose first headers are written in both
languages by that page ("用例 / case"), until it gives them as tr() texts (serving/page_language.py puts those in English).
A page text may quote that content (the headline quotes the model's answer, the regex groups are read from the
reply, the reason a reply was not read goes back to the model word for word, the naive regex quotes what it
misread): such a text passes only when each of its Chinese runs occurs in the course content on screen."""
from __future__ import annotations

import pytest

from tests.app.harness import open_page, ready, run_panel, screenshot, tab

pytestmark = pytest.mark.browser
WAIT = 60_000
COURSE = ".cm-editor, pre, .tw-pre, .tw-final, code, .tw-diff, .tw-presets input, .tw-question textarea"
SKIPPED = ".tw-eval-table thead"        # see above

CHINESE_OF_THE_PAGE = r"""(course) => {
  const cjk = /[\u4e00-\u9fff]+/g;
  const visible = el => el && el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden';
  const content = [...document.querySelectorAll(course)].map(el => el.value !== undefined && el.tagName !== 'CODE'
                   && el.tagName !== 'PRE' ? el.value : el.textContent).join('\n');
  const quoted = text => (text.match(cjk) || []).every(run => content.includes(run));
  const where = el => [...new Set([...(el.closest('[class*="tw-"]')?.classList || [])].filter(c => c.startsWith('tw-')))]
                      .join('.') || el.tagName.toLowerCase();
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const el = n.parentElement, text = n.textContent;
    if (!/[\u4e00-\u9fff]/.test(text) || !visible(el) || el.closest(course) || quoted(text)) continue;
    found.push(where(el) + ' :: ' + text.trim().slice(0, 120));
  }
  for (const input of document.querySelectorAll('input, textarea')) {
    if (input.matches(course) || !visible(input) || ['radio', 'checkbox', 'file'].includes(input.type)) continue;
    for (const text of [input.value, input.placeholder])
      if (/[\u4e00-\u9fff]/.test(text || '') && !quoted(text)) found.push(where(input) + ' (input) :: ' + text.slice(0, 120));
  }
  return found;
}"""


def chinese_of_the_page(page) -> list[str]:
    return page.evaluate(CHINESE_OF_THE_PAGE, COURSE + ", " + SKIPPED)


def unfold(panel):
    """Every round of the timeline open: a folded round's text is not on screen, so it would go unchecked."""
    panel.locator(".tw-protocol details").evaluate_all("els => els.forEach(e => e.open = true)")


def opened(page, title: str):
    """The lesson's page once it is ready (its restore done, its run button working): what it shows on opening."""
    return ready(tab(page, title), WAIT)


def run(panel):
    run_panel(panel, timeout=WAIT)
    unfold(panel)


def mistakes_open(page, panel) -> list[str]:
    """The page's Chinese while the mistake selector's list is open."""
    dropdown = panel.locator(".tw-mistake input")
    dropdown.blur()
    dropdown.click()
    page.get_by_role("option").nth(2).wait_for(timeout=WAIT)
    found = chinese_of_the_page(page)
    page.keyboard.press("Escape")
    dropdown.blur()
    return found


def out_of_range(page, panel):
    """A budget of 0: the page's warning in English, under Gradio's English heading, and in the preview."""
    budget = panel.locator(".tw-budget input[type=number]")
    budget.fill("0")
    said = "«Token budget»: 0 is out of range: it must be from 50 to 8000; leaving the box sets it to 50."
    panel.locator(".tw-context-preview").last.filter(has_text=said + " The preview below is for 50.").wait_for(timeout=WAIT)
    toast = page.locator('[data-testid="toast-body"]').filter(has_text=said).first
    toast.wait_for(timeout=WAIT)
    assert toast.inner_text().startswith("Warning")


def choose_mistake(page, panel, name: str):
    panel.locator(".tw-mistake input").blur()
    panel.locator(".tw-mistake input").click()
    option = page.get_by_role("option").filter(has_text=name).first
    option.wait_for(timeout=WAIT)
    option.dispatch_event("mousedown")   # Gradio's dropdown picks on mousedown
    page.get_by_role("option").first.wait_for(state="detached", timeout=WAIT)


def test_no_lesson_of_an_english_page_shows_chinese_of_its_own(browser, app_url):
    # A Chinese browser: Gradio's own frame (its footer, Loading…, the upload boxes) follows the link.
    watched = open_page(browser, app_url + "?lang=en", locale="zh-CN")
    page = watched.page
    page.locator("#header").filter(has_text="Tool Use Workshop").wait_for(timeout=WAIT)
    found: dict[str, list[str]] = {}
    try:
        assert page.locator("footer").inner_text().split() == ["Use", "via", "API", "·", "Built", "with", "Gradio",
                                                              "·", "Settings"]
        panel = opened(page, "First call")
        found["First call, opened"] = chinese_of_the_page(page)
        # Streamed: the time axis, json.loads on every fragment, every finish_reason explained. Guangzhou: the
        # purpose line of the Beijing presets quotes a value accepted but not said ("北京市"), not on screen elsewhere.
        panel.locator(".tw-question textarea").fill("广州冷不冷？")
        run(panel)
        assert panel.locator(".tw-fc-piece").count() >= 3
        found["First call, run"] = chinese_of_the_page(page)

        panel = opened(page, "Regex ReAct")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        found["Regex ReAct, opened"] = chinese_of_the_page(page)
        found["Regex ReAct, mistakes open"] = mistakes_open(page, panel)
        run(panel)     # both regexes read the same reply
        assert panel.locator(".tw-naive-regex").count() >= 2
        found["Regex ReAct, run"] = chinese_of_the_page(page)
        choose_mistake(page, panel, "only Thought, no Action line")
        panel.locator(".tw-mistake-note").filter(has_text="Broken ReAct format").first.wait_for(timeout=WAIT)
        run(panel)     # a reply neither regex reads, and the reason sent back to the model
        assert "no match" in panel.locator(".tw-protocol").inner_text()
        found["Regex ReAct, a reply not read"] = chinese_of_the_page(page)
        screenshot(page, "english-react-naive-regex")

        for title in ("Tool registry", "Function Calling", "MCP", "Atomic tools"):
            panel = opened(page, title)
            found[f"{title}, opened"] = chinese_of_the_page(page)
            if panel.locator(".tw-mistake").count():
                found[f"{title}, mistakes open"] = mistakes_open(page, panel)
            if panel.locator(".tw-run").first.is_visible():    # the registry's run area is folded away
                run(panel)
                found[f"{title}, run"] = chinese_of_the_page(page)

        panel = opened(page, "Permissions")
        found["Permissions, opened"] = chinese_of_the_page(page)
        run(panel)     # 运行测试: the default rules ask before bash runs
        panel.locator(".tw-ask-title").filter(has_text="Waiting for you").first.wait_for(timeout=WAIT)
        found["Permissions, a rule asks"] = chinese_of_the_page(page)
        screenshot(page, "english-permissions-ask")
        panel.locator(".tw-deny").click()
        panel.locator(".tw-ask").first.wait_for(state="hidden", timeout=WAIT)

        for title in ("Hooks", "Context budget", "Skills", "Sub-agents", "Sessions and branches", "Evaluation", "MiniAgent"):
            panel = opened(page, title)
            found[f"{title}, opened"] = chinese_of_the_page(page)
            if title == "Context budget":
                out_of_range(page, panel)
                found[f"{title}, a budget out of range"] = chinese_of_the_page(page)
            if title == "Skills":
                headers = panel.locator(".tw-memories thead th, .tw-memories [role=columnheader]").all_inner_texts()
                assert [h.strip() for h in headers if h.strip()] == ["No.", "fact", "source", "saved at"]
            if title == "Evaluation":
                assert "Drop File Here" in panel.locator(".tw-eval-cases-import").inner_text()
            if panel.locator(".tw-run").first.is_visible():
                run(panel)
                found[f"{title}, run"] = chinese_of_the_page(page)
    finally:
        watched.context.close()
    assert {state: texts for state, texts in found.items() if texts} == {}
