"""投影模式 in headless chromium: ?present=1 or the toggle makes the type larger, folds the model
settings away and keeps the newest round of the timeline in view; off again, all comes back. At
1280×720 every text is large and dark enough, and no dropdown's text runs under its arrow."""
from __future__ import annotations

import pytest

from tests.app.harness import TRANSITIONS_DONE, open_page, ready, run_panel, screenshot, tab

pytestmark = pytest.mark.browser
WAIT = 60_000
# Resolves once the page has drawn two more frames: the projector's watcher, which scrolls in the frame
# after a change, has done so by then.
NEXT_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
PRESENTING = "document.body.classList.contains('tw-present')"


def font_px(page) -> float:
    """The size of the page's running text (the subtitle under its title)."""
    return page.evaluate("parseFloat(getComputedStyle(document.querySelector('#header p')).fontSize)")


def in_view(page, locator) -> bool:
    """Some of it on screen (a round taller than the screen shows its end)."""
    box = locator.bounding_box()
    return box is not None and box["y"] < page.viewport_size["height"] and box["y"] + box["height"] > 0


def run_three_cities(page):
    # Ready, not only shown: a script's click on a run button the restore has not enabled yet does nothing.
    panel = ready(tab(page, "Function Calling"), WAIT)
    panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
    panel.get_by_role("tab", name="协议时间线").click()
    panel.locator(".tw-question textarea").fill("北京、上海和广州今天天气怎么样？")
    page.evaluate("window.scrollTo(0, 0)")
    panel.locator(".tw-run").evaluate("button => button.click()")   # a click that scrolls nothing itself
    panel.locator(".tw-status").filter(has_text="轮，").first.wait_for(timeout=WAIT)
    page.evaluate(NEXT_FRAMES)
    return panel.locator(".tw-protocol .tw-round").last


def test_a_present_link_and_the_toggle(browser, app_url):
    plain = open_page(browser, app_url)
    shown = open_page(browser, app_url + "?present=1")
    try:
        plain.page.locator("#present-toggle").wait_for(timeout=WAIT)
        normal = font_px(plain.page)
        page = shown.page
        page.wait_for_function("document.body.classList.contains('tw-present')", timeout=WAIT)
        assert page.locator("#present-toggle input").is_checked()
        assert font_px(page) >= normal * 1.2
        assert not page.get_by_text("⚙️ 模型设置").is_visible()

        last = run_three_cities(page)
        assert in_view(page, last) and page.evaluate("window.scrollY") > 0
        # Without projector mode the page stays where the reader left it.
        unmoved = run_three_cities(plain.page)
        assert plain.page.evaluate("window.scrollY") == 0 and not in_view(plain.page, unmoved)

        page.locator("#present-toggle input").uncheck()
        page.wait_for_function("!document.body.classList.contains('tw-present')", timeout=WAIT)
        page.get_by_text("⚙️ 模型设置").wait_for(state="visible", timeout=WAIT)
        assert font_px(page) == pytest.approx(normal, rel=0.01)
        page.locator("#present-toggle input").check()
        page.wait_for_function("document.body.classList.contains('tw-present')", timeout=WAIT)
        assert plain.foreign_requests() == [] and shown.foreign_requests() == []
    finally:
        plain.context.close()
        shown.context.close()


