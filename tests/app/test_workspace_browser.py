"""The two workspace lessons in headless chromium: 原子工具 (reading a file, the fix cycle
with its diff, reset, zip out and in) and 权限与确认 (approve, edit then approve, deny,
a rule refusing a schema-valid call, the presets). Runs use the offline model.

These tests run in Chinese. The helpers below also serve test_workspace_claims.py, which runs
its claims in both languages: they say what the page shows through test_lesson_claims.T, which
reads the language of the running class's page (Chinese unless that page is English)."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from tests.app.harness import ask, calls, code_text, lesson_titles, open_page, screenshot, set_code, show_file, wait_ask, wait_final, workspace_lesson

pytestmark = pytest.mark.browser

WAIT = 60_000
TITLES_EN = lesson_titles()


def own_page(browser, app_url):
    watched = open_page(browser, app_url)
    yield watched
    assert watched.foreign_requests() == []
    watched.context.close()


@pytest.fixture
def page(browser, app_url):
    """A page of its own per test: a new browser session, so a fresh starter workspace. For the
    tests that change the workspace or the rules."""
    yield from own_page(browser, app_url)


@pytest.fixture(scope="module")
def reader(browser, app_url):
    """One page for the tests that leave the workspace and the rules as they found them (each run
    starts a new conversation): reading a file, and approving, editing, denying and a rule's refusal."""
    yield from own_page(browser, app_url)


# ------------------------------------------------------------------ lesson 4 · 原子工具

def test_reading_a_file(reader):
    panel = workspace_lesson(reader.page, "原子工具")
    ask(panel, "读一下 notes.md，告诉我练习要做什么")
    answer = wait_final(panel)
    assert "read" in panel.locator(".tw-protocol").text_content()
    assert "python3 -m unittest" in answer or "修一个 bug" in answer
    show_file(panel, "notes.md", "练习：修一个 bug")


def test_the_fix_cycle_ends_with_passing_tests_and_its_diff(page):
    panel = workspace_lesson(page.page, "原子工具")
    ask(panel, "找到失败的测试并修好它")
    wait_final(panel)
    protocol = panel.locator(".tw-protocol").text_content()
    assert "FAILED" in protocol and "OK" in protocol
    assert calls(panel) == ["bash", "read", "read", "edit", "bash"]
    diff = panel.locator(".tw-ws-diff").first
    assert "-    return sum(numbers) / (len(numbers) - 1)" in diff.inner_text()
    assert "+    return sum(numbers) / len(numbers)" in diff.inner_text()
    assert panel.locator(".tw-protocol .tw-diff .tw-add").count() >= 1   # the step's own diff in the timeline
    assert "/ len(numbers)" in code_text(panel.locator(".tw-ws-file"))   # the changed file is shown
    screenshot(page.page, "tab-workspace-fix-1280x800")
    panel.locator(".tw-ws-reset").click()
    panel.locator(".tw-ws-diff").filter(has_text="还没有改动").first.wait_for(timeout=WAIT)
    show_file(panel, "src/calc.py", "(len(numbers) - 1)")


