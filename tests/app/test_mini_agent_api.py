"""/run_mini_agent through gradio_client against the real app: only the question is needed (the parts
are then the course's DEMO), the fix is judged by the tests passing, a rule's ask with nobody to answer
runs nothing, the parts chosen are the parts offered, and bad choices are refused before anything runs."""
from __future__ import annotations

import pytest
from gradio_client import Client

import workspace

TASK = "找出失败的测试并修好它"
FIXED = "return sum(numbers) / len(numbers)"


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False, download_files=False)     # events hold {"path": …} arguments
    yield client
    client.close()


def run(client, question, **parts):
    return client.predict(question, api_name="/run_mini_agent", **parts)


def offered(result) -> list[str]:
    first = next(e for e in result["events"] if e["type"] == "request")
    return [tool["function"]["name"] for tool in first["tools"]]


def test_listed(client):
    names = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert "/run_mini_agent" in names


def test_only_the_question_runs_the_course_s_agent_and_fixes_the_test(client):
    before = workspace.known_sessions()
    result = run(client, TASK)
    assert result["ok"] and result["verdict"]["icon"] == "✅", result["verdict"]
    assert FIXED in result["files"]["src/calc.py"]
    kinds = {e["type"] for e in result["events"]}
    assert {"purpose", "skills", "hook", "permission", "plan"} <= kinds
    assert offered(result) == ["read", "write", "edit", "bash", "load_skill", "write_todos", "task"]
    tests = [e for e in result["events"] if e["type"] == "tool_result" and e["name"] == "bash"]
    assert tests[-1]["ok"] and "OK" in tests[-1]["content"]
    assert workspace.known_sessions() == before             # the call's own workspace is gone


def test_an_ask_with_nobody_to_answer_runs_nothing_and_is_no_success(client):
    rules = {"read": "allow", "edit:src/*": "allow", "bash": "ask"}
    result = run(client, TASK, rules=rules)
    assert not result["ok"] and result["verdict"]["icon"] != "✅"
    asked = [e for e in result["events"] if e["type"] == "permission" and e["verdict"] == "ask"]
    assert asked and all(e["type"] != "tool_result" or e["name"] != "bash" or not e["ok"] for e in result["events"])
    assert "return sum(numbers) / (len(numbers) - 1)" in result["files"]["src/calc.py"]


def test_the_parts_chosen_are_the_parts_offered(client):
    bare = run(client, TASK, rules=False, hooks=[], skills=[], subagents=False, plan=False)
    assert offered(bare) == ["read", "write", "edit", "bash"]
    assert not {"permission", "hook", "skills", "plan"} & {e["type"] for e in bare["events"]}
    assert bare["ok"] and FIXED in bare["files"]["src/calc.py"]
    # Without edit the offline model does not take it for the workspace: it says so, and the verdict is no ✅.
    fewer = run(client, TASK, tools=["read", "bash"], rules=False, hooks=[], skills=[], subagents=False, plan=False)
    assert offered(fewer) == ["read", "bash"] and not fewer["ok"] and fewer["verdict"]["icon"] != "✅"


def test_choices_that_do_not_fit_are_refused_before_anything_runs(client):
    result = run(client, TASK, tools=["read", "shell"], context="magic", skills=["no-such-skill"])
    assert not result["ok"] and result["events"] == []
    message = result["error"]["message"]
    assert "没有叫 shell 的工具" in message and "magic" in message and "没有叫 no-such-skill 的技能" in message
    assert not run(client, "  ")["ok"]
