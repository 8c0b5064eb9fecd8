"""code/hooks.py: PreToolUse, PostToolUse and PostToolUseFailure hooks around every call of a loop
that a real SDK client drives against the local offline server."""
import json

import pytest

import examples_weather
import permissions
from hooks import FAILED, POST, PRE, Hooks, hooked_call, mask_secrets, permission_hook, run_with_hooks
from loop_parts import ToolCall
from tool_outcome import LABELS, RESULT_LIMIT

REGISTRY = examples_weather.registry
TOOLS = REGISTRY.to_schemas()
SECRET = "sk-abcdef1234567890xyz"


class Tool:
    """An executor that records what it was asked to run."""

    def __init__(self, answer=None):
        self.ran, self.answer = [], answer

    def __call__(self, name, args):
        self.ran.append((name, args))
        return self.answer(args) if self.answer else REGISTRY.call(name, args).to_dict()


def drive(run, answer=lambda event: None):
    """Runs a loop to the end; where it stops to ask a person, send(answer(event))."""
    seen, event = [], next(run)
    while True:
        seen.append(event)
        try:
            event = run.send(answer(event)) if event.get("asking") else next(run)
        except StopIteration:
            return seen


def of(seen, kind):
    return [e for e in seen if e["type"] == kind]


def weather(connect, hooks, tool, question="北京天气怎么样？"):
    seen = drive(run_with_hooks(connect("openai"), question, TOOLS, tool, hooks))
    json.dumps(seen, ensure_ascii=False)          # an export writes events as they are
    return seen


def test_a_pre_hook_denies_the_tool_does_not_run_and_the_model_reads_the_reason(connect):
    hooks, tool = Hooks(), Tool()
    hooks.add(PRE, lambda call: {"permissionDecision": "deny", "permissionDecisionReason": "今天不查北京"}
              if call["tool_input"].get("city") == "北京" else None)
    seen = weather(connect, hooks, tool)
    assert tool.ran == []
    result = of(seen, "tool_result")[0]
    assert not result["ok"] and result["error_code"] == "hook_denied"
    assert result["content"].startswith(f"❌ [{LABELS['hook_denied']}]") and "今天不查北京" in result["content"]
    sent = of(seen, "request")[1]["messages"][-1]
    assert sent == {"role": "tool", "tool_call_id": result["id"], "content": result["content"]}
    (hook,) = of(seen, "hook")
    assert hook["event"] == PRE and hook["answer"]["permissionDecision"] == "deny"
    assert hook["payload"] == {"hook_event_name": PRE, "tool_name": "get_weather", "tool_input": {"city": "北京"},
                               "tool_use_id": result["id"]}


def test_updated_input_runs_the_new_arguments_and_the_model_is_told(connect):
    hooks, tool = Hooks(), Tool()

    @hooks.on(PRE)
    def prefer_shanghai(call):
        return {"updatedInput": {**call["tool_input"], "city": "上海"}}

    seen = weather(connect, hooks, tool)
    assert tool.ran[0] == ("get_weather", {"city": "上海"})
    result = of(seen, "tool_result")[0]
    assert result["ok"] and "prefer_shanghai" in result["content"] and '{"city": "上海"}' in result["content"]
    assert "上海今天" in result["content"]


def test_masking_replaces_the_result_and_later_hooks_see_the_masked_text(connect):
    hooks, seen_by_audit = Hooks(), []
    hooks.add(POST, mask_secrets)
    hooks.add(POST, lambda call: seen_by_audit.append(call["tool_response"]))
    seen = weather(connect, hooks, Tool(lambda args: f"key={SECRET} password=hunter2 city={args['city']}"))
    result = of(seen, "tool_result")[0]
    assert SECRET not in result["content"] and "hunter2" not in result["content"]
    assert "sk-abcd****" in result["content"] and "password=******" in result["content"]
    assert SECRET not in json.dumps(of(seen, "request")[1]["messages"], ensure_ascii=False)
    assert seen_by_audit and SECRET not in seen_by_audit[0]


def test_an_audit_hook_before_the_masking_hook_logs_the_secret(connect):
    hooks, log = Hooks(), []
    hooks.add(POST, lambda call: log.append(call["tool_response"]))
    hooks.add(POST, mask_secrets)
    seen = weather(connect, hooks, Tool(lambda args: f"key={SECRET}"))
    assert SECRET in log[0]                                      # the pitfall: the log holds the key
    assert SECRET not in of(seen, "tool_result")[0]["content"]   # the model still gets it masked


