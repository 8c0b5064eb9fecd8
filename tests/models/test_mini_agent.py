"""code/mini_agent.py on the offline model: the chapter's parts composed on the skeleton, each acting where it
acts (a permission event between the PreToolUse and PostToolUse hooks, a context event before a request, the
skills event before the first one, plan events after write_todos), in several combinations on a real
workspace; a child goes through the same rules; and the 8.12 case set scores the composed agent."""
import json
import pathlib

import pytest

import evaluation
import mini_agent
from evaluation_cases import CASE_SETS
from examples_weather import registry as weather
from llm_clients import make_client
from mini_agent import DEMO, DEMO_FILES, Choices, Parts, on_workspace, run_mini_agent

TASK = "找出失败的测试并修好它"
BROKEN = "    return sum(numbers) / (len(numbers) - 1)\n"
FIXED = "    return sum(numbers) / len(numbers)\n"


@pytest.fixture
def folder(tmp_path):
    for path, text in DEMO_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    return tmp_path


def run(folder, parts, task=TASK, answer=lambda event: None, client=None):
    """A whole run; where it stops to ask a person, send(answer(event))."""
    tools, execute = on_workspace(str(folder))
    steps = run_mini_agent(client or make_client("offline"), task, tools, execute, parts)
    events = list(mini_agent.drive(steps, answer))
    json.dumps(events, ensure_ascii=False)              # an export writes the events as they are
    return events


def source(folder):
    return (pathlib.Path(folder) / "src" / "calc.py").read_text(encoding="utf-8")


def of(events, kind, child=False):
    return [e for e in events if e["type"] == kind and ("child" in e) == child]


def calls(events, child=False):
    return [e["name"] for e in of(events, "tool_call", child)]


def around(events, call):
    """The kinds of the events between a tool_call and its tool_result (hooks, the permission gate)."""
    start = events.index(call)
    end = next(i for i, e in enumerate(events) if e["type"] == "tool_result" and e["id"] == call["id"] and i > start)
    return [e["type"] if e["type"] != "hook" else e["event"] for e in events[start + 1:end]]


def test_without_parts_it_is_the_skeleton_on_the_workspace(folder):
    events = run(folder, Parts())
    assert calls(events) == ["bash", "read", "read", "edit", "bash"]
    assert not [e for e in events if e["type"] in ("permission", "hook", "context", "skills", "plan")]
    assert [t["function"]["name"] for t in of(events, "request")[0]["tools"]] == ["read", "write", "edit", "bash"]
    assert events[-1]["type"] == "final" and "修好了，测试全部通过" in events[-1]["content"]
    assert FIXED in source(folder)


def test_each_part_acts_where_it_acts(folder):
    events = run(folder, DEMO.parts())
    assert events[0]["type"] == "skills" and events[1]["type"] == "request"
    assert [t["function"]["name"] for t in events[1]["tools"]] == [
        "read", "write", "edit", "bash", "load_skill", "write_todos", "task"]
    assert calls(events) == ["load_skill", "bash", "write_todos", "read", "read", "write_todos", "edit",
                             "write_todos", "bash", "write_todos"]
    for call in of(events, "tool_call"):
        if call["name"] in ("load_skill", "write_todos"):        # the agent's own tools: no hooks, no rules
            assert around(events, call) == []
        else:
            assert around(events, call)[:2] == ["PreToolUse", "permission"]
            assert around(events, call)[2] in ("PostToolUse", "PostToolUseFailure")
    plans = of(events, "plan")
    assert all(p["accepted"] for p in plans) and [i["status"] for i in plans[-1]["after"]] == ["completed"] * 3
    for plan in plans:                                          # right after the write_todos result it follows
        before = events[events.index(plan) - 1]
        assert before["type"] == "tool_result" and before["name"] == "write_todos" and before["id"] == plan["id"]
    assert events[-1]["type"] == "final" and events[-1]["content"].startswith("我先读了技能 fix-tests 的说明")
    assert FIXED in source(folder)


def test_an_ask_waits_for_a_person_and_nobody_answering_runs_nothing(folder):
    parts = Parts(rules={"read": "allow", "edit": "allow", "bash": "ask"})
    events = run(folder, parts)
    [asked] = of(events, "permission")
    assert asked["verdict"] == "ask" and asked["asking"] and asked["name"] == "bash"
    [result] = of(events, "tool_result")
    assert result["error_code"] == "rule_denied" and "没有人同意" in result["content"]
    assert "权限规则不允许这次 bash 调用" in events[-1]["content"]
    assert source(folder).endswith(BROKEN)


@pytest.mark.parametrize("answer, code, said", [
    ({"allow": True}, None, "修好了，测试全部通过"),
    ({"deny": "先别跑测试"}, "denied", "你拒绝了这次 bash 调用（理由：先别跑测试）"),
    ({"arguments": {"command": "python3 -m unittest -v"}}, None, "修好了，测试全部通过")])
def test_a_person_s_answer_decides(folder, answer, code, said):
    parts = Parts(rules={"read": "allow", "edit": "allow", "bash": "ask"})
    events = run(folder, parts, answer=lambda event: answer)
    first = of(events, "tool_result")[0]
    assert first["error_code"] in (code, "exit_status") and said in events[-1]["content"]
    if "arguments" in answer:
        assert first["arguments"] == {"command": "python3 -m unittest -v", "timeout": 10}
        assert first["content"].startswith("（执行前，用户修改了你写的参数：command")


