"""Markdown whose text is ours and known when the page is built (a lesson's text, the page's header),
drawn once on the server as HTML and shown in a gr.HTML box.

Why not gr.Markdown: each one is rendered again in the browser (Gradio's Markdown chunk, marked and a
sanitizer), on the main thread, before the page can be used; a page whose text never changes has no
need of that. The HTML is written with markdown-it-py (Gradio already depends on it), in CommonMark
with tables, raw HTML off: a `<` in the text is shown as a `<`, never taken as markup, and links other
than http(s), mailto and relative ones are not made links (markdown-it's own check).

Both languages are drawn when the page is built and kept as a Text (i18n), so an English tab is given
the English HTML (serving/page_language.py) like any other first value.

The page still loads Gradio's Markdown renderer while any gr.Markdown is on it (the run status, the
schema status and the exercise notes are set by events); a box whose text an event sets can become a
Prose as well: its handlers keep returning Markdown, `postprocess` draws it.
"""
from __future__ import annotations

from typing import Any

import gradio as gr
from markdown_it import MarkdownIt

from i18n import Text, tr

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def markdown_html(text: str) -> str:
    """`text` (Markdown) as HTML, in the classes Gradio's own Markdown is styled by (`prose`, `md`)."""
    return f'<div class="prose md tw-prose">{_MARKDOWN.render(text)}</div>'


def prose(text: str) -> Text:
    """A page's Markdown as HTML in both languages (a plain str is the same in both)."""
    zh, en = (text.zh, text.en) if isinstance(text, Text) else (text, text)
    return tr(markdown_html(zh), markdown_html(en))


class Prose(gr.HTML):
    """A gr.HTML whose value is Markdown: `postprocess`, which Gradio calls on every value given to it
    (the first one, a handler's, an update's), draws it. A class, not a configured gr.HTML, so a box
    Gradio makes again for a tab (page_language) draws the same way."""

    def __init__(self, value: Any = "", **kwargs: Any):
        kwargs.setdefault("padding", False)     # gr.Markdown has none: the text sits where it did
        super().__init__(value, **kwargs)

    def postprocess(self, value: Any) -> Text:
        return prose("" if value is None else value)
