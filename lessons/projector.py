"""投影模式 for an instructor in front of a class: larger type and code, the model settings and
Gradio's footer folded away, and the newest round of a running timeline kept in view.

It is the browser's business only: the toggle (or `?present=1` in the address) sets a class on
the page and nothing goes to the server. A link copied with 复制本页链接 does not carry it: it is
how one screen shows the page, not part of the scenario a student opens."""
from __future__ import annotations

import gradio as gr

from i18n import tr

from serving.page_events import SILENT

# Sized for a 1280×720 projector seen from the back of a room: Gradio's theme sets every text size
# in px on :root (14 px body, 12 px labels), so a percentage on the page scales nothing; the theme's
# variables are set again here, and its faint greys (labels, hints, line numbers: 2-5:1 against white)
# become dark greys of at least 7:1. Dark mode keeps its own colours (its rule on .dark is more specific;
# the colours set here directly follow the theme's text colour, or have their own dark values).
CSS = """
body.tw-present {
  --text-xxs: 18px; --text-xs: 18px; --text-sm: 19px; --text-md: 21px; --text-lg: 23px; --text-xl: 28px; --text-xxl: 32px;
  --body-text-size: 21px; --input-text-size: 21px; --block-title-text-size: 21px; --checkbox-label-text-size: 21px;
  --section-header-text-size: 21px; --block-label-text-size: 19px; --block-info-text-size: 19px;
  --button-small-text-size: 19px; --button-medium-text-size: 21px; --button-large-text-size: 23px;
  --body-text-color: #18181b; --body-text-color-subdued: #3f3f46; --block-label-text-color: #27272a;
  --block-title-text-color: #27272a; --block-info-text-color: #3f3f46; --input-placeholder-color: #52525b;
  --button-primary-background-fill: #4338ca; --button-primary-background-fill-hover: #3730a3;
  --button-cancel-background-fill: #991b1b; --button-cancel-background-fill-hover: #7f1d1d;
}
body.tw-present .gradio-container { max-width: 100% !important; }
body.tw-present .tw-protocol, body.tw-present .tw-costs { font-size: var(--text-md); }
body.tw-present .tw-protocol *, body.tw-present .tw-costs *, body.tw-present .tw-diff,
body.tw-present .tw-ws-tree label { font-size: max(1em, 19px) !important; }
body.tw-present .cm-editor .cm-content, body.tw-present .cm-editor .cm-gutters { font-size: 19px; }
body.tw-present .cm-editor .cm-gutters { color: var(--body-text-color-subdued); }
/* Syntax colours are pastel (2-4:1 against white): on a projector the code is the text's own colour. */
body.tw-present .cm-editor .cm-content, body.tw-present .cm-editor .cm-content * { color: var(--body-text-color) !important; }
body.tw-present button[role=tab].selected { color: var(--body-text-color); }
body.tw-present { --tw-ok: #166534; --tw-bad: #991b1b; }
body.tw-present.dark, body.tw-present .dark { --tw-ok: #4ade80; --tw-bad: #fca5a5; }
body.tw-present .tw-ok { color: var(--tw-ok) !important; }
body.tw-present .tw-bad, body.tw-present .tw-error { color: var(--tw-bad) !important; }
body.tw-present #settings-panel, body.tw-present footer { display: none !important; }
/* !important below: Gradio repeats every rule of the page's CSS under `.gradio-container.gradio-container-<version>
   .contain`, and that copy of a component's own rule outranks a rule that starts at body.tw-present.
   The lesson list's row of exercise marks and the code boxes' buttons were 0.8-0.85em of the running text. */
body.tw-present #lesson-nav .tw-exercise-marks { font-size: max(0.85em, var(--text-xs)) !important; color: var(--tw-accent) !important; }
body.tw-present .tw-codebox-bar button, body.tw-present .tw-codebox-said { font-size: var(--text-xs) !important; }
/* The code boxes' Pygments colours (friendly, github-dark) are 3-5:1 on their grey: on a projector five
   groups keep a hue, each at least 7:1 on the code box's background (zinc-100 light, zinc-800 dark), and
   every other token is the text's colour. */
body.tw-present { --tw-accent: #4338ca; --tw-code-text: #18181b; --tw-code-keyword: #1e40af;
  --tw-code-string: #14532d; --tw-code-comment: #3f3f46; --tw-code-number: #7c2d12; --tw-code-name: #6b21a8; }
body.tw-present.dark, body.tw-present .dark { --tw-accent: #a5b4fc; --tw-code-text: #f4f4f5; --tw-code-keyword: #93c5fd;
  --tw-code-string: #86efac; --tw-code-comment: #d4d4d8; --tw-code-number: #fdba74; --tw-code-name: #d8b4fe; }
body.tw-present .tw-codebox-code [class*="tw-hl-"] { color: var(--tw-code-text) !important; background: transparent !important; }
body.tw-present .tw-codebox-code [class^="tw-hl-k"], body.tw-present .tw-codebox-code .tw-hl-ow,
body.tw-present .tw-codebox-code .tw-hl-nb, body.tw-present .tw-codebox-code .tw-hl-bp { color: var(--tw-code-keyword) !important; }
body.tw-present .tw-codebox-code [class^="tw-hl-s"] { color: var(--tw-code-string) !important; }
body.tw-present .tw-codebox-code [class^="tw-hl-c"] { color: var(--tw-code-comment) !important; }
body.tw-present .tw-codebox-code [class^="tw-hl-m"], body.tw-present .tw-codebox-code .tw-hl-il { color: var(--tw-code-number) !important; }
body.tw-present .tw-codebox-code .tw-hl-nf, body.tw-present .tw-codebox-code .tw-hl-fm,
body.tw-present .tw-codebox-code .tw-hl-nc, body.tw-present .tw-codebox-code .tw-hl-nd { color: var(--tw-code-name) !important; }
"""
# On load: the address decides; a watcher keeps the last round of the visible timeline in view
# while the page is in projector mode (a round added or redrawn scrolls into view, once per frame).
ON_LOAD = """() => {
  if (!window.twProjector) {
    let queued = false, seen = '';
    const follow = () => {
      queued = false;
      if (!document.body.classList.contains('tw-present')) return;
      const rounds = [...document.querySelectorAll('.tw-protocol .tw-round')].filter(r => r.offsetParent !== null);
      if (!rounds.length) return;
      const last = rounds[rounds.length - 1];
      const key = rounds.length + ':' + last.textContent.length;
      if (key === seen) return;          // nothing new: leave the scroll to the reader
      seen = key;
      last.scrollIntoView({block: 'end', behavior: 'instant'});
    };
    window.twProjector = new MutationObserver(() => {
      if (!queued) { queued = true; requestAnimationFrame(follow); }
    });
    window.twProjector.observe(document.body, {childList: true, subtree: true, characterData: true});
  }
  return new URLSearchParams(location.search).get('present') === '1';
}"""
TOGGLE = "(on) => { document.body.classList.toggle('tw-present', !!on); return on; }"


class Projector:
    """The 投影模式 checkbox (built where it stands on the page) and its two browser-only events."""

    def __init__(self):
        self.toggle = gr.Checkbox(value=False, label=tr("📽️ 投影模式（字更大，收起模型设置，时间线跟着最新一轮）",
                                     "📽️ Projector mode (larger type, model settings folded, the timeline follows the "
                                     "newest round)"),
                                  elem_id="present-toggle", container=False)

    def wire(self, demo: gr.Blocks) -> None:
        self.toggle.change(None, [self.toggle], [self.toggle], js=TOGGLE, **SILENT)
        demo.load(None, None, [self.toggle], js=ON_LOAD, **SILENT)
