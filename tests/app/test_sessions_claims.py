"""sessions/lesson.md, performed: each claim of the sessions lesson (8.11) on its page, offline, in Chinese, in
the order the text makes them (each test goes on from the session the one before left). The English
page makes the same claims in sessions/lesson.en.md."""
from __future__ import annotations

import json

import pytest

from tests.app.harness import LessonPage, choose, pick_fork_point, run_panel, screenshot, wait_branch, wait_stored

pytestmark = pytest.mark.browser
WAIT = 60_000
BEIJING, GUANGZHOU = "北京今天天气怎么样？", "广州冷不冷？"
RAIN = "北京今天大雨，气温 18°C"
SUNNY = "北京今天晴"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "sessions", height=2600) as page:
        page.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        yield page


def branches(lesson):
    return lesson.panel.locator(".tw-session-tree .tw-branch")


def branch(lesson, number: int):
    return lesson.panel.locator(f".tw-session-tree .tw-branch[data-number='{number}']")


def wait_branches(lesson, count: int) -> None:
    wait_branch(lesson.panel, count)


def messages(lesson, number: int) -> list[str]:
    return branch(lesson, number).locator("ol li").all_inner_texts()


def sent(lesson, number: int) -> list[dict]:
    """The messages of the branch's last request, as the page shows them."""
    raw = branch(lesson, number).locator(".tw-raw-request")
    assert "最后一次请求的 messages（原样）" in raw.locator("summary").inner_text()
    return json.loads(raw.locator("pre").text_content())


def session_lines(lesson) -> list[dict]:
    text = lesson.page.evaluate(
        "el => el.querySelector('.cm-content').innerText", lesson.panel.locator(".tw-session-jsonl").element_handle())
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def fork(lesson, number: int, text: str) -> str:
    pick_fork_point(lesson.page, lesson.panel, number).fill(text)
    return run_panel(lesson.panel, button=lesson.panel.locator(".tw-fork"), timeout=WAIT)


def test_a_run_is_the_first_branch_and_the_file_one_line_a_message(lesson):
    """问「北京今天天气怎么样？」，点「▶ 运行」：下面「会话」里出现分支 1，四条消息（问题、模型的调用、工具结果、回答），上面是它的
    结论。展开「会话文件（JSONL）」：第一行是文件头，之后每条消息一行。"""
    assert lesson.run(BEIJING).startswith("✅")
    wait_branches(lesson, 1)
    shown = messages(lesson, 1)
    assert [line.split("：")[0] for line in shown] == ["问题", "模型的回答", "工具结果", "模型的回答"]
    assert BEIJING in shown[0] and "get_weather" in shown[1] and SUNNY in shown[2]
    assert branch(lesson, 1).locator(".tw-verdict").inner_text().startswith("✅ 2 轮，1 次工具调用")
    lesson.panel.get_by_text("会话文件（JSONL）").click()
    lines = session_lines(lesson)
    assert lines[0]["type"] == "session" and [line["type"] for line in lines[1:]] == ["message"] * 4
    assert [line["parent_id"] for line in lines[1:]] == [None] + [line["id"] for line in lines[1:4]]


def test_a_fork_of_the_tool_result_grows_branch_two_beside_branch_one(lesson):
    """在「从当前分支的哪一条分叉」里选第 3 条（工具结果），在「改成」里写「北京今天大雨，气温 18°C」，点「✂️ 改了，从这里接着跑」：
    分支 2 从这一步长出来，模型按大雨回答，分支 1 原样留着。两条分支并排：分支 2 写着它从分支 1 分出、共有前 2 条、第 3 条原来
    是什么、这里是什么；它的结论是 ✍️：回答用的是你写的结果，不是工具给的。"""
    before = messages(lesson, 1)
    headline = fork(lesson, 3, RAIN)
    assert headline.startswith("✍️ 回答用的是你手写的结果") and "不是工具给的" in headline
    wait_branches(lesson, 2)
    assert messages(lesson, 1) == before
    forked = branch(lesson, 2).locator(".tw-forked").inner_text()
    assert forked.startswith("从分支 1 分出：共有前 2 条，第 3 条工具结果不同：原来「北京今天晴") and f"这里「{RAIN}」" in forked
    assert branch(lesson, 2).locator(".tw-verdict").inner_text().startswith("✍️")
    assert RAIN in branch(lesson, 2).locator(".tw-answer").inner_text()
    assert SUNNY in branch(lesson, 1).locator(".tw-answer").inner_text()
    screenshot(lesson.page, "sessions-fork-1280")


