"""/run_workspace through gradio_client against the real app: files in and out, rules that
allow, ask (nobody to answer: refused) and deny, and a workspace of its own per call."""
from __future__ import annotations

import pytest
from gradio_client import Client

import workspace

BROKEN = {"notes.md": "# 我的笔记\n",
          "src/__init__.py": "",
          "src/calc.py": "def double(x):\n    return x + x + 1\n",
          "tests/__init__.py": "",
          "tests/test_calc.py": ("import unittest\n\nfrom src.calc import double\n\n\n"
                                 "class T(unittest.TestCase):\n    def test_double(self):\n"
                                 "        self.assertEqual(double(2), 4)\n")}


@pytest.fixture(scope="module")
def client(app_url):
    # The events hold tool arguments like {"path": "notes.md"}: by default gradio_client takes
    # any {"path": ...} for a file to download.
    client = Client(app_url, verbose=False, download_files=False)
    yield client
    client.close()


def run(client, question, files=None, rules=None):
    return client.predict(question, files, rules, "offline", "", "", api_name="/run_workspace")


def tool_events(result, kind="tool_result"):
    return [e for e in result["events"] if e["type"] == kind]


def test_listed(client):
    names = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert "/run_workspace" in names


def test_starter_project_when_no_files_are_given(client):
    before = workspace.known_sessions()
    result = run(client, "找到失败的测试并修好它")
    assert result["ok"], result
    assert "/ len(numbers)" in result["files"]["src/calc.py"]
    assert any("OK" in e["content"] for e in tool_events(result) if e["name"] == "bash")
    assert any(e.get("diff") for e in tool_events(result) if e["name"] == "edit")
    assert workspace.known_sessions() == before          # the call's own workspace is gone


def test_files_in_and_out(client):
    result = run(client, "新建文件 hello.py，内容是 print('你好，工作区')", files=BROKEN)
    assert result["ok"], result
    assert set(BROKEN) <= set(result["files"]) and "hello.py" in result["files"]
    assert result["files"]["src/calc.py"] == BROKEN["src/calc.py"]
    assert "你好，工作区" in result["files"]["hello.py"]


def test_rules_allow_ask_and_deny(client):
    allowed = run(client, "运行测试", rules={"bash": "allow"})
    ran = tool_events(allowed)[0]                       # the tests ran and failed: a failed result, with the output
    assert ran["error_code"] == "exit_status" and "FAILED" in ran["content"]

    asked = run(client, "运行测试", rules={"bash": "ask"})
    first = tool_events(asked)[0]
    assert first["error_code"] == "rule_denied" and "无人值守" in first["content"]
    assert len(tool_events(asked, "tool_call")) == 1    # told, not tried again

    denied = run(client, "运行 `rm notes.md`", rules={"bash": "allow", "bash:rm *": "deny"})
    first = tool_events(denied)[0]
    assert first["error_code"] == "rule_denied" and "bash:rm *" in first["content"]
    assert "notes.md" in denied["files"]


def test_bad_rules_and_files_are_refused_before_anything_runs(client):
    result = run(client, "运行测试", rules={"bash": "allwo"})
    assert not result["ok"] and "allow" in result["error"]["message"] and result["events"] == []
    result = run(client, "运行测试", files={"../outside.txt": "x"})
    assert not result["ok"] and result["events"] == []
