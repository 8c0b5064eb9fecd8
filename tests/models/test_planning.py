"""8.3, the plan as a tool (code/planning.py): the rules write_todos enforces, the board after each
call, a replan after a failed step, the simulated mistakes and their correction, and the course's
fixed plan-then-execute on the same failure. The offline model runs in process and over real HTTP
with the real openai and zhipuai SDKs against the local server."""
import json
import typing

import pytest

import events as event_types
from llm_clients import make_client
from planning import (MISTAKE_ASKS, TASK, WRITE_TODOS, PlanBoard, example_tools, plan_then_execute, plan_tool,
                      run_with_plan, tally)

TOOLS = example_tools()
BROKEN = {"get_weather"}
RESULT = {"id": "call_w", "name": "get_weather", "content": "北京今天晴，气温 25°C，湿度 30%", "ok": True}
FAILED = {"id": "call_x", "name": "get_forecast", "content": "❌ [工具异常] 上海的预报接口不可用。请稍后重试。", "ok": False}


def item(content, status="pending", done_when="拿到结果", **more):
    return {"content": content, "status": status, "done_when": done_when, **more}


def board_with(*items, results=(RESULT, FAILED)):
    board = PlanBoard()
    board.results = [dict(r) for r in results]
    if items:
        assert board.write(list(items)).ok
    return board


def kinds(run, kind):
    return [e for e in run if e["type"] == kind]


def checked(run):
    json.dumps(run, ensure_ascii=False)
    hints = typing.get_type_hints(event_types.PlanEvent)
    for event in kinds(run, "plan"):
        assert event_types.PlanEvent.__required_keys__ <= set(event) <= set(hints)
    return run


# ── the rules, one by one

def test_a_first_plan_is_accepted_and_rendered_for_the_model():
    board = board_with()
    outcome = board.write([item("查北京天气", "in_progress"), item("算预算")])
    assert outcome.ok and "[>] 1. 查北京天气" in outcome.content and "[ ] 2. 算预算" in outcome.content
    assert [i["status"] for i in board.items] == ["in_progress", "pending"]
    assert board.last["accepted"] and not board.last["replanned"]


def test_two_items_in_progress_are_refused_and_the_board_stays():
    board = board_with(item("查北京天气", "in_progress"), item("算预算"))
    outcome = board.write([item("查北京天气", "in_progress"), item("算预算", "in_progress")])
    assert not outcome.ok and outcome.error_code == "plan_rule"
    assert outcome.content.startswith("❌ [计划不合规则] 计划没有改：")
    assert "第 1、2 项都是 in_progress" in outcome.content and "改回 pending" in outcome.content
    assert [i["status"] for i in board.items] == ["in_progress", "pending"]


def test_completed_without_evidence_is_refused_with_what_done_means():
    board = board_with(item("查北京天气", "in_progress", "get_weather 返回了北京的天气"))
    outcome = board.write([item("查北京天气", "completed", "get_weather 返回了北京的天气")])
    assert not outcome.ok and "没有 evidence" in outcome.content and "get_weather 返回了北京的天气" in outcome.content
    assert board.items[0]["status"] == "in_progress"


def test_evidence_must_be_quoted_from_a_successful_result():
    board = board_with(item("查北京天气", "in_progress"))
    invented = board.write([item("查北京天气", "completed", evidence="北京今天下雪")])
    assert not invented.ok and "不在这次运行的任何工具结果里" in invented.content
    from_failure = board.write([item("查北京天气", "completed", evidence="上海的预报接口不可用")])
    assert not from_failure.ok and "get_forecast 失败的结果" in from_failure.content
    short = board.write([item("查北京天气", "completed", evidence="晴")])
    assert not short.ok and "太短" in short.content
    quoted = board.write([item("查北京天气", "completed", evidence="北京今天晴，气温   25°C")])   # spaces do not matter
    assert quoted.ok
    assert board.items[0]["found_in"] == {"id": "call_w", "name": "get_weather"}


