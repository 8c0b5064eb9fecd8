"""The page's pure parts against real data: a real offline run's events rendered into
the protocol and chat views, the schema diff, export/import, the code view (run
against the project's own OpenAI-compatible server) and the key rules."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import llm_clients
import sandbox
from function_calling_loop import run_function_calling
from access import clients
from lessons import code_view, schema_panel, settings_panel, timeline
from runs import session_io
from lessons.editor_panel import EXAMPLE_SETS, example_text
from runs.starters import react as react_start
from runs.backend import executor

WEATHER = example_text(EXAMPLE_SETS["天气"])


@pytest.fixture(scope="module")
def fc_events():
    tools = sandbox.extract_schemas(WEATHER)["tools"]
    client = llm_clients.make_client("offline", mistake="unknown_tool")
    return list(run_function_calling(client, "杭州未来 5 天的天气预报", tools, executor(WEATHER, "panel-test")))


def test_protocol_shows_every_round_and_labels_the_handshake(fc_events):
    page = timeline.render_protocol(fc_events, "function_calling")
    turns = {e["turn"] for e in fc_events if e["type"] == "response"}
    assert page.count('class="tw-round"') == len(turns) >= 2
    for label in timeline.HANDSHAKE.values():
        assert timeline.esc(label) in page
    call = next(e for e in fc_events if e["type"] == "tool_call")
    assert timeline.esc(call["id"]) in page
    assert "tool_call_id" in page and "tw-final" in page


def test_chat_view_nests_results_under_their_calls(fc_events):
    chat = timeline.render_chat(fc_events, "function_calling")
    assert chat[0] == {"role": "user", "content": "杭州未来 5 天的天气预报"}
    calls = [m for m in chat if m.get("metadata", {}).get("title", "").startswith("🛠️")]
    results = [m for m in chat if m.get("metadata", {}).get("parent_id")]
    assert len(calls) == sum(1 for e in fc_events if e["type"] == "tool_call")
    assert {r["metadata"]["parent_id"] for r in results} <= {c["metadata"]["id"] for c in calls}
    # The simulated unknown tool comes back as an error first, then the corrected call succeeds.
    assert results[0]["metadata"]["title"].startswith("❌") and results[-1]["metadata"]["title"].startswith("✅")
    assert chat[-1]["content"] == next(e["content"] for e in reversed(fc_events) if e["type"] == "final")


def test_untrusted_model_text_is_escaped():
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    events = [{"type": "request", "turn": 1, "messages": [{"role": "user", "content": evil}], "tools": None, "params": {}},
              {"type": "response", "turn": 1, "raw": {"x": evil}, "message": {"role": "assistant", "content": evil},
               "text": evil, "usage": None, "duration_ms": 1, "finish_reason": "stop"},
              {"type": "parse", "turn": 1, "ok": True, "kind": "final", "pattern": evil, "groups": {"answer": evil},
               "span": [0, len(evil)], "notes": [evil], "reason": None},
              {"type": "final", "turn": 1, "content": evil, "messages": []}]
    page = timeline.render_protocol(events, "react")
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page


def test_react_parse_highlights_groups_or_says_why_not():
    tools = sandbox.extract_schemas(WEATHER)["tools"]
    events = list(react_start(llm_clients.make_client("offline", mistake="bold_action"), "广州冷不冷？", tools,
                              executor(WEATHER, "panel-test"), clients.Settings(), {"approach": "react"}))
    parses = [e for e in events if e["type"] == "parse"]
    page = timeline.render_protocol(events, "react")
    assert any(p["ok"] and p["kind"] == "action" for p in parses)
    assert 'class="tw-g0"' in page and "tw-match" in page
    for p in parses:
        if not p["ok"]:
            assert timeline.esc(p["reason"]) in page


def test_what_changed_line():
    before = sandbox.extract_schemas(WEATHER)["tools"]
    after = sandbox.extract_schemas(WEATHER.replace('days: Annotated[int,', 'days: Annotated[str,'))["tools"]
    assert "get_forecast.days: integer → string" in schema_panel.describe_changes(before, after)
    assert schema_panel.describe_changes(before, before) == ""
    renamed = sandbox.extract_schemas(WEATHER.replace("def get_weather(", "def get_weather_now("))["tools"]
    change = schema_panel.describe_changes(before, renamed)
    assert "+ 工具 get_weather_now" in change and "- 工具 get_weather" in change


def test_export_then_import_replays_the_same_events(fc_events, tmp_path):
    document = session_io.session_document("function_calling", WEATHER, [], "q", fc_events, {"provider": "offline"})
    path = session_io.export_file(document, secret="sk-never")
    loaded = session_io.load_document(path)
    assert loaded["events"] == fc_events
    assert loaded["raw_responses"] == [e["raw"] for e in fc_events if e["type"] == "response"]
    position, shown = 0, []
    while position < len(loaded["events"]):
        position = session_io.next_position(loaded["events"], position)
        shown.append(loaded["events"][position - 1]["type"])
    assert shown == [e["type"] for e in fc_events if e["type"] in session_io.STEP_TYPES]
    # Past the last step a replay shows what follows it too: nothing is left for 下一步.
    trailing = [*fc_events, {"type": "note"}]
    assert session_io.next_position(trailing, len(fc_events) - 1) == len(trailing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}', encoding="utf-8")
    with pytest.raises(session_io.ImportProblem, match="不是本工坊导出"):
        session_io.load_document(str(bad))



@pytest.mark.parametrize("field, value, said", [
    ("options", ["envelope"], "options 应是对象，收到的是列表。"),
    ("settings", "![](https://example.com/x.png)", "settings 应是对象，收到的是文字。"),
    ("source", {"code": 1}, "source 应是文字"),
    ("question", 42, "question 应是文字，收到的是数字。"),
    ("tools", {"name": "x"}, "tools 应是列表"),
    ("tools", ["get_weather"], "tools 应是工具 schema（对象）的列表"),
])
def test_an_imported_file_hands_the_page_only_fields_of_the_right_kind(fc_events, field, value, said):
    document = session_io.session_document("function_calling", WEATHER, [], "北京", fc_events, {}, {})
    session_io.load_document(json.dumps(document))
    with pytest.raises(session_io.ImportProblem, match=re.escape(said)):
        session_io.load_document(json.dumps({**document, field: value}))


def test_a_control_holds_only_values_it_could_show_itself():
    import gradio as gr

    from lessons.run_panel import holds

    with gr.Blocks():
        checkbox, slider = gr.Checkbox(True), gr.Slider(1, 10, value=4)
        radio = gr.Radio([("目录 + load_skill", "catalogue"), ("全部贴进去", "pasted")], value="catalogue")
        free = gr.Dropdown(["auto", "required"], value="auto", allow_custom_value=True)
        code = gr.Code("", language="markdown")
        group = gr.CheckboxGroup([("protect_tests：不许改 tests/", "protect_tests"), ("mask_secrets", "mask_secrets")])
    assert holds(group, ["mask_secrets"]) and holds(group, []) and not holds(group, ["rm_rf"])
    assert not holds(group, "mask_secrets") and not holds(group, [1])
    assert holds(checkbox, False) and not holds(checkbox, "false") and not holds(checkbox, 0)
    assert holds(slider, 10) and holds(slider, 2.5) and not holds(slider, 11) and not holds(slider, True)
    assert holds(radio, "pasted") and not holds(radio, "全部贴进去") and not holds(radio, ["pasted"])
    assert holds(free, "get_weather") and not holds(free, {"type": "function"})
    assert holds(code, "# skill") and not holds(code, {"a": "b"})


def test_export_blanks_a_key_an_endpoint_echoed(fc_events):
    events = fc_events + [{"type": "error", "turn": 9, "code": "auth", "message": "bad key sk-typed-123"}]
    path = session_io.export_file(session_io.session_document("x", "", [], "", events, {}), secret="sk-typed-123")
    assert "sk-typed-123" not in open(path, encoding="utf-8").read()


def test_generated_code_reproduces_the_request_against_the_local_server(fc_events, tmp_path):
    from offline.server import OfflineServer

    server = OfflineServer().start()
    try:
        code = code_view.python_for(fc_events, {"provider": "openai", "base_url": server.url + "/v1"})
        compile(code, "generated.py", "exec")
        script = tmp_path / "generated.py"
        script.write_text(code, encoding="utf-8")
        env = {"OPENAI_API_KEY": "sk-local", "PATH": "/usr/bin", "NO_PROXY": "127.0.0.1"}
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        last = code_view.last_request(fc_events)
        assert server.requests and server.requests[-1]["body"]["messages"] == last["messages"]
    finally:
        server.stop()
    glm = code_view.python_for(fc_events, {"provider": "glm"})
    assert "ZhipuAI(api_key=os.environ[\"ZHIPUAI_API_KEY\"])" in glm
    compile(glm, "glm.py", "exec")


def test_server_key_is_never_sent_to_a_typed_address():
    secrets = {"OPENAI_API_KEY": "sk-server", "OPENAI_BASE_URL": "https://llm.example/v1"}
    typed = clients.Settings(provider="openai", base_url="http://attacker.example/v1")
    assert clients.resolve_credentials(typed, "", secrets) == (None, "http://attacker.example/v1")
    own = clients.Settings(provider="openai")
    assert clients.resolve_credentials(own, "", secrets) == ("sk-server", "https://llm.example/v1")
    assert clients.resolve_credentials(typed, "sk-mine", secrets) == ("sk-mine", "http://attacker.example/v1")
    with pytest.raises(ValueError, match="API Key"):
        clients.make_client(typed, "", secrets)
    assert "sk-server" not in json.dumps(own.public())


def test_a_streamed_run_renders_while_it_arrives():
    tools = sandbox.extract_schemas(WEATHER)["tools"]
    events = list(run_function_calling(llm_clients.make_client("offline"), "广州冷不冷？", tools,
                                       executor(WEATHER, "panel-test"), stream=True))
    first_response = next(i for i, e in enumerate(events) if e["type"] == "response")
    deltas = [e for e in events[:first_response] if e["type"] == "delta"]
    assert len(deltas) > 1
    partial = timeline.render_protocol(events[:first_response], "function_calling")
    assert "流式接收中" in partial and "get_weather" in partial
    folded = timeline.without_deltas(events)
    assert not any(e["type"] == "delta" for e in folded)
    assert sum(e.get("fragments", 0) for e in folded) == sum(1 for e in events if e["type"] == "delta")
    assert "stream=True" in code_view.python_for(events, {"provider": "openai"})


def test_a_run_reads_its_inputs_by_name():
    import gradio as gr

    from lessons.function_calling import page as function_calling_page
    from lessons.editor_panel import EditorPanel
    from lessons.run_panel import RunPanel

    with gr.Blocks():
        settings = settings_panel.SettingsPanel({})
        editor = EditorPanel(function_calling_page.LESSON)
        choice, parallel = gr.Textbox(), gr.Checkbox()
        run = RunPanel(function_calling_page.LESSON, settings, editor.editor, ["广州冷不冷？"],
                       options={"tool_choice": choice, "parallel_tool_calls": parallel})
    named = {editor.editor: WEATHER, run.question: "q", choice: "required", parallel: False,
             settings.provider: "openai", settings.model: " gpt-x ", settings.base_url: "", settings.temperature: 0.5,
             settings.max_turns: 3, settings.stream: True, settings.key_state: "sk-typed", run.state: None}
    # Gradio hands a handler whose inputs are a set one dict keyed by component: its order means nothing.
    inputs = run.read(dict(reversed(list(named.items()))))
    assert inputs.options == {"tool_choice": "required", "parallel_tool_calls": False}
    assert (inputs.source, inputs.question, inputs.session_key, inputs.strict) == (WEATHER, "q", "sk-typed", False)
    assert inputs.settings == clients.Settings(provider="openai", model="gpt-x", temperature=0.5, max_turns=3,
                                                      stream=True)


@pytest.mark.parametrize("typed, sent", [(0, None), (64, 64), ("x", 1024), (10**9, 32_768)])
def test_the_length_and_time_limits_reach_the_client_as_labelled(typed, sent):
    # 「每轮最多写 max_tokens 个 token（0 = 不限，由服务端定）」和「每轮时限（秒）」
    settings, _ = clients.settings_from({"provider": "offline", "max_tokens": typed, "round_seconds": 30})
    client = clients.make_client(settings, "", {})
    assert client.max_tokens == sent and client.round_seconds == 30
    body = client.request_body([{"role": "user", "content": "你好"}], None, None, None, None, None, False)
    assert body.get("max_tokens") == sent


def test_an_error_before_the_model_is_asked_is_said_in_words_not_by_its_code():
    for code, words in (("hooks_source", "钩子源码用不了"), ("conversation", "对话用不了"),
                        ("mcp_connect", "MCP 服务器没有连上")):
        run = [{"type": "error", "turn": None, "code": code, "message": "第 3 行：语法错误"}]
        page = timeline.render_protocol(run, "function_calling")
        assert f"<b>{words}</b>" in page and code not in page
        assert timeline.render_chat(run)[-1]["metadata"]["title"] == f"⚠️ {words}"
    other = timeline.render_protocol([{"type": "error", "turn": 1, "code": "bad_request", "message": "HTTP 400"}])
    assert "出错（bad_request）" in other


def test_a_restore_that_fails_says_so_and_leaves_the_run_buttons_working(monkeypatch):
    """The page's load event puts a lesson back and turns on its run buttons in one answer: a
    restore that raises still turns them on, and the lesson's note says what was not put back."""
    import app
    from memory import browser_memory

    demo = app.build_demo({})
    restore = next(fn for fn in demo.fns.values()
                   if any("tw-run" in (getattr(out, "elem_classes", None) or []) for out in fn.outputs))
    run_btn = next(out for out in restore.outputs if "tw-run" in (out.elem_classes or []))
    values = {component: getattr(component, "value", None) for component in restore.inputs}
    assert restore.fn(values, None)[run_btn] == {"interactive": True, "__type__": "update"}

    def broken(*args, **kwargs):
        raise RuntimeError("a bug while reading what the browser kept")

    monkeypatch.setattr(browser_memory, "decode", broken)
    out = restore.fn(values, None)
    assert out[run_btn] == {"interactive": True, "__type__": "update"}
    assert any(isinstance(value, str) and str(browser_memory.RESTORE_FAILED) in value for value in out.values())
