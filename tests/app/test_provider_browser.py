"""模型设置's 预设 in headless chromium: each preset fills the fields and shows its card (and
the model list, opened before the server has read the preset, shows that preset's models); a
local preset runs without a typed key (the project's own OpenAI-compatible server speaking
with Ollama's accent) and the timeline explains the accents; a refused tool_choice offers
「去掉 tool_choice 重试」 and the retry succeeds; and with a key configured on the server,
a preset pointing elsewhere never gets that key (the servers record every Authorization)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from offline.server import OfflineServer
from provider_presets import PRESETS

from tests.app.harness import open_page, run_panel, screenshot, start_app, tab, type_key

pytestmark = pytest.mark.browser
WAIT = 30_000
PROVIDER_LABELS = {"openai": "OpenAI 兼容接口", "glm": "智谱 GLM"}
SERVER_KEY = "sk-server-configured-3e5d"


class Recording(OfflineServer):
    """The offline server, also keeping each request's whole Authorization header (tests only)."""

    def __init__(self):
        super().__init__(slow_seconds=1.0)
        self.authorizations: list[str] = []

    def record(self, path, headers, body):
        self.authorizations.append(headers.get("Authorization") or "")
        super().record(path, headers, body)

    def reset(self, *args, **kwargs):
        super().reset(*args, **kwargs)
        self.authorizations.clear()


@pytest.fixture(scope="module")
def provider():
    server = Recording().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def local_server():
    """A second local server: the address a student types for their own Ollama / vLLM."""
    server = Recording().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def configured(provider):
    """The page with an OpenAI-compatible key and base URL configured on the server."""
    demo, url = start_app({"OPENAI_API_KEY": SERVER_KEY, "OPENAI_BASE_URL": provider.url + "/v1"})
    yield url
    demo.close()


@pytest.fixture
def page(browser, app_url):
    watched = open_page(browser, app_url)
    yield watched.page
    assert watched.foreign_requests() == []
    watched.context.close()


def open_settings(page):
    page.get_by_text("⚙️ 模型设置").click()
    page.locator("#preset").wait_for(state="visible")


def choose_preset(page, key: str):
    preset = PRESETS[key]
    page.locator("#preset input").click()
    page.get_by_role("option", name=preset.name.replace("（本机）", ""), exact=False).first.click()
    page.locator("#preset-card").filter(has_text=preset.name).wait_for(timeout=WAIT)
    if preset.provider == "openai" and preset.base_url:
        # As a student would: the address box shows the preset's address before anyone types over it.
        expect(base_url_box(page)).to_have_value(preset.base_url, timeout=WAIT)


def base_url_box(page):
    return page.locator("#base-url textarea, #base-url input").first


def set_base_url(page, url: str):
    box = base_url_box(page)
    box.fill(url)
    box.press("Enter")


def run(panel) -> str:
    """Clicks 运行 (or the given button) and waits for this run's answer or error."""
    return click_and_wait(panel, panel.locator(".tw-run"))


def click_and_wait(panel, button) -> str:
    """Clicks `button` on the timeline tab, waits for this run's headline; the timeline's text."""
    panel.get_by_role("tab", name="协议时间线").click()
    run_panel(panel, button=button, timeout=2 * WAIT)
    return panel.locator(".tw-protocol").text_content()


def test_each_preset_fills_the_fields_and_shows_its_card(page):
    open_settings(page)
    for key, preset in PRESETS.items():
        choose_preset(page, key)
        expect(page.locator("#provider input")).to_have_value(PROVIDER_LABELS[preset.provider], timeout=WAIT)
        expect(page.locator("#model input")).to_have_value(preset.models[0], timeout=WAIT)
        card = page.locator("#preset-card").inner_text()
        assert f"{preset.sdk} SDK" in card and preset.key_from in card and f"标着 {key} 的一节" in card
        assert ("未确认" in card) == bool(set(preset.unconfirmed) & {"tool_choice", "parallel_tool_calls", "strict",
                                                                   "streams_tool_calls"})
        if preset.provider == "openai":
            expect(base_url_box(page)).to_have_value(preset.base_url, timeout=WAIT)
        else:
            assert not base_url_box(page).is_visible()           # GLM: the SDK's (or the server's) address
        # The suggested models are the model box's choices, and it stays editable.
        page.locator("#model input").click()
        expect(page.get_by_role("option")).to_have_text([re.compile(rf"^\W*{re.escape(m)}\s*$") for m in preset.models],
                                                        timeout=WAIT)
        page.keyboard.press("Escape")
        if key == "ollama":
            screenshot(page, "settings-preset-ollama-1280x800")
    # Choosing a provider by hand leaves the preset: the card goes away.
    page.locator("#provider input").click()
    page.get_by_role("option", name="离线演示模型").click()
    page.locator("#preset-card").wait_for(state="hidden", timeout=WAIT)


