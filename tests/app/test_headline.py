"""The run's headline over real runs of the loops (offline model, real sandboxed tools) and
over hand-made event lists for the states a run of the offline model cannot reach."""
from __future__ import annotations

import pytest

import llm_clients
import sandbox
from function_calling_loop import run_function_calling
from lessons import presets
from runs import headline
from runs.backend import executor
from lessons.editor_panel import EXAMPLE_SETS, example_text
from react_loop import run_react

WEATHER = example_text(EXAMPLE_SETS["天气"])
EMPLOYEES = example_text(EXAMPLE_SETS["工资/员工档案"])


def run(source: str, question: str, mistake: str | None = None, loop=run_function_calling, **options):
    tools = sandbox.extract_schemas(source)["tools"]
    client = llm_clients.make_client("offline", mistake=mistake)
    return list(loop(client, question, tools, executor(source, "headline-test"), **options))


def test_a_clean_run_is_answered():
    found = headline.verdict(run(WEATHER, "北京今天天气怎么样？"))
    assert found["state"] == "answered" and found["icon"] == "✅"


def test_a_recovered_mistake_says_which_round_fixed_it():
    events = run(WEATHER, "杭州未来 5 天的天气预报", mistake="wrong_type")
    found = headline.verdict(events)
    assert found["state"] == "recovered" and found["icon"] == "✅"
    assert "第 2 轮改正了 1 次失败的调用" in found["title"]


def test_the_walkthrough_on_the_wrong_tool_set_is_not_a_success():
    # The course question asked of the 工资/员工档案 set: its tool fails and the model answers anyway.
    events = run(EMPLOYEES, presets.WALKTHROUGH)
    assert any(e["type"] == "tool_result" and not e["ok"] for e in events)
    found = headline.verdict(events)
    assert found["state"] == "gave_up" and found["icon"] == "⚠️"
    assert "✅" not in headline.headline(events)


def test_the_walkthrough_in_react_is_not_a_success_either():
    found = headline.verdict(run(EMPLOYEES, presets.WALKTHROUGH, loop=run_react))
    assert found["state"] == "gave_up"


def test_the_guard_and_max_turns_are_named():
    assert headline.verdict(run(WEATHER, "北京今天天气怎么样？", mistake="stubborn"))["state"] == "guard"
    assert headline.verdict(run(WEATHER, "北京今天天气怎么样？", mistake="endless", max_turns=3))["state"] == "max_turns"


def test_a_react_format_error_fixed_later_is_recovered():
    events = run(WEATHER, "北京今天天气怎么样？", mistake="no_action_line", loop=run_react)
    found = headline.verdict(events)
    assert found["state"] == "recovered" and "格式" not in found["title"]


def result(turn, name, ok):
    return {"type": "tool_result", "turn": turn, "name": name, "ok": ok, "id": f"c{turn}{name}"}


@pytest.mark.parametrize("events, state", [
    ([result(1, "a", False), result(2, "b", True), {"type": "final", "turn": 3, "content": "x"}], "gave_up"),
    ([result(1, "a", True), result(2, "a", False), {"type": "final", "turn": 3, "content": "x"}], "gave_up"),
    ([result(1, "a", False), result(2, "a", True), {"type": "final", "turn": 3, "content": "x"}], "recovered"),
    ([{"type": "error", "turn": 1, "code": "auth", "message": "密钥无效"}], "error"),
    ([{"type": "error", "turn": None, "code": "exception", "message": "boom"}], "error"),
    ([{"type": "parse", "turn": 1, "ok": False}, {"type": "final", "turn": 1, "content": "x"}], "gave_up"),
])
def test_states_over_event_lists(events, state):
    assert headline.verdict(events)["state"] == state
    if state in ("gave_up", "error"):
        assert "✅" not in headline.headline(events)


def test_a_run_without_an_end_has_no_headline():
    assert headline.headline([result(1, "a", True)]) == ""


# ---------------------------------------------------------------- who stopped the call

TRANSFERS = example_text(EXAMPLE_SETS["转账与删除用户（Schema ≠ 授权）"])


def test_a_tool_s_business_rule_is_named_and_the_model_is_not_blamed():
    events = run(TRANSFERS, "给张三转账 8000 元")
    assert any(e["type"] == "tool_result" and e["error_code"] == "forbidden" for e in events)
    found = headline.verdict(events)
    assert found["state"] == "stopped" and found["icon"] == "⚠️"
    assert found["title"].startswith("工具 transfer_money 按自己的业务规则拒绝了调用") and "模型" not in found["title"]


TIMEOUT = example_text(EXAMPLE_SETS["会超时的工具（timeout）"])


