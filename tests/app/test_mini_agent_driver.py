"""MiniAgent's run on the server, without a page: the run driver pauses where the loop's own permission gate
(code/mini_agent.py) asks, and each of the three answers reaches the loop as the permission lesson's do;
the timeline draws each rule's decision inside its call; a bad choice is said before anything runs; an
exported run replays to the same verdict with the workspace's files."""
from __future__ import annotations

import json
import re
import secrets

import pytest

import workspace
from catalogue import LESSONS
from lessons import timeline
from mini_agent import DEMO_RULES
from runs import headline, mini_agent_backend, run_driver
from access.clients import Settings

LESSON = LESSONS["mini_agent"]
TASK = "找出失败的测试并修好它"
ASKING_RULES = {key: value for key, value in DEMO_RULES.items() if key != "bash:python3 -m unittest*"}


@pytest.fixture
def session():
    session_id = "test-" + secrets.token_hex(8)
    yield session_id
    workspace.forget(session_id)


def begin(session_id: str, question: str = TASK, **options) -> run_driver.RunState:
    inputs = run_driver.RunInputs(source="", question=question, settings=Settings(),
                                  options={**mini_agent_backend.default_options(), **options})
    return last(run_driver.begin(LESSON, inputs, None, secrets={}, session_id=session_id, step=False))


def last(steps) -> run_driver.RunState:
    state = None
    for state, _ in steps:
        pass
    return state


def results(state, name: str) -> list[dict]:
    return [e for e in state.run.events if e["type"] == "tool_result" and e["name"] == name and "child" not in e]


def test_the_gate_s_ask_pauses_the_run_and_each_answer_reaches_the_loop(session):
    state = begin(session, rules=json.dumps(ASKING_RULES))
    asking = state.waiting
    assert asking["gate"] and asking["call"]["name"] == "bash" and asking["preview"] == "python3 -m unittest"
    assert asking["rule"] == "bash" and not results(state, "bash")          # nothing ran yet
    state = last(run_driver.answer(state, run_driver.EDIT, json.dumps({"command": "python3 -m unittest tests.test_calc"})))
    edited = results(state, "bash")[0]
    assert edited["arguments"]["command"] == "python3 -m unittest tests.test_calc" and edited["edited"]
    while state.waiting:                                                      # the test run after the fix asks too
        state = last(run_driver.answer(state, run_driver.APPROVE))
    assert headline.verdict(state.run.events)["icon"] == "✅"
    assert "/ len(numbers)" in workspace.read_file(session, "src/calc.py")
    drawn = timeline.render_protocol(state.run.events, "function_calling")
    assert drawn.count('class="tw-gate tw-gate-ask"') == 2 and 'class="tw-gate tw-gate-allow"' in drawn
    assert len(re.findall(r'class="tw-plan( tw-plan-refused)?"', drawn)) == sum(e["type"] == "plan" for e in state.run.events) > 0


def test_a_denial_with_a_reason_is_told_to_the_model_and_named_as_yours(session):
    state = begin(session, rules=json.dumps(ASKING_RULES))
    state = last(run_driver.answer(state, run_driver.DENY, reason="先别跑测试"))
    denied = results(state, "bash")[0]
    assert denied["error_code"] == "denied" and "先别跑测试" in denied["content"]
    found = headline.verdict(state.run.events)
    assert found["icon"] == "⚠️" and "你拒绝了 bash 的调用" in found["title"]
    assert "(len(numbers) - 1)" in workspace.read_file(session, "src/calc.py")


def test_choices_that_do_not_fit_are_said_before_anything_runs(session):
    inputs = run_driver.RunInputs(source="", question=TASK, settings=Settings(),
                                  options={**mini_agent_backend.default_options(), "rules": "{\"bash\": \"maybe\"",
                                           "budget": 50})
    state, note = list(run_driver.begin(LESSON, inputs, None, secrets={}, session_id=session, step=False))[-1]
    assert state.run.error is not None and [e["type"] for e in state.run.events] == ["purpose"]
    assert "权限规则不是合法 JSON" in note and "上下文预算应是不小于 200 的整数" in note


def test_an_exported_run_replays_to_the_same_verdict_with_its_files(session, tmp_path):
    state = begin(session)
    live = headline.verdict(state.run.events)
    path, _ = run_driver.export(LESSON, state, "", session)
    workspace.reset(session)
    replayed, _ = run_driver.load(LESSON, path, session)
    replayed, _ = run_driver.walk(replayed, to_end=True)
    assert headline.verdict(replayed.shown_events) == live and live["icon"] == "✅"
    assert "/ len(numbers)" in workspace.read_file(session, "src/calc.py")     # the file's workspace came back
