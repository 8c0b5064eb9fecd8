"""A link's parameters (lessons/deep_links.py) are checked before anything changes: unknown,
oversized or misplaced values are named in a note (escaped) and ignored; the copy link carries
the lesson, example set, question and options, never a key or source text."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from tool_registry import ToolRegistry

from lessons import deep_links
from catalogue import ROOT
from lessons.deep_links import LESSONS, NO_MISTAKE, for_page, link_query, parse, shown
from lessons.editor_panel import EXAMPLE_SETS, example_text
from lessons.presets import mistake_choices


def plan_of(query: str, page: str = ROOT):
    """The plan of a link to the page of lesson `page` (by default the page at /: catalogue.ROOT)."""
    return parse(parse_qsl(query.lstrip("?"), keep_blank_values=True), page)


def test_a_plain_page_is_no_link():
    assert not plan_of("").wanted
    assert not plan_of("__theme=dark&logs=container").wanted


def test_a_full_function_calling_link_is_accepted():
    plan = plan_of("lesson=function_calling&example=计算器&question=帮我算一下 (3%2B5)*12&tool_choice=auto"
                   "&mistake=bad_json&run=1")
    assert plan.lesson == "function_calling" and plan.run and plan.notes == []
    assert plan.values == {"example": "计算器", "question": "帮我算一下 (3+5)*12", "tool_choice": "auto",
                           "mistake": "bad_json"}


def test_an_unknown_lesson_changes_nothing_and_lists_the_choices():
    plan = plan_of("lesson=xyz&example=天气&run=1")
    assert plan.lesson is None and plan.values == {} and not plan.run and plan.target == "react"
    assert len(plan.notes) == 1 and "lesson=「xyz」不认识" in plan.notes[0]
    assert all(name in plan.notes[0] for name in LESSONS) and "其余按默认打开" in plan.notes[0]


def test_a_link_without_a_lesson_sets_up_the_lesson_of_its_page():
    plan = plan_of("question=hi")
    assert plan.wanted and plan.lesson == ROOT and plan.values == {"question": "hi"} and plan.notes == []
    plan = plan_of("question=hi&tool_choice=auto", "function_calling")
    assert plan.lesson == "function_calling" and plan.values == {"question": "hi", "tool_choice": "auto"}


def test_hostile_values_are_escaped_shortened_and_ignored():
    plan = plan_of("lesson=react&example=<img src=x onerror=alert(1)>&approach=**bold**[x](javascript:y)")
    assert plan.values == {} and len(plan.notes) == 2
    text = "".join(plan.notes)
    assert "<img" not in text and "&lt;img" in text
    assert "**bold**" not in text and "\\*\\*bold" in text and "](javascript" not in text
    assert shown("a" * 100).endswith("…」") and len(shown("a" * 100)) < 40
    assert "\x00" not in shown("a\x00b")


def test_oversized_values_and_too_many_parameters():
    plan = plan_of("lesson=function_calling&question=" + "问" * 301)
    assert plan.values == {} and "太长（301 字，最多 300 字）" in plan.notes[0]
    plan = plan_of("lesson=" + "x" * 500)
    assert plan.lesson is None and "太长" in plan.notes[0] and "x" * 40 not in plan.notes[0]
    plan = plan_of("lesson=react&" + "&".join(f"q{i}=1" for i in range(30)))
    assert plan.lesson is None and "参数太多" in plan.notes[0]


def test_values_for_another_lesson_are_named_and_ignored():
    plan = plan_of("lesson=registry&tool_choice=auto&mistake=bad_json&approach=json&example=天气")
    assert plan.values == {"example": "天气"}
    assert len(plan.notes) == 3 and all("不适用于「工具注册」" in n for n in plan.notes)
    plan = plan_of("lesson=workspace&example=天气&approach=react")
    assert plan.values == {"approach": "react"} and "没有示例工具集" in plan.notes[0]


def test_a_lesson_s_own_example_set_is_linked_on_that_lesson_only():
    """The catalogue's own_examples: the evaluation editor offers the vague weather set, so its link keeps it;
    on Function Calling, whose editor does not offer it, the same value is named and ignored."""
    (vague,) = LESSONS["evaluation"].own_examples
    assert plan_of(urlencode({"example": vague}), "evaluation").values == {"example": vague}
    plan = plan_of(urlencode({"example": vague}), "function_calling")
    assert plan.values == {} and "不认识" in plan.notes[0]
    query, notes = link_query("evaluation", vague, None, None, "", {})
    assert notes == [] and dict(parse_qsl(urlsplit(query).query)) == {"example": vague}


def test_unknown_parameters_duplicates_and_bad_run():
    plan = plan_of("lesson=react&foo=1&question=a&question=b&run=yes")
    assert plan.values == {"question": "a"} and not plan.run
    assert any("「foo」不认识" in n for n in plan.notes)
    assert any("question 出现了不止一次" in n for n in plan.notes)
    assert any("run=「yes」" in n for n in plan.notes)


def test_a_mistake_must_fit_the_loop():
    plan = plan_of("lesson=react&mistake=bold_action")
    assert for_page(plan, "", "react") == ({"mistake": "bold_action"}, [])
    values, notes = for_page(plan, "", "json")          # the page's loop is JSON-from-text
    assert values == {} and "不会出现" in notes[0]
    plan = plan_of("lesson=react&approach=json&mistake=bold_action")   # the link's own loop counts
    assert for_page(plan, "", "react")[0] == {"approach": "json"}
    plan = plan_of("lesson=function_calling&mistake=paren_call")
    assert for_page(plan, "", None)[0] == {}
    assert for_page(plan_of("lesson=function_calling&mistake=none"), "", None)[0] == {"mistake": ""}


def listed(note: str) -> set[str]:
    """The mistakes a note offers instead ("…；可选：none、wrong_type、…。")."""
    return set(note.rsplit("可选：", 1)[1].rstrip("。").split("、")) - {NO_MISTAKE}


def offered(mode: str) -> set[str]:
    """What the lesson's selector offers in that loop."""
    return {code for _, code in mistake_choices(mode)} - {""}


