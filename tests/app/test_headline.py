"""The run's headline over real runs of the loops (offline model, real sandboxed tools) and
over hand-made event lists for the states a run of the offline model cannot reach."""
from __future__ import annotations

import json

import pytest

import events as loop_events
import llm_clients
import sandbox
from function_calling_loop import run_function_calling
from lessons import presets
from runs import headline, purposes
from runs.backend import executor
from lessons.editor_panel import EXAMPLE_SETS, example_text
from examples_weather import registry as weather
from first_call import FINISH_REASONS, json_error
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
    asked = [{"role": "user", "content": "派一个子代理去查天气"}]
    parent_ok = [{"type": "request", "turn": 1, "tools": [{}], "messages": asked}, {"type": "response", "turn": 1}, task,
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


# ---------------------------------------------------------------- what the run was for (runs/purposes.py)

def asked(question: str) -> dict:
    return {"type": "request", "turn": 1, "tools": [{"type": "function", "function": {
        "name": "get_weather", "parameters": {"properties": {"city": {}, "unit": {}}}}}, {"type": "function", "function": {
            "name": "get_forecast", "parameters": {"properties": {"city": {}, "days": {}}}}}],
        "messages": [{"role": "user", "content": question}]}


def called(turn: int, name: str, arguments: dict, ok: bool = True, index: int = 0, **result) -> list[dict]:
    call_id = f"c{turn}{index}"
    return [{"type": "tool_call", "turn": turn, "id": call_id, "name": name, "arguments": arguments},
            {"type": "tool_result", "turn": turn, "id": call_id, "name": name, "ok": ok, "arguments": arguments,
             **({"error_code": "invalid_arguments"} if not ok else {}), **result}]


def answered(turn: int, content: str = "好") -> list[dict]:
    return [{"type": "request", "turn": turn}, {"type": "response", "turn": turn},
            {"type": "final", "turn": turn, "content": content}]


def test_a_preset_s_run_is_judged_against_what_it_is_for():
    purpose = purposes.purpose_for("function_calling", "北京明天会下雨吗？")
    right = [asked("北京明天会下雨吗？"), *called(1, "get_forecast", {"city": "北京"}), *answered(2)]
    assert headline.judge(right, purpose)["state"] == "answered"
    today = [asked("北京明天会下雨吗？"), *called(1, "get_weather", {"city": "北京"}), *answered(2)]
    found = headline.judge(today, purpose)
    assert found["state"] == "missed" and found["icon"] == "⚠️" and found["state"] not in headline.SUCCESS
    assert found["title"] == ('这个问题要调用 get_forecast(city="北京" / "北京市")，调用的却是 get_weather(city="北京")'
                              "：2 轮，1 次工具调用")
    # The one real run: the offline model now calls the forecast for tomorrow.
    assert headline.verdict(run(WEATHER, "北京明天会下雨吗？"), purpose)["state"] == "answered"


def test_a_wrong_argument_is_named_with_whoever_wrote_it():
    purpose = purposes.purpose_for("function_calling", "广州冷不冷？")
    tokyo = [asked("广州冷不冷？"), *called(1, "get_weather", {"city": "Tokyo"}), *answered(2)]
    title = headline.judge(tokyo, purpose)["title"]
    assert title.startswith('这个问题要的是 get_weather(city="广州")，实际执行的是 get_weather(city="Tokyo")；')
    assert 'city="Tokyo" 在对话里没有出现过' in title          # and the value nobody said, beside it
    hooked = [asked("广州冷不冷？"), *called(1, "get_weather", {"city": "广州"}), *answered(2)]
    hooked[2] = {**hooked[2], "arguments": {"city": "Guangzhou"}, "changed_by": ["to_english"]}
    assert headline.judge(hooked, purpose)["title"].startswith(
        '这个问题要的是 get_weather(city="广州")，实际执行的是 get_weather(city="Guangzhou")（钩子 to_english 改过参数）')
    fixed = [asked("广州冷不冷？"), *called(1, "get_weather", {"city": "Tokyo"}), *answered(2, "广州今天 31°C")]
    fixed[2] = {**fixed[2], "arguments": {"city": "广州"}, "edited": ['city："Tokyo" → "广州"']}
    found = headline.judge(fixed, purpose)           # a person put it right before it ran: what ran is what counts
    assert found["state"] == "answered" and "你改过后才执行的" in found["title"]


def test_a_mistake_the_model_corrected_is_not_held_against_the_purpose():
    purpose = purposes.purpose_for("function_calling", "广州冷不冷？")
    events = [asked("广州冷不冷？"), *called(1, "get_weather", {"city": 3}, ok=False),
              *called(2, "get_weather", {"city": "广州"}), *answered(3, "广州今天 31°C")]
    assert headline.judge(events, purpose)["state"] == "recovered"


def test_a_question_that_wants_a_sub_agent_says_when_none_was_sent():
    purpose = purposes.purpose_for("subagents", "派一个子代理去查北京今天的天气，告诉我结论")
    assert purpose.calls == ({"name": "task"},)
    alone = [{**asked("派一个子代理去查北京今天的天气，告诉我结论"), "tools": [
        {"type": "function", "function": {"name": "task", "parameters": {"properties": {"description": {}}}}}]},
        {"type": "response", "turn": 1}, {"type": "final", "turn": 1, "content": "北京晴"}]
    found = headline.judge(alone, purpose)
    assert found["state"] == "missed" and found["title"].startswith(
        "这个问题要调用 task，模型一个工具也没有调用就回答了：下面的回答不来自工具")
    assert purposes.purpose_for("subagents", "北京今天天气怎么样？").calls[0]["name"] == "get_weather"


def test_a_question_that_wants_no_tool_answered_directly_is_a_success():
    purpose = purposes.EVALUATED["你好，介绍一下你自己"]
    events = [asked("你好，介绍一下你自己"), {"type": "response", "turn": 1}, {"type": "final", "turn": 1, "content": "你好"}]
    assert headline.judge(events, None)["state"] == "no_tool_call"
    found = headline.judge(events, purpose)
    assert found["state"] == "answered" and found["title"].startswith("这个问题不需要工具，模型直接回答了")
    assert headline.judge([*events[:1], *called(1, "get_weather", {"city": "你好"}), *answered(2)],
                          purpose)["title"].startswith("这个问题不需要工具，模型却调用了 get_weather")


def test_a_purpose_that_does_not_fit_the_run_is_not_asked_of_it():
    purpose = purposes.purpose_for("function_calling", "广州冷不冷？")
    edited = [{**asked("广州冷不冷？"), "tools": [{"type": "function", "function": {"name": "weather_now",
                                                                                 "parameters": {}}}]},
              *called(1, "weather_now", {"where": "广州"}), *answered(2)]
    assert not headline.fits(purpose, edited) and headline.judge(edited, purpose)["state"] == "answered"
    renamed = purposes.purpose_for("skills", "帮我把这几个提交写成发布说明")     # its skill is not in the catalogue
    listed = {"type": "request", "turn": 1, "tools": [{"type": "function", "function": {
        "name": "load_skill", "parameters": {"properties": {"name": {}}}}}],
        "messages": [{"role": "system", "content": "- notes: 写说明"}, {"role": "user", "content": "x"}]}
    assert not headline.fits(renamed, [listed])


def test_a_purpose_is_recorded_with_the_run_and_read_back_with_care():
    events = [purposes.event(purposes.purpose_for("function_calling", "北京明天会下雨吗？")), asked("北京明天会下雨吗？"),
              *called(1, "get_weather", {"city": "北京"}), *answered(2)]
    assert events[0]["type"] == "purpose" and headline.verdict(events)["state"] == "missed"
    events[0] = {"type": "purpose", "turn": 0, "calls": "all of them"}       # anyone's file: not a case
    assert headline.recorded_purpose(events) is None and headline.verdict(events)["state"] == "answered"
    assert purposes.purpose_for("function_calling", "随便问问") is None


def test_the_memory_preset_keeps_the_thing_liked():
    purpose = purposes.purpose_for("skills", "请记住我喜欢用 Python")
    memory = [{"type": "request", "turn": 1, "tools": [{"type": "function", "function": {
        "name": "remember", "parameters": {"properties": {"fact": {}, "source": {}}}}}],
        "messages": [{"role": "user", "content": "请记住我喜欢用 Python"}]}]
    wrong = memory + [*called(1, "remember", {"fact": "喜欢", "source": "Python"}), *answered(2)]
    assert headline.judge(wrong, purpose)["title"].startswith(
        '这个问题要的是 remember(fact=「Python」)，实际执行的是 remember(fact="喜欢", source="Python")')
    right = memory + [*called(1, "remember", {"fact": "用户喜欢用 Python"}), *answered(2)]
    assert headline.judge(right, purpose)["state"] == "answered"


# ---------------------------------------------------------------- checks every run gets

def test_one_call_repeated_is_named_and_is_not_a_success():
    events = [asked("北京天气"), *[e for i in range(4) for e in called(1, "get_weather", {"city": "北京"}, index=i)],
              *answered(2)]
    found = headline.verdict(events)
    assert found["state"] == "repeated_calls" and found["icon"] == "🔁"
    assert found["title"].startswith('🔁 同一个调用 get_weather(city="北京") 重复了 4 次（都在第 1 轮）：模型在原地打转')
    twice = [asked("北京天气"), *called(1, "get_weather", {"city": "北京"}), *called(2, "get_weather", {"city": "北京"}),
             *answered(3)]
    assert headline.verdict(twice)["state"] == "answered"        # once again is a retry, not a loop


def test_the_rounds_counted_are_the_rounds_on_the_timeline():
    events = [asked("北京天气"), {"type": "response", "turn": 1}, *called(1, "get_weather", {"city": "北京"}),
              {"type": "request", "turn": 2}, {"type": "response", "turn": 2}, *called(2, "get_weather", {"city": "上海"}),
              {"type": "request", "turn": 3, "messages": []},
              {"type": "error", "turn": 3, "code": "bad_request", "message": "HTTP 400"}]
    assert "3 轮，2 次工具调用" in headline.verdict(events)["title"]      # the refused third request is a round


def test_a_context_overflow_names_what_grew_the_conversation_not_the_message_format():
    client = llm_clients.make_client("offline", mistake="repeat_call", max_tokens=1024)    # the page's default
    # The course's registry in this process: sixty-odd calls, and the sandbox is not what is tested here.
    events = list(run_function_calling(client, "北京今天天气怎么样？", weather.to_schemas(), weather))
    ended = events[-1]
    assert ended["type"] == "error" and ended["code"] == "context_exceeded" and ended["turn"] == 3
    found = headline.verdict(events)
    assert found["state"] == "context_overflow" and found["icon"] == "❌"
    assert found["title"].startswith("对话超出了服务端的上下文长度，第 3 轮的请求被拒收了（服务端的原话见下）：🔁 同一个调用 "
                                     'get_weather(city="北京") 重复了')
    assert "每一次的调用和结果都留在了对话里" in found["title"] and found["title"].endswith("：3 轮，62 次工具调用")
    assert found["title"].count("🔁") == 1
    for wrong in ("GLM", "content", "max_tokens"):
        assert wrong not in found["title"] + found["detail"]
    cut = next(e for e in events if e["type"] == "response")
    assert cut["finish_reason"] == "length"
    said = " ".join(a["message"] for a in cut["accents"])
    assert "调大 max_tokens 没有用" in said and "写了 31 遍" in said


def test_a_value_the_model_composed_from_what_it_was_told_is_no_doubt():
    events = [asked("广州冷不冷？"), *called(1, "get_weather", {"city": "广州市"}), *answered(2)]
    assert headline.verdict(events)["state"] == "answered"       # 广州 was said: 广州市 is its name, not an invention


def test_a_context_over_its_budget_and_no_valid_skill_are_doubts():
    shrunk = {"type": "context", "turn": 0, "strategy": "window", "title": "滑动窗口", "budget": 300,
              "before_tokens": 1436, "after_tokens": 393, "rows": []}
    found = headline.verdict([shrunk, *answered(1)])
    assert found["state"] == "doubtful" and found["title"].startswith(
        "「滑动窗口」之后，发出去的上下文仍有 393 个 token，超出预算 300：1 轮")
    assert headline.verdict([{**shrunk, "after_tokens": 290}, *answered(1)])["state"] == "answered"
    none = {"type": "skills", "turn": 0, "way": "pasted", "skills": [], "problems": ["Bad/SKILL.md：name 不合格式"]}
    found = headline.verdict([none, *answered(1)])
    assert found["state"] == "doubtful" and found["title"].startswith("没有一个合格的技能，模型没有技能可读（1 个问题见技能列表）")


SUBAGENT = "派一个子代理去查北京今天的天气，再派一个子代理去查上海今天的天气"


def test_the_offline_model_s_disclaimer_is_said_once_however_many_children_it_quotes():
    from subagents import run_with_subagents

    tools = sandbox.extract_schemas(WEATHER)["tools"]
    events = list(run_with_subagents(llm_clients.make_client("offline"), SUBAGENT, tools,
                                     executor(WEATHER, "headline-test")))
    shown = headline.headline(events)
    assert shown.startswith("**✅") and shown.count("离线规则模型") == 1 and "上海今天多云" in shown


def test_a_sub_agent_out_of_its_time_budget_is_the_run_s_setting_not_the_sandbox_s():
    from subagents import run_with_subagents

    tools = sandbox.extract_schemas(WEATHER)["tools"]
    events = list(run_with_subagents(llm_clients.make_client("offline"), "派一个子代理去查北京今天的天气", tools,
                                     executor(WEATHER, "headline-test"), child_seconds=0))
    found = headline.verdict(events)
    assert found["state"] == "stopped" and found["title"].startswith(
        "子代理「查北京今天的天气」用完了给它的时间预算就被停下了，没有做完（预算是这次运行的设置「子代理的时间预算」，不是沙箱的限额）")
    assert "限额（时间、内存" not in found["title"] and "被停下了，没有做完" not in found["title"].split("）", 1)[1]


def test_a_call_that_failed_on_the_wrong_argument_says_what_was_wanted_too():
    purpose = purposes.purpose_for("function_calling", "广州冷不冷？")
    events = [asked("广州冷不冷？"), *called(1, "get_weather", {"city": "Tokyo"}),
              *answered(2, "According to the tool, Tokyo is sunny.")]
    events[2] = {**events[2], "ok": False, "error_code": "tool_error"}
    found = headline.judge(events, purpose)
    assert found["state"] == "gave_up" and found["title"].endswith(
        '；这个问题要的是 get_weather(city="广州")，实际执行的是 get_weather(city="Tokyo")')


def test_a_question_that_declines_a_sub_agent_does_not_want_one():
    assert purposes.purpose_for("subagents", "不用子代理，直接查北京今天的天气") is None
    assert purposes.purpose_for("subagents", "Use a subagent to find the weather in Paris.").calls == ({"name": "task"},)


def test_a_context_overflow_over_real_http_is_named_the_same():
    """The same loop through the openai SDK against the project's own server (offline/server.py), which
    refuses the over-long request with llama-server's words: the verdict reads the same."""
    from offline.server import OfflineServer

    server = OfflineServer(mistake="repeat_call").start()
    try:
        client = llm_clients.make_client("openai", "offline-rule-model", api_key="sk-test", base_url=server.url + "/v1",
                                         max_tokens=1024)
        events = list(run_function_calling(client, "北京今天天气怎么样？", weather.to_schemas(), weather))
    finally:
        server.stop()
    found = headline.verdict(events)
    assert found["state"] == "context_overflow" and "第 3 轮的请求被拒收了" in found["title"]
    assert "这次请求有" in found["detail"] and "服务端的上下文只有 4096 个" in found["detail"]
    assert "GLM" not in found["detail"] and "exceeds the available context size" in found["detail"]


def test_every_preset_question_has_its_purpose_written():
    """A preset reworded in its list but not beside its purpose would lose its check without a word."""
    from lessons.context import page as context_page
    from lessons.planning import page as planning_page
    from lessons.skills import page as skills_page
    from lessons.subagents import page as subagents_page

    missing = [q for questions in presets.PRESETS.values() for q in questions
               if purposes.purpose_for("function_calling", q) is None]
    missing += [q for q in skills_page.PRESETS if purposes.purpose_for("skills", q) is None]
    missing += [q for q in context_page.PRESETS
                if purposes.purpose_for("context", q, {"conversation": context_page.CONVERSATION}) is None]
    missing += [q for questions in subagents_page.EXAMPLE_PRESETS.values() for q in questions
                if purposes.purpose_for("subagents", q) is None]
    missing += [q for questions in planning_page.EXAMPLE_PRESETS.values() for q in questions
                if purposes.purpose_for("planning", q) is None]
    assert missing == []


@pytest.mark.parametrize("question", presets.PRESETS["天气"])
def test_the_offline_model_does_what_each_weather_preset_wants(question):
    purpose = purposes.purpose_for("function_calling", question)
    events = list(run_function_calling(llm_clients.make_client("offline"), question, weather.to_schemas(), weather))
    assert headline.fits(purpose, events) and headline.judge(events, purpose)["state"] == "answered"


# ---------------------------------------------------------------- 8.1: one request, no loop

def one_request(question: str, calls: list[dict], finish: str | None, stream: bool = True) -> list[dict]:
    """A first call's events (code/first_call.py's shape) ending with the assembled calls: each
    {"name", "arguments"} as text; parsed as json.loads reads it, fragments when streamed."""
    def parsed(text):
        return None if json_error(text) else json.loads(text)

    made = [{"index": n, "id": f"call_{n}", "name": c["name"], "arguments": c["arguments"],
             "parsed": parsed(c["arguments"]), "fragments": 3 if stream else 0, "first_ms": 1.0,
             "closed_ms": (3.0 if stream else 4.0) if parsed(c["arguments"]) is not None else None,
             "closed_at": (3 if stream else None) if parsed(c["arguments"]) is not None else None}
            for n, c in enumerate(calls)]
    case = purposes.purpose_for("first_call", question)
    return [e for e in (purposes.event(case),) if e] + [
        loop_events.request(1, [{"role": "user", "content": question}], [{"type": "function", "function": {
            "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
            {"model": "m", "stream": stream}),
        loop_events.assembled(1, stream, made, finish, FINISH_REASONS.get(finish or "", ""), 4.0)]


def test_a_first_call_asking_for_a_tool_is_requested_never_a_check_mark():
    found = headline.verdict(one_request("北京今天天气怎么样？", [{"name": "get_weather", "arguments": '{"city": "北京"}'}],
                                         "tool_calls"))
    assert found["state"] == "requested" and found["icon"] == "📨" and "第 3 片" in found["title"]
    assert headline.summary(one_request("北京今天天气怎么样？", [{"name": "get_weather", "arguments": '{"city": "北京"}'}],
                                        "tool_calls"))["ok"]


def test_a_first_call_cut_or_unclosed_or_off_its_purpose_says_so():
    half = [{"name": "get_weather", "arguments": '{"city": "北'}]
    cut = headline.verdict(one_request("北京今天天气怎么样？", half, "length"))
    assert cut["state"] == "truncated" and cut["icon"] == "✂️" and "参数不完整的调用不能执行" in cut["title"]
    unclosed = headline.verdict(one_request("北京今天天气怎么样？", half, "tool_calls"))
    assert unclosed["state"] == "unclosed" and unclosed["icon"] == "⚠️" and "get_weather" in unclosed["title"]
    elsewhere = headline.verdict(one_request("北京今天天气怎么样？", [{"name": "get_weather", "arguments": '{"city": "上海"}'}],
                                             "tool_calls"))
    assert elsewhere["state"] == "missed" and "上海" in elsewhere["title"] and "北京" in elsewhere["title"]
    greeting = headline.verdict(one_request("你好", [{"name": "get_weather", "arguments": '{"city": "北京"}'}], "tool_calls"))
    assert greeting["state"] == "missed" and "不需要工具" in greeting["title"]
    assert not any(headline.summary(one_request("北京今天天气怎么样？", half, finish))["ok"] for finish in ("length", "tool_calls"))


def test_a_first_call_answered_in_text_is_a_success_only_where_no_tool_is_wanted():
    assert headline.verdict(one_request("你好", [], "stop"))["state"] == "answered"
    free = headline.verdict(one_request("随便问问", [], "stop"))
    assert free["state"] == "no_tool_call" and free["icon"] == "💬"
    wanted = headline.verdict(one_request("北京今天天气怎么样？", [], "stop"))
    assert wanted["state"] == "missed" and "没有要调用工具" in wanted["title"]