def test_a_deny_rule_refuses_without_asking_and_the_file_stays(folder):
    parts = Parts(rules={"read": "allow", "bash": "allow", "edit": "deny"})
    events = run(folder, parts)
    denied = [e for e in of(events, "permission") if e["verdict"] == "deny"]
    assert [e["name"] for e in denied] == ["edit"] and all(e["asking"] is None for e in of(events, "permission"))
    edit = next(e for e in of(events, "tool_result") if e["name"] == "edit")
    assert edit["error_code"] == "rule_denied" and edit["content"].startswith("❌ [权限规则拒绝]")
    assert source(folder).endswith(BROKEN)


def test_a_pre_tool_use_hook_stops_a_change_to_the_tests_before_the_rules_are_asked(folder):
    parts = Choices(rules={"read": "allow", "edit": "allow"}, hooks=("protect_tests",)).parts()
    events = run(folder, parts, task='把 tests/test_calc.py 里的 "2.5" 改成 "3.3333333333333335"')
    [call] = of(events, "tool_call")
    assert around(events, call) == ["PreToolUse"]                  # denied there: the gate never ran
    [result] = of(events, "tool_result")
    assert result["error_code"] == "hook_denied" and "tests/ 里的测试不能改" in result["content"]
    assert "2.5" in (folder / "tests" / "test_calc.py").read_text(encoding="utf-8")


def test_a_sub_agent_goes_through_the_same_rules(folder):
    parts = Parts(rules={"read": "allow", "bash": "deny"}, subagents=True)
    events = run(folder, parts, task="派一个子代理去跑一下测试")
    assert calls(events) == ["task"] and calls(events, child=True) == ["bash"]
    [gate] = of(events, "permission", child=True)
    assert gate["verdict"] == "deny" and gate["child"] == of(events, "tool_call")[0]["id"]
    child_result = of(events, "tool_result", child=True)[0]
    assert child_result["error_code"] == "rule_denied"
    assert "权限规则不允许这次 bash 调用" in events[-1]["content"]
    child_request = of(events, "request", child=True)[0]
    assert [t["function"]["name"] for t in child_request["tools"]] == ["read", "write", "edit", "bash"]


def test_the_context_part_shrinks_the_history_before_a_request_over_budget(folder):
    (folder / "notes.md").write_text("\n".join(f"第 {n} 行笔记" for n in range(1, 121)) + "\n", encoding="utf-8")
    events = run(folder, Parts(context="fold", budget=600), task="看看 notes.md 和 src/calc.py")
    [shrunk] = of(events, "context")
    position = events.index(shrunk)
    assert shrunk["turn"] == 2 and events[position + 1]["type"] == "request" and events[position + 1]["turn"] == 2
    assert shrunk["after_tokens"] < shrunk["before_tokens"] and "折叠了" in shrunk["notes"][0]
    sent = events[position + 1]["messages"]
    assert any("中间省略了" in str(m.get("content")) for m in sent)
    assert sent[1] == {"role": "user", "content": "看看 notes.md 和 src/calc.py"}
    assert events[-1]["type"] == "final"


def test_a_tool_left_out_is_neither_offered_nor_run(folder, connect, server):
    server.queue({"message": {"content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "touch made"}'}}]}})
    events = run(folder, Parts(tools=("read",)), client=connect("openai"))
    assert [t["function"]["name"] for t in server.requests[0]["body"]["tools"]] == ["read"]
    [result] = of(events, "tool_result")
    assert result["error_code"] == "unknown_tool" and not (folder / "made").exists()


def test_choices_name_their_mistakes():
    wrong = Choices(tools=("read", "ls"), rules={"bash": "allwo"}, hooks=("audit",), context="smart", budget=10)
    said = wrong.problems()
    assert len(said) == 5 and "没有叫 ls 的工具" in said[0] and "是不是想写 allow" in said[1]
    assert "没有叫 audit 的钩子" in said[2] and "'smart' 不认识" in said[3] and "不小于 200" in said[4]
    assert DEMO.problems() == []


def test_the_case_set_of_8_12_scores_the_composed_agent():
    cases = evaluation.read_cases(CASE_SETS["examples_weather.py"])
    client = make_client("offline")
    plain = list(evaluation.evaluate(lambda messages: mini_agent.run_function_calling(
        client, messages, weather.to_schemas(), weather), cases, trials=1))
    parts = Parts(rules={"get_weather": "allow", "get_forecast": "allow"}, hooks=mini_agent.preset_hooks(["mask_secrets"]))
    composed = list(evaluation.evaluate(mini_agent.for_evaluation(client, None, weather, parts), cases, trials=1))
    assert evaluation.totals(composed).passed == evaluation.totals(plain).passed > 0
    planned = list(evaluation.evaluate(mini_agent.for_evaluation(client, None, weather, Parts(plan=True)), cases,
                                       trials=1))
    today = next(t for t in planned if t.case.name == "今天的天气")
    assert today.score.tool and today.score.arguments            # write_todos is the agent's own, not the work
    assert not any(e.get("name") == "write_todos" for e in today.events)
    unscored = [e for e in mini_agent.run_mini_agent(client, cases[0].messages(), None, weather, Parts(plan=True))]
    assert any(e.get("name") == "write_todos" for e in unscored)
    assert not evaluation.score(cases[0], unscored).tool          # counted as work, the plan would be a wrong tool
