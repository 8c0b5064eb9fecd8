"""The workspace lessons without a browser: the permission gate between the offline model's
calls and the workspace, the answers to an "ask", the diff on each tool_result, session
files that carry the workspace, and an expired tab's workspace removed."""
from __future__ import annotations

import secrets
import time

import pytest
from gradio_client import Client

import workspace
from lessons.permissions import page as permissions_page
from lessons.workspace import page as workspace_page
from runs import session_io
from runs import run_driver
from serving import expiry, gradio_patches
from runs.run_driver import RunInputs
from access.clients import Settings
from tests.app.harness import start_app

DEFAULT = {"read": "allow", "write": "ask", "edit": "ask", "write:src/*": "allow", "edit:src/*": "allow",
           "bash": "ask", "bash:rm *": "deny"}


@pytest.fixture
def session_id():
    sid = "test-" + secrets.token_hex(8)
    yield sid
    workspace.forget(sid)


def start(session_id, question, rules=None):
    lesson = workspace_page.LESSON if rules is None else permissions_page.LESSON
    inputs = RunInputs(source="", question=question, settings=Settings(), options={"approach": "function_calling"},
                       rules=rules)
    steps = list(run_driver.begin(lesson, inputs, None, secrets={}, session_id=session_id, step=False))
    return steps[-1]


def of_type(state, kind):
    return [e for e in state.run.events if e.get("type") == kind]


def test_without_rules_every_call_runs_and_carries_its_diff(session_id):
    state, note = start(session_id, "找到失败的测试并修好它")
    assert state.waiting is None and not state.run.running
    edits = [e for e in of_type(state, "tool_result") if e["name"] == "edit"]
    assert edits and edits[0]["ok"] and "+    return sum(numbers) / len(numbers)" in edits[0]["diff"]
    assert edits[0]["changed"]["modified"] == ["src/calc.py"]
    assert "/ len(numbers)" in workspace.read_file(session_id, "src/calc.py")
    reads = [e for e in of_type(state, "tool_result") if e["name"] == "read"]
    assert reads and "diff" not in reads[0]                 # a read changes nothing


def test_a_deny_rule_refuses_a_schema_valid_call(session_id):
    state, _ = start(session_id, "运行 `rm notes.md`", DEFAULT)
    call, result = of_type(state, "tool_call")[0], of_type(state, "tool_result")[0]
    assert call["arguments"]["command"] == "rm notes.md" and not call["problems"]   # the schema is satisfied
    assert result["error_code"] == "rule_denied" and "bash:rm *" in result["content"]
    assert state.waiting is None and of_type(state, "final")
    assert "练习" in workspace.read_file(session_id, "notes.md")


def test_ask_pauses_with_what_would_run_then_approve(session_id):
    state, note = start(session_id, "运行测试", DEFAULT)
    assert state.waiting is not None and state.run.running and "等待你的确认" in note
    assert state.waiting["rule"] == "bash" and state.waiting["preview"].startswith("python3 -m unittest")
    assert not of_type(state, "tool_result")               # nothing ran yet
    state, _ = list(run_driver.answer(state, run_driver.APPROVE))[-1]
    result = of_type(state, "tool_result")[0]
    assert result["error_code"] == "exit_status" and "FAILED" in result["content"] and not state.run.running


def test_a_write_outside_src_previews_its_diff(session_id):
    state, _ = start(session_id, "新建文件 hello.py，内容是 print('你好，工作区')", DEFAULT)
    assert state.waiting["rule"] == "write" and "+print('你好，工作区')" in state.waiting["preview"]
    with pytest.raises(workspace.WorkspaceError):
        workspace.read_file(session_id, "hello.py")       # previewed, not written


def test_edited_arguments_and_a_bad_edit(session_id):
    state, _ = start(session_id, "运行测试", DEFAULT)
    state, note = list(run_driver.answer(state, run_driver.EDIT, '{"command": "ls src"'))[-1]
    assert "不是合法 JSON" in note and state.waiting is not None          # still waiting
    state, note = list(run_driver.answer(state, run_driver.EDIT, '["ls"]'))[-1]
    assert "JSON 对象" in note and state.waiting is not None
    state, _ = list(run_driver.answer(state, run_driver.EDIT, '{"command": "ls src"}'))[-1]
    result = of_type(state, "tool_result")[0]
    assert result["arguments"]["command"] == "ls src" and "calc.py" in result["content"]
    assert result["edited"] == ['command："python3 -m unittest" → "ls src"']              # the model is told