def test_a_completed_item_cannot_disappear_or_go_back():
    board = board_with(item("查北京天气", "completed", evidence="北京今天晴"), item("算预算", "in_progress"))
    gone = board.write([item("算预算", "in_progress")])
    assert not gone.ok and "不见了" in gone.content
    back = board.write([item("查北京天气", "pending"), item("算预算", "in_progress")])
    assert not back.ok and "不能改回去" in back.content
    kept = board.write([item("查北京天气", "completed"), item("算预算", "in_progress")])   # no need to prove it again
    assert kept.ok and board.items[0]["evidence"] == "北京今天晴"


def test_every_broken_rule_is_listed_at_once():
    board = board_with()
    outcome = board.write([item("a", "in_progress"), item("a", "in_progress"), item("b", "completed"),
                           item("c", done_when=" ")])
    for words in ("和前面一项一样", "都是 in_progress", "没有 evidence", "done_when 是空的"):
        assert words in outcome.content


def test_the_shape_is_checked_by_the_registry_before_the_rules():
    board = board_with()
    registry = plan_tool(board)
    wrong = registry.call(WRITE_TODOS, {"todos": [{"content": "查天气", "status": "done", "done_when": "有结果"}]})
    assert not wrong.ok and wrong.error_code == "invalid_arguments" and '"in_progress"' in wrong.content
    missing = registry.call(WRITE_TODOS, {"todos": [{"content": "查天气", "status": "pending"}]})
    assert not missing.ok and "done_when" in missing.content
    assert board.items == [] and board.last is None


def test_a_replan_is_told_apart_from_a_status_change():
    board = board_with(item("查北京天气", "in_progress"), item("算预算"))
    assert board.write([item("查北京天气", "completed", evidence="北京今天晴"), item("算预算", "in_progress")]).ok
    assert not board.last["replanned"]
    assert board.write([item("查北京天气", "completed"), item("按天算预算", "in_progress")]).ok
    assert board.last["replanned"] and board.last["changes"] == ["改写：算预算 → 按天算预算"]


# ── the loop, with the offline model

def plan_boards(run):
    return [e["after"] for e in kinds(run, "plan") if e["accepted"]]


def check_board_rules_held(run):
    """At every accepted board: at most one in progress; every completed item proven by a successful result of
    this run that came before it, whose text contains the evidence."""
    results = {e["id"]: e for e in kinds(run, "tool_result")}
    for event in kinds(run, "plan"):
        assert sum(i["status"] == "in_progress" for i in event["after"]) <= 1
        for entry in event["after"]:
            if entry["status"] == "completed":
                proof = results[entry["found_in"]["id"]]
                assert proof["ok"] and proof["name"] != WRITE_TODOS
                assert run.index(proof) < run.index(event)
                assert entry["evidence"] in " ".join(proof["content"].split())


def test_the_model_plans_first_then_works_through_the_board():
    run = checked(list(run_with_plan(make_client("offline"), TASK, None, TOOLS)))
    calls = kinds(run, "tool_call")
    assert calls[0]["name"] == WRITE_TODOS and kinds(run, "request")[0]["turn"] == 1
    assert [c["name"] for c in calls if c["name"] != WRITE_TODOS] == ["get_weather", "get_forecast", "calculate"]
    # one plan event right after each write_todos result, for that call
    for position, event in enumerate(run):
        if event["type"] == "tool_result" and event["name"] == WRITE_TODOS:
            assert run[position + 1]["type"] == "plan" and run[position + 1]["id"] == event["id"]
    first = kinds(run, "plan")[0]
    assert first["before"] == [] and [i["status"] for i in first["after"]] == ["in_progress", "pending", "pending"]
    check_board_rules_held(run)
    assert [i["status"] for i in plan_boards(run)[-1]] == ["completed"] * 3
    assert run[-1]["type"] == "final" and "1200/3 = 400" in run[-1]["content"]
    count = tally(run)
    assert count["rejected"] == count["replans"] == count["failed_calls"] == 0 and count["finished"]