def test_a_fork_of_the_question_starts_branch_three_from_the_root(lesson):
    """改问题也一样：选第 1 条，改成「广州冷不冷？」再跑，分支 3 从头分出，模型重新调用 get_weather 查广州。"""
    choose(lesson.page, lesson.panel.locator(".tw-session-branch"), "分支 1")
    lesson.panel.locator(".tw-session-tree .tw-branch.tw-current[data-number='1']").wait_for(timeout=WAIT)
    assert fork(lesson, 1, GUANGZHOU).startswith("✅")
    wait_branches(lesson, 3)
    shown = messages(lesson, 3)
    assert GUANGZHOU in shown[0] and "get_weather" in shown[1] and "广州" in shown[1]
    assert "共有前 0 条，第 1 条问题不同" in branch(lesson, 3).locator(".tw-forked").inner_text()
    assert branches(lesson).count() == 3


def test_no_branch_s_request_holds_another_branch_s_messages(lesson):
    """每条分支下面的「最后一次请求的 messages（原样）」是它发给模型的原文：分支 2 的请求里只有大雨，没有分支 1 的晴天；分支 1 的
    请求里没有大雨，分支 3 的请求里没有北京。"""
    one, two, three = (json.dumps(sent(lesson, n), ensure_ascii=False) for n in (1, 2, 3))
    assert RAIN in two and SUNNY not in two and GUANGZHOU not in two
    assert SUNNY in one and RAIN not in one and GUANGZHOU not in one
    assert GUANGZHOU in three and "北京" not in three


def test_asking_on_branch_one_carries_its_history_and_nothing_else(lesson):
    """在「当前分支」里选分支 1，问「广州冷不冷？」：这一句接在分支 1 的回答后面，请求里带着分支 1 的全部历史，分支 2、3 的一条也没有。"""
    choose(lesson.page, lesson.panel.locator(".tw-session-branch"), "分支 1")
    lesson.panel.locator(".tw-session-tree .tw-branch.tw-current[data-number='1']").wait_for(timeout=WAIT)
    lesson.run(GUANGZHOU)
    lesson.page.wait_for_function("el => el.querySelectorAll('li').length >= 8",
                                  arg=branch(lesson, 1).element_handle(), timeout=WAIT)
    shown = messages(lesson, 1)
    assert BEIJING in shown[0] and GUANGZHOU in shown[4]
    request = sent(lesson, 1)
    assert request[0]["content"] == BEIJING and SUNNY in request[2]["content"] and request[4]["content"] == GUANGZHOU
    assert RAIN not in json.dumps(request, ensure_ascii=False) and branches(lesson).count() == 3


def download(lesson, button: str, suffix: str) -> tuple[str, str]:
    """Clicks an export button; (the file's name, its text) as the «下载» box offers it."""
    lesson.panel.locator(button).click()
    link = lesson.panel.locator(f".tw-session-download a[download$='{suffix}']").first
    link.wait_for(timeout=WAIT)
    response = lesson.page.request.get(link.get_attribute("href"))
    return link.get_attribute("download"), response.text()


