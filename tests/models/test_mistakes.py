"""Every simulated mistake of the offline model does what its line says, in every mode it is listed for, through the
real loops; a mistake not listed for a mode changes nothing there; its kind (quirk or error) is true to what happens."""
import json

import pytest

import examples_payroll
import examples_weather
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from lessons.presets import mistake_choices
from llm_clients import make_client
from loop_parts import MAX_FAILURES
from offline.model import (EVERY_MODE, MISTAKE_KINDS, MISTAKES, MISTAKES_BY_MODE, OfflineModel, mistakes_for)
from react_loop import run_react

LOOPS = {"function_calling": run_function_calling, "react": run_react, "json": run_json_from_text}
QUESTION = "上海未来3天的天气预报"          # get_forecast(city, days: int): room for every kind of mistake
CASES = [(mode, name) for mode in EVERY_MODE for name in MISTAKES_BY_MODE[mode]]


def kinds(events, kind):
    return [e for e in events if e["type"] == kind]


def run(mode, mistake, question=QUESTION, registry=examples_weather.registry, max_turns=6):
    """Run a loop with the registry as executor; also keep every ToolOutcome (the loop events do not carry all)."""
    outcomes = []

    def execute(name, arguments):
        outcome = registry.call(name, arguments)
        outcomes.append(outcome)
        return outcome.to_dict()

    events = list(LOOPS[mode](make_client("offline", mistake=mistake or None), question, registry.to_schemas(),
                              execute, max_turns=max_turns))
    return events, outcomes


def failed_somewhere(events):
    return (any(not r["ok"] for r in kinds(events, "tool_result")) or any(not p["ok"] for p in kinds(events, "parse"))
            or events[-1]["type"] == "error")


def notes_of(events):
    return [n for p in kinds(events, "parse") for n in p["notes"]] + [n for c in kinds(events, "tool_call")
                                                                      for n in c["problems"]]


# ---- the table itself

def test_every_mistake_has_modes_a_kind_and_a_chinese_line():
    assert set(MISTAKE_KINDS) == set(MISTAKES) == {n for names in MISTAKES_BY_MODE.values() for n in names}
    assert set(MISTAKE_KINDS.values()) == {"quirk", "error"}
    assert all(any("\u4e00" <= c <= "\u9fff" for c in line) for line in MISTAKES.values())
    assert mistakes_for("native") == mistakes_for("function_calling")
    assert "bold_action" not in mistakes_for("function_calling") and "bold_action" in mistakes_for("react")
    with pytest.raises(ValueError):
        mistakes_for("telepathy")
    with pytest.raises(ValueError):
        OfflineModel("typo")


def test_the_selector_offers_only_what_can_happen_in_the_mode():
    react = [code for _, code in mistake_choices("react")]
    assert react[0] == "" and react[1:] == MISTAKES_BY_MODE["react"]
    labels = dict((code, label) for label, code in mistake_choices("function_calling"))
    assert labels["fenced_json"].startswith("【容错】") and labels["stubborn"].startswith("【出错】")
    assert "multi_step" not in labels


# ---- each mistake, in each mode it is listed for

@pytest.mark.parametrize("mode, mistake", CASES, ids=[f"{m}-{n}" for m, n in CASES])
def test_the_kind_is_true_to_what_happens(mode, mistake):
    events, outcomes = run(mode, mistake)
    clean, _ = run(mode, None)
    assert not failed_somewhere(clean)
    replies = lambda events: [json.dumps(r["message"], ensure_ascii=False) for r in kinds(events, "response")]
    assert replies(events) != replies(clean)                               # the mistake is there to see
    if MISTAKE_KINDS[mistake] == "error":
        assert failed_somewhere(events)
    else:                       # tolerated: nothing fails, and the parser or the registry says what it coped with
        assert not failed_somewhere(events) and events[-1]["type"] == "final"
        assert notes_of(events) or any(o.coercions for o in outcomes)


@pytest.mark.parametrize("mode", EVERY_MODE)
@pytest.mark.parametrize("mistake, code, field", [
    ("wrong_type", "invalid_arguments", "days"), ("missing_argument", "invalid_arguments", "city"),
    ("unknown_tool", "unknown_tool", "get_forecast"), ("bad_json", "invalid_json", "JSON")])
def test_a_failed_call_goes_back_and_the_model_corrects_it(mode, mistake, code, field):
    events, _ = run(mode, mistake)
    parses = kinds(events, "parse")
    if mode == "json" and mistake == "bad_json":        # the whole reply does not parse: a format error goes back
        assert parses[0]["ok"] is False and "JSON" in parses[0]["reason"]
    else:
        first = kinds(events, "tool_result")[0]
        assert first["ok"] is False and first["error_code"] == code and field in first["content"]
    last = kinds(events, "tool_result")[-1]
    assert last["ok"] and last["arguments"] == {"city": "上海", "days": 3, "unit": "c"}
    assert events[-1]["type"] == "final" and "第几天" in events[-1]["content"]


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_fenced_json_is_tolerated_and_said(mode):
    events, _ = run(mode, "fenced_json")
    assert any("```" in n for n in notes_of(events))
    assert [r["ok"] for r in kinds(events, "tool_result")] == [True]