# Every text on screen with its computed size and its contrast against what is drawn behind it
# (WCAG's relative luminance; backgrounds with alpha are blended down to the page's white).
TEXTS_ON_SCREEN = r"""() => {
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
                       const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = rgb => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                       return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]); };
  const behind = el => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let base = [255, 255, 255];
    for (const c of layers.reverse()) base = base.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
    return base; };
  const out = [], seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || seen.has(el)) continue;
    seen.add(el);
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    if (!el.getClientRects().length || !box.width || box.bottom < 0 || box.top > innerHeight
        || style.visibility === 'hidden') continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= parseFloat(getComputedStyle(e).opacity);
    if (opacity === 0) continue;
    const fg = parse(style.color), bg = behind(el), alpha = fg[3] * opacity;
    const drawn = fg.slice(0, 3).map((v, i) => v * alpha + bg[i] * (1 - alpha));
    const [light, dark] = [lum(drawn), lum(bg)].sort((a, b) => b - a);
    out.push({px: parseFloat(style.fontSize), contrast: (light + 0.05) / (dark + 0.05),
              text: n.textContent.trim().slice(0, 40)});
  }
  return out;
}"""
# TEXTS_ON_SCREEN at each scroll position from the top down, a screen (`step` px) at a time, read in one go:
# the page scrolls at once, and nothing it does comes between two positions.
TEXTS_DOWN_THE_PAGE = """(step) => {
  const read = """ + TEXTS_ON_SCREEN + """, out = [], height = document.body.scrollHeight;
  for (let top = 0; top < height; top += step) { window.scrollTo({top, behavior: 'instant'}); out.push(...read()); }
  return out;
}"""
# From the back of a classroom at 1280×720: no text under 18 px, none under WCAG's enhanced contrast (7:1).
SMALLEST_PX, LEAST_CONTRAST = 18, 7
# Each dropdown shown whose text box reaches under its arrow (the arrow is drawn over the box's right end):
# its label, and how far the box's text area runs past the arrow's left edge.
UNDER_THE_ARROW = r"""() => [...document.querySelectorAll('.secondary-wrap')]
  .filter(wrap => wrap.offsetParent && wrap.querySelector(':scope > .icon-wrap') && wrap.querySelector(':scope > input'))
  .map(wrap => { const input = wrap.querySelector(':scope > input'), style = getComputedStyle(input);
    const textRight = input.getBoundingClientRect().right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
    return [input.getAttribute('aria-label'), textRight - wrap.querySelector(':scope > .icon-wrap').getBoundingClientRect().left]; })
  .filter(([, over]) => over > 0.5)"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_projector_mode_at_1280x720_is_large_and_dark_enough(browser, app_url, lang):
    watched = open_page(browser, app_url + ("?present=1&lang=en" if lang == "en" else "?present=1"),
                        width=1280, height=720)
    page = watched.page
    try:
        page.wait_for_function(PRESENTING, timeout=WAIT)
        titles = (["正则 ReAct", "工具注册", "Function Calling", "MCP", "原子工具", "权限与确认"] if lang == "zh"
                  else ["Regex ReAct", "Tool registry", "Function Calling", "MCP", "Atomic tools", "Permissions"])
        texts, under_the_arrow = [], {}
        for title in titles:
            # Each lesson is a page of its own: read once it is ready, in projector mode, and still.
            panel = ready(tab(page, title), WAIT)
            page.wait_for_function(PRESENTING, timeout=WAIT)
            page.wait_for_function(TRANSITIONS_DONE, timeout=WAIT)
            under_the_arrow.update(page.evaluate(UNDER_THE_ARROW))
            if panel.locator(".tw-run").count():    # the timeline, the verdict, a rule's question too
                headline = run_panel(panel, timeout=WAIT)     # whatever the verdict: a failed run says what it was
                assert headline[0] in "✅⚠💬⏸", (title, headline)
                page.wait_for_function(TRANSITIONS_DONE, timeout=WAIT)
            texts += page.evaluate(TEXTS_DOWN_THE_PAGE, 600)
        page.evaluate("window.scrollTo(0, 0)")
        screenshot(page, f"projector-1280x720-{lang}")
        assert len(texts) > 500
        small = {t["text"]: t["px"] for t in texts if t["px"] < SMALLEST_PX}
        faint = {t["text"]: round(t["contrast"], 2) for t in texts if t["contrast"] < LEAST_CONTRAST}
        assert not small and not faint, (small, faint)
        assert under_the_arrow == {}
    finally:
        watched.context.close()
