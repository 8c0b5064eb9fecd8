"""Read-only code on a page (a generated schema, a system prompt, an event stream, the SDK code that
repeats a request, a file of the workspace): highlighted on the server and drawn as plain HTML, with a
copy button and, where a file is useful, a download button, both working in the browser alone.

Why not gr.Code with interactive=False: each one is a CodeMirror editor the browser builds and keeps
measuring, and a lesson page has several; an HTML box is drawn once. What the student edits (tools,
hooks, skills, rules, cases, a conversation, arguments) stays in gr.Code.

A CodeBox's value is the code as plain text: handlers return text, `postprocess` renders it. What it
shows comes from students, models and tools: every character is escaped (Pygments escapes the text
of each token; the fallback escapes all of it), nothing of the value becomes markup.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

import gradio as gr
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer, MarkdownLexer, PythonLexer

from i18n import tr
from lessons.html_bits import esc

LEXERS = {"json": JsonLexer, "python": PythonLexer, "markdown": MarkdownLexer}
# Above this many characters the code is escaped but not highlighted: highlighting a very long event
# stream would keep the server busy for what nobody reads token by token.
HIGHLIGHT_LIMIT = 200_000
LINE_EM = 1.45      # the height of one line of code, in em (see CSS)

_FORMATTER = HtmlFormatter(nowrap=True, classprefix="tw-hl-")
_WHITESPACE = re.compile(r'<span class="tw-hl-w">(\s*)</span>')

# The buttons' words. The page is built in Chinese and an English tab is given the English of each
# first value (serving/page_language.py), so a box is drawn in both languages, the current one shown.
WORDS = {"zh": {"copy": "复制", "copied": "已复制 ✓", "failed": "复制失败：请选中文字后按 Ctrl+C", "download": "下载"},
         "en": {"copy": "Copy", "copied": "Copied ✓", "failed": "Copy failed: select the text and press Ctrl+C",
                "download": "Download"}}


def highlighted(text: str, language: str | None) -> str:
    """`text` as HTML: every character escaped, the tokens of `language` in spans of a class."""
    lexer = LEXERS.get(language or "")
    if lexer is None or len(text) > HIGHLIGHT_LIMIT:
        return esc(text)
    # Whitespace is drawn the same in any class: its spans would only make the page heavier.
    shown = _WHITESPACE.sub(r"\1", highlight(text, lexer(stripnl=False, ensurenl=False), _FORMATTER))
    # The lexers end the last line with a newline the text may not have: copied, the code is the text.
    return shown[:-1] if shown.endswith("\n") and not text.endswith("\n") else shown


def _box(body: str, words: dict, filename: str | None, size: str, classes: str) -> str:
    download = (f'<button type="button" class="tw-codebox-download" data-filename="{esc(filename)}">'
                f'{words["download"]}</button>' if filename else "")
    return (f'<div class="tw-codebox{classes}"><div class="tw-codebox-bar">'
            f'<span class="tw-codebox-said" aria-live="polite"></span>'
            f'<button type="button" class="tw-codebox-copy" data-copied="{words["copied"]}" '
            f'data-failed="{words["failed"]}">{words["copy"]}</button>{download}</div>'
            f'<pre class="tw-codebox-code" tabindex="0" style="{size}"><code>{body}</code></pre></div>')


def render(text: Any, language: str | None = None, filename: str | None = None,
           lines: int = 1, max_lines: int = 30, classes: Iterable[str] = ()) -> str:
    """The HTML of a box showing `text` (escaped, highlighted for `language`), with its buttons;
    `classes` are given to the box's own element."""
    body = highlighted("" if text is None else str(text), language)
    size = f"min-height: {lines * LINE_EM:.2f}em; max-height: {max_lines * LINE_EM:.2f}em;"
    named = "".join(f" {esc(name)}" for name in classes)
    return tr(*(_box(body, WORDS[lang], filename, size, named) for lang in ("zh", "en")))