def test_a_post_hook_that_returns_nothing_leaves_the_result_as_it_was(connect):
    hooks, tool = Hooks(), Tool()
    hooks.add(POST, lambda call: None)
    plain = weather(connect, Hooks(), Tool())
    seen = weather(connect, hooks, tool)
    assert of(seen, "tool_result")[0]["content"] == of(plain, "tool_result")[0]["content"]
    assert of(seen, "hook")[0]["answer"] is None


@pytest.mark.parametrize("fail", ["closed", "open"])
def test_a_pre_hook_that_raises_stops_the_call_only_when_it_fails_closed(connect, fail):
    hooks, tool = Hooks(), Tool()

    def needs_region(call):
        return {"permissionDecision": "allow" if call["tool_input"]["region"] else "deny"}

    hooks.add(PRE, needs_region, fail=fail)
    seen = weather(connect, hooks, tool)
    (hook,) = of(seen, "hook")
    assert hook["problem"] == "KeyError: 'region'" and hook["fail"] == fail and hook["answer"] is None
    result = of(seen, "tool_result")[0]
    if fail == "closed":
        assert tool.ran == [] and result["error_code"] == "hook_failed" and result["hook"] == "needs_region"
        assert "KeyError: 'region'" in result["content"] and "fail closed" in result["content"]
    else:
        assert tool.ran == [("get_weather", {"city": "北京"})] and result["ok"]


def test_a_broken_masking_hook_that_fails_closed_keeps_the_result_from_the_model(connect):
    hooks = Hooks()
    hooks.add(POST, lambda call: {"updatedToolOutput": call["tool_response"].replace(SECRET, call["missing"])})
    tool = Tool(lambda args: f"key={SECRET}")
    seen = weather(connect, hooks, tool)
    result = of(seen, "tool_result")[0]
    assert tool.ran and not result["ok"] and result["error_code"] == "hook_blocked"
    assert SECRET not in json.dumps(of(seen, "request"), ensure_ascii=False)


def test_block_withholds_the_result_and_gives_the_model_the_reason(connect):
    hooks = Hooks()
    hooks.add(POST, lambda call: {"decision": "block", "reason": "结果里有内部地址"})
    tool = Tool(lambda args: "http://10.0.0.8/admin")
    seen = weather(connect, hooks, tool)
    result = of(seen, "tool_result")[0]
    assert tool.ran and result["error_code"] == "hook_blocked" and "结果里有内部地址" in result["content"]
    assert "10.0.0.8" not in json.dumps(of(seen, "request"), ensure_ascii=False)


def test_a_failure_hook_adds_context_but_cannot_turn_a_failure_into_a_success(connect):
    hooks, given = Hooks(), []

    @hooks.on(FAILED)
    def explain(call):
        given.append(call["error"])
        return {"additionalContext": "提示：这个工具只认中文城市名"}

    hooks.add(POST, lambda call: pytest.fail("a failed call runs no PostToolUse hook"))
    seen = weather(connect, hooks, Tool(lambda args: 1 / 0), question="东京天气怎么样？")
    result = of(seen, "tool_result")[0]
    assert not result["ok"] and "ZeroDivisionError" in given[0]
    assert result["content"].endswith("\n提示：这个工具只认中文城市名")


def unreachable(args):
    raise ConnectionError(f"配置中心拒绝了请求：api_key={SECRET} password=hunter2")


def test_a_failure_hook_masks_the_error_s_text_and_the_call_stays_failed(connect):
    hooks = Hooks()
    hooks.add(POST, mask_secrets)
    hooks.add(FAILED, mask_secrets)
    seen = weather(connect, hooks, Tool(unreachable))
    (hook,) = of(seen, "hook")
    assert hook["event"] == FAILED and SECRET in hook["payload"]["error"]
    result = of(seen, "tool_result")[0]
    assert not result["ok"] and result["error_code"] == "tool_exception"
    assert "api_key=sk-abcd**** password=******" in result["content"] and "unseen_by" not in result
    assert SECRET not in json.dumps(of(seen, "request"), ensure_ascii=False)


def test_post_tool_use_hooks_do_not_see_a_failure_and_the_result_says_which(connect):
    hooks = Hooks()
    hooks.add(POST, mask_secrets)
    hooks.add(POST, lambda call: None)
    seen = weather(connect, hooks, Tool(unreachable))
    assert of(seen, "hook") == []
    result = of(seen, "tool_result")[0]
    assert result["unseen_by"] == ["mask_secrets", "<lambda>"] and SECRET in result["content"]


