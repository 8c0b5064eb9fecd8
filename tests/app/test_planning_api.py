"""/run_planning through gradio_client against the real app: the plan lesson (8.3) with only a question,
its plan events and counts, a replan after a failed step, and the course's fixed plan on the same failure."""
from __future__ import annotations

import pytest
from gradio_client import Client

from planning import MISTAKE_ASKS
from runs.planning_backend import TRIP


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def plans(result: dict) -> list[dict]:
    return [e for e in result["events"] if e["type"] == "plan"]


def test_only_a_question_runs_the_plan_on_the_weather_tools(client):
    result = client.predict(TRIP, api_name="/run_planning")
    assert result["ok"] and result["verdict"]["state"] == "answered", result["verdict"]
    first = next(e for e in result["events"] if e["type"] == "request")
    assert {t["function"]["name"] for t in first["tools"]} == {"get_weather", "get_forecast", "write_todos"}
    written = plans(result)
    assert [e["source"] for e in written] == ["write_todos"] * 3 and all(e["accepted"] for e in written)
    assert [item["status"] for item in written[0]["after"]] == ["in_progress", "pending"]
    assert all(item["status"] == "completed" and item["evidence"] for item in written[-1]["after"])
    count = result["tally"]
    assert count["rounds"] == sum(e["type"] == "request" for e in result["events"]) == 5
    assert count["estimated"] and count["prompt_tokens"] > 0 and count["failed_calls"] == 0


def test_a_failed_step_is_replanned_and_the_fixed_plan_marks_it_done_all_the_same(client):
    replanned = client.predict(TRIP, "", "todos", "get_weather", api_name="/run_planning")
    assert replanned["ok"] and replanned["verdict"]["state"] == "recovered"
    assert "🔁 get_weather 失败以后，模型在第 3 轮改了计划（改写：" in replanned["verdict"]["title"]
    failed = next(e for e in replanned["events"] if e["type"] == "tool_result" and not e["ok"])
    assert failed["name"] == "get_weather" and failed["error_code"] == "demo_failure"
    assert [e["turn"] for e in plans(replanned) if e["replanned"]] == [3]
    assert replanned["tally"]["replanned_after_failure"] and not replanned["tally"]["completed_despite_failure"]

    fixed = client.predict(TRIP, "", "fixed", "get_weather", api_name="/run_planning")
    assert not fixed["ok"] and fixed["verdict"]["icon"] == "⚠️"
    assert "这次被设定为失败（演示" in fixed["verdict"]["title"]
    assert "先定好的计划照样把第 1 步「查询指定城市今天的天气：北京」标成了 completed" in fixed["verdict"]["title"]
    assert {e["source"] for e in plans(fixed)} == {"fixed"} and not any(e["replanned"] for e in plans(fixed))
    assert fixed["tally"]["completed_despite_failure"] == ["查询指定城市今天的天气：北京"]


def test_a_replan_that_no_longer_does_what_was_asked_is_no_success(client):
    """get_forecast failing, the model rewrites Shanghai's 3-day forecast into today's weather and finishes
    that plan: every item is done, yet the forecast the question wants never came."""
    result = client.predict(TRIP, "", "todos", "get_forecast", api_name="/run_planning")
    assert not result["ok"] and result["verdict"]["state"] == "plan_missed"
    assert result["verdict"]["title"].startswith('这个问题要的 get_forecast(city="上海", days=3) 一次也没有做成')
    assert "🔁 get_forecast 失败以后，模型在第 4 轮改了计划" in result["verdict"]["title"]


def test_a_list_that_breaks_a_rule_is_refused_with_what_to_change(client):
    result = client.predict(TRIP + MISTAKE_ASKS["two_in_progress"], api_name="/run_planning")
    refused, accepted = plans(result)[:2]
    assert not refused["accepted"] and refused["after"] == refused["before"] == []
    assert refused["problems"] == ["第 1、2 项都是 in_progress：同一时间只能做一件事，把还没开始做的改回 pending"]
    rejected = next(e for e in result["events"] if e["type"] == "tool_result" and e["name"] == "write_todos")
    assert rejected["error_code"] == "plan_rule" and rejected["content"].startswith("❌ [计划不合规则] 计划没有改：")
    assert accepted["accepted"] and accepted["turn"] == 2 and result["ok"]


def test_an_unknown_approach_is_refused_by_name(client):
    with pytest.raises(Exception, match="approach 只能是 todos / fixed"):
        client.predict(TRIP, "", "both", api_name="/run_planning")


def test_a_replayed_plan_run_shows_the_board_as_a_step_of_its_own(client):
    """An exported plan run, replayed step by step (下一步): the board after a write is a step, shown right
    after the write_todos result, not one step late with the next request."""
    from runs import session_io

    result = client.predict(TRIP, api_name="/run_planning")
    events = result["events"]
    written = next(i for i, e in enumerate(events) if e["type"] == "tool_result" and e["name"] == "write_todos")
    position = session_io.next_position(events, written + 1)
    assert events[position - 1]["type"] == "plan"
    assert session_io.step_label(events, position).endswith("刚显示：计划板（写计划之后）")
