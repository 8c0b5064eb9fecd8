"""The class code and the meter on their own, on a clock the test moves (no waiting),
and the metered client against the project's own OpenAI-compatible server."""
from __future__ import annotations

import pytest

from access.class_code import ADDRESS_GRACE, MAX_PAUSE_S, ClassCode, CodeRefused
from access.key_meter import DAY, HOUR, KeyMeter, LimitReached, Limits
from access.server_keys import MeteredClient, ServerKeyPolicy, client_address
from llm_clients import LLMError, make_client


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_the_right_code_unlocks_only_that_session():
    code = ClassCode("蓝鲸-42")
    code.check(" 蓝鲸-42 ", "tab-a", "10.0.0.7")
    assert code.unlocked("tab-a") and not code.unlocked("tab-b") and not code.unlocked(None)


def test_wrong_codes_wait_longer_each_time_per_session():
    clock = Clock()
    code = ClassCode("蓝鲸-42", clock=clock)
    with pytest.raises(CodeRefused, match="不对.*1 秒后"):
        code.check("guess1", "tab-a", "10.0.0.7")
    # During the pause even the right code is not compared.
    with pytest.raises(CodeRefused, match="次数太多"):
        code.check("蓝鲸-42", "tab-a", "10.0.0.7")
    clock.now += 1.0
    with pytest.raises(CodeRefused, match="2 秒后"):
        code.check("guess2", "tab-a", "10.0.0.7")
    clock.now += 2.0
    with pytest.raises(CodeRefused, match="4 秒后"):
        code.check("guess3", "tab-a", "10.0.0.7")
    for _ in range(20):
        clock.now += MAX_PAUSE_S
        with pytest.raises(CodeRefused, match="秒后"):
            code.check("guess", "tab-a", "10.0.0.7")
    assert code._failures[("session", "tab-a")].next_try - clock.now == MAX_PAUSE_S
    clock.now += MAX_PAUSE_S
    code.check("蓝鲸-42", "tab-a", "10.0.0.7")
    assert code.unlocked("tab-a") and ("address", "10.0.0.7") not in code._failures


def test_one_students_typos_do_not_lock_out_a_classroom_behind_one_address():
    clock = Clock()
    code = ClassCode("蓝鲸-42", clock=clock)
    for tab in range(ADDRESS_GRACE):                 # many students, one typo each, one school address
        with pytest.raises(CodeRefused, match="不对"):
            code.check("蓝鲸42", f"tab-{tab}", "10.0.0.7")
    code.check("蓝鲸-42", "tab-late", "10.0.0.7")     # the next student still gets in at once


def test_a_script_with_a_fresh_session_per_guess_is_slowed_by_its_address():
    clock = Clock()
    code = ClassCode("蓝鲸-42", clock=clock)
    for guess in range(ADDRESS_GRACE):
        with pytest.raises(CodeRefused, match="不对"):
            code.check(f"guess{guess}", f"fresh-{guess}", "10.0.0.7")
    with pytest.raises(CodeRefused, match="不对.*1 秒后"):
        code.check("guess-more", "fresh-a", "10.0.0.7")
    with pytest.raises(CodeRefused, match="次数太多"):
        code.check("蓝鲸-42", "fresh-b", "10.0.0.7")  # a new session from that address waits too
    code.check("蓝鲸-42", "tab-c", "10.0.0.8")        # another address does not


def test_each_limit_says_which_and_when_it_reopens():
    clock = Clock()
    meter = KeyMeter(Limits(per_session=2, per_address=3, per_day=4), clock=clock)
    meter.charge("tab-a", "10.0.0.7")
    clock.now += 600
    meter.charge("tab-a", "10.0.0.7")
    with pytest.raises(LimitReached, match="本会话.*每小时 2 次.*约 50 分钟后恢复"):
        meter.charge("tab-a", "10.0.0.7")
    assert meter.used("tab-a") == 2
    meter.charge("tab-b", "10.0.0.7")               # a fresh tab: its own count, same address
    with pytest.raises(LimitReached, match="网络地址.*每小时 3 次"):
        meter.charge("tab-c", "10.0.0.7")
    meter.charge("tab-d", "10.0.0.8")
    with pytest.raises(LimitReached, match="全站.*每天 4 次.*小时后恢复"):
        meter.charge("tab-e", "10.0.0.9")
    clock.now += HOUR
    assert meter.used("tab-a") == 0
    with pytest.raises(LimitReached, match="全站"):
        meter.charge("tab-a", "10.0.0.7")
    clock.now += DAY
    meter.charge("tab-a", "10.0.0.7")


def test_refused_requests_are_not_counted():
    meter = KeyMeter(Limits(per_session=1, per_address=5, per_day=5))
    meter.charge("tab-a", "x")
    for _ in range(3):
        with pytest.raises(LimitReached):
            meter.charge("tab-a", "x")
    meter.charge("tab-b", "x")
    assert meter.used("tab-a") == 1 and meter.used("tab-b") == 1


def gradio_request(session, host, forwarded=None):
    """A real gr.Request around a Starlette request, as Gradio hands it to a handler."""
    import gradio as gr
    from starlette.requests import Request

    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
    return gr.Request(request=Request({"type": "http", "headers": headers, "client": (host, 50000)}),
                      session_hash=session)