def test_a_broken_failure_hook_that_fails_closed_keeps_the_failure_s_text_from_the_model(connect):
    hooks = Hooks()
    hooks.add(FAILED, lambda call: {"updatedToolOutput": call["missing"]})
    seen = weather(connect, hooks, Tool(unreachable))
    result = of(seen, "tool_result")[0]
    assert result["error_code"] == "hook_blocked" and "失败的文本不交出" in result["content"]
    assert SECRET not in json.dumps(of(seen, "request"), ensure_ascii=False)


@pytest.mark.parametrize("answer, ran", [({"allow": True}, True), ({"deny": "先别查"}, False), (None, False)])
def test_ask_stops_for_a_person_whose_answer_decides(connect, answer, ran):
    hooks, tool = Hooks(), Tool()
    hooks.add(PRE, lambda call: {"permissionDecision": "ask", "permissionDecisionReason": "查天气要先问你"})
    seen = drive(run_with_hooks(connect("openai"), "北京天气怎么样？", TOOLS, tool, hooks), lambda event: answer)
    asked = [e for e in of(seen, "hook") if e["asking"]]
    assert [e["asking"] for e in asked] == ["查天气要先问你"]
    assert bool(tool.ran) is ran
    result = of(seen, "tool_result")[0]
    assert result["ok"] is ran
    if answer and "deny" in answer:
        assert "先别查" in result["content"] and result["error_code"] == "denied"     # a person said no, not a hook
    elif not ran:                                                                   # nobody answered: not run
        assert result["error_code"] == "hook_denied" and "没有人同意" in result["content"]


def test_the_strictest_answer_wins_whatever_the_order(connect):
    hooks, tool = Hooks(), Tool()
    hooks.add(PRE, lambda call: {"permissionDecision": "deny", "permissionDecisionReason": "不许"})
    hooks.add(PRE, lambda call: pytest.fail("after a deny no hook needs to run"))
    assert weather(connect, hooks, tool) and tool.ran == []
    later, tool = Hooks(), Tool()
    later.add(PRE, lambda call: {"permissionDecision": "allow"})
    later.add(PRE, lambda call: {"permissionDecision": "deny", "permissionDecisionReason": "不许"})
    weather(connect, later, tool)
    assert tool.ran == []
    asking, tool = Hooks(), Tool()                 # an allow after an ask does not take the question away
    asking.add(PRE, lambda call: {"permissionDecision": "ask", "permissionDecisionReason": "问一下"})
    asking.add(PRE, lambda call: {"permissionDecision": "allow"})
    seen = drive(run_with_hooks(connect("openai"), "北京天气怎么样？", TOOLS, tool, asking), lambda event: {"allow": True})
    assert [e["asking"] for e in of(seen, "hook") if e["asking"]] == ["问一下"] and tool.ran


def test_a_hook_gets_a_copy_so_only_its_answer_changes_the_call(connect):
    hooks, tool = Hooks(), Tool()
    hooks.add(PRE, lambda call: call["tool_input"].update(city="上海"))
    weather(connect, hooks, tool)
    assert tool.ran == [("get_weather", {"city": "北京"})]


@pytest.mark.parametrize("returned, problem", [("deny", "钩子应返回 dict 或 None，收到 str"),
                                                ({"permission": "deny"}, "PreToolUse 钩子不能返回 permission"),
                                                ({"permissionDecision": "Deny"}, "permissionDecision 应为 allow、ask 或 deny"),
                                                ({"updatedInput": "上海"}, "updatedInput 应为 一个 dict")])
def test_a_malformed_answer_is_a_broken_hook_not_a_silent_no(connect, returned, problem):
    hooks, tool = Hooks(), Tool()
    hooks.add(PRE, lambda call: returned)
    seen = weather(connect, hooks, tool)
    assert of(seen, "hook")[0]["problem"].startswith(problem)
    assert tool.ran == [] and of(seen, "tool_result")[0]["error_code"] == "hook_failed"