@pytest.mark.parametrize("mode", EVERY_MODE)
@pytest.mark.parametrize("question, registry, field, value", [
    (QUESTION, examples_weather.registry, "days", 3),
    ("帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）",
     examples_payroll.registry, "employee_id", 101)])
def test_numbers_as_strings_are_coerced_during_the_run(mode, question, registry, field, value):
    events, outcomes = run(mode, "string_numbers", question, registry)
    first_call, first_result = kinds(events, "tool_call")[0], kinds(events, "tool_result")[0]
    assert first_call["arguments"][field] == str(value)                  # what the model sent: "3"
    assert first_result["ok"] and first_result["arguments"][field] == value      # what the tool got: 3
    # The calls of one reply run at once, so the outcomes come in the order they finished: the first
    # call's is the one that ran with its arguments.
    mine = next(o for o in outcomes if o.arguments == first_result["arguments"])
    assert any(field in c and str(value) in c for c in mine.coercions), mine.coercions
    assert events[-1]["type"] == "final"


def test_only_the_first_round_has_numbers_as_strings():
    events, outcomes = run("react", "string_numbers",
                           "帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）",
                           examples_payroll.registry)
    assert outcomes[0].coercions and not outcomes[1].coercions
    assert "30400" in events[-1]["content"]


TEXT_QUIRKS = [(mode, name) for mode in ("react", "json") for name in ("bold_action", "invented_observation", "multi_step")
               if name in MISTAKES_BY_MODE[mode]]


@pytest.mark.parametrize("mode, mistake", TEXT_QUIRKS)
def test_text_quirks_are_noted_by_the_parser(mode, mistake):
    events, _ = run(mode, mistake)
    first = kinds(events, "parse")[0]
    assert first["ok"] and first["kind"] == "action" and first["notes"]
    assert all(r["ok"] for r in kinds(events, "tool_result")) and events[-1]["type"] == "final"


@pytest.mark.parametrize("mistake, shows", [
    ("no_action_line", "调用 get_forecast"), ("action_input_kv", "Action Input: city="), ("paren_call", "get_forecast({")])
def test_a_broken_react_format_does_not_match_and_the_model_rewrites_it(mistake, shows):
    events, _ = run("react", mistake)
    first, second = kinds(events, "parse")[:2]
    assert first["ok"] is False and first["kind"] == "none" and first["reason"]          # "为什么没有匹配"
    assert shows in kinds(events, "response")[0]["text"]
    assert second["ok"] and second["kind"] == "action" and second["turn"] == 2
    feedback = events[-1]["messages"][3]
    assert feedback["role"] == "user" and "格式错误" in feedback["content"]
    assert [r["ok"] for r in kinds(events, "tool_result")] == [True] and events[-1]["type"] == "final"


@pytest.mark.parametrize("mode", EVERY_MODE)
@pytest.mark.parametrize("question, registry", [
    (QUESTION, examples_weather.registry),
    ("帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）", examples_payroll.registry),
    ("北京今天天气怎么样", examples_weather.registry)])            # a string-only call: the wrong name is repeated
def test_a_stubborn_model_trips_the_repeated_failures_guard(mode, question, registry):
    events, _ = run(mode, "stubborn", question, registry)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "too_many_failures"
    results = kinds(events, "tool_result")
    assert len(results) == MAX_FAILURES and not any(r["ok"] for r in results)
    assert len({json.dumps([c["name"], c["raw_arguments"]]) for c in kinds(events, "tool_call")}) == 1
    assert not kinds(events, "final")


@pytest.mark.parametrize("mode", EVERY_MODE)
@pytest.mark.parametrize("max_turns", [2, 5])
def test_an_endless_model_runs_out_of_turns(mode, max_turns):
    events, _ = run(mode, "endless", max_turns=max_turns)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "max_turns"
    assert len(kinds(events, "request")) == max_turns and not kinds(events, "final")
    assert all(r["ok"] for r in kinds(events, "tool_result")) and len(kinds(events, "tool_result")) == max_turns
    ids = [c["id"] for c in kinds(events, "tool_call")]
    assert len(set(ids)) == len(ids)                # every round's call is a new call, as with a real API


# ---- a mistake not listed for a mode changes nothing there (so hiding it in that mode hides nothing real)

UNLISTED = [(mode, name) for mode in EVERY_MODE for name in MISTAKES if name not in MISTAKES_BY_MODE[mode]]


@pytest.mark.parametrize("mode, mistake", UNLISTED, ids=[f"{m}-{n}" for m, n in UNLISTED])
def test_an_unlisted_mistake_changes_nothing(mode, mistake):
    strip = lambda events: [(e["type"], e.get("text"), e.get("content")) for e in events if e["type"] != "request"
                            and e["type"] != "response"] + [e["text"] for e in kinds(events, "response")]
    assert strip(run(mode, mistake)[0]) == strip(run(mode, None)[0])