def test_a_tool_stopped_at_its_time_limit_is_named_and_the_model_is_not_blamed():
    events = run(TIMEOUT, "北京现在的路况怎么样？")
    assert any(e["type"] == "tool_result" and e["error_code"] == "timeout" for e in events)
    found = headline.verdict(events)
    assert found["state"] == "stopped" and found["icon"] == "⚠️"
    assert found["title"].startswith("get_traffic 运行到了限额") and "模型放弃" not in found["title"]


def refused(code, name="bash", turn=1):
    return {**result(turn, name, False), "error_code": code}


OPS = example_text(EXAMPLE_SETS["运维：配置、SQL、命令"])


@pytest.mark.parametrize("question, error", [("读一下 orders 服务的配置", "ValueError: 没有服务 orders"),
                                             ("读一下 billing 服务的配置", "ConnectionError: 配置中心")])
def test_a_tool_that_raised_on_the_question_s_own_words_is_named_not_the_model(question, error):
    events = run(OPS, question)
    assert any(e["type"] == "tool_result" and error in e["content"] for e in events)
    found = headline.verdict(events)
    assert found["state"] == "stopped" and found["icon"] == "⚠️" and "模型放弃" not in found["title"]
    assert found["title"].startswith("fetch_config 对问题里原样给出的参数报了错")


def test_a_text_the_question_does_not_hold_is_still_the_model_s():
    asked = {"type": "request", "turn": 1, "messages": [{"role": "user", "content": "读一下 orders 服务的配置"}]}
    failed = {**refused("tool_exception", "fetch_config"), "arguments": {"service": "order"}}
    events = [asked, {**failed, "arguments": {"service": "ordres"}}, {"type": "final", "turn": 2, "content": "x"}]
    assert headline.verdict(events)["state"] == "gave_up"
    events[1] = {**failed, "arguments": {"service": "orders", "limit": 5}}      # a number is no word of the question
    assert headline.verdict(events)["state"] == "gave_up"
    events[1] = {**failed, "arguments": {"service": " Orders"}}                 # written as the question writes it
    assert headline.verdict(events)["state"] == "stopped"


@pytest.mark.parametrize("code, said", [
    ("rule_denied", "权限规则拒绝了 bash 的调用"),
    ("denied", "你拒绝了 bash 的调用"),
    ("hook_denied", "钩子拒绝了 bash 的调用"),
    ("hook_blocked", "bash 运行了，但钩子没有把结果交给模型"),
    ("rate_limited", "沙箱拒绝运行 bash"),
    ("busy", "沙箱拒绝运行 bash"),
    ("sandbox_refused", "沙箱拒绝运行 bash"),
    ("exit_status", "bash 的命令运行了，但失败了"),
    ("memory_limit", "bash 运行到了限额"),
    ("output_too_large", "bash 运行到了限额"),
    ("workspace_full", "bash 运行到了限额"),
])
def test_who_stopped_the_call_is_named(code, said):
    events = [refused(code), {"type": "final", "turn": 2, "content": "没做成"}]
    found = headline.verdict(events)
    assert found["state"] == "stopped" and found["icon"] == "⚠️"
    assert found["title"].startswith(said) and "模型放弃" not in found["title"]
    assert not headline.summary(events)["ok"]


def test_a_model_s_mistake_beside_a_refusal_is_still_the_model_s():
    events = [refused("denied", "write"), {**result(1, "get_wether", False), "error_code": "unknown_tool"},
              {"type": "final", "turn": 2, "content": "x"}]
    title = headline.verdict(events)["title"]
    assert title.startswith("你拒绝了 write 的调用") and "模型放弃了：1 次失败的调用没有改正（get_wether）" in title


def test_a_hand_written_result_is_not_a_tool_s_answer():
    events = [{**result(1, "get_weather", True), "overridden": "结果由学生手写，没有执行工具"},
              {"type": "final", "turn": 2, "content": "北京下雪"}]
    found = headline.verdict(events)
    assert found["state"] == "hand_written" and found["icon"] == "✍️" and "✅" not in headline.headline(events)
    assert "第 1 轮 get_weather" in found["title"] and "手写" in found["title"]


def test_edited_arguments_are_said_over_the_answer():
    events = [{**result(1, "write", True), "edited": ['content："a" → "b"']},
              {"type": "final", "turn": 2, "content": "写好了"}]
    found = headline.verdict(events)
    assert found["state"] == "answered" and "第 1 轮 write 的参数是你改过后才执行的" in found["title"]


def test_a_refusal_made_good_later_is_not_called_the_model_s_correction():
    events = [refused("denied", "bash"), result(2, "bash", True), {"type": "final", "turn": 3, "content": "好了"}]
    found = headline.verdict(events)
    assert found["state"] == "recovered" and "改正" not in found["title"]
    assert "1 次没做成的调用（bash）在第 2 轮再调用成功了" in found["title"]


