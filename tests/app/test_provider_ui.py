"""模型设置's presets and what a run shows of an endpoint's accents, without a browser:
which key a preset's run gets (never a server key towards an address it was not
configured for; a local preset's placeholder otherwise), the preset card, accents and
reasoning in the timeline and the chat view, and 「去掉 … 重试」 through the real
driver, sandbox and SDK against the project's own OpenAI-compatible server."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from lessons import settings_panel, timeline
from lessons.function_calling import page as function_calling_page
from lessons.registry import page as registry_page
from runs import run_driver
from lessons.editor_panel import EXAMPLE_SETS, example_text
from runs.run_driver import RunInputs, RunState
from access.clients import Settings, make_client, resolve_credentials
from lessons.settings_panel import key_status, preset_card
from offline.server import OfflineServer
from provider_presets import PRESETS, settings_for

ROOT = Path(__file__).resolve().parents[2]
WEATHER = example_text(EXAMPLE_SETS["天气"])
QUESTION = "北京今天天气怎么样？"
LOCAL = [k for k, p in PRESETS.items() if p.local]
CLOUD_OPENAI = [k for k, p in PRESETS.items() if not p.local and p.provider == "openai"]
SERVER = {"OPENAI_API_KEY": "sk-server-configured-4f1e", "OPENAI_BASE_URL": "https://llm.school.example/v1",
          "ZHIPUAI_API_KEY": "server-glm-key-77aa", "TOOL_WORKSHOP_CLASS_CODE": "蓝鲸-42"}


@pytest.fixture(scope="module")
def provider():
    server = OfflineServer(slow_seconds=1.0).start()
    yield server
    server.stop()


def preset_settings(key: str, base_url: str | None = None) -> Settings:
    values = settings_for(key)
    if base_url is not None:
        values["base_url"] = base_url
    return Settings(**values, preset=key)


# ------------------------------------------------------------------ which key a preset's run gets

@pytest.mark.parametrize("key", LOCAL)
def test_a_local_preset_runs_without_a_typed_key_with_its_placeholder(key, provider):
    client = make_client(preset_settings(key, provider.url + "/v1"), "", SERVER)
    assert client.sdk.api_key == PRESETS[key].placeholder_key != SERVER["OPENAI_API_KEY"]
    # Not the server's key: no class code asked, no meter around it.
    assert type(client).__name__ == "OpenAICompatibleClient"
    provider.reset()
    assert client.complete([{"role": "user", "content": QUESTION}]).text
    assert len(provider.requests) == 1


def test_the_placeholder_never_replaces_a_typed_or_server_key(provider):
    own = make_client(preset_settings("ollama", provider.url + "/v1"), "sk-student-typed", SERVER)
    assert own.sdk.api_key == "sk-student-typed"
    # A local preset pointed at the server's own configured address: that address has a server key.
    configured = {**SERVER, "OPENAI_BASE_URL": provider.url + "/v1", "TOOL_WORKSHOP_CLASS_CODE": ""}
    served = make_client(preset_settings("vllm", provider.url + "/v1"), "", configured)
    assert served.inner.sdk.api_key == SERVER["OPENAI_API_KEY"]       # metered: it is the server's key
    # Without a typed address a local preset has nothing to point its placeholder at.
    with pytest.raises(ValueError, match="API Key"):
        make_client(preset_settings("ollama", ""), "", {})


@pytest.mark.parametrize("key", CLOUD_OPENAI)
def test_a_cloud_preset_never_carries_the_server_key_elsewhere(key, provider):
    settings = preset_settings(key)
    assert resolve_credentials(settings, "", SERVER) == (None, PRESETS[key].base_url)
    with pytest.raises(ValueError) as refused:
        make_client(settings, "", SERVER)
    host = re.sub(r"^https?://([^/:]+).*$", r"\1", PRESETS[key].base_url)
    assert f"不会发往 {host}" in str(refused.value) and PRESETS[key].key_from in str(refused.value)
    # Typed towards a local address it is the same: no placeholder for a cloud preset.
    provider.reset()
    with pytest.raises(ValueError, match="不会发往 127.0.0.1"):
        make_client(preset_settings(key, provider.url + f"/accent/{PRESETS[key].accent}/v1"), "", SERVER)
    assert provider.requests == []
    # The student's own key goes where the preset points.
    assert make_client(settings, "sk-student", SERVER).sdk.api_key == "sk-student"


def test_the_glm_preset_keeps_the_providers_default_address_so_the_server_glm_key_applies(provider):
    settings = preset_settings("glm")
    assert settings.base_url == "" and resolve_credentials(settings, "", SERVER) == (SERVER["ZHIPUAI_API_KEY"], None)
    open_class = {**SERVER, "TOOL_WORKSHOP_CLASS_CODE": "", "ZHIPUAI_BASE_URL": provider.url + "/api/paas/v4"}
    client = make_client(settings, "", open_class)
    assert client.inner.sdk.api_key == SERVER["ZHIPUAI_API_KEY"] and client.base_url == provider.url + "/api/paas/v4"
    provider.reset()
    assert client.complete([{"role": "user", "content": QUESTION}]).text
    assert [r["path"] for r in provider.requests] == ["/api/paas/v4/chat/completions"]


def test_the_key_line_says_which_key_a_run_would_use():
    assert "服务器配置的密钥" in key_status("openai", "", SERVER)                       # its own address
    assert "不会发往这里" in key_status("openai", "", SERVER, PRESETS["deepseek"].base_url, "deepseek")
    assert "占位 Key「ollama」" in key_status("openai", "", SERVER, "http://127.0.0.1:9/v1", "ollama")
    assert "已保存你输入的密钥" in key_status("openai", "sk-mine", SERVER, PRESETS["deepseek"].base_url, "deepseek")
    assert key_status("openai", "", {}, PRESETS["deepseek"].base_url, "deepseek").startswith("需要密钥")
    assert "服务器配置的密钥" in key_status("glm", "", SERVER, "", "glm")


def test_the_panel_reads_the_preset_by_name():
    import gradio as gr

    with gr.Blocks():
        panel = settings_panel.SettingsPanel({})
    values = {panel.provider: "openai", panel.model: "qwen3:8b", panel.base_url: "http://127.0.0.1:9/v1",
              panel.temperature: 0, panel.max_turns: 6, panel.stream: False, panel.key_state: "",
              panel.preset: "ollama"}
    settings, key = panel.read(values)
    assert settings.preset == "ollama" and key == "" and "preset" not in settings.public()
    assert panel.preset in panel.components
    choices = dict((value, label) for label, value in settings_panel.preset_choices())
    assert all(choices[k].startswith("本机") for k in LOCAL) and all(choices[k].startswith("云端") for k in CLOUD_OPENAI)


# ------------------------------------------------------------------ the card

@pytest.mark.parametrize("key", list(PRESETS))
def test_each_card_says_sdk_key_source_support_and_doubts(key):
    preset = PRESETS[key]
    card = preset_card(key, {})
    assert f"`{preset.sdk}` SDK" in card and preset.key_from.replace("<", "&lt;") in card
    assert f"标着 `{key}` 的一节" in card and "http" not in card.split("Base URL")[0]
    for field, label in (("parallel_tool_calls", "parallel_tool_calls"), ("strict", "strict"),
                         ("streams_tool_calls", "流式工具调用")):
        shown = re.search(rf"{label} (\S+)", card).group(1)
        assert ("未确认" in shown) == (field in preset.unconfirmed)
    assert ("auto" in card) and (("tool_choice" in preset.unconfirmed) == bool(re.search(r"tool_choice [^·]*未确认", card)))
    assert ("占位 Key" in card) == preset.local
    assert "<think>" not in card                                         # model-ish markup is shown, not parsed


def test_each_card_points_at_a_section_that_exists():
    headings = [line for line in (ROOT / "docs" / "providers.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("### ")]
    for key in PRESETS:
        assert any(f"`{key}`" in heading for heading in headings), key


def test_the_card_says_when_the_server_key_applies():
    assert "服务器为这个地址配置了密钥" in preset_card("glm", SERVER)
    assert "服务器配置的密钥不会发往这个地址" in preset_card("deepseek", SERVER)


# ------------------------------------------------------------------ runs through the driver

def run(lesson, provider, path: str, options: dict | None = None, strict: bool = False, step_key: str = "sk-student"):
    settings = Settings(provider="openai", model="offline-rule-model", base_url=provider.url + path)
    inputs = RunInputs(source=WEATHER, question=QUESTION, settings=settings, session_key=step_key, strict=strict,
                       options=options or {})
    states = list(run_driver.begin(lesson, inputs, None, secrets={}, session_id="provider-ui", step=False))
    return inputs, states[-1][0]


def test_accents_and_reasoning_reach_the_timeline_and_the_chat(provider):
    provider.reset()
    _, state = run(function_calling_page.LESSON, provider, "/accent/ollama/v1",
                   {"tool_choice": "auto", "parallel_tool_calls": True})
    events = state.run.events
    assert events[-1]["type"] == "final"
    page = timeline.render_protocol(events)
    assert page.count('class="tw-accent"') == sum(len(e["accents"]) for e in events if e["type"] == "response") >= 3
    assert "reasoning_field" in page and "stop_with_tool_calls" in page and "reasoning 字段" in page
    assert page.count(timeline.REASONING_TITLE) == 2 and "用户在问天气" in page
    chat = timeline.render_chat(events)
    titles = [m.get("metadata", {}).get("title", "") for m in chat]
    assert sum(timeline.REASONING_TITLE in t for t in titles) == 2
    assert any(t == "ℹ️ 端点的口音：stop_with_tool_calls" for t in titles)
    # The thinking is shown, never sent back: the second request's history has no trace of it.
    second = provider.requests[1]["body"]["messages"]
    assert "用户在问天气" not in str(second)


def test_model_output_in_accent_notes_and_reasoning_is_escaped():
    response = {"type": "response", "turn": 1, "message": {"content": "ok"}, "text": "ok", "raw": {},
                "reasoning": "<script>alert(1)</script>", "accents": [{"code": "<b>", "message": "<img src=x>"}]}
    page = timeline.render_protocol([response])
    assert "<script>" not in page and "<img" not in page and "&lt;img src=x&gt;" in page


def test_a_refused_tool_choice_offers_the_retry_and_the_retry_succeeds(provider):
    provider.reset()
    inputs, failed = run(function_calling_page.LESSON, provider, "/accent/moonshot/v1",
                         {"tool_choice": "required", "parallel_tool_calls": True})
    error = failed.run.events[-1]
    assert error["type"] == "error" and error["retry_without"] == "tool_choice" and "tool_choice" in error["message"]
    assert provider.requests[-1]["body"]["tool_choice"] == "required"
    assert run_driver.refused_parameter(failed) == "tool_choice"
    provider.reset()
    states = list(run_driver.retry(function_calling_page.LESSON, inputs, failed, secrets={}, session_id="provider-ui"))
    state, note = states[-1]
    assert state.run.events[-1]["type"] == "final" and "已去掉 tool_choice" in note and "成功" in note
    assert all("tool_choice" not in r["body"] for r in provider.requests)
    first_request = next(e for e in state.run.events if e["type"] == "request")
    assert first_request["params"]["tool_choice"] is None          # the timeline shows what was sent
    assert run_driver.refused_parameter(state) is None


def test_a_refused_parallel_tool_calls_is_left_out_on_retry(provider):
    provider.reset()
    inputs, failed = run(function_calling_page.LESSON, provider, "/quirks/rejects_parallel_tool_calls/v1",
                         {"tool_choice": "auto", "parallel_tool_calls": False})
    assert run_driver.refused_parameter(failed) == "parallel_tool_calls"
    provider.reset()
    state, _ = list(run_driver.retry(function_calling_page.LESSON, inputs, failed, secrets={}, session_id="p"))[-1]
    assert state.run.events[-1]["type"] == "final"
    assert all("parallel_tool_calls" not in r["body"] and r["body"]["tool_choice"] == "auto" for r in provider.requests)


def test_a_refused_strict_switches_strict_off_on_retry(provider):
    provider.reset()
    inputs, failed = run(registry_page.LESSON, provider, "/accent/deepseek/v1", strict=True)
    assert run_driver.refused_parameter(failed) == "strict"
    provider.reset()
    state, _ = list(run_driver.retry(registry_page.LESSON, inputs, failed, secrets={}, session_id="p"))[-1]
    assert state.run.events[-1]["type"] == "final"
    assert all("strict" not in (t.get("function") or {}) for r in provider.requests for t in r["body"]["tools"])


def test_no_retry_without_a_refused_parameter(provider):
    provider.reset()
    inputs, done = run(function_calling_page.LESSON, provider, "/v1", {"tool_choice": "auto"})
    assert done.run.events[-1]["type"] == "final" and run_driver.refused_parameter(done) is None
    state, note = list(run_driver.retry(function_calling_page.LESSON, inputs, done, secrets={}, session_id="p"))[-1]
    assert state is done and "没有可以去掉参数重试" in note
    provider.queue({"fault": "server"})
    _, broken = run(function_calling_page.LESSON, provider, "/v1", {"tool_choice": "auto"})
    assert broken.run.events[-1]["code"] == "server" and run_driver.refused_parameter(broken) is None
    assert run_driver.refused_parameter(RunState()) is None


def test_a_tool_source_that_does_not_load_is_the_headline_with_its_mark_first():
    inputs = RunInputs(source="def get_weather(city: str) -> str\n    return city\n", question=QUESTION,
                       settings=Settings(provider="offline"), options={})
    states = list(run_driver.begin(function_calling_page.LESSON, inputs, None, secrets={}, session_id="source-error",
                                   step=False))
    said = str(states[-1][1])
    assert said.startswith("❌ [") and said.count("❌") == 1
    assert said.endswith("运行没有开始：先修好工具源码。") and states[-1][0].run.source_error
