"""Which language the page speaks (Chinese or English), decided in one place, and the texts in both.

The choice, in this order:
  1. the link's `lang=en` or `lang=zh` (a teacher's link wins over the browser);
  2. the browser's first language (Accept-Language, which browsers send from the same list as
     navigator.language): English when it is English;
  3. Chinese otherwise: the course is Chinese.

The server decides, never the page's script: every event of a browser tab carries the page's
query and the browser's Accept-Language, so `current()` is right in any handler, at any depth
(a verdict, a timeline title, a link's note), without each handler passing a language along.
Where the request of the event being handled is kept is Gradio's business, so the layer that
patches Gradio says it (serving/gradio_patches.py calls `read_requests_with` when imported);
until then there is no request, and the page is Chinese.
Outside an event (building the page, a test calling a function directly) it is Chinese;
`using(lang)` sets it explicitly.

A text is written once, both languages side by side: `tr("▶ 运行", "▶ Run")`. It returns the
text of the current language as a `Text` (a str that also knows both), so the labels given when
the page is built carry their English along and serving/page_language.py can put it on screen for an English tab.
Longer texts (the lessons) are files side by side: react/lesson.md and react/lesson.en.md.

Why not Gradio's own i18n (gr.I18n with launch(i18n=...)): Gradio 6.31's frontend picks its
locale from navigator.language alone (no query parameter can force one), and a browser whose
language it does not find in the table gets English; this page must be Chinese for a French
browser and Chinese for `lang=zh` in an English one. The server's texts must follow the same
choice, and the server cannot see what the frontend picked. So the choice made here goes the
other way: the page's config carries it (`page_lang`), and Gradio's own words (its footer, the
upload box, a toast's heading) follow it (serving/frontend_fixes.py).
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

LANGUAGES = ("zh", "en")
DEFAULT = "zh"
PARAM = "lang"

_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("page_language", default=None)


def _no_request() -> Any:
    return None


_current_request: Callable[[], Any] = _no_request


def read_requests_with(reader: Callable[[], Any]) -> None:
    """`reader()` gives the request of the event being handled (None outside one)."""
    global _current_request
    _current_request = reader


def first_language(accept_language: str | None) -> str:
    """The browser's most wanted language tag, lower case ("" when it names none)."""
    best, best_q = "", -1.0
    for index, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        # Equal weights keep the browser's order: the first one listed wins.
        if tag and tag != "*" and q > best_q:
            best, best_q = tag.lower(), q
    return best


def choose(link_value: str | None, accept_language: str | None) -> str:
    """"en" or "zh": the link's lang= when it names one of LANGUAGES, else English for an
    English browser, else Chinese."""
    wanted = (link_value or "").strip().lower()
    if wanted in LANGUAGES:
        return wanted
    tag = first_language(accept_language)
    return "en" if tag == "en" or tag.startswith("en-") else DEFAULT


def of_request(request: Any) -> str:
    """The language of the tab that sent `request` (a gr.Request, or None)."""
    if request is None:
        return DEFAULT
    try:
        link = request.query_params.get(PARAM)
        accept = request.headers.get("accept-language")
    except (AttributeError, TypeError):
        return DEFAULT
    return choose(link, accept)


def link_language() -> str | None:
    """The lang= of the tab's link when it names one of LANGUAGES (a copied link keeps it)."""
    request = _current_request()
    try:
        wanted = (request.query_params.get(PARAM) or "").strip().lower() if request is not None else ""
    except (AttributeError, TypeError):
        return None
    return wanted if wanted in LANGUAGES else None


def current() -> str:
    chosen = _chosen.get()
    if chosen is not None:
        return chosen
    return of_request(_current_request())


def english() -> bool:
    return current() == "en"


@contextlib.contextmanager
def using(lang: str) -> Iterator[None]:
    """Texts in `lang` inside the block (tests, and work done for a tab outside its event)."""
    token = _chosen.set(lang if lang in LANGUAGES else DEFAULT)
    try:
        yield
    finally:
        _chosen.reset(token)


class Text(str):
    """A text in the language it was asked in, which also carries both versions."""
    zh: str
    en: str
    lang: str

    def __new__(cls, zh: str, en: str, lang: str):
        text = super().__new__(cls, en if lang == "en" else zh)
        text.zh, text.en, text.lang = zh, en, lang
        return text

    # Formatting and joining keep both versions, so a label built from parts still has its English.
    def format(self, *args: Any, **kwargs: Any) -> "Text":
        """Each version filled with the same version of the values that are texts themselves."""
        zh = self.zh.format(*map(_zh, args), **{key: _zh(value) for key, value in kwargs.items()})
        en = self.en.format(*map(_en, args), **{key: _en(value) for key, value in kwargs.items()})
        return Text(zh, en, self.lang)

    def __add__(self, other: Any) -> "Text":
        if not isinstance(other, str):
            return NotImplemented
        return Text(self.zh + _zh(other), self.en + _en(other), self.lang)

    def __radd__(self, other: Any) -> "Text":
        if not isinstance(other, str):
            return NotImplemented
        return Text(_zh(other) + self.zh, _en(other) + self.en, self.lang)

    def __reduce__(self):   # copied or pickled (Gradio deep-copies what components were built with)
        return (Text, (self.zh, self.en, self.lang))


def _zh(text: str) -> str:
    return text.zh if isinstance(text, Text) else text


def _en(text: str) -> str:
    return text.en if isinstance(text, Text) else text


def tr(zh: str, en: str) -> Text:
    """The text in the current language; both are kept (see Text)."""
    return Text(zh, en, current())


def pick(zh: Any, en: Any) -> Any:
    """One of two values (a list of labels, a template) for the current language."""
    return en if english() else zh


def now(value: Any) -> Any:
    """A text kept since the page was built (a module's constant made with tr), in the current
    language; lists, tuples and dicts of them too (choices, tables). Anything else as it is."""
    if isinstance(value, Text):
        return Text(value.zh, value.en, current())
    if isinstance(value, list):
        return [now(item) for item in value]
    if isinstance(value, tuple):
        return tuple(now(item) for item in value)
    if isinstance(value, dict):
        return {key: now(item) for key, item in value.items()}
    return value


def found_in(words: Text, text: str) -> bool:
    """Whether `text` contains `words` in either language (a note written before a language changed)."""
    return words.zh in text or words.en in text
