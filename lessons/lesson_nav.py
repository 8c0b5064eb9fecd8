"""The course's lessons in order, on every lesson's page: each a link to its page, the current
one marked. Each lesson is its own page (app.py), so moving on is a page load; the link keeps
what belongs to the browser tab rather than to a lesson: the page's language (lang=) and
projector mode (present=1)."""
from __future__ import annotations

import html
from urllib.parse import urlencode

import gradio as gr

import i18n
from i18n import tr

from catalogue import LESSONS, Lesson
from memory import exercise_progress
from memory.browser_memory import UNSAVED
from serving import gradio_patches
from serving.page_events import SILENT

# Gradio draws its own bar of pages (a lone "Home") for an app with several: the lesson list stands for it.
CSS = """
.gradio-container > .nav-holder { display: none !important; }
#lesson-nav nav { display: flex; flex-wrap: wrap; gap: 4px; border-bottom: 1px solid var(--border-color-primary);
  margin-bottom: 6px; }
#lesson-nav a { padding: 6px 12px; text-decoration: none; color: var(--body-text-color-subdued);
  border-bottom: 2px solid transparent; white-space: nowrap; }
#lesson-nav a[aria-busy=true] { cursor: progress; }
#lesson-nav a:hover { color: var(--body-text-color); }
#lesson-nav a[aria-current=page] { color: var(--body-text-color); border-bottom-color: var(--color-accent);
  font-weight: 600; }
#lesson-nav .tw-section { font-variant-numeric: tabular-nums; opacity: 0.8; }
#lesson-nav .tw-exercise-marks { color: var(--color-accent); letter-spacing: 1px; font-size: 0.85em; }
@media (max-width: 640px) { #lesson-nav a { padding: 4px 6px; font-size: 0.88em; } }
"""
# A click follows the link with the tab's language and projector mode (the page is drawn by then,
# and the mode may have been switched on after it loaded), once the browser has stored what was just
# changed here (browser_memory.UNSAVED), or after SAVE_WAIT_MS if a store never comes.
SAVE_WAIT_MS = 5000
FOLLOW_JS = """() => {
  const nav = document.querySelector("#lesson-nav nav");
  if (!nav || nav.dataset.wired) return;
  nav.dataset.wired = "1";
  nav.addEventListener("click", (event) => {
    const link = event.target.closest("a[href]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const here = new URLSearchParams(location.search), url = new URL(link.getAttribute("href"), location.href);
    if (here.get("lang")) url.searchParams.set("lang", here.get("lang"));
    if (document.body.classList.contains("tw-present")) url.searchParams.set("present", "1");
    event.preventDefault();
    link.setAttribute("aria-busy", "true");
    const clicked = Date.now();
    const follow = () => {
      const unsaved = Object.keys(%s || {}).length;
      if (unsaved && Date.now() - clicked < %d) setTimeout(follow, 50); else location.href = url.href;
    };
    follow();
  });
}""" % (UNSAVED, SAVE_WAIT_MS)


def kept_query(request) -> str:
    """The part of a page's address that the next lesson keeps: "?lang=en&present=1", or ""."""
    params = getattr(request, "query_params", None) or {}
    kept = {}
    if (params.get(i18n.PARAM) or "").strip().lower() in i18n.LANGUAGES:
        kept[i18n.PARAM] = params.get(i18n.PARAM).strip().lower()
    if params.get("present") == "1":
        kept["present"] = "1"
    return "?" + urlencode(kept) if kept else ""


def _html(current: Lesson, english: bool, query: str = "") -> str:
    items = []
    for lesson in LESSONS.values():
        section = lesson.section or tr("课外", "extra")
        title = lesson.title.en if english else str(lesson.title)
        section = section.en if english and hasattr(section, "en") else str(section)
        mark = ' aria-current="page"' if lesson is current else ""
        # Which exercises it has: the browser draws a ✓ for each one solved (memory/exercise_progress.py).
        exercises = ",".join(exercise.id for exercise in lesson.exercises)
        mark += f' data-exercises="{html.escape(exercises)}"' if exercises else ""
        items.append(f'<a href="./{html.escape(lesson.path + query)}" data-lesson="{lesson.id}"{mark}>'
                     f'<span class="tw-section">{html.escape(section)}</span> {html.escape(title)}</a>')
    label = "Lessons" if english else "课程"
    return f'<nav aria-label="{label}">' + "".join(items) + "</nav>"


class LessonNav:
    def __init__(self, current: Lesson):
        self.current = current
        self.html = gr.HTML(_html(current, False), elem_id="lesson-nav", padding=False)

    def wire(self, demo: gr.Blocks) -> None:
        # Written for each request: the page's language, and links that keep it from the first frame.
        gradio_patches.set_page_values(demo, lambda request: {self.html: _html(
            self.current, i18n.of_request(request) == "en", kept_query(request))})
        demo.load(None, None, None, js=FOLLOW_JS, **SILENT)
        demo.load(None, None, None, js=exercise_progress.MARK_JS, **SILENT)
