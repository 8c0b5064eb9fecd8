"""The headline over a planned run (code/planning.py) is a success only when the plan was done: the
offline model's run on the lesson's task, and the same run with what a weaker model leaves out."""
from __future__ import annotations

import copy

import pytest

import i18n

from examples_weather import registry
from llm_clients import make_client
from planning import WRITE_TODOS, plan_changes, run_with_plan
from runs import headline
from runs.planning_backend import TRIP


@pytest.fixture(scope="module")
def done() -> list[dict]:
    return list(run_with_plan(make_client("offline"), TRIP, None, registry))


def test_a_plan_done_with_evidence_is_a_success(done):
    assert headline.verdict(done)["state"] == "answered"


def test_a_run_that_never_wrote_its_plan_is_no_success(done):
    unplanned = [e for e in done if e["type"] != "plan" and e.get("name") != WRITE_TODOS]
    found = headline.verdict(unplanned)
    assert found["state"] == "no_plan" and found["icon"] == "⚠️"
    assert found["title"].startswith("工具里有 write_todos，模型却没有写下一份被接受的计划")


def test_an_answer_before_the_last_item_is_done_is_an_unfinished_plan(done):
    last = max(i for i, e in enumerate(done) if e["type"] == "plan")
    found = headline.verdict(done[:last] + done[last + 1:])
    assert found["state"] == "plan_unfinished"
    assert found["title"].startswith("计划没做完：还有 1 项没有完成（查询指定城市未来几天的天气预报：上海，3）")


def test_an_empty_plan_is_no_plan_done(done):
    emptied = copy.deepcopy(done)
    next(e for e in reversed(emptied) if e["type"] == "plan")["after"] = []
    assert headline.verdict(emptied)["state"] == "plan_empty"


def test_each_kind_of_plan_change_is_said_in_english_on_an_english_page():
    before = [{"content": "查北京天气", "status": "completed"}, {"content": "查上海预报", "status": "pending"},
              {"content": "写总结", "status": "pending"}]
    after = [{"content": "查北京天气", "status": "completed"}, {"content": "查上海明天的天气", "status": "in_progress"},
             {"content": "写总结", "status": "in_progress"}, {"content": "提醒带伞", "status": "pending"}]
    changes, replanned = plan_changes(before, after)
    assert replanned and len(changes) == 3
    assert [headline.change_words(c) for c in changes] == changes          # the course's own words on a Chinese page
    with i18n.using("en"):
        said = [headline.change_words(c) for c in changes]
    assert said == ["rewritten: 查上海预报 → 查上海明天的天气", "added: 提醒带伞 (pending)", "写总结: pending → in_progress"]
