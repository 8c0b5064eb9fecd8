"""The server's keys through the real named API (/run_function_calling, /run_react):
the class code, the per-session, per-address and daily meters, and the caps, with the
project's own OpenAI-compatible server standing in for the provider and counting what
actually reaches it."""
from __future__ import annotations

import pytest
from gradio_client import Client

from access import class_code
from lessons.editor_panel import EXAMPLE_SETS, example_text
from offline.server import OfflineServer

from tests.app.harness import start_app

WEATHER = example_text(EXAMPLE_SETS["天气"])
CALCULATOR = example_text(EXAMPLE_SETS["计算器"])
QUESTION = "北京今天天气怎么样？"      # two model requests: a tool call, then the answer
CODE = "蓝鲸-42"


@pytest.fixture(scope="module")
def provider():
    server = OfflineServer(slow_seconds=1.0).start()
    yield server
    server.stop()


def serve(provider, **settings):
    secrets = {"OPENAI_API_KEY": "server-key-not-secret", "OPENAI_BASE_URL": provider.url + "/v1",
               "ZHIPUAI_API_KEY": "server-key-not-secret", "ZHIPUAI_BASE_URL": provider.url + "/api/paas/v4"}
    secrets.update({f"TOOL_WORKSHOP_{name.upper()}": str(value) for name, value in settings.items()})
    return start_app(secrets)


@pytest.fixture(scope="module")
def classroom(provider):
    demo, url = serve(provider, class_code=CODE, key_requests_per_session=3, key_requests_per_ip=5,
                      key_requests_per_day=100, key_max_tokens=256)
    yield url
    demo.close()


def tab(url: str) -> Client:
    return Client(url, verbose=False)


def run_fc(client: Client, provider_name: str = "openai", class_code: str = CODE, question: str = QUESTION) -> dict:
    return client.predict(source=WEATHER, question=question, provider=provider_name, class_code=class_code,
                          api_name="/run_function_calling")


def test_class_code_is_a_parameter_of_every_endpoint_that_reaches_a_model(classroom):
    endpoints = tab(classroom).view_api(print_info=False, return_format="dict")["named_endpoints"]
    for name in ("/run_function_calling", "/run_react"):
        assert "class_code" in [p["parameter_name"] for p in endpoints[name]["parameters"]]
    # No endpoint takes a base URL: only the page can type one, and the guard covers it.
    for info in endpoints.values():
        assert not any("url" in p["parameter_name"].lower() for p in info["parameters"])


def test_without_the_code_nothing_reaches_the_provider(classroom, provider):
    provider.reset()
    client = tab(classroom)
    for provider_name in ("openai", "glm"):
        result = run_fc(client, provider_name, class_code="")
        assert not result["ok"] and "课堂口令" in result["error"]["message"]
    react = client.predict(source=CALCULATOR, question="帮我算一下 (3+5)*12", provider="openai",
                           api_name="/run_react")
    assert not react["ok"] and "课堂口令" in react["error"]["message"]
    assert provider.requests == []
    # The offline model needs no code.
    assert run_fc(client, "offline", class_code="")["ok"]


def test_the_meters_count_each_round_and_a_new_session_keeps_the_address_count(classroom, provider):
    provider.reset()
    first = tab(classroom)
    done = run_fc(first)
    assert done["ok"] and "北京" in done["final"]
    assert len(provider.requests) == 2
    assert all(r["body"]["max_tokens"] == 256 for r in provider.requests)
    # The session allows 3: the next run gets one round, and its second is refused unsent.
    cut = run_fc(first)
    assert not cut["ok"] and cut["error"]["code"] == "key_limit"
    assert "本会话" in cut["error"]["message"] and "每小时 3 次" in cut["error"]["message"]
    assert "恢复" in cut["error"]["message"] and "离线演示模型" in cut["error"]["message"]
    assert len(provider.requests) == 3
    # A fresh session (a new tab) has its own count but not a new address count (5).
    second = tab(classroom)
    assert run_fc(second)["ok"]
    blocked = run_fc(second)
    assert not blocked["ok"] and blocked["error"]["code"] == "key_limit"
    assert "网络地址" in blocked["error"]["message"] and "每小时 5 次" in blocked["error"]["message"]
    assert len(provider.requests) == 5
    react = tab(classroom).predict(source=CALCULATOR, question="帮我算一下 (3+5)*12", provider="glm",
                                   class_code=CODE, api_name="/run_react")
    assert not react["ok"] and "网络地址" in react["error"]["message"]
    assert len(provider.requests) == 5
    # The offline model still works for everyone.
    assert run_fc(second, "offline", class_code="")["ok"]


def test_a_wrong_code_is_refused_and_slows_the_next_try(provider, monkeypatch):
    # A pause long enough that the next try surely falls inside it, however busy the machine.
    monkeypatch.setattr(class_code, "FIRST_PAUSE_S", 30.0)
    demo, url = serve(provider, class_code="另一个口令", key_requests_per_session=10)
    try:
        provider.reset()
        client = tab(url)
        wrong = run_fc(client, class_code="猜一猜")
        assert not wrong["ok"] and "课堂口令不对" in wrong["error"]["message"]
        # Straight after, even the right code waits: guessing by script gets nowhere.
        early = run_fc(client, class_code="另一个口令")
        assert not early["ok"] and "次数太多" in early["error"]["message"]
        assert provider.requests == []
    finally:
        demo.close()


def test_the_daily_limit_covers_every_address_and_session(provider):
    demo, url = serve(provider, key_requests_per_session=10, key_requests_per_ip=10, key_requests_per_day=3)
    try:
        provider.reset()
        assert run_fc(tab(url), class_code="")["ok"]      # no class code configured: none needed
        refused = run_fc(tab(url), class_code="")
        assert not refused["ok"] and "全站" in refused["error"]["message"] and "每天 3 次" in refused["error"]["message"]
        assert len(provider.requests) == 3
    finally:
        demo.close()


def test_a_long_question_is_refused_on_the_server_key(provider):
    demo, url = serve(provider, key_max_question_chars=40)
    try:
        provider.reset()
        long = run_fc(tab(url), class_code="", question="北京今天天气怎么样？" * 5)
        assert not long["ok"] and "最长 40 个字" in long["error"]["message"]
        assert provider.requests == []
    finally:
        demo.close()


def test_every_trial_of_an_evaluation_is_metered_on_the_server_key(provider):
    """/run_eval: each run's model calls count like a run of the page; past the limit the rest fails, said."""
    demo, url = serve(provider, key_requests_per_session=3)
    cases = [{"name": "北京", "question": QUESTION, "calls": [{"name": "get_weather", "arguments": {"city": "北京"}}]},
             {"name": "上海", "question": "上海今天天气怎么样？",
              "calls": [{"name": "get_weather", "arguments": {"city": "上海"}}]}]
    try:
        provider.reset()
        result = tab(url).predict(source=WEATHER, cases=cases, models=[{"provider": "openai"}], trials=1,
                                  class_code="", api_name="/run_eval")
        [model] = result["models"]
        first, second = model["runs"]
        assert first["passed"] and not second["passed"] and not second["finished"]
        assert second["problem"].startswith("没有评分：") and "本会话" in second["problem"] and "每小时 3 次" in second["problem"]
        # The meter stopped it, not the model: it is left out of the pass rate, and said.
        assert (model["totals"]["passed"], model["totals"]["runs"], model["totals"]["unscored"]) == (1, 1, 1)
        assert len(provider.requests) == 3
    finally:
        demo.close()