def test_a_failed_step_makes_the_model_replan_and_the_board_shows_old_and_new():
    run = checked(list(run_with_plan(make_client("offline"), TASK, None, TOOLS, broken=BROKEN)))
    failed = next(e for e in kinds(run, "tool_result") if not e["ok"])
    assert failed["name"] == "get_weather" and "被设定为失败" in failed["content"]
    replan = next(e for e in kinds(run, "plan") if e["replanned"])
    assert run.index(replan) > run.index(failed)
    assert replan["before"][0]["content"] != replan["after"][0]["content"]
    assert replan["before"][0]["status"] == replan["after"][0]["status"] == "in_progress"
    assert any(change.startswith("改写：") for change in replan["changes"])
    following = kinds(run[run.index(replan):], "tool_call")[0]
    assert following["name"] == "get_forecast" and following["arguments"]["city"] == "北京"
    check_board_rules_held(run)
    assert run[-1]["type"] == "final" and "没有成功，改用了这个" in run[-1]["content"]
    count = tally(run)
    assert count["replanned_after_failure"] and count["failed_calls"] == 1 and count["completed_despite_failure"] == []


def test_a_step_with_no_other_way_is_dropped_and_the_answer_says_so():
    run = checked(list(run_with_plan(make_client("offline"), TASK, None, TOOLS, broken={"calculate"})))
    drop = next(e for e in kinds(run, "plan") if e["replanned"])
    assert any(change.startswith("删掉：") and "1200/3" in change for change in drop["changes"])
    assert all("1200/3" not in i["content"] for i in plan_boards(run)[-1])
    assert "没做成、从计划里删掉的" in run[-1]["content"] and "calculate" in run[-1]["content"]


@pytest.mark.parametrize("mistake, words", [("two_in_progress", "都是 in_progress"),
                                            ("unchecked", "不在这次运行的任何工具结果里")])
def test_a_rule_broken_on_request_is_refused_and_then_corrected(mistake, words):
    run = checked(list(run_with_plan(make_client("offline"), TASK + MISTAKE_ASKS[mistake], None, TOOLS)))
    plans = kinds(run, "plan")
    refused, corrected = plans[0], plans[1]
    assert not refused["accepted"] and any(words in p for p in refused["problems"]) and refused["after"] == []
    refused_result = next(e for e in kinds(run, "tool_result") if e["id"] == refused["id"])
    assert refused_result["error_code"] == "plan_rule" and words in refused_result["content"]
    assert corrected["accepted"] and corrected["turn"] == 2
    check_board_rules_held(run)
    assert run[-1]["type"] == "final" and tally(run)["rejected"] == 1


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_plan_loop_over_http_with_each_sdk(connect, provider, stream):
    run = checked(list(run_with_plan(connect(provider), TASK, None, TOOLS, broken=BROKEN, stream=stream)))
    assert tally(run)["replanned_after_failure"] and run[-1]["type"] == "final"
    check_board_rules_held(run)
    assert bool(kinds(run, "delta")) == stream


def test_a_write_todos_the_person_refuses_leaves_the_board_and_says_so():
    steps = run_with_plan(make_client("offline"), TASK, None, TOOLS)
    seen, event = [], next(steps)
    while True:
        seen.append(event)
        refuse = event["type"] == "tool_call" and event["name"] == WRITE_TODOS and event["turn"] == 1
        try:
            event = steps.send({"deny": "先别写计划"} if refuse else None)
        except StopIteration:
            break
    plan = kinds(seen, "plan")[0]
    assert not plan["accepted"] and plan["after"] == [] and "用户拒绝" in plan["problems"][0]


# ── the course's fixed plan on the same task and the same failure