@pytest.mark.parametrize("fail", ["closed", "open"])
def test_updated_input_that_does_not_fit_the_tool_is_a_broken_hook_and_never_reaches_the_tool(connect, fail):
    hooks, tool = Hooks(), Tool()

    @hooks.on(PRE, fail=fail)
    def to_list(call):
        return {"updatedInput": {"city": [call["tool_input"]["city"]]}}

    seen = weather(connect, hooks, tool)
    (hook,) = of(seen, "hook")
    assert hook["problem"] == 'updatedInput 不合 get_weather 的参数：参数 city 应为字符串，收到数组 ["北京"]'
    result = of(seen, "tool_result")[0]
    if fail == "closed":
        assert tool.ran == [] and result["error_code"] == "hook_failed" and result["hook"] == "to_list"
        assert "不是你写的参数的问题：不要改参数重试" in result["content"] and result["arguments"] == {"city": "北京"}
    else:                        # its answer is dropped: the call runs on the arguments the model wrote
        assert tool.ran == [("get_weather", {"city": "北京"})] and result["ok"] and "changed_by" not in result


def test_a_permission_rule_is_a_pre_tool_use_hook_with_the_same_reason():
    rules = {"bash": "ask", "bash:rm *": "deny"}
    hooks = Hooks()
    hooks.add(PRE, permission_hook(rules))
    call = ToolCall(1, "call_1", "bash", '{"command": "rm -rf src"}', {"command": "rm -rf src"}, [])
    tool = Tool()
    shell = [{"type": "function", "function": {"name": "bash", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]
    seen = drive(hooked_call(call, tool, shell, hooks))
    assert tool.ran == []
    reason = permissions.decide(rules, "bash", {"command": "rm -rf src"}).reason
    assert reason in of(seen, "tool_result")[0]["content"]


def test_a_hook_registration_names_its_mistake():
    with pytest.raises(ValueError, match="没有 'PreToolCall' 这种钩子"):
        Hooks().add("PreToolCall", print)
    with pytest.raises(ValueError, match='fail 应为 "open" 或 "closed"'):
        Hooks().add(PRE, print, fail="closd")


def test_a_masking_hook_that_returns_none_for_the_output_keeps_the_result_from_the_model(connect):
    hooks = Hooks()
    hooks.add(POST, lambda call: {"updatedToolOutput": None})
    seen = weather(connect, hooks, Tool(lambda args: f"key={SECRET}"))
    assert of(seen, "hook")[0]["problem"].startswith("updatedToolOutput 应为 文字")
    assert of(seen, "tool_result")[0]["error_code"] == "hook_blocked"
    assert SECRET not in json.dumps(of(seen, "request"), ensure_ascii=False)


@pytest.mark.parametrize("text, masked", [
    ("password=hunter2", "password=******"), ('{"password": "hunter2"}', '{"password": "******"}'),
    ("DB_PASSWORD=hunter2 ok", "DB_PASSWORD=****** ok"), ("数据库密码：hunter2，端口 5432", "数据库密码：******，端口 5432"),
    (f"key={SECRET}", "key=sk-abcd****")])
def test_the_masking_hook_finds_the_usual_ways_of_writing_a_secret(text, masked):
    assert mask_secrets({"hook_event_name": POST, "tool_response": text}) == {"updatedToolOutput": masked}
    assert mask_secrets({"hook_event_name": FAILED, "error": text}) == {"updatedToolOutput": masked}
    assert mask_secrets({"hook_event_name": POST, "tool_response": "北京今天晴"}) is None


def test_what_a_hook_writes_is_held_to_the_tool_result_limit(connect):
    hooks = Hooks()
    hooks.add(POST, lambda call: {"updatedToolOutput": "晴" * 100_000, "additionalContext": "注" * 100_000})
    seen = weather(connect, hooks, Tool())
    (hook,) = of(seen, "hook")
    assert hook["answer"]["updatedToolOutput"].startswith("晴" * 100) and "100000" in hook["answer"]["updatedToolOutput"]
    sent = of(seen, "request")[1]["messages"][-1]["content"]
    assert len(sent) < 2 * RESULT_LIMIT + 200


def test_a_result_run_on_a_hook_s_arguments_names_the_hook(connect):
    hooks = Hooks()
    hooks.add(PRE, lambda call: {"updatedInput": {"city": "Peking"}}, fail="open")
    seen = weather(connect, hooks, Tool())
    result = of(seen, "tool_result")[0]
    assert not result["ok"] and result["changed_by"] == ["<lambda>"]
    assert "changed_by" not in of(weather(connect, Hooks(), Tool()), "tool_result")[0]