def test_deny_with_a_reason_reaches_the_model_which_does_not_retry(session_id):
    state, _ = start(session_id, "运行测试", DEFAULT)
    state, _ = list(run_driver.answer(state, run_driver.DENY, reason="先别跑测试"))[-1]
    result = of_type(state, "tool_result")[0]
    assert result["error_code"] == "denied" and "先别跑测试" in result["content"]
    assert len(of_type(state, "tool_call")) == 1 and of_type(state, "final")
    assert "先别跑测试" in of_type(state, "final")[0]["content"] or "拒绝" in of_type(state, "final")[0]["content"]


def test_the_session_file_carries_the_workspace(session_id, tmp_path):
    state, _ = start(session_id, "找到失败的测试并修好它")
    path, _ = run_driver.export(workspace_page.LESSON, state, "", session_id)
    document = session_io.load_document(path)
    assert "/ len(numbers)" in document["workspace"]["src/calc.py"]
    workspace.reset(session_id)
    replay, note = run_driver.load(workspace_page.LESSON, path, session_id)
    assert "工作区已换成导出时的文件" in note and replay.replay == document["events"]
    assert "/ len(numbers)" in workspace.read_file(session_id, "src/calc.py")
    with pytest.raises(session_io.ImportProblem, match="workspace"):
        session_io.load_document({**document, "workspace": ["src/calc.py"]})


def test_an_expired_tab_loses_its_workspace():
    demo, url = start_app()
    try:
        client = Client(url, verbose=False)
        client.predict("你好", api_name="/echo")
        sid = client.session_hash
        workspace.tree(sid)                                   # the page made its workspace
        count = workspace.known_sessions()
        gone = expiry.forget_idle(gradio_patches.session_holder(demo), ttl=3600, now=time.time() + 7200)
        assert sid in gone and workspace.known_sessions() == count - 1
    finally:
        demo.close()


def test_rules_that_cannot_be_used_start_nothing(session_id):
    shown, _ = start(session_id, "读一下 notes.md，告诉我练习要做什么")
    inputs = RunInputs(source="", question="运行测试", settings=Settings(), options={"approach": "function_calling"},
                       rules_problem="规则不是合法 JSON")
    steps = list(run_driver.begin(permissions_page.LESSON, inputs, shown, secrets={}, session_id=session_id, step=False))
    assert len(steps) == 1
    state, note = steps[0]
    assert state is shown and "规则有问题" in note and "规则不是合法 JSON" in note   # the last run stays on screen


def test_a_workspace_panel_reads_its_loop_and_rules_by_name():
    import gradio as gr

    from lessons.run_panel import RunPanel
    from lessons.settings_panel import SettingsPanel
    from lessons.workspace_panel import WorkspaceView, approach_radio

    with gr.Blocks():
        settings = SettingsPanel({})
        view = WorkspaceView()
        rules = gr.Code()
        run = RunPanel(permissions_page.LESSON, settings, None, ["运行测试"], options={"approach": approach_radio()},
                       workspace=view, rules=lambda values: permissions_page.parse_rules(values[rules]),
                       rule_inputs=[rules], ask=True)
    values = {run.question: "运行测试", run.options["approach"]: "react", rules: '{"bash": "ask"}', view.tree: None,
              run.state: None, settings.provider: "offline", settings.model: "", settings.base_url: "",
              settings.temperature: 0.0, settings.max_turns: 8, settings.stream: False, settings.key_state: ""}
    inputs = run.read(values)
    assert (inputs.source, inputs.options, inputs.rules, inputs.rules_problem) == ("", {"approach": "react"},
                                                                                  {"bash": "ask"}, "")
    assert "合法 JSON" in run.read({**values, rules: "{"}).rules_problem
    assert run.ask is not None and view.tree in run.outputs and run.ask.box in run.outputs