# Runs once when the box is first drawn (gr.HTML's js_on_load); one listener on the box's own element
# serves every value it shows later. The text copied or downloaded is the <pre>'s text: the code itself.
BUTTONS_JS = """
const say = (box, words) => {
  const said = box.querySelector('.tw-codebox-said');
  if (!said) return;
  said.textContent = words;
  clearTimeout(said.timer);
  said.timer = setTimeout(() => { said.textContent = ''; }, 2000);
};
const copyByHand = text => {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const done = document.execCommand('copy');
  area.remove();
  return done;
};
element.addEventListener('click', async event => {
  const button = event.target.closest('.tw-codebox-copy, .tw-codebox-download');
  const box = button && button.closest('.tw-codebox');
  if (!box || !element.contains(box)) return;
  const text = box.querySelector('.tw-codebox-code').textContent;
  if (button.classList.contains('tw-codebox-download')) {
    const url = URL.createObjectURL(new Blob([text], {type: 'text/plain;charset=utf-8'}));
    const link = document.createElement('a');
    link.href = url;
    link.download = button.dataset.filename;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return;
  }
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch (error) {
    copied = copyByHand(text);   // no clipboard API on a page served over plain http from another host
  }
  say(box, copied ? button.dataset.copied : button.dataset.failed);
});
"""

CSS = f"""
/* The box's label in the flow above it (not floating over its first line), so a long one wraps
   above the buttons instead of covering them. */
.block:has(.tw-codebox) > label[data-testid="block-label"] {{
  position: static; border: 0; box-shadow: none; background: transparent; padding: 2px 4px 4px; }}
.tw-codebox {{ position: relative; border: 1px solid var(--border-color-primary); border-radius: var(--radius-sm);
  background: var(--code-background-fill, var(--background-fill-secondary)); }}
.tw-codebox-bar {{ display: flex; gap: 6px; justify-content: flex-end; align-items: center; padding: 4px 6px 0; }}
.tw-codebox-bar button {{ font-size: 0.8em; padding: 1px 8px; border: 1px solid var(--border-color-primary);
  border-radius: var(--radius-sm); background: var(--background-fill-primary); cursor: pointer; }}
.tw-codebox-bar button:focus-visible, .tw-codebox-code:focus-visible {{ outline: 2px solid var(--color-accent); }}
.tw-codebox-said {{ font-size: 0.8em; color: var(--body-text-color-subdued); margin-right: auto; }}
.tw-codebox-code {{ margin: 0; padding: 4px 10px 8px; overflow: auto; font-family: var(--font-mono);
  font-size: var(--text-sm); line-height: {LINE_EM}; white-space: pre; background: transparent; border: 0; }}
.tw-codebox-code code {{ background: transparent; padding: 0; font-size: inherit; white-space: inherit; }}
{HtmlFormatter(style="friendly", classprefix="tw-hl-").get_style_defs(".tw-codebox-code")}
{HtmlFormatter(style="github-dark", classprefix="tw-hl-").get_style_defs(".dark .tw-codebox-code")}
.tw-codebox-code, .dark .tw-codebox-code {{ background: transparent; }}
"""


class CodeBox(gr.HTML):
    """A read-only code box: a gr.HTML whose value is the code as text (see the module's docstring).
    `postprocess`, which Gradio calls on every value given to it (the first one, a handler's, an
    update's), draws the text. A class, not a configured gr.HTML: a box Gradio makes again for a tab
    whose props an event changed (a new label) is made from this class and draws the same way.
    `elem_classes` go to the box's own element (drawn with the code), not to gr.HTML: Gradio would put
    them on its block and again on the HTML inside it, two elements for one box."""

    def __init__(self, value: Any = "", *, language: str | None = None, filename: str | None = None,
                 lines: int = 1, max_lines: int = 30, label: str | None = None,
                 elem_classes: list[str] | str | None = None, **kwargs: Any):
        self.language, self.filename, self.lines, self.max_lines = language, filename, lines, max_lines
        self.box_classes = [elem_classes] if isinstance(elem_classes, str) else list(elem_classes or [])
        kwargs.setdefault("show_label", label is not None)
        kwargs.setdefault("container", label is not None)
        kwargs["js_on_load"] = BUTTONS_JS
        super().__init__(value, label=label, **kwargs)

    def postprocess(self, value: Any) -> str:
        return render(value, self.language, self.filename, self.lines, self.max_lines, self.box_classes)