def test_zip_download_and_upload(page, tmp_path):
    panel = workspace_lesson(page.page, "原子工具")
    panel.locator(".tw-ws-zip-btn").click()
    link = panel.locator(".tw-ws-zip a").first
    link.first.wait_for(timeout=WAIT)
    with page.page.expect_download() as download:
        link.click()
    saved = tmp_path / "workspace.zip"
    download.value.save_as(saved)
    with zipfile.ZipFile(saved) as archive:
        files = {name: archive.read(name).decode("utf-8") for name in archive.namelist() if not name.endswith("/")}
    assert "练习" in files["notes.md"] and "def average" in files["src/calc.py"]
    changed = io.BytesIO()
    with zipfile.ZipFile(changed, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("docs/mine.md", "# 我自己的文件\n")
    upload = tmp_path / "mine.zip"
    upload.write_bytes(changed.getvalue())
    panel.locator(".tw-ws-upload").locator("xpath=..").locator("input[type=file]").set_input_files(str(upload))
    panel.locator(".tw-ws-tree").filter(has_text="docs/mine.md").first.wait_for(timeout=WAIT)
    show_file(panel, "docs/mine.md", "我自己的文件")


def test_export_and_import_carry_the_workspace(page, tmp_path):
    panel = workspace_lesson(page.page, "原子工具")
    ask(panel, "找到失败的测试并修好它")
    wait_final(panel)
    panel.get_by_role("tab", name="导出/导入").click()
    panel.locator(".tw-export").click()
    link = panel.locator(".tw-export-file a").first
    link.wait_for(timeout=WAIT)
    with page.page.expect_download() as download:
        link.click()
    saved = tmp_path / "session.json"
    download.value.save_as(saved)
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert document["lesson"] == "workspace" and "/ len(numbers)" in document["workspace"]["src/calc.py"]
    panel.locator(".tw-ws-reset").click()
    panel.locator(".tw-ws-diff").filter(has_text="还没有改动").first.wait_for(timeout=WAIT)
    show_file(panel, "src/calc.py", "(len(numbers) - 1)")
    panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
    panel.locator(".tw-status").filter(has_text="工作区已换成导出时的文件").first.wait_for(timeout=WAIT)
    show_file(panel, "src/calc.py", "/ len(numbers)")
    panel.locator(".tw-all").click()
    wait_final(panel)


# ------------------------------------------------------------------ lesson 5 · 权限与确认


def test_approve_runs_exactly_what_was_shown(reader):
    panel = workspace_lesson(reader.page, "权限与确认")
    ask(panel, "运行测试")
    assert "python3 -m unittest" in wait_ask(panel)
    assert "bash" in panel.locator(".tw-ask-title").first.inner_text()
    screenshot(reader.page, "tab-permissions-ask-1280x800")
    panel.locator(".tw-approve").click()
    wait_final(panel)
    assert not panel.locator(".tw-ask").first.is_visible()
    assert "FAILED" in panel.locator(".tw-protocol").text_content()


def test_edit_the_arguments_then_approve(reader):
    panel = workspace_lesson(reader.page, "权限与确认")
    ask(panel, "运行测试")
    wait_ask(panel)
    set_code(reader.page, panel.locator(".tw-ask-args"), '{"command": "ls src"}')
    panel.locator(".tw-approve-edited").click()
    wait_final(panel)
    protocol = panel.locator(".tw-protocol").text_content()
    assert "calc.py" in protocol and "FAILED" not in protocol


def test_deny_with_a_reason_the_model_adapts(reader):
    panel = workspace_lesson(reader.page, "权限与确认")
    ask(panel, "运行测试")
    wait_ask(panel)
    panel.locator(".tw-ask-reason textarea").fill("现在不要运行测试")
    panel.locator(".tw-deny").click()
    answer = wait_final(panel)
    protocol = panel.locator(".tw-protocol").text_content()
    assert "现在不要运行测试" in protocol and "denied" in protocol
    assert len(calls(panel)) == 1                     # refused once, not tried again
    assert "现在不要运行测试" in answer or "拒绝" in answer


def test_a_rule_refuses_a_call_that_passes_the_schema(reader):
    panel = workspace_lesson(reader.page, "权限与确认")
    ask(panel, "运行 `rm notes.md`")
    wait_final(panel)
    protocol = panel.locator(".tw-protocol").text_content()
    assert "rm notes.md" in protocol and "bash:rm *" in protocol and "denied" in protocol
    assert not panel.locator(".tw-ask").first.is_visible()
    show_file(panel, "notes.md", "练习")               # still there


def test_presets_and_rule_validation(page):
    panel = workspace_lesson(page.page, "权限与确认")
    panel.locator(".tw-rules-preset label").filter(has_text="只读").click()
    panel.locator(".tw-rules").filter(has_text="bash:ls*").first.wait_for(timeout=WAIT)
    assert "✅" in panel.locator(".tw-rules-status").first.inner_text()
    set_code(page.page, panel.locator(".tw-rules"), '{"bash": "allwo"}')
    panel.locator(".tw-rules-status").filter(has_text="是不是想写 allow").first.wait_for(timeout=WAIT)
    ask(panel, "运行测试")
    panel.locator(".tw-status").filter(has_text="规则有问题").first.wait_for(timeout=WAIT)
    panel.locator(".tw-rules-preset label").filter(has_text="全部信任").click()
    panel.locator(".tw-rules-status").filter(has_text="✅").first.wait_for(timeout=WAIT)
    ask(panel, "运行测试")
    wait_final(panel)                                 # everything trusted: no question asked
    assert not panel.locator(".tw-ask").first.is_visible()
    assert "FAILED" in panel.locator(".tw-protocol").text_content()


def test_two_quick_edits_of_the_rules_send_a_bounded_number_of_events(browser, app_url):
    watched = open_page(browser, app_url)
    try:
        page = watched.page
        panel = workspace_lesson(page, "权限与确认")
        page.wait_for_timeout(2000)                      # the page's own events on load are over
        editor = panel.locator(".tw-rules")
        editor.locator(".cm-content").click()
        page.keyboard.press("Control+End")
        page.keyboard.press("Backspace")
        page.keyboard.press("Backspace")
        page.keyboard.type("x")                          # three edits, as a student types
        page.wait_for_timeout(2000)
        settled = sum("/queue/join" in url for url in watched.requests)
        page.wait_for_timeout(3000)                      # nothing typed since: nothing more to send
        assert sum("/queue/join" in url for url in watched.requests) == settled
        assert editor.locator(".cm-content").inner_text().rstrip().endswith("x")    # the last edit stands
        assert "规则不是合法 JSON" in panel.locator(".tw-rules-status").first.inner_text()   # and is the one checked
    finally:
        watched.context.close()
