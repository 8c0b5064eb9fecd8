"""/run_hooks through gradio_client against the real app: Function Calling with the hooks of a hooks
source (run in the sandbox) around every call, each hook run an event."""
from __future__ import annotations

import json

import pytest
from gradio_client import Client

SECRET = "sk-abcdef1234567890xyz"
TOOLS = f'''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("查询指定城市今天的天气")
def get_weather(city: str) -> str:
    """查询天气。

    Args:
        city: 城市名，如 北京
    """
    return f"{{city}}今天晴，25°C。调试信息：api_key={SECRET} password=hunter2"
'''
AUDIT_THEN_MASK = '''from hooks import Hooks, PRE, POST, mask_secrets

hooks = Hooks()


@hooks.on(POST, fail="open")
def audit(call):
    print("审计：", call["tool_response"])


hooks.add(POST, mask_secrets)
'''
NO_BEIJING = '''from hooks import Hooks, PRE

hooks = Hooks()


@hooks.on(PRE)
def no_beijing(call):
    if call["tool_input"].get("city") == "北京":
        return {"permissionDecision": "deny", "permissionDecisionReason": "这个演示不查北京"}
'''
RAISES = '''from hooks import Hooks, PRE

hooks = Hooks()


@hooks.on(PRE, fail="{fail}")
def timing(call):
    return 1 / 0
'''
QUESTION = "北京今天天气怎么样？"


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def of(result, kind):
    return [e for e in result["events"] if e["type"] == kind]


def sent_to_model(result) -> str:
    return json.dumps([e["messages"] for e in of(result, "request")], ensure_ascii=False)


def test_the_inputs_are_function_callings_with_the_hooks_source(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    names = [p["parameter_name"] for p in endpoints["/run_hooks"]["parameters"]]
    assert names == ["source", "hooks", "question", "mistake", "provider", "model", "class_code", "max_tokens"]


def test_an_audit_hook_before_the_mask_logs_the_secret_the_model_never_sees(client):
    result = client.predict(TOOLS, AUDIT_THEN_MASK, QUESTION, api_name="/run_hooks")
    assert result["ok"] and result["verdict"]["state"] == "answered"
    audit, mask = of(result, "hook")
    assert (audit["name"], audit["event"], audit["answer"], audit["problem"]) == ("audit", "PostToolUse", None, None)
    assert SECRET in audit["printed"] and SECRET in audit["payload"]["tool_response"]     # the log holds the key
    assert mask["answer"]["updatedToolOutput"].endswith("api_key=sk-abcd**** password=******")
    assert of(result, "tool_result")[0]["content"] == mask["answer"]["updatedToolOutput"]
    assert SECRET not in sent_to_model(result) and "hunter2" not in sent_to_model(result)
    assert SECRET not in result["final"]


def test_a_deny_goes_back_to_the_model_as_the_result_and_the_tool_does_not_run(client):
    result = client.predict(TOOLS, NO_BEIJING, QUESTION, api_name="/run_hooks")
    assert not result["ok"] and result["verdict"]["state"] == "stopped"
    assert "钩子拒绝" in result["verdict"]["title"]
    [hook] = of(result, "hook")
    assert hook["answer"] == {"permissionDecision": "deny", "permissionDecisionReason": "这个演示不查北京"}
    [outcome] = of(result, "tool_result")
    assert outcome["error_code"] == "hook_denied" and "这个演示不查北京" in outcome["content"]
    assert "调试信息" not in sent_to_model(result)        # the tool never ran
    assert "这个演示不查北京" in sent_to_model(result)


def test_a_hook_that_raises_stops_the_call_only_when_it_fails_closed(client):
    closed = client.predict(TOOLS, RAISES.format(fail="closed"), QUESTION, api_name="/run_hooks")
    [hook] = of(closed, "hook")
    assert hook["problem"] == "ZeroDivisionError: division by zero（钩子源码第 8 行）"
    [outcome] = of(closed, "tool_result")
    assert outcome["error_code"] == "hook_failed" and "fail closed" in outcome["content"]
    assert not closed["ok"] and closed["verdict"]["title"].startswith("钩子 timing 自己出错了")
    opened = client.predict(TOOLS, RAISES.format(fail="open"), QUESTION, api_name="/run_hooks")
    assert of(opened, "hook")[0]["problem"] == hook["problem"]
    assert opened["ok"] and of(opened, "tool_result")[0]["ok"]


def test_a_hooks_source_that_does_not_load_stops_before_the_model_is_asked(client):
    result = client.predict(TOOLS, "from hooks import Hooks\nhooks = Hooks(\n", QUESTION, api_name="/run_hooks")
    assert not result["ok"] and result["verdict"]["state"] == "hooks_failed"
    assert "第 2 行有语法错误" in result["verdict"]["detail"]
    assert of(result, "request") == [] and of(result, "hook") == []