def test_a_call_that_failed_on_a_hook_s_arguments_is_the_hook_s_not_the_model_s():
    events = [{**refused("invalid_arguments", "get_weather"), "changed_by": ["rename_city"]},
              {"type": "final", "turn": 2, "content": "没做成"}]
    found = headline.verdict(events)
    assert found["state"] == "stopped" and "模型放弃" not in found["title"]
    assert found["title"].startswith("get_weather 执行的是钩子改过的参数，失败了")
    # A refusal keeps its own name even when a hook had changed the arguments too.
    events[0]["error_code"] = "forbidden"
    assert headline.verdict(events)["title"].startswith("工具 get_weather 按自己的业务规则拒绝了调用")


def test_a_hook_that_failed_closed_before_the_call_is_named():
    events = [{**refused("hook_failed", "fetch_config"), "hook": "lowercase_service"},
              {"type": "final", "turn": 2, "content": "没做成"}]
    found = headline.verdict(events)
    assert found["state"] == "stopped" and "模型放弃" not in found["title"]
    assert found["title"].startswith("钩子 lowercase_service 自己出错了（fail closed：出错就不放行），fetch_config 没有执行")


@pytest.mark.parametrize("cause, title", [
    ("syntax_error", "钩子源码没有加载，模型还没被问到"),
    ("busy", "沙箱这次没有运行钩子源码（不是源码的错，原因见下），模型还没被问到"),
])
def test_a_hooks_source_the_sandbox_did_not_run_is_not_called_broken(cause, title):
    found = headline.verdict([{"type": "error", "turn": None, "code": "hooks_source", "cause": cause, "message": "x"}])
    assert found["state"] == "hooks_failed" and found["title"] == title


def test_a_hook_that_failed_open_is_said_over_a_success():
    failed = {"type": "hook", "turn": 1, "id": "c1", "event": "PreToolUse", "name": "audit", "fail": "open",
              "problem": "KeyError: 'x'"}
    events = [result(1, "get_weather", True), failed, {"type": "final", "turn": 2, "content": "晴"}]
    found = headline.verdict(events)
    assert found["state"] == "answered" and found["icon"] == "✅"
    assert "钩子 audit 出错了，它是 fail open 的，出错不拦下什么，运行照常" in found["title"]
    events.insert(2, {**failed, "name": "timing"})
    assert "钩子 audit、timing 出错了，它们是 fail open 的" in headline.verdict(events)["title"]
    events[1:3] = [{**failed, "fail": "closed", "name": "region_check"}]   # a closed one stopped its call: said elsewhere
    assert "出错了" not in headline.verdict(events)["title"]


def test_a_sub_agent_is_judged_inside_and_named_on_the_parents_headline():
    task = {"type": "tool_call", "turn": 1, "id": "t1", "name": "task", "arguments": {"description": "查天气"}}
    parent_ok = [{"type": "request", "turn": 1, "tools": [{}]}, {"type": "response", "turn": 1}, task,
                 {"type": "tool_result", "turn": 1, "id": "t1", "name": "task", "ok": True},
                 {"type": "response", "turn": 2}, {"type": "final", "turn": 2, "content": "晴"}]
    child_cut = [{"type": "request", "turn": 1, "child": "t1", "tools": [{}]},
                 {"type": "response", "turn": 1, "child": "t1", "finish_reason": "length"},
                 {"type": "final", "turn": 1, "child": "t1", "content": "北京今"}]
    found = headline.verdict(parent_ok[:4] + child_cut + parent_ok[4:])
    assert found["state"] == "child_failed" and found["icon"] == "⚠️"
    assert found["title"].startswith("子代理「查天气」：✂️ 回答被截断了")
    assert found["title"].endswith("下面的回答用了它交回的东西：2 轮，1 次工具调用")
    stopped = headline.verdict(parent_ok[:4] + child_cut[:1] + parent_ok[4:])
    assert "子代理「查天气」被停下了，没有做完" in stopped["title"]
    child_ok = [{**child_cut[0]}, {"type": "response", "turn": 1, "child": "t1", "finish_reason": "tool_calls"},
                {"type": "tool_call", "turn": 1, "child": "t1", "id": "c1", "name": "get_weather"},
                {"type": "tool_result", "turn": 1, "child": "t1", "id": "c1", "name": "get_weather", "ok": True},
                {"type": "response", "turn": 2, "child": "t1"}, {"type": "final", "turn": 2, "child": "t1", "content": "晴"}]
    assert headline.verdict(parent_ok[:4] + child_ok + parent_ok[4:])["state"] == "answered"