def test_the_fixed_plan_marks_a_failed_step_completed_and_goes_on():
    run = checked(list(plan_then_execute(make_client("offline"), TASK, None, TOOLS, broken=BROKEN)))
    plans = kinds(run, "plan")
    assert all(p["source"] == "fixed" and p["accepted"] and not p["replanned"] for p in plans)
    contents = [i["content"] for i in plans[0]["after"]]
    assert all([i["content"] for i in p["after"]] == contents for p in plans)     # the plan never changes
    failed = next(e for e in kinds(run, "tool_result") if not e["ok"])
    assert failed["name"] == "get_weather" and failed["step"] == 1
    board = plans[-1]["after"]
    assert [i["status"] for i in board] == ["completed"] * 3
    assert board[0]["failed_calls"] == 1 and board[0]["ok_calls"] == 0 and "没有成功" in board[0]["result"]
    assert [e["step"] for e in kinds(run, "tool_result")] == [1, 2, 3]           # the later steps still ran
    count = tally(run)
    assert count["completed_despite_failure"] == [contents[0]] and not count["replanned_after_failure"]
    assert count["rounds"] == 1 + 2 * 3 and run[-1]["type"] == "final" and run[-1]["turn"] == count["rounds"]
    turns = [e["turn"] for e in run]
    assert turns == sorted(turns)


def test_both_ways_are_counted_from_what_the_server_reported():
    client = make_client("offline")
    runs = [list(run_with_plan(client, TASK, None, TOOLS, broken=BROKEN)),
            list(plan_then_execute(client, TASK, None, TOOLS, broken=BROKEN))]
    for run in runs:
        count = tally(run)
        responses = kinds(run, "response")
        assert count["rounds"] == len(kinds(run, "request")) == len(responses)
        assert count["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in responses)
        assert count["estimated"] is True and count["unreported"] == 0      # the offline model's usage is an estimate


def test_usage_from_a_server_that_is_not_the_offline_model_is_not_called_an_estimate(connect, server):
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "some-real-model",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "好的"}}],
             "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}}
    server.queue({"body": reply})
    count = tally(list(run_with_plan(connect("openai"), "你好", None, TOOLS)))
    assert count["estimated"] is False and (count["prompt_tokens"], count["completion_tokens"]) == (7, 2)


def test_a_planner_reply_without_steps_ends_with_a_clear_error(connect, server):
    server.queue({"message": {"content": "好的，我会先查天气再算预算。"}})
    run = list(plan_then_execute(connect("openai"), TASK, None, TOOLS))
    assert run[-1]["type"] == "error" and run[-1]["code"] == "bad_plan" and '{"steps": [...]}' in run[-1]["message"]


def test_the_fixed_plan_passes_a_step_edit_on_to_the_step_s_loop():
    """Step mode (单步) edits a call before it runs: the fixed plan's steps are loops of their own, and the
    edit reaches the one that is running, as it reaches run_with_plan's loop."""
    run = plan_then_execute(make_client("offline"), "查北京今天的天气", None, TOOLS)
    event = next(run)
    while event["type"] != "tool_call":
        event = next(run)
    assert event["arguments"] == {"city": "北京"} and event["step"] == 1
    event = run.send({"arguments": {"city": "上海"}})
    while event["type"] != "tool_result":
        event = next(run)
    assert event["ok"] and "上海今天多云" in event["content"] and event["arguments"]["city"] == "上海"
    run.close()


def test_a_step_that_failed_and_then_succeeded_is_not_completed_despite_failure():
    """The fixed plan's step loop may fail a call and make it good in its next round: that step was done, and
    tally does not list it among the steps marked completed despite a failure."""
    run = checked(list(plan_then_execute(make_client("offline", mistake="missing_argument"), TASK, None, TOOLS)))
    board = kinds(run, "plan")[-1]["after"]
    retried = [item for item in board if item["failed_calls"] and item["ok_calls"]]
    assert retried and tally(run)["completed_despite_failure"] == []
