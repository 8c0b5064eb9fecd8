"""The real page in headless chromium: every tab's working rhythm, step mode, export and
replay, two students side by side, a run against the project's OpenAI-compatible
server, and no request leaving 127.0.0.1. Screenshots go to test-artifacts/screenshots/."""
from __future__ import annotations

import json

import pytest

from catalogue import LESSONS

from tests.app.harness import SCREENSHOTS, code_text, open_page, run_panel, screenshot, set_code, tab

pytestmark = pytest.mark.browser

TABS = ["正则 ReAct", "工具注册", "Function Calling"]
SHOT_NAMES = {"正则 ReAct": "react", "工具注册": "registry", "Function Calling": "function_calling"}
SMALL = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("把两个数相加")
def add_numbers(a: int, b: int = 1) -> int:
    return a + b
'''
WAIT = 30_000


@pytest.fixture(scope="module")
def page(browser, app_url):
    watched = open_page(browser, app_url)
    yield watched
    assert watched.foreign_requests() == []
    watched.context.close()


def schema_text(panel) -> str:
    return code_text(panel.locator(".tw-schema-json"))


def wait_text(locator, text: str, timeout: int = WAIT):
    locator.filter(has_text=text).first.wait_for(timeout=timeout)


def open_run_area(panel, name):
    if name == "工具注册":  # its run area sits in a collapsed accordion
        button = panel.get_by_text("▶ 用这些工具跑一次 Function Calling")
        if not panel.locator(".tw-run").is_visible():
            button.click()


def run_and_wait(panel) -> str:
    """Runs on the timeline tab and waits for this run's headline: a run that reached a final answer."""
    panel.get_by_role("tab", name="协议时间线").click()
    headline = run_panel(panel, timeout=2 * WAIT)
    assert panel.locator(".tw-protocol .tw-final").count(), headline
    return headline


@pytest.mark.parametrize("name", TABS)
def test_editing_the_source_updates_the_schema(page, name):
    panel = tab(page.page, name)
    panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
    set_code(page.page, panel.locator(".tw-editor"), SMALL)
    wait_text(panel.locator(".tw-schema-json"), "add_numbers")
    assert '"integer"' in schema_text(panel)
    set_code(page.page, panel.locator(".tw-editor"), SMALL.replace("b: int = 1", "b: str = 'x'"))
    wait_text(panel.locator(".tw-schema-status"), "b: integer → string")
    # A syntax error is reported with its line; the last good schema stays on screen.
    set_code(page.page, panel.locator(".tw-editor"), SMALL.replace("def add_numbers(", "def add_numbers(:"))
    wait_text(panel.locator(".tw-schema-status"), "第 7 行")
    assert "add_numbers" in schema_text(panel)
    panel.locator(".tw-reset").click()
    panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)


@pytest.mark.parametrize("name", TABS)
def test_a_preset_question_runs_on_the_offline_model(page, name):
    panel = tab(page.page, name)
    panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
    open_run_area(panel, name)
    run_and_wait(panel)
    protocol = panel.locator(".tw-protocol")
    protocol.locator("details.tw-round").first.locator("summary").first.click()  # open round 1 too
    text = protocol.inner_text()
    assert "广州" in panel.locator(".tw-protocol .tw-final").inner_text()
    assert "get_weather" in text and "实际执行的参数" in text and "回填给模型的消息" in text
    if name == "正则 ReAct":
        assert "Action" in text and "匹配成功" in text and "Observation:" in text
        assert protocol.locator(".tw-match .tw-g0").count() >= 1
    else:
        assert "tool_calls" in text and "tool_call_id" in text and "握手第三步" in text
    panel.get_by_role("tab", name="对话视图").click()
    chat = panel.locator(".tw-chat")
    wait_text(chat, "调用 get_weather")
    panel.get_by_role("tab", name="原始 JSON").click()
    assert "\"type\": \"request\"" in code_text(panel.locator(".tw-raw"))
    panel.get_by_role("tab", name="查看代码").click()
    wait_text(panel.locator(".tw-code"), "from openai import OpenAI")
    panel.get_by_role("tab", name="协议时间线").click()
    screenshot(page.page, f"tab-{SHOT_NAMES[name]}-1280x800")
    page.page.screenshot(path=str(SCREENSHOTS / f"tab-{SHOT_NAMES[name]}-full.png"), full_page=True)


def test_step_mode_with_a_hand_typed_result(page):
    panel = tab(page.page, "Function Calling")
    panel.locator(".tw-step-btn").click()
    box = panel.locator(".tw-stepbox").first
    box.wait_for(state="visible", timeout=WAIT)
    assert "广州" in code_text(panel.locator(".tw-step-args"))
    panel.locator(".tw-step-result textarea").fill("广州：手写的结果，晴，19 度")
    panel.locator(".tw-continue").click()
    panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
    text = panel.locator(".tw-protocol").text_content()  # earlier rounds are folded
    assert "结果由学生手写" in text
    assert "手写的结果" in panel.locator(".tw-protocol .tw-final").inner_text()
    assert not box.is_visible()


def test_step_mode_with_edited_arguments(page):
    panel = tab(page.page, "正则 ReAct")
    panel.locator(".tw-step-btn").click()
    panel.locator(".tw-stepbox").first.wait_for(state="visible", timeout=WAIT)
    set_code(page.page, panel.locator(".tw-step-args"), '{"city": "成都"}')
    panel.locator(".tw-finish").click()  # run the rest without pausing again
    panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
    assert "成都今天阴" in panel.locator(".tw-protocol").text_content()


def test_export_then_import_replays_without_a_model(page, tmp_path):
    panel = tab(page.page, "Function Calling")
    run_and_wait(panel)
    panel.get_by_role("tab", name="导出/导入").click()
    panel.locator(".tw-export").click()
    link = panel.locator(".tw-export-file a").first
    link.wait_for(timeout=WAIT)
    with page.page.expect_download() as download:
        link.click()
    saved = tmp_path / "session.json"
    download.value.save_as(saved)
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert document["format"] == "tool-workshop-session" and document["raw_responses"]
    # Change the editor first: importing must bring the recorded source back.
    set_code(page.page, panel.locator(".tw-editor"), SMALL)
    panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
    wait_text(panel.locator(".tw-status"), "已导入录制的运行")
    wait_text(panel.locator(".tw-protocol"), "已导入一次录制的运行，还没有显示任何一步：点「下一步 ⏭」逐步回放")
    assert "get_weather" in code_text(panel.locator(".tw-editor"))
    panel.locator(".tw-next").click()
    wait_text(panel.locator(".tw-status"), "回放：第 1 /")
    panel.locator(".tw-next").click()
    wait_text(panel.locator(".tw-status"), "回放：第 2 /")
    assert panel.locator(".tw-protocol .tw-final").count() == 0
    panel.locator(".tw-all").click()
    panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
    # At the end the status line is the run's verdict again, as after the live run.
    panel.locator(".tw-status").filter(has_text="✅").first.wait_for(timeout=WAIT)


def test_an_imported_file_from_anyone_is_checked_and_the_page_goes_on(browser, app_url, tmp_path):
    """A session file is anyone's: a control gets only a value it could show itself (the rest is named
    and left alone), a field of the wrong kind refuses the file with where it went wrong, and the page
    still runs."""
    from function_calling_loop import run_function_calling
    from llm_clients import make_client
    from runs import session_io

    weather = [{"type": "function", "function": {"name": "get_weather", "description": "查询天气", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    events = list(run_function_calling(make_client("offline"), "北京今天天气怎么样？", weather,
                                       lambda name, args: "北京今天晴"))
    from lessons.editor_panel import EXAMPLE_SETS, example_text

    document = session_io.session_document("function_calling", example_text(EXAMPLE_SETS["天气"]), weather, "北京今天天气怎么样？", events, {},
                                           {"parallel_tool_calls": 0, "mistake": "<img src=x>", "envelope": True})
    odd = tmp_path / "odd-options.json"
    odd.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    watched = open_page(browser, app_url)
    panel = tab(watched.page, "Function Calling")
    panel.get_by_role("tab", name="导出/导入").click()
    panel.locator(".tw-import input[type=file]").set_input_files(str(odd))
    wait_text(panel.locator(".tw-status"), "文件里这些选项的值这一页用不了，页面上的这些选项没有改：parallel_tool_calls, mistake")
    assert "这是「" not in panel.locator(".tw-status").first.inner_text()    # a record of this very lesson
    assert panel.locator(".tw-envelope input").is_checked()          # a value it could hold is taken
    assert panel.get_by_label("允许并行调用 parallel_tool_calls").is_checked()   # 0 is no checkbox value
    wrong = tmp_path / "wrong-kind.json"
    wrong.write_text(json.dumps({**document, "options": ["envelope"]}), encoding="utf-8")
    panel.locator(".tw-import button[aria-label='清除']").dispatch_event("click")    # its ✕, shown on hover
    panel.locator(".tw-import input[type=file]").set_input_files(str(wrong))
    wait_text(panel.locator(".tw-status"), "❌ 导入失败：会话文件里的 options 应是对象，收到的是列表。")
    panel.locator(".tw-envelope input").uncheck()
    run_and_wait(panel)
    assert panel.locator(".tw-status").first.inner_text().startswith("✅")
    watched.context.close()


def test_registry_tab_trap_diff_and_try_call(page):
    panel = tab(page.page, "工具注册")
    panel.locator(".tw-trap").click()
    wait_text(panel.locator(".tw-schema-json"), "add_todo")
    wait_text(panel.locator(".tw-diff-view"), "count: string → integer")
    assert panel.locator(".tw-diff-view .del").count() >= 1 and panel.locator(".tw-diff-view .add").count() >= 1
    panel.locator(".tw-try-args").wait_for()
    wait_text(panel.locator(".tw-try-args"), "title")
    set_code(page.page, panel.locator(".tw-try-args"), '{"title": "交作业", "count": "3"}')
    panel.locator(".tw-try-btn").click()
    wait_text(panel.locator(".tw-try-report"), "count")
    assert "调用成功" in panel.locator(".tw-try-report").first.inner_text()
    screenshot(page.page, "registry-trap-1280x800")
    panel.locator(".tw-strict input").check()
    wait_text(panel.locator(".tw-schema-json"), '"strict": true')
    panel.locator(".tw-strict input").uncheck()
    panel.locator(".tw-reset").click()


def test_phone_size_is_usable(browser, app_url):
    watched = open_page(browser, app_url, width=390, height=844)
    # The lesson list wraps: every lesson's link is on screen, none past its right edge.
    links = watched.page.locator("#lesson-nav a")
    links.first.wait_for(timeout=WAIT)
    boxes = [links.nth(i).bounding_box() for i in range(links.count())]
    assert len(boxes) == len(LESSONS) and all(box and box["x"] + box["width"] <= 390 for box in boxes)
    panel = tab(watched.page, "正则 ReAct")
    panel.locator(".tw-schema-json").filter(has_text="get_weather").wait_for(timeout=WAIT)
    run_and_wait(panel)
    width = watched.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400  # no sideways scrolling of the whole page
    panel.locator(".tw-run").scroll_into_view_if_needed()
    screenshot(watched.page, "phone-390x844")
    assert watched.foreign_requests() == []
    watched.context.close()


def test_streaming_shows_the_run_and_folds_fragments(page):
    panel = tab(page.page, "Function Calling")
    page.page.get_by_text("⚙️ 模型设置").click()
    page.page.locator("#stream input").check()
    try:
        run_and_wait(panel)
        assert "广州" in panel.locator(".tw-protocol .tw-final").inner_text()
        assert '"stream": true' in panel.locator(".tw-protocol").text_content()
    finally:
        page.page.locator("#stream input").uncheck()
