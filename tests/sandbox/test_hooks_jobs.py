"""Hooks typed in the page run in the sandbox like tools: listed once, then one hook call per fresh worker."""
import pytest

import sandbox

HOOKS = '''from hooks import Hooks, PRE, POST, FAILED, mask_secrets

hooks = Hooks()


@hooks.on(PRE, fail="open")
def audit(call):
    print("审计", call["tool_name"], call["tool_input"])


hooks.add(POST, mask_secrets)


@hooks.on(FAILED, fail="open")
def explain(call):
    return {"additionalContext": "失败了：" + call["error"]}


@hooks.on(PRE)
def broken(call):
    return call["missing"]


@hooks.on(PRE)
def not_json(call):
    return {"updatedInput": {1, 2}}
'''


def test_the_hooks_are_listed_in_the_order_they_were_registered():
    listed = sandbox.list_hooks(HOOKS)
    assert listed["ok"] and listed["error"] is None
    assert listed["hooks"] == [{"event": "PreToolUse", "name": "audit", "fail": "open"},
                               {"event": "PostToolUse", "name": "mask_secrets", "fail": "closed"},
                               {"event": "PostToolUseFailure", "name": "explain", "fail": "open"},
                               {"event": "PreToolUse", "name": "broken", "fail": "closed"},
                               {"event": "PreToolUse", "name": "not_json", "fail": "closed"}]


@pytest.mark.parametrize("source, code, said", [
    ("x = 1\n", "no_hooks", "hooks = Hooks()"),
    ("from hooks import Hooks\nhooks = Hooks(\n", "syntax_error", "第 2 行有语法错误"),
    ("from hooks import Hooks, PRE\nhooks = Hooks()\nhooks.add('BeforeToolUse', print)\n", "module_exception", "BeforeToolUse"),
])
def test_a_source_without_usable_hooks_says_why(source, code, said):
    listed = sandbox.list_hooks(source)
    assert not listed["ok"] and listed["hooks"] == []
    assert listed["error"]["code"] == code and said in listed["error"]["message"]


def test_a_hook_call_returns_its_answer_unjudged_and_what_it_printed():
    payload = {"hook_event_name": "PreToolUse", "tool_name": "get_weather", "tool_input": {"city": "北京"},
               "tool_use_id": "call_1"}
    audited = sandbox.run_hook(HOOKS, 0, "PreToolUse", "audit", payload)
    assert audited["ok"] and audited["answer"] is None
    assert audited["stdout"] == "审计 get_weather {'city': '北京'}\n"
    masked = sandbox.run_hook(HOOKS, 1, "PostToolUse", "mask_secrets",
                              dict(payload, hook_event_name="PostToolUse", tool_response="key=sk-abcdef1234567890xyz"))
    assert masked == dict(masked, ok=True, answer={"updatedToolOutput": "key=sk-abcd****"}, error=None)
    # Not JSON (a set): a broken hook, not a text that would pass for an answer.
    odd = sandbox.run_hook(HOOKS, 4, "PreToolUse", "not_json", payload)
    assert not odd["ok"] and odd["answer"] is None
    assert odd["error"]["type"] == "TypeError" and "返回值不能转成 JSON" in odd["error"]["message"]


def test_a_hook_that_raises_comes_back_with_the_exception_and_its_line():
    failed = sandbox.run_hook(HOOKS, 3, "PreToolUse", "broken", {"tool_name": "x"})
    assert not failed["ok"] and failed["answer"] is None
    assert failed["error"] == {"code": "hook_exception", "message": "'missing'", "line": 21, "type": "KeyError"}


def test_a_source_whose_hooks_changed_since_they_were_listed_is_not_run():
    changed = sandbox.run_hook(HOOKS, 0, "PreToolUse", "timing", {})
    assert not changed["ok"] and changed["error"]["code"] == "hooks_changed"
    assert sandbox.run_hook(HOOKS, 99, "PreToolUse", "audit", {})["error"]["code"] == "hooks_changed"


@pytest.mark.parametrize("appended, said", [
    ("Registered(['PreToolUse'], 'odd', print, 'open')", "第 2 个钩子的登记不对"),
    ("Registered('PreToolUse', 'odd', print, 'maybe')", "fail 应为 open 或 closed"),
    ("Registered('PreToolUse', '', print, 'open')", "name 是非空的文字"),
])
def test_a_listing_the_app_could_not_build_on_is_refused(appended, said):
    """Student code may put anything in its Hooks' list: what the app would trip over is said, not used."""
    source = f"from hooks import Hooks, PRE, Registered\nhooks = Hooks()\nhooks.add(PRE, print)\nhooks.registered.append({appended})\n"
    listed = sandbox.list_hooks(source)
    assert not listed["ok"] and listed["hooks"] == []
    assert listed["error"]["code"] == "hooks_invalid" and said in listed["error"]["message"]


def test_a_source_may_register_at_most_twenty_hooks():
    source = "from hooks import Hooks, PRE\nhooks = Hooks()\nfor _ in range(21):\n    hooks.add(PRE, print)\n"
    listed = sandbox.list_hooks(source)
    assert listed["error"]["code"] == "hooks_invalid" and "登记了 21 个钩子，最多 20 个" in listed["error"]["message"]
    assert sandbox.list_hooks(source.replace("21", "20"))["ok"]


def test_a_hook_is_held_to_the_tools_limits():
    looping = HOOKS.replace('    print("审计"', '    while True:\n        pass\n    print("审计"')
    stopped = sandbox.run_hook(looping, 0, "PreToolUse", "audit", {})
    assert not stopped["ok"] and stopped["error"]["code"] == "timeout"
    calling_out = HOOKS.replace('    print("审计"', '    import socket\n    socket.create_connection(("127.0.0.1", 9))\n'
                                '    print("审计"')
    blocked = sandbox.run_hook(calling_out, 0, "PreToolUse", "audit", {})
    assert not blocked["ok"] and blocked["error"]["code"] == "blocked"
    hungry = HOOKS.replace('    print("审计"', '    blocks = []\n    while True:\n        blocks.append(bytearray(50_000_000))\n'
                           '    print("审计"')
    killed = sandbox.run_hook(hungry, 0, "PreToolUse", "audit", {})
    assert not killed["ok"] and killed["error"]["code"] == "memory_limit"
    assert "工具" not in killed["error"]["message"]


def test_a_hook_process_the_sandbox_ended_is_called_a_hook_process():
    from types import SimpleNamespace

    from sandbox import messages

    ended = SimpleNamespace(timed_out=False, too_large=None, stderr=b"MemoryError")
    code, said = messages.machine_failure(ended, None, 2, 256 << 20, "钩子进程")
    assert code == "memory_limit" and "钩子进程被终止" in said
    crashed = SimpleNamespace(timed_out=False, too_large=None, stderr=b"")
    assert messages.machine_failure(crashed, None, 2, 256 << 20, "钩子进程")[1].startswith("钩子进程意外退出")