def test_the_model_list_opened_before_the_preset_is_read_shows_only_its_models(page):
    """A student who opens the model list right after choosing a preset has it open when the
    server's answer shrinks it (GLM's three models to DeepSeek's two): the list shows the two, and
    the page raises no error on the way."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    open_settings(page)
    choose_preset(page, "glm")
    held, events = [], ("**/queue/join*", "**/run/predict*")
    for pattern in events:
        page.route(pattern, lambda route: held.append(route))
    try:
        page.locator("#preset input").click()
        page.get_by_role("option", name="DeepSeek").click()
        page.locator("#model input").click()
        options = page.get_by_role("option")
        expect(options).to_have_text([re.compile(re.escape(m)) for m in PRESETS["glm"].models], timeout=WAIT)
    finally:
        for route in held:
            route.continue_()
        for pattern in events:
            page.unroute(pattern)
    page.locator("#preset-card").filter(has_text=PRESETS["deepseek"].name).wait_for(timeout=WAIT)
    expect(options).to_have_text([re.compile(rf"^\W*{re.escape(m)}\s*$") for m in PRESETS["deepseek"].models],
                                 timeout=WAIT)
    assert errors == []


def test_a_local_preset_runs_without_a_key_and_the_timeline_explains_the_accents(page, local_server):
    local_server.reset()
    panel = tab(page, "Function Calling")
    open_settings(page)
    choose_preset(page, "ollama")
    set_base_url(page, local_server.url + "/accent/ollama/v1")
    page.locator("#key-status").filter(has_text="占位 Key「ollama」").wait_for(timeout=WAIT)
    text = run(panel)
    assert "出错" not in text and "get_weather(" in panel.locator(".tw-final").last.inner_text()
    assert local_server.authorizations and set(local_server.authorizations) == {"Bearer ollama"}
    assert {r["body"]["model"] for r in local_server.requests} == {"qwen3:8b"}
    notes = panel.locator(".tw-accent").all_text_contents()
    assert any("reasoning_field" in n and "reasoning 字段" in n for n in notes)
    assert any("stop_with_tool_calls" in n and "别只看 finish_reason" in n for n in notes)
    thinking = panel.locator(".tw-reasoning").last
    thinking.locator("summary").click()
    assert "不放回历史" in thinking.inner_text() and "用户在问天气" in thinking.inner_text()
    screenshot(page, "timeline-accents-ollama-1280x800")
    panel.get_by_role("tab", name="对话视图").click()
    panel.locator(".tw-chat").get_by_text("模型的思考过程（不放回历史）").first.wait_for(timeout=WAIT)
    panel.locator(".tw-chat").get_by_text("端点的口音：stop_with_tool_calls").first.wait_for(timeout=WAIT)


def test_a_typed_key_with_the_deepseek_preset_shows_the_reasoning_field(page, local_server):
    local_server.reset()
    open_settings(page)
    choose_preset(page, "deepseek")
    set_base_url(page, local_server.url + "/accent/deepseek/v1")
    type_key(page, "sk-student-own-2468")
    panel = tab(page, "Function Calling")
    text = run(panel)
    assert "出错" not in text and "reasoning_field" in text and "reasoning_content" in text
    assert set(local_server.authorizations) == {"Bearer sk-student-own-2468"}
    # The thinking that came with the tool call went back (DeepSeek requires it), and only there.
    assert len(local_server.requests) == 2


def test_the_typed_address_outlives_the_preset_box_losing_focus_and_is_the_one_run(page, local_server):
    # The preset box sends its choice again each time it loses focus (picking an option blurs it too):
    # that repeat must not put the preset's address back over the one the student typed.
    local_server.reset()
    panel = tab(page, "Function Calling")
    open_settings(page)
    choose_preset(page, "ollama")
    typed = local_server.url + "/accent/ollama/v1"
    set_base_url(page, typed)
    page.locator("#preset input").click()
    base_url_box(page).click()                 # the preset box loses focus: its choice is sent once more
    text = run(panel)
    assert "出错" not in text and local_server.requests, text
    expect(base_url_box(page)).to_have_value(typed)
    assert page.locator("#preset-card").filter(has_text=PRESETS["ollama"].name).is_visible()


def test_a_refused_tool_choice_offers_the_retry_and_it_succeeds(page, local_server):
    local_server.reset()
    open_settings(page)
    choose_preset(page, "moonshot")
    set_base_url(page, local_server.url + "/accent/moonshot/v1")
    type_key(page, "sk-student-own-1357")
    panel = tab(page, "Function Calling")
    panel.locator(".tw-tool-choice input").click()
    page.get_by_role("option", name="required（第一轮必须调用）").click()
    text = run(panel)
    assert "服务端不支持这个参数：tool_choice=\"required\"" in text and "思考模式" in text
    retry = panel.locator(".tw-retry")
    retry.filter(has_text="去掉 tool_choice 重试").wait_for(timeout=WAIT)
    retry.scroll_into_view_if_needed()
    screenshot(page, "retry-without-tool-choice-1280x800")
    assert [r["body"].get("tool_choice") for r in local_server.requests] == ["required"]
    text = click_and_wait(panel, retry)
    assert "出错" not in text and "get_weather(" in panel.locator(".tw-final").last.inner_text()
    panel.locator(".tw-status").filter(has_text="已去掉 tool_choice").first.wait_for(timeout=WAIT)
    retry.wait_for(state="hidden", timeout=WAIT)
    assert [r["body"].get("tool_choice") for r in local_server.requests] == ["required", None, None]


def test_a_preset_never_takes_the_server_key_elsewhere(browser, configured, provider, local_server):
    provider.reset()
    local_server.reset()
    watched = open_page(browser, configured, keep_bodies=True)
    try:
        page = watched.page
        panel = tab(page, "Function Calling")
        open_settings(page)
        choose_preset(page, "deepseek")
        assert "服务器配置的密钥不会发往这个地址" in page.locator("#preset-card").inner_text()
        page.locator("#key-status").filter(has_text="不会发往这里").wait_for(timeout=WAIT)
        panel.locator(".tw-run").click()
        status = panel.locator(".tw-status")
        status.filter(has_text="不会发往 api.deepseek.com").first.wait_for(timeout=WAIT)
        assert "DeepSeek API Key" in status.first.inner_text()
        # The preset pointed at a local address other than the configured one: refused just the same.
        set_base_url(page, provider.url + "/accent/deepseek/v1")
        panel.locator(".tw-run").click()
        status.filter(has_text="不会发往 127.0.0.1").first.wait_for(timeout=WAIT)
        assert provider.requests == [] and local_server.requests == []
        # A local preset gets its placeholder, never the server's key.
        choose_preset(page, "ollama")
        set_base_url(page, local_server.url + "/accent/ollama/v1")
        assert "出错" not in run(panel)
        assert set(local_server.authorizations) == {"Bearer ollama"} and provider.requests == []
        # The configured address itself does get the server's key: what the checks above would have seen.
        choose_preset(page, "deepseek")
        set_base_url(page, provider.url + "/v1")
        page.locator("#key-status").filter(has_text="已使用服务器配置的密钥").wait_for(timeout=WAIT)
        page.locator("#model input").fill("offline-rule-model")
        page.locator("#model input").press("Enter")
        # The choices list closed and the box kept the name: the click below lands on a page at rest.
        page.get_by_role("option").first.wait_for(state="detached", timeout=WAIT)
        expect(page.locator("#model input")).to_have_value("offline-rule-model", timeout=WAIT)
        assert "出错" not in run(panel)
        assert provider.authorizations == [f"Bearer {SERVER_KEY}"] * 2
        assert SERVER_KEY not in str(local_server.authorizations)
        assert not [b for b in watched.bodies if SERVER_KEY.encode() in b]
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()
