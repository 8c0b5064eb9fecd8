"""A run shown again, in real chromium: a run kept in the browser and a session file imported bring back
the hooks lesson's example set with the hooks, and 下一步 / 全部显示 are there only while a replay has
steps left to show (memory/browser_memory.py, lessons/run_panel.py)."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from memory.memory_format import storage_key
from tests.app.harness import LessonPage, choose, code_text, wait_stored

pytestmark = pytest.mark.browser
WAIT = 60_000
NO_RETURN, MASKING = "忘了 return", "脱敏"


def hook_set(lesson):
    return lesson.panel.locator(".tw-hook-set input")


def use_hooks(lesson, name: str, first_hook: str):
    choose(lesson.page, lesson.panel.locator(".tw-hook-set"), name)
    lesson.panel.locator(".tw-hooks-status li").first.filter(has_text=f" · {first_hook} · fail").wait_for(timeout=WAIT)


def test_a_hooks_run_comes_back_with_its_example_set_and_replays_only_what_is_left(browser, app_url, tmp_path):
    with LessonPage(browser, app_url, "hooks") as lesson:
        page, panel = lesson.page, lesson.panel
        use_hooks(lesson, NO_RETURN, "shout")
        assert lesson.run("执行 SQL `SELECT * FROM orders`").startswith("✅")
        wait_stored(page, '"type":"final"', key=storage_key("run:hooks"))
        wait_stored(page, NO_RETURN, key=storage_key("lesson:hooks"))
        panel.get_by_role("tab", name="导出/导入").click()
        panel.locator(".tw-export").click()
        with page.expect_download() as download:
            panel.locator(".tw-export-file a").first.click()
        saved = tmp_path / "hooks-session.json"
        download.value.save_as(saved)
        assert json.loads(saved.read_text(encoding="utf-8"))["options"]["hook_set"] == NO_RETURN

        # Back from the browser: the example set with its hooks, and the last run shown whole, with
        # nothing left for 下一步 / 全部显示 to do.
        page.reload()
        lesson.wait_restored()
        expect(hook_set(lesson)).to_have_value(NO_RETURN, timeout=WAIT)
        panel.locator(".tw-protocol .tw-pause").filter(has_text="没有再调用模型").first.wait_for(timeout=WAIT)
        assert "def shout" in code_text(panel.locator(".tw-hooks"))
        assert not panel.locator(".tw-replay").first.is_visible()

        # From the file: another example set first, then the import puts the recorded one back.
        use_hooks(lesson, MASKING, "mask_secrets")
        panel.get_by_role("tab", name="导出/导入").click()
        panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
        panel.locator(".tw-status").filter(has_text="已导入录制的运行").first.wait_for(timeout=WAIT)
        expect(hook_set(lesson)).to_have_value(NO_RETURN, timeout=WAIT)
        assert "def shout" in code_text(panel.locator(".tw-hooks"))
        replay = panel.locator(".tw-replay").first
        assert replay.is_visible()
        panel.locator(".tw-next").click()
        panel.locator(".tw-status").filter(has_text="回放：第 1 /").first.wait_for(timeout=WAIT)
        panel.locator(".tw-all").click()
        panel.locator(".tw-status").filter(has_text="✅").first.wait_for(timeout=WAIT)
        replay.wait_for(state="hidden", timeout=WAIT)     # a finished replay offers no more steps
