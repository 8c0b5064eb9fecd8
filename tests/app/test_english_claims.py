"""The lesson claims in English, checked as text. Each claim of the lesson texts is performed once,
in Chinese (test_lesson_claims.py, test_workspace_claims.py); the English page makes the same claims
(react/lesson.en.md and so on) with the same behaviour, and the words a claim test looks for on an English
page, T(zh, en)'s English, must be what the English page says: a label, a value or a lesson text
of the lesson's English page, or an English text the server writes (every tr(zh, en) of the app,
a {placeholder} standing for any value). That the server's texts follow the page's language is
performed elsewhere (test_english_pages_browser.py runs every lesson in English)."""
from __future__ import annotations

import ast
import json
import re
import urllib.request
from pathlib import Path

import pytest

from catalogue import LESSONS
from tests.app.harness import lesson_address

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ("tests/app/test_lesson_claims.py", "tests/app/test_workspace_claims.py", "tests/app/test_first_call_claims.py",
          "tests/app/test_planning_claims.py", "tests/app/test_mini_agent_claims.py")
SERVER_TEXTS = ("app.py", "lessons", "runs", "memory", "access", "i18n", "endpoints", "serving", "catalogue")


def pairs(path: Path, name: str) -> list[tuple[str, str]]:
    """Every name("zh", "en") call of the file with both texts written out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(call.args[0].value, call.args[1].value) for call in ast.walk(tree)
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) == name and len(call.args) == 2
            and all(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in call.args)]


def claims_english() -> list[str]:
    return sorted({en for path in CLAIMS for _, en in pairs(ROOT / path, "T")})


def server_english() -> list[str]:
    files = [ROOT / p for p in SERVER_TEXTS if (ROOT / p).is_file()]
    files += [f for p in SERVER_TEXTS if (ROOT / p).is_dir() for f in (ROOT / p).rglob("*.py")]
    return [en for f in files for _, en in pairs(f, "tr")]


def page_english(app_url: str) -> list[str]:
    """Every text of every lesson's English page as its config carries it."""
    texts = []
    for lesson in LESSONS.values():
        request = urllib.request.Request(lesson_address(app_url, lesson.id, "lang=en"))
        with urllib.request.urlopen(request, timeout=60) as response:
            html = response.read().decode("utf-8")
        config = json.loads(re.search(r"window\.gradio_config = (.*?);</script>", html, re.S).group(1))
        for entry in config["components"]:
            props = entry.get("props") or {}
            texts += [v for k in ("label", "value", "info", "placeholder") if isinstance(v := props.get(k), str)]
            texts += [c[0] for c in props.get("choices") or [] if isinstance(c, list) and isinstance(c[0], str)]
    return texts


def as_pattern(text: str) -> re.Pattern:
    """A server text with its {placeholders} standing for any value."""
    return re.compile(".*?".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", text)), re.S)


@pytest.fixture(scope="module")
def english(app_url) -> tuple[str, list[re.Pattern]]:
    texts = page_english(app_url) + server_english()
    return "\n".join(texts), [as_pattern(t) for t in texts if "{" in t]


@pytest.mark.parametrize("text", claims_english())
def test_the_english_a_claim_looks_for_is_what_the_english_page_says(english, text):
    plain, patterns = english
    assert text in plain or any(p.search(text) for p in patterns), text


def quoted_labels() -> list[tuple[str, str]]:
    """(lesson text, «label») of every English lesson text: the controls and results it names."""
    return sorted({(lesson.id, label) for lesson in LESSONS.values()
                   for label in re.findall(r"«([^«»]+)»", (ROOT / lesson.texts.en).read_text(encoding="utf-8"))})


@pytest.mark.parametrize("lesson_text, label", quoted_labels())
def test_what_an_english_lesson_text_names_is_on_the_english_page(english, lesson_text, label):
    """A lesson performed in Chinese (its claims test) names the same controls in English: each «label»
    of its English text is a label, a value or a server text of the English pages (or part of one)."""
    plain, patterns = english
    assert label in plain or any(p.search(label) for p in patterns), (lesson_text, label)