def test_a_refused_mistake_is_named_with_what_the_lesson_offers():
    """A note lists only the mistakes the lesson's selector offers, never one it would refuse."""
    for link in ("lesson=function_calling&mistake=nope", "lesson=function_calling&mistake=bold_action"):
        (note,) = plan_of(link).notes
        assert "不是「Function Calling」能选的失误" in note and listed(note) == offered("function_calling")
    assert "bold_action" not in plan_of("lesson=function_calling&mistake=nope").notes[0]
    (note,) = for_page(plan_of("lesson=react&mistake=no_action_line"), "", "json")[1]
    assert "从文本中解析 JSON" in note and listed(note) == offered("json")
    (note,) = plan_of("lesson=react&mistake=nope").notes     # the loop is not known yet: either of ReAct's
    assert listed(note) == offered("react") | offered("json")


def test_a_forced_tool_must_be_in_the_source():
    weather = example_text(EXAMPLE_SETS["天气"])
    plan = plan_of("lesson=function_calling&tool_choice=get_weather")
    assert for_page(plan, weather, None) == ({"tool_choice": "get_weather"}, [])
    values, notes = for_page(plan_of("lesson=function_calling&tool_choice=get_weath"), weather, None)
    assert values == {} and "不是源码里的工具" in notes[0]
    assert "不认识" in plan_of("lesson=function_calling&tool_choice=a b").notes[0]


@pytest.mark.parametrize("name", ["get-weather", "2fa_check", "get_weather\n", "a b", "a" * 65])
def test_a_forced_tool_name_follows_the_registry_rule(name):
    registry = ToolRegistry()
    try:
        registry.tool("x", name=name)(lambda city: city)
    except ValueError:
        pass
    link_notes = plan_of(urlencode({"lesson": "function_calling", "tool_choice": name})).notes
    assert (name in registry.tools) == (link_notes == []), link_notes


def test_the_copy_link_round_trips_and_carries_no_source():
    weather = example_text(EXAMPLE_SETS["天气"])
    query, notes = link_query("function_calling", "天气", weather, weather, "广州冷不冷？",
                              {"tool_choice": "required", "mistake": ""})
    assert notes == [] and "def " not in query and query.startswith("./function-calling?")
    plan = plan_of(urlsplit(query).query, "function_calling")
    assert plan.notes == [] and plan.values == {"example": "天气", "question": "广州冷不冷？",
                                                "tool_choice": "required", "mistake": NO_MISTAKE}
    edited, notes = link_query("function_calling", "天气", weather + "\n# mine\n", weather, "q", {})
    assert "mine" not in edited and "导出" in notes[0] and "不在链接里" in notes[0]
    long, notes = link_query("workspace", None, None, None, "问" * 400, {"approach": "react"})
    assert "question" not in long and "太长" in notes[0]
    assert plan_of(urlsplit(long).query, "workspace").values == {"approach": "react"}


def test_the_page_scripts_name_every_lesson_panel():
    for spec in LESSONS.values():
        assert spec.panel in deep_links.PANELS_JS


def test_projector_mode_is_the_browser_s_own_and_never_a_note():
    assert not parse([("present", "1")]).wanted              # a present-only link asks the server nothing
    plan = parse([("lesson", "react"), ("present", "1")])
    assert plan.lesson == "react" and plan.notes == []


def test_a_context_link_carries_the_strategy_and_the_budget():
    import json

    import context
    example = json.dumps(context.EXAMPLE[:-1], ensure_ascii=False, indent=2)
    query, notes = link_query("context", None, None, None, "我叫什么名字？",
                              {"strategy": "compact", "budget": 420.0, "conversation": example})
    assert notes == [] and query.startswith("./context?") and "conversation" not in query
    plan = plan_of(urlsplit(query).query, "context")
    assert plan.notes == [] and plan.values == {"question": "我叫什么名字？", "strategy": "compact", "budget": "420"}
    assert deep_links.page_value("budget", "420") == 420
    assert link_query("context", None, None, None, "q", {"conversation": example})[1] == []
    edited = example.replace("我叫小林", "我叫小王")
    assert "你改过的对话不在链接里" in link_query("context", None, None, None, "q", {"conversation": edited})[1][0]
    wrong = plan_of("strategy=magic&budget=10&question=hi", "context")
    assert wrong.values == {"question": "hi"} and len(wrong.notes) == 2
    assert "strategy=「magic」" in wrong.notes[0] and "budget=「10」" in wrong.notes[1] and "50 到 8000" in wrong.notes[1]
    elsewhere = plan_of("strategy=window", "function_calling")
    assert elsewhere.values == {} and "上下文预算" in elsewhere.notes[0]


def test_the_first_call_s_stream_box_travels_in_its_link():
    plan = plan_of("question=%E4%BD%A0%E5%A5%BD&stream=0&run=1", "first_call")
    assert plan.lesson == "first_call" and plan.values == {"question": "你好", "stream": "0"} and plan.run
    assert plan.notes == []
    assert "只能是 1（勾选）或 0" in plan_of("stream=yes", "first_call").notes[0]
    assert "stream" in plan_of("stream=1", "function_calling").notes[0]          # not that lesson's box
    address, notes = link_query("first_call", None, None, None, "你好", {"stream": False})
    assert address == "./first-call?question=%E4%BD%A0%E5%A5%BD&stream=0" and notes == []
