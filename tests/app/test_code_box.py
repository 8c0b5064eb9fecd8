"""lessons/code_box.py draws read-only code as HTML: every character of the value escaped, the code
given back exactly by the <pre>'s text, the buttons in both languages."""
import html
import re

import i18n
from lessons.code_box import HIGHLIGHT_LIMIT, CodeBox, render

HOSTILE = '{"city": "<script>alert(1)</script>", "note": "<img src=x onerror=alert(2)>", "t": "${x} {{value}} &amp;"}'


def shown_text(drawn: str) -> str:
    """What the browser's textContent of the <pre> is: the tags dropped, the entities read back."""
    code = re.search(r"<pre[^>]*><code>(.*)</code></pre>", drawn, re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", code))


def test_a_hostile_value_is_escaped_in_every_language():
    for language in ("json", "python", "markdown", None):
        drawn = render(HOSTILE, language, "tools.json")
        for version in (drawn.zh, drawn.en):
            assert "<script" not in version and "<img" not in version and "onerror=alert" not in version.split("<code>")[0]
            assert "&lt;script&gt;" in version and "&lt;img src=x onerror=alert(2)&gt;" in version
            # Only the box's own tags: a span per token, nothing from the value.
            tags = set(re.findall(r"<(\w+)", version))
            assert tags <= {"div", "span", "button", "pre", "code"}, tags
            assert shown_text(version) == HOSTILE


def test_the_text_comes_back_exactly_with_or_without_a_last_newline():
    for text in ("a = 1", "a = 1\n", "", "x\n\n  y  \n", "第一行\n第二行"):
        for language in ("json", "python", "markdown", None):
            assert shown_text(render(text, language)) == text


def test_a_very_long_text_is_escaped_without_highlighting():
    text = '"<b>"' * (HIGHLIGHT_LIMIT // 4)
    drawn = render(text, "json")
    assert "tw-hl-" not in drawn and "<b>" not in drawn and shown_text(drawn) == text


def test_the_buttons_are_in_both_languages_and_the_download_only_when_named():
    drawn = render("{}", "json", "tools.json")
    assert ">复制</button>" in drawn.zh and ">下载</button>" in drawn.zh and 'data-filename="tools.json"' in drawn.zh
    assert ">Copy</button>" in drawn.en and ">Download</button>" in drawn.en
    assert "tw-codebox-download" not in render("{}", "json")
    with i18n.using("en"):
        assert str(render("{}", "json")).count(">Copy</button>") == 1


def test_a_box_draws_what_a_handler_returns_and_its_first_value():
    box = CodeBox('{"a": "<i>"}', language="json", filename="a.json", label="schema", elem_classes=["tw-a"])
    assert box.value.startswith('<div class="tw-codebox tw-a">') and not box.elem_classes   # one element has the class
    assert isinstance(box.value, i18n.Text) and "&lt;i&gt;" in box.value and "<i>" not in box.value
    assert shown_text(box.postprocess("<script>x</script>")) == "<script>x</script>"
    assert shown_text(box.postprocess(None)) == ""
