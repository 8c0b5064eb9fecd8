"""Provider presets: data only, no keys, and each preset's accent rehearses on the local server with its SDK."""
import dataclasses
import json

import pytest

import examples_weather
from function_calling_loop import run_function_calling
from llm_clients import make_client
from offline.accents import ACCENTS
from provider_presets import PRESETS, Preset, script_env, settings_for
from runs import headline
from access.clients import Settings, resolve_credentials

FIELDS = {f.name for f in dataclasses.fields(Preset)}
SERVER_SECRETS = {"OPENAI_API_KEY": "server-openai-key", "ZHIPUAI_API_KEY": "server-glm-key"}


@pytest.mark.parametrize("key", list(PRESETS))
def test_preset_data_is_complete_and_honest(key):
    preset = PRESETS[key]
    assert preset.provider in ("glm", "openai") and preset.sdk == ("zhipuai" if preset.provider == "glm" else "openai")
    assert preset.models and all(preset.models) and preset.accent in ACCENTS and preset.note and preset.key_from
    assert set(preset.unconfirmed) <= FIELDS                           # every doubt names a real field
    assert set(preset.tool_choice) <= {"auto", "none", "required", "function"}
    for field in ("parallel_tool_calls", "strict", "streams_tool_calls"):
        assert getattr(preset, field) is not None or field in preset.unconfirmed   # "unknown" is always marked
    assert preset.base_url.startswith("http://localhost") == preset.local
    assert bool(preset.placeholder_key) == preset.local


@pytest.mark.parametrize("key", list(PRESETS))
def test_settings_for_gives_settings_values_and_never_a_key(key):
    values = settings_for(key)
    assert set(values) == {"provider", "model", "base_url"} and values["model"] == PRESETS[key].models[0]
    assert settings_for(key, model="my-own-model")["model"] == "my-own-model"
    Settings(**values)                                                  # the panel's own type accepts them
    env = script_env(key)
    typed = env.get("OPENAI_API_KEY") or env.get("ZHIPUAI_API_KEY")
    assert typed == PRESETS[key].placeholder_key or (typed.startswith("<") and typed.endswith("Key>"))


@pytest.mark.parametrize("key", [k for k in PRESETS if PRESETS[k].provider == "openai"])
def test_choosing_a_preset_never_moves_the_server_key(key):
    settings = Settings(**settings_for(key))
    api_key, base_url = resolve_credentials(settings, "", SERVER_SECRETS)
    assert api_key is None and base_url == PRESETS[key].base_url       # server key stays with its own endpoint
    configured = {**SERVER_SECRETS, "OPENAI_BASE_URL": PRESETS[key].base_url}
    assert resolve_credentials(settings, "", configured) == ("server-openai-key", PRESETS[key].base_url)
    assert resolve_credentials(settings, "student-key", SERVER_SECRETS) == ("student-key", PRESETS[key].base_url)


def test_glm_preset_uses_the_providers_default_endpoint_with_the_server_key():
    settings = Settings(**settings_for("glm"))
    assert resolve_credentials(settings, "", SERVER_SECRETS) == ("server-glm-key", None)


def test_unknown_preset_lists_the_choices():
    with pytest.raises(ValueError, match="deepseek"):
        settings_for("deep-seek")


@pytest.mark.parametrize("key", list(PRESETS))
@pytest.mark.parametrize("stream", [False, True])
def test_each_preset_rehearses_against_its_accent(server, key, stream):
    preset = PRESETS[key]
    path = "/api/paas/v4" if preset.provider == "glm" else "/v1"
    client = make_client(preset.provider, model=preset.models[0], api_key=preset.placeholder_key or "test-key",
                         base_url=f"{server.url}/accent/{preset.accent}{path}")
    tools = examples_weather.registry.to_schemas()
    events = list(run_function_calling(client, "北京和上海的天气怎么样？", tools,
                                       lambda n, a: examples_weather.registry.call(n, a).to_dict(), stream=stream))
    json.dumps(events, ensure_ascii=False)
    assert server.requests[0]["body"]["model"] == preset.models[0]
    if "drops_tools" in ACCENTS[preset.accent]:
        # The rehearsal of a template without tools is the failure itself, named: no client can repair it.
        accents = [a["code"] for e in events if e["type"] == "response" for a in e["accents"]]
        assert "tools_not_delivered" in accents and headline.verdict(events)["state"] == "no_tool_call"
        return
    assert events[-1]["type"] == "final" and "上海今天多云" in events[-1]["content"]