def test_the_client_address_trusts_the_proxy_entry_only_on_a_space(monkeypatch):
    request = gradio_request("tab", "10.16.3.80", forwarded="6.6.6.6, 203.0.113.9")
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert client_address(request) == "10.16.3.80"
    monkeypatch.setenv("SPACE_ID", "teacher/tool-workshop")
    assert client_address(request) == "203.0.113.9"
    assert client_address(gradio_request("tab", "10.16.3.80")) == "10.16.3.80"


@pytest.fixture
def model(model_server):
    model_server.reset()
    return model_server


def model_client(server):
    return make_client("openai", model="offline-rule-model", api_key="server-key-not-secret",
                       base_url=server.url + "/v1")


def metered(server, policy, session="tab-a"):
    return MeteredClient(model_client(server), policy, session, "10.0.0.7")


def test_each_request_is_charged_before_it_is_sent_and_asks_for_few_tokens(model):
    policy = ServerKeyPolicy.from_settings({"TOOL_WORKSHOP_KEY_REQUESTS_PER_SESSION": "2",
                                            "TOOL_WORKSHOP_KEY_MAX_TOKENS": "300"}, environ={})
    client = metered(model, policy)
    question = [{"role": "user", "content": "你好"}]
    assert client.complete(question).text
    assert [p for p in client.stream(question)][-1].text
    with pytest.raises(LLMError, match="本会话") as refused:
        client.complete(question)
    assert refused.value.code == "key_limit"
    with pytest.raises(LLMError, match="本会话"):
        list(client.stream(question))
    assert len(model.requests) == 2
    assert [r["body"]["max_tokens"] for r in model.requests] == [300, 300]
    assert client.model == "offline-rule-model" and client.base_url.endswith("/v1")


def test_the_lesson_pages_of_one_browser_tab_share_one_hourly_count(model):
    """Each lesson page is a session of its own; the count per session is the browser tab's, across its pages."""
    policy = ServerKeyPolicy.from_settings({"TOOL_WORKSHOP_KEY_REQUESTS_PER_SESSION": "2"}, environ={})
    question = [{"role": "user", "content": "你好"}]
    first, second, elsewhere = (gradio_request(s, "10.0.0.7") for s in ("page-1", "page-2", "page-3"))
    for page in (first, second):
        policy.join_tab("mi9x2k4qabc123", page)
    policy.join_tab("other0tab1", elsewhere)
    assert policy.metered(model_client(model), first).complete(question).text
    assert "这个浏览器标签页已用 1/2 次" in policy.usage_line(second)
    assert policy.metered(model_client(model), second).complete(question).text
    with pytest.raises(LLMError, match="这个浏览器标签页的服务器密钥额度"):
        policy.metered(model_client(model), first).complete(question)
    assert "这个浏览器标签页已用 0/2 次" in policy.usage_line(elsewhere)       # another tab counts on its own


@pytest.mark.parametrize("tab", ["", "短", "x" * 40, "Tab-With-Caps", None, 12345])
def test_a_page_without_a_readable_tab_id_counts_as_its_own_session(tab):
    policy = ServerKeyPolicy.from_settings({}, environ={})
    page = gradio_request("page-1", "10.0.0.7")
    policy.join_tab(tab, page)
    assert policy.counted_as(page) == "page-1"


def test_the_tab_of_a_page_in_use_is_the_last_one_forgotten(monkeypatch):
    from access import server_keys

    monkeypatch.setattr(server_keys, "MAX_TABS", 2)
    policy = ServerKeyPolicy.from_settings({}, environ={})
    early, middle, late = (gradio_request(s, "10.0.0.7") for s in ("page-1", "page-2", "page-3"))
    policy.join_tab("early0tab", early)
    policy.join_tab("middle0tab", middle)
    assert policy.counted_as(early) == "tab:early0tab"          # in use: moves behind the one that joined later
    policy.join_tab("late00tab", late)
    assert policy.counted_as(early) == "tab:early0tab"
    assert policy.counted_as(middle) == "page-2"                # the longest unused is forgotten
    assert policy.counted_as(late) == "tab:late00tab"


def test_a_long_question_is_refused_on_a_server_key(model):
    policy = ServerKeyPolicy.from_settings({"TOOL_WORKSHOP_KEY_MAX_QUESTION_CHARS": "50"}, environ={})
    client = metered(model, policy)
    with pytest.raises(LLMError, match="最长 50 个字") as refused:
        client.complete([{"role": "system", "content": "x" * 500}, {"role": "user", "content": "长" * 51}])
    assert refused.value.code == "question_too_long"
    assert model.requests == [] and policy.meter.used("tab-a") == 0
    assert client.complete([{"role": "user", "content": "短" * 50}]).text


def test_defaults_and_environment():
    policy = ServerKeyPolicy.from_settings({}, environ={"TOOL_WORKSHOP_KEY_REQUESTS_PER_IP": "7",
                                                        "TOOL_WORKSHOP_KEY_REQUESTS_PER_DAY": "nonsense"})
    assert policy.meter.limits == Limits(per_session=60, per_address=7, per_day=2000)
    assert not policy.class_code.required
    assert ServerKeyPolicy.from_settings({"TOOL_WORKSHOP_CLASS_CODE": "x"}, environ={}).class_code.required
