"""The page's language (i18n/): decided once from the link's lang= and the browser's
Accept-Language, texts written once in both languages, the English labels an English tab's
page carries, and the server's own texts (verdicts, link notes) in the language of the tab. Also the
link values of the Function Calling checkboxes and the permission rules (lessons/deep_links.py)."""
from __future__ import annotations

import copy
import json
import pickle
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

import pytest

from catalogue import LESSONS

import i18n
from i18n import Text, choose, first_language, now, tr, using
from lessons import deep_links
from runs import headline


@pytest.mark.parametrize("link, accept, lang", [
    ("en", "zh-CN,zh;q=0.9", "en"),                 # the link wins over the browser
    ("zh", "en-US,en;q=0.9", "zh"),
    ("EN", None, "en"),
    (None, "en-US,en;q=0.9", "en"),
    (None, "en", "en"),
    (None, "en-GB", "en"),
    (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh"),
    (None, "fr-FR,fr;q=0.9,en;q=0.8", "zh"),      # the browser's first language is French: Chinese
    (None, "fr;q=0.5,en;q=0.9", "en"),             # weights, not order, say what comes first
    (None, "", "zh"), (None, None, "zh"),
    ("de", "de-DE", "zh"),                          # an unknown lang= is no choice
    (None, "english", "zh"), (None, "*", "zh"),
])
def test_one_place_chooses_the_language(link, accept, lang):
    assert choose(link, accept) == lang


def test_the_first_language_of_a_header():
    assert first_language("da, en-gb;q=0.8, en;q=0.7") == "da"
    assert first_language("en;q=bad, zh") == "zh"


def test_a_request_is_read_for_its_link_and_header():
    request = SimpleNamespace(query_params={"lang": "en"}, headers={"accept-language": "zh-CN"})
    assert i18n.of_request(request) == "en"
    assert i18n.of_request(SimpleNamespace(query_params={}, headers={"accept-language": "en-US"})) == "en"
    assert i18n.of_request(None) == "zh" and i18n.of_request(object()) == "zh"


def test_outside_an_event_the_page_is_chinese_and_using_sets_it():
    assert i18n.current() == "zh" and tr("运行", "Run") == "运行"
    with using("en"):
        assert tr("运行", "Run") == "Run" and i18n.english()
        with using("xx"):
            assert i18n.current() == "zh"
    assert tr("运行", "Run") == "运行"


def test_a_text_keeps_both_languages_through_formatting_joining_and_copies():
    text = "<b>" + tr("第 {n} 轮", "Round {n}").format(n=2) + "</b>"
    assert isinstance(text, Text) and text == "<b>第 2 轮</b>" and text.en == "<b>Round 2</b>"
    assert copy.deepcopy(text).en == "<b>Round 2</b>" and pickle.loads(pickle.dumps(text)).en == "<b>Round 2</b>"
    with using("en"):
        assert now(text) == "<b>Round 2</b>" and now([(text, "v")]) == [("<b>Round 2</b>", "v")]
    assert now("plain") == "plain"


def test_the_verdict_follows_the_language():
    events = [{"type": "request", "turn": 1, "tools": [{}]}, {"type": "response", "turn": 1},
              {"type": "tool_call", "turn": 1, "name": "f"}, {"type": "tool_result", "turn": 1, "ok": True},
              {"type": "response", "turn": 2}, {"type": "final", "content": "晴"}]
    assert headline.verdict(events)["title"] == "2 轮，1 次工具调用"
    with using("en"):
        found = headline.verdict(events)
        assert found["title"] == "2 round(s), 1 tool call(s)" and found["state"] == "answered"
        assert headline.headline(events).startswith("**✅ 2 round(s), 1 tool call(s).**")
        assert headline.verdict(events[:-1] + [{"type": "error", "code": "max_turns"}])["title"].startswith(
            "max_turns used up")


def test_a_link_note_is_in_the_tabs_language_and_lang_is_no_unknown_parameter():
    with using("en"):
        plan = deep_links.parse([("lesson", "xyz"), ("lang", "en")])
        assert len(plan.notes) == 1 and "is unknown" in plan.notes[0] and "function_calling (Function Calling)" \
            in plan.notes[0]
    plan = deep_links.parse([("lang", "en"), ("present", "1")])
    assert not plan.wanted and plan.notes == []


def test_the_checkboxes_and_the_rules_go_into_a_link_and_come_back():
    rules = {"bash": "deny", "read": "allow"}
    query, notes = deep_links.link_query("function_calling", "天气", None, None, "北京？",
                                         {"parallel": False, "envelope": True, "tool_choice": "auto", "mistake": ""})
    values = dict(parse_qsl(urlsplit(query).query))
    assert notes == [] and values["parallel"] == "0" and values["envelope"] == "1"
    plan = deep_links.parse(parse_qsl(urlsplit(query).query), "function_calling")
    assert plan.notes == [] and plan.values["parallel"] == "0" and plan.values["envelope"] == "1"
    assert deep_links.page_value("parallel", "0") is False and deep_links.page_value("envelope", "1") is True

    query, notes = deep_links.link_query("permissions", None, None, None, "运行测试",
                                         {"approach": "react", "rules": json.dumps(rules, indent=2)})
    values = dict(parse_qsl(urlsplit(query).query))
    assert notes == [] and json.loads(values["rules"]) == rules and " " not in values["rules"]
    plan = deep_links.parse(parse_qsl(urlsplit(query).query), "permissions")
    assert plan.notes == [] and json.loads(deep_links.page_value("rules", plan.values["rules"])) == rules


def test_bad_link_values_are_named_and_ignored():
    plan = deep_links.parse([("lesson", "function_calling"), ("parallel", "yes"), ("rules", "{}")])
    assert "parallel" not in plan.values and any("parallel" in n for n in plan.notes)
    assert any("不适用于" in n for n in plan.notes)            # rules belong to the permission lesson
    plan = deep_links.parse([("lesson", "permissions"), ("rules", '{"bash": "allwo"}')])
    assert "rules" not in plan.values and "allow" in plan.notes[0]
    plan = deep_links.parse([("lesson", "permissions"), ("rules", "not json")])
    assert "rules" not in plan.values and "不是合法的 JSON" in plan.notes[0]
    _, notes = deep_links.link_query("permissions", None, None, None, "", {"rules": '{"bash": "allwo"}'})
    assert any("没有放进链接" in n for n in notes)


def test_an_english_tab_gets_the_english_of_every_label_built_with_tr():
    import app
    from lessons.editor_panel import lesson_text
    from serving import page_language as page

    demo = app.build_demo({})
    updates = page.english_updates(demo)
    shown = [value for props in updates.values() for key, value in props.items() if isinstance(value, str)]
    assert "▶ Run" in shown and "Timeline" in shown and "📖 Lesson: calling tools by a text convention" in shown
    # Each lesson's text under its heading, both in English: the heading is the catalogue's.
    assert all(f"📖 Lesson: {lesson.heading.en}" in shown for lesson in LESSONS.values())
    # The lesson texts, and each page's first exercise (lessons/exercise_panel.py: its task ends with what to change).
    tasks = [v for v in shown if v.startswith("###") and "What to change:" in v]
    english_texts = [lesson_text(lesson).en for lesson in LESSONS.values()]
    assert all(text in shown for text in english_texts)                       # every lesson's English text
    assert not any("这一课" in text or "要记住的" in text for text in english_texts)
    assert len(tasks) >= len(LESSONS) and not any("要改的地方" in v for v in tasks)
    headers = [props for props in updates.values() if "headers" in props]      # the skills lesson's memory table
    assert [props["headers"] for props in headers] == [["No.", "fact", "source", "saved at"]]
    assert headers[0]["value"] == {"headers": ["No.", "fact", "source", "saved at"], "data": []}
    choices = [props["choices"] for props in updates.values() if "choices" in props]
    assert [("Weather", "天气")] == [c for c in choices[0] if c[1] == "天气"] or any(
        ("Weather", "天气") in c for c in choices)                                   # values stay the same
    demo.close()


def test_a_text_filled_with_texts_takes_each_one_in_its_own_language():
    from i18n import Text

    way = Text("只列目录", "the catalogue only", "zh")
    line = Text("这次的写法：{way}（{n} 个）", "This run: {way} ({n})", "en").format(way=way, n=3)
    assert (line.zh, line.en, str(line)) == ("这次的写法：只列目录（3 个）", "This run: the catalogue only (3)",
                                             "This run: the catalogue only (3)")


def test_a_code_box_on_an_english_page_is_drawn_once_in_english():
    import gradio as gr

    from lessons.code_box import CodeBox
    from serving import page_language as page

    with gr.Blocks() as demo:
        box = CodeBox("x = 1", language="python", filename="x.py")
    shown = page._as_built(box, page.english_updates(demo)[box])["value"]
    assert ">Copy</button>" in shown and ">Download</button>" in shown and "复制" not in shown
    assert "&lt;div" not in shown          # its HTML is not drawn again as the code of a box
    demo.close()
