"""投影模式 for an instructor in front of a class: larger type and code, the model settings and
Gradio's footer folded away, and the newest round of a running timeline kept in view.

It is the browser's business only: the toggle (or `?present=1` in the address) sets a class on
the page and nothing goes to the server. A link copied with 复制本页链接 does not carry it: it is
how one screen shows the page, not part of the scenario a student opens."""
from __future__ import annotations

import gradio as gr

from i18n import tr

from serving.page_events import PRIVATE

CSS = """
body.tw-present .gradio-container { font-size: 125%; max-width: 100% !important; }
body.tw-present .gradio-container .prose, body.tw-present .tw-protocol { font-size: 1.15em; }
body.tw-present .cm-editor .cm-content, body.tw-present .cm-editor .cm-gutters { font-size: 1.25em; }
body.tw-present #settings-panel, body.tw-present footer { display: none !important; }
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
        self.toggle.change(None, [self.toggle], [self.toggle], js=TOGGLE, api_visibility=PRIVATE, queue=False,
                           show_progress="hidden")
        demo.load(None, None, [self.toggle], js=ON_LOAD, api_visibility=PRIVATE, queue=False, show_progress="hidden")
