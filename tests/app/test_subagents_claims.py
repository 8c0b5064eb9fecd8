"""subagents/lesson.md, performed: each claim of the sub-agent lesson (8.10) on its page, offline, in
Chinese. The English page makes the same claims in subagents/lesson.en.md."""
from __future__ import annotations

import json

import pytest

from tests.app.harness import LessonPage, screenshot, set_number

pytestmark = pytest.mark.browser
WAIT = 60_000
WEATHER = "派一个子代理去查北京今天的天气，告诉我结论"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "subagents", height=2400) as page:
        page.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        yield page


def top_rounds(lesson) -> list[str]:
    """The parent's rounds, without the sub-agent's rounds folded inside them."""
    return lesson.panel.locator(".tw-protocol").first.locator(":scope > details.tw-round").all_text_contents()


def child(lesson):
    return lesson.panel.locator(".tw-protocol details.tw-child").first


def set_limit(lesson, name: str, value: str):
    set_number(lesson.panel.locator(f".{name} input[type=number]"), value)


def test_only_the_conclusion_comes_back_and_the_child_starts_from_nothing(lesson):
    """问「派一个子代理去查北京今天的天气，告诉我结论」：主代理第 1 轮调用 task，这次调用下面折叠着子代理自己的整个运行
    （展开能看到它调用了 get_weather）。折叠行写着子代理的请求用了多少 token、交回了多少：主代理第 2 轮收到的工具结果
    就是子代理最后那段话。子代理的 messages 只有一句 system 和 prompt；它的工具没有 task。"""
    assert lesson.run(WEATHER).startswith("✅")
    rounds = top_rounds(lesson)
    assert len(rounds) == 2 and "调用 task①" in rounds[0] and "调用 get_weather" not in rounds[0].split("🧒")[0]
    summary = child(lesson).locator("summary").first.inner_text()
    assert summary.startswith("🧒 子代理的运行：模型答了 2 轮，1 次工具调用，它的请求共") and "交回给主代理的只有" in summary
    child(lesson).locator("summary").first.click()
    inside = child(lesson).inner_text()
    assert "get_weather" in inside and "你是一个子代理" in inside and "你看不到用户和主代理之间的对话" in inside
    assert '"name": "task"' not in inside and "派一个子代理" not in inside
    final_of_child = child(lesson).locator(".tw-final").last.inner_text()
    assert final_of_child.splitlines()[0] in rounds[1]
    screenshot(lesson.page, "subagents-child-1280")


def test_a_child_that_answered_without_a_tool_is_named_on_the_headline(lesson):
    """问「派一个子代理去打个招呼」：子代理没有调用任何工具就回答了。主代理照常作答，顶上的结论却是 ⚠️，写明是哪个子代理、
    它怎么了，不藏在主代理的 ✅ 后面。"""
    headline = lesson.run("派一个子代理去打个招呼")
    assert headline.startswith("⚠️ 子代理「打个招呼」：💬 模型没有调用任何工具就直接回答了")


def test_a_child_out_of_rounds_or_time_is_stopped_and_said(lesson):
    """把「子代理最多几轮」调到 1，问「派一个子代理去查北京和上海今天的天气」：子代理用完 1 轮还没作答就被停下，主代理收到的是
    一条「子代理没做完」的失败结果，结论写明是子代理没做完。把时间预算调到 0 秒，再问第一个问题：子代理在第一次调用模型之前
    就被停下了。"""
    set_limit(lesson, "tw-child-turns", "1")
    headline = lesson.run("派一个子代理去查北京和上海今天的天气")
    assert headline.startswith("⚠️ 交给子代理的事（task）它没有做完") and "模型放弃" not in headline
    assert "❌ [子代理没做完] 子代理没有做完（max_turns）" in top_rounds(lesson)[1]
    set_limit(lesson, "tw-child-turns", "4")
    set_limit(lesson, "tw-child-seconds", "0")
    headline = lesson.run(WEATHER)
    # 结论写明是子代理用完了给它的时间预算：那是这次运行的设置，不是沙箱的限额。
    assert headline.startswith("⚠️ 子代理「查北京今天的天气，告诉我」用完了给它的时间预算就被停下了，没有做完"
                               "（预算是这次运行的设置「子代理的时间预算」，不是沙箱的限额）")
    title = headline.split("。", 1)[0]
    assert "限额（时间、内存" not in title and title.count("被停下了") == 1
    summary = child(lesson).locator("summary").first.inner_text()
    assert summary == "🧒 子代理的运行：模型答了 0 轮，0 次工具调用，它的请求共 0 个 token（分词器计数）；主代理收到的是一条失败结果"
    child(lesson).locator("summary").first.click()
    assert child(lesson).locator(".tw-round").count() == 1 and "模型 " not in child(lesson).locator("summary").nth(1).inner_text()
    set_limit(lesson, "tw-child-seconds", "60")