def test_export_reload_and_read_back_resume_the_session(lesson, tmp_path):
    """「导出当前分支（Markdown）」是给人读的，改过的消息写着原来是什么；「导出当前分支（JSONL）」能再读回来，只有这条分支的消息。
    刷新页面，会话还在（它保存在本浏览器；结论要在本页跑过才有）。把 JSONL 文件拖进「读入会话文件（.jsonl），接着问」，它就是当前的
    会话，问一句就在它上面接着跑。"""
    choose(lesson.page, lesson.panel.locator(".tw-session-branch"), "分支 2")
    lesson.panel.locator(".tw-session-tree .tw-branch.tw-current[data-number='2']").wait_for(timeout=WAIT)
    name, markdown = download(lesson, ".tw-export-md", ".md")
    assert name.endswith("-branch-2.md") and "原来是：" in markdown and SUNNY in markdown and RAIN in markdown
    name, jsonl = download(lesson, ".tw-export-jsonl", ".jsonl")
    lines = [json.loads(line) for line in jsonl.splitlines()]
    assert name.endswith("-branch-2.jsonl") and lines[0]["type"] == "session" and len(lines) == 5
    assert RAIN in jsonl and SUNNY not in jsonl and GUANGZHOU not in jsonl
    exported = tmp_path / "branch-2.jsonl"
    exported.write_text(jsonl, encoding="utf-8")

    wait_stored(lesson.page, session_lines(lesson)[-1]["id"], key="tool-workshop:lesson:sessions")
    lesson.page.reload()
    lesson.wait_restored()
    wait_branches(lesson, 3)
    assert "没有在本页跑过" in branch(lesson, 1).locator(".tw-verdict").inner_text()

    lesson.panel.locator(".tw-session-upload input[type=file]").set_input_files(str(exported))
    note = lesson.panel.locator(".prose.tw-session-note")
    note.filter(has_text="读进来了").wait_for(timeout=WAIT)
    assert "4 条消息，1 条分支；当前是分支 1" in note.inner_text() and branches(lesson).count() == 1
    lesson.run(GUANGZHOU)
    lesson.page.wait_for_function("el => el.querySelectorAll('li').length >= 8",
                                  arg=branch(lesson, 1).element_handle(), timeout=WAIT)
    request = json.dumps(sent(lesson, 1), ensure_ascii=False)
    assert RAIN in request and GUANGZHOU in request and SUNNY not in request


@pytest.mark.parametrize("content, said", [
    ('{"type": "session", "format": "tool-workshop-session", "version": 1, "id": "s1", "time": "2025-01-01T08:00:00Z"}\n'
     '{"type": "message", "id": "a", "parent_id": "zzz", "time": "2025-01-01T08:00:00Z", '
     '"message": {"role": "user", "content": "hi"}}\n', "第 2 行：parent_id \"zzz\" 在文件里找不到"),
    ("not json at all\n", "第 1 行：不是合法的 JSON"),
    ('{"type": "session", "format": "claude-code"}\n', "它是别的程序的会话文件"),
])
def test_a_broken_file_is_refused_with_its_line_and_the_session_stays(lesson, tmp_path, content, said):
    """读文件时逐行检查：大小、每个字段的类型、父条目在不在前面、id 有没有重复、调用和结果配不配对。读不进来时，页面说第几行、
    错在哪里，当前会话不变。"""
    before = branch(lesson, 1).inner_text()
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(content, encoding="utf-8")
    lesson.panel.locator(".tw-session-upload input[type=file]").set_input_files(str(hostile))
    note = lesson.panel.locator(".prose.tw-session-note").filter(has_text=said)
    note.wait_for(timeout=WAIT)
    assert note.inner_text().startswith("❌ 这个文件没有读进来（当前会话没有变）")
    assert branch(lesson, 1).inner_text() == before


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(lesson, tmp_path):
    import sessions

    huge = tmp_path / "huge.jsonl"
    huge.write_bytes(b" " * (sessions.MAX_FILE_BYTES + 1))
    lesson.panel.locator(".tw-session-upload input[type=file]").set_input_files(str(huge))
    lesson.panel.locator(".prose.tw-session-note").filter(has_text=f"最多读 {sessions.MAX_FILE_BYTES} 字节").wait_for(
        timeout=WAIT)
