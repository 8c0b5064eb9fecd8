"""The read-only code boxes in the browser (lessons/code_box.py): what a tool's source, a model or a
tool puts in them is shown as text and never runs; 复制 copies the code exactly and 下载 saves it, from
the keyboard too, without asking the server."""
import json

import pytest

from tests.app.harness import CODE_SHOWN, code_text, open_page, set_code

pytestmark = pytest.mark.browser
WAIT = 60_000

# A tool whose description tries to run script in the page through the generated schema and prompt.
HOSTILE_TOOL = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("查天气 <img src=x onerror=\\"window.__hacked='img'\\"> <script>window.__hacked='script'</script> ${1+1} {{value}}")
def get_weather(city: str) -> str:
    """查天气。

    Args:
        city: 城市 <b onmouseover=alert(1)>名</b>
    """
    return "晴"
'''


def hacked(page) -> list:
    """Anything the hostile text managed to do or put into the page."""
    return page.evaluate("""() => [window.__hacked || null,
        document.querySelectorAll('.tw-codebox img, .tw-codebox script, .tw-codebox b').length]""")


@pytest.fixture
def first_lesson(browser, app_url):
    watched = open_page(browser, app_url)
    watched.context.grant_permissions(["clipboard-read", "clipboard-write"])
    panel = watched.page.locator(".tw-lesson").first
    panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
    yield watched.page, panel
    watched.context.close()


def test_a_hostile_tool_description_is_shown_as_text_in_the_schema_and_the_prompt(first_lesson):
    page, panel = first_lesson
    editor = panel.locator(".tw-editor")
    set_code(page, editor, HOSTILE_TOOL)
    schema, prompt = panel.locator(".tw-schema-json"), panel.locator(".tw-system-prompt")
    schema.filter(has_text="<script>window.__hacked='script'</script>").first.wait_for(timeout=WAIT)
    prompt.filter(has_text="<img src=x onerror=").first.wait_for(timeout=WAIT)
    tools = json.loads(code_text(schema))
    assert tools[0]["function"]["description"].startswith("查天气 <img src=x onerror=")
    assert "${1+1} {{value}}" in tools[0]["function"]["description"]
    assert "<b onmouseover=alert(1)>名</b>" in tools[0]["function"]["parameters"]["properties"]["city"]["description"]
    assert "<img src=x onerror=" in code_text(prompt)
    assert hacked(page) == [None, 0]


def test_copy_and_download_give_the_code_exactly_from_the_keyboard_without_the_server(first_lesson):
    page, panel = first_lesson
    schema = panel.locator(".tw-schema-json")
    shown = code_text(schema)
    assert json.loads(shown)[0]["function"]["name"] == "get_weather"
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    copy = schema.get_by_role("button", name="复制")
    copy.focus()
    page.keyboard.press("Enter")
    schema.locator(".tw-codebox-said").filter(has_text="已复制").wait_for(timeout=WAIT)
    assert page.evaluate("navigator.clipboard.readText()") == shown
    page.keyboard.press("Tab")       # the next stop is 下载
    assert page.evaluate("document.activeElement.textContent") == "下载"
    with page.expect_download(timeout=WAIT) as download:
        page.keyboard.press("Enter")
    assert download.value.suggested_filename == "tools.json"
    with open(download.value.path(), encoding="utf-8") as saved:
        assert saved.read() == shown
    assert asked == [], asked      # both happened in the page alone
    # The code itself is reachable by the keyboard too (to scroll it, or select it by hand).
    page.keyboard.press("Tab")
    assert page.evaluate("selector => document.activeElement.matches(selector)", CODE_SHOWN)


def test_the_python_that_repeats_the_request_is_copyable_as_its_label_says(first_lesson):
    page, panel = first_lesson
    panel.get_by_role("tab", name="查看代码").click()
    box = panel.locator(".tw-code")
    box.filter(has_text="# 先运行一次").first.wait_for(timeout=WAIT)
    box.get_by_role("button", name="复制").click()
    box.locator(".tw-codebox-said").filter(has_text="已复制").wait_for(timeout=WAIT)
    assert page.evaluate("navigator.clipboard.readText()") == code_text(box)
    box.get_by_role("button", name="下载").wait_for(timeout=WAIT)
