"""Two students side by side with their own keys and tools, and a full function-calling
run through the page against the project's OpenAI-compatible server (code/offline_server.py)
as the "OpenAI 兼容接口" provider. A typed key must never come back in any response."""
from __future__ import annotations

import pytest

from tests.app.harness import choose_openai, code_text, open_page, pick_provider, set_code, tab, type_key

pytestmark = pytest.mark.browser
WAIT = 60_000
KEY_A = "sk-student-a-7f3c9e21d4"
KEY_B = "sk-student-b-0a8b6d55e2"
TOOLS = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("{desc}")
def {name}(a: int, b: int) -> int:
    return a {op} b
'''
ALPHA = TOOLS.format(desc="把两个整数相加，返回它们的和", name="alpha_add", op="+")
BETA = TOOLS.format(desc="把两个整数相乘，返回它们的积", name="beta_multiply", op="*")


@pytest.fixture(scope="module")
def llm_server():
    from offline.server import OfflineServer

    server = OfflineServer().start()
    yield server
    server.stop()


def choose_openai_with(page, base_url: str, key: str | None):
    choose_openai(page, base_url)
    if key:
        type_key(page, key)
        assert page.locator("#api-key input").input_value() == ""  # emptied at once: the browser does not keep it either


def test_two_students_keys_and_tools_stay_apart(browser, app_url, llm_server):
    base_url = llm_server.url + "/v1"
    a = open_page(browser, app_url, keep_bodies=True)
    b = open_page(browser, app_url, keep_bodies=True)
    try:
        for student, key, source, name in ((a, KEY_A, ALPHA, "alpha_add"), (b, KEY_B, BETA, "beta_multiply")):
            choose_openai_with(student.page, base_url, key)
            panel = tab(student.page, "Function Calling")
            panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
            set_code(student.page, panel.locator(".tw-editor"), source)
            panel.locator(".tw-schema-json").filter(has_text=name).wait_for(timeout=WAIT)

        # Each runs against the local server with their own key and sees only their own tool.
        before = len(llm_server.requests)
        for student, question, tool, answer in ((a, "把 3 和 4 相加", "alpha_add", "7"),
                                                (b, "把 3 和 4 相乘", "beta_multiply", "12")):
            panel = student.page.locator("#tab-function-calling")
            panel.locator(".tw-question textarea").fill(question)
            panel.locator(".tw-run").click()
            final = panel.locator(".tw-protocol .tw-final").first
            final.wait_for(timeout=WAIT)
            assert answer in final.inner_text()
            text = panel.locator(".tw-protocol").text_content()
            assert tool in text
            other = "beta_multiply" if tool == "alpha_add" else "alpha_add"
            assert other not in text and other not in code_text(panel.locator(".tw-schema-json"))
        sent = llm_server.requests[before:]
        assert len(sent) >= 4 and all(r["path"].endswith("/chat/completions") for r in sent)
        assert all(r["auth_scheme"] == "Bearer" for r in sent)
        # The server got exactly one student's tool per request.
        names = [{t["function"]["name"] for t in r["body"].get("tools") or []} for r in sent]
        assert {"alpha_add"} in names and {"beta_multiply"} in names and all(len(n) <= 1 for n in names)

        # A third student sees no key at all: nothing of the others' keys is shared.
        c = open_page(browser, app_url, keep_bodies=True)
        try:
            choose_openai_with(c.page, base_url, None)
            panel = tab(c.page, "Function Calling")
            panel.locator(".tw-run").click()
            c.page.locator("#tab-function-calling .tw-status").filter(has_text="API Key").first.wait_for(timeout=WAIT)
            bodies = a.bodies + b.bodies + c.bodies
            assert c.foreign_requests() == []
        finally:
            c.context.close()
        assert len(bodies) > 20
        # The event streams are among them (what the key check below must also search).
        assert any("已保存你输入的密钥".encode() in body for body in bodies)
        assert not [body for body in bodies if KEY_A.encode() in body or KEY_B.encode() in body]
        assert a.foreign_requests() == [] and b.foreign_requests() == []
    finally:
        a.context.close()
        b.context.close()


def test_a_server_key_is_used_but_never_shown(browser, llm_server):
    from tests.app.harness import start_app

    server_key = "sk-server-configured-5e6f7a"
    demo, url = start_app({"OPENAI_API_KEY": server_key, "OPENAI_BASE_URL": llm_server.url + "/v1"})
    watched = open_page(browser, url, keep_bodies=True)
    try:
        page = watched.page
        page.get_by_text("⚙️ 模型设置").click()
        pick_provider(page, "openai")
        page.locator("#key-status").filter(has_text="已使用服务器配置的密钥").wait_for(timeout=WAIT)
        assert page.locator("#api-key input").get_attribute("placeholder") == "已使用服务器配置的密钥"
        assert page.locator("#api-key input").input_value() == ""
        model = page.locator("#model input")
        model.fill("offline-rule-model")
        model.press("Enter")
        before = len(llm_server.requests)
        panel = tab(page, "Function Calling")
        panel.locator(".tw-run").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        assert len(llm_server.requests) > before  # the server's key and address were used
        assert not [body for body in watched.bodies if server_key.encode() in body]
        assert watched.foreign_requests() == []
    finally:
        watched.context.close()
        demo.close()
