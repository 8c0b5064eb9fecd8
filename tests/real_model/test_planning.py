"""The plan lesson (8.3) once on a real model: SmolLM2-135M-Instruct on llama-server with the lane's
calling template (chatml_json_calls.jinja). A 135M model may write a plan, a plan the tool refuses,
a truncated call, or no call at all; what it does is its own. What must hold whatever it does: the
request carries write_todos beside the source's tools, every write_todos answer is a plan event on
the timeline (the board before and after, a refusal's reasons), the counts are the server's, and the
verdict is ✅ only when the plan was done: an accepted board whose every item is completed with
evidence quoted from a successful tool result, and an answer after it."""
from __future__ import annotations

import time

import pytest

from planning import PLAN_SYSTEM, WRITE_TODOS, squeeze
from runs import headline

pytestmark = pytest.mark.real_model

MODEL = "smollm2-135m"
KEY = "sk-local-llama"
# A write_todos call holds a whole list: about 60 tokens an item. Longer than the lane's other tests allow.
MAX_TOKENS = 256
SOURCE = '''from tool_registry import ToolRegistry

registry = ToolRegistry()
WEATHER = {"Paris": "sunny, 21°C", "London": "light rain, 14°C", "Berlin": "cloudy, 17°C"}


@registry.tool("Get the current weather for a city")
def get_weather(city: str) -> str:
    if city not in WEATHER:
        raise ValueError(f"no weather for {city}; known cities: {', '.join(WEATHER)}")
    return f"{city}: {WEATHER[city]}"
'''
TASK = "Make a plan with write_todos, then do it: get the weather in Paris, then the weather in London."


@pytest.fixture(scope="module")
def secrets(calling_server):
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": calling_server.url + "/v1",
            "TOOL_WORKSHOP_KEY_MAX_TOKENS": str(MAX_TOKENS)}


def of(result, kind: str) -> list[dict]:
    return [e for e in result["events"] if e["type"] == kind]


def plan_done(result) -> bool:
    """The last board the tool accepted has items, every one completed with evidence found in a
    successful result of another tool, and the run answered after it."""
    accepted = [e for e in of(result, "plan") if e["accepted"]]
    if not accepted or not accepted[-1]["after"] or not of(result, "final"):
        return False
    quoted = [squeeze(e["content"]) for e in of(result, "tool_result") if e["ok"] and e["name"] != WRITE_TODOS]
    return all(item["status"] == "completed" and item.get("evidence") and any(item["evidence"] in q for q in quoted)
               for item in accepted[-1]["after"])


def test_run_planning_on_a_real_model_the_verdict_is_true_to_the_plan(client):
    started = time.perf_counter()
    result = client.predict(TASK, SOURCE, "todos", "", "openai", MODEL, "", MAX_TOKENS, api_name="/run_planning")
    took = time.perf_counter() - started
    first = of(result, "request")[0]
    assert {t["function"]["name"] for t in first["tools"]} == {"get_weather", WRITE_TODOS}
    assert first["messages"][0] == {"role": "system", "content": PLAN_SYSTEM}
    # Every answer of write_todos is drawn: one plan event after each of its results, accepted exactly
    # when the tool accepted the list, the board untouched by a refusal.
    written = [e for e in of(result, "tool_result") if e["name"] == WRITE_TODOS]
    plans = of(result, "plan")
    assert [(p["turn"], p["id"]) for p in plans] == [(r["turn"], r["id"]) for r in written]
    for plan, answer in zip(plans, written):
        assert plan["accepted"] is answer["ok"], (plan, answer["content"])
        if not plan["accepted"]:
            assert plan["after"] == plan["before"] and plan["problems"], plan
    # The counts are the server's: llama-server reports usage, so nothing is an estimate.
    count = result["tally"]
    assert count["rounds"] == len(of(result, "request")) and not count["estimated"]
    assert count["plan_writes"] == len(written) and count["rejected"] == sum(not p["accepted"] for p in plans)
    # The verdict: a success exactly when the plan was done, whatever the loop's end.
    verdict = result["verdict"]
    assert result["ok"] is (verdict["state"] in headline.SUCCESS)
    if result["ok"]:
        assert plan_done(result), verdict
    elif of(result, "final") and not plans:
        assert verdict["icon"] != "✅", verdict
    print(f"\nplanning on {MODEL}: {took:.1f} s, {count['rounds']} rounds, tokens {count['prompt_tokens']} + "
          f"{count['completion_tokens']}, plan writes {count['plan_writes']} (refused {count['rejected']}), calls "
          f"{[(e['name'], str(e.get('raw_arguments'))[:60]) for e in of(result, 'tool_call')]}, "
          f"verdict {verdict['icon']} {verdict['state']}: {verdict['title'][:160]!r}")


def test_the_fixed_plan_on_a_real_model_is_judged_by_its_steps(client):
    """The course's plan-then-execute on the same task: the planner's answer must be a {"steps": [...]} JSON
    (a 135M model often writes something else, and the run then stops with bad_plan, said as an error);
    a step marked completed without a successful call is never a success."""
    result = client.predict(TASK, SOURCE, "fixed", "", "openai", MODEL, "", MAX_TOKENS, api_name="/run_planning")
    first = of(result, "request")[0]
    assert not first.get("tools") and "get_weather" in first["messages"][0]["content"]
    verdict, plans = result["verdict"], of(result, "plan")
    if not plans:
        assert of(result, "error")[-1]["code"] == "bad_plan" and not result["ok"], verdict
    else:
        assert {p["source"] for p in plans} == {"fixed"} and not any(p["replanned"] for p in plans)
        marked = [n for n, item in enumerate(plans[-1]["after"], 1) if item["status"] == "completed"]
        unproven = [n for n in marked if not any(e["ok"] for e in of(result, "tool_result") if e.get("step") == n)]
        if unproven:
            assert not result["ok"] and "先定好的计划照样把第" in verdict["title"], verdict
    print(f"\nfixed plan on {MODEL}: {len(plans)} plan events, verdict {verdict['icon']} {verdict['state']}: "
          f"{verdict['title'][:160]!r}")