def test_without_being_told_the_offline_model_does_the_work_itself(lesson):
    """离线模型只在你明确要求时才派子代理：直接问「北京今天天气怎么样？」，它自己调用 get_weather。"""
    assert lesson.run("北京今天天气怎么样？").startswith("✅")
    assert "调用 get_weather" in top_rounds(lesson)[0] and not child(lesson).count()


def test_two_jobs_at_once_overlap_on_one_time_axis(lesson):
    """问「派一个子代理去查北京今天的天气，再派一个子代理去查上海今天的天气」：主代理一轮里调用两次 task，两个子代理同时跑。
    两次调用下面各有一条「⏱ 同时执行」的时间条，画在同一根时间轴上，重叠在一起；各自的运行折叠在各自的调用下面。
    主代理第 2 轮收到两个结论，回答把它们都列出来。"""
    assert lesson.run("派一个子代理去查北京今天的天气，再派一个子代理去查上海今天的天气").startswith("✅")
    rounds = top_rounds(lesson)
    assert len(rounds) == 2 and "调用 task, task" in rounds[0] and rounds[0].count("⏱ 同时执行") == 2
    bars = lesson.panel.locator(".tw-protocol").first.locator(".tw-lane .tw-bar").evaluate_all(
        "els => els.map(e => [parseFloat(e.style.left), parseFloat(e.style.left) + parseFloat(e.style.width)])")
    first, second = bars[:2]
    assert first[0] < second[1] and second[0] < first[1], (bars, rounds[0])     # the two bars overlap
    children = lesson.panel.locator(".tw-protocol details.tw-child")
    assert children.count() == 2
    assert "北京今天晴" in children.nth(0).text_content() and "上海今天多云" in children.nth(1).text_content()
    final = lesson.panel.locator(".tw-protocol .tw-final").last.inner_text()
    assert "北京今天晴" in final and "上海今天多云" in final
    # Both children are the offline model too: its disclaimer is said once, in the parent's answer.
    assert final.count("离线规则模型") == 1 and lesson.headline().count("离线规则模型") == 1
    screenshot(lesson.page, "subagents-two-at-once-1280")


def test_a_parent_that_never_sent_the_sub_agent_asked_for_is_named(lesson, tmp_path):
    """问题明说了要派子代理，主代理却一次也没有调用 task、自己答了（小的真模型常这样）：结论是 ⚠️，写明这个问题要调用
    task。The offline model always delegates when told to, so the run is a recorded one (what a small real model
    did), imported on the page: the replay is judged by the same code as a live run."""
    from lessons.editor_panel import EXAMPLE_SETS, example_text
    from runs import session_io
    from runs import purposes
    from subagents import TASK_SCHEMA

    question = "派一个子代理去查北京今天的天气，告诉我结论"
    messages = [{"role": "user", "content": question}]
    answer = "北京今天晴，25°C。"
    events = [purposes.event(purposes.purpose_for("subagents", question)),
              {"type": "request", "turn": 1, "messages": messages, "tools": [TASK_SCHEMA], "params": {}},
              {"type": "response", "turn": 1, "raw": {}, "message": {"role": "assistant", "content": answer},
               "text": answer, "usage": None, "duration_ms": 80.0, "finish_reason": "stop", "reasoning": None,
               "accents": []},
              {"type": "final", "turn": 1, "content": answer, "messages": messages}]
    document = session_io.session_document("subagents", example_text(EXAMPLE_SETS["天气"]), [TASK_SCHEMA], question,
                                           events, {"provider": "openai", "model": "SmolLM2-135M-Instruct"})
    saved = tmp_path / "never-delegated.json"
    saved.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    panel = lesson.panel
    panel.get_by_role("tab", name="导出/导入").click()
    panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
    panel.locator(".tw-status").filter(has_text="已导入录制的运行").first.wait_for(timeout=WAIT)
    panel.locator(".tw-all").click()
    panel.locator(".tw-status").filter(has_text="⚠️").first.wait_for(timeout=WAIT)
    assert lesson.headline().startswith("⚠️ 这个问题要调用 task，模型一个工具也没有调用就回答了：下面的回答不来自工具")
    panel.get_by_role("tab", name="协议时间线").click()
