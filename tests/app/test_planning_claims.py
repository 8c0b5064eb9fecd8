"""planning/lesson.md, performed: each claim of the plan lesson (8.3) on its page, offline, in Chinese. The
English page makes the same claims in planning/lesson.en.md; the English each claim looks for (T's) is checked
as text by test_english_claims.py."""
from __future__ import annotations

import re

import pytest

from runs.planning_backend import QUESTIONS, TRIP
from tests.app.harness import T, LessonPage, choose, screenshot

pytestmark = pytest.mark.browser
WAIT = 60_000
BEIJING = "查询指定城市今天的天气：北京"
SHANGHAI = "查询指定城市未来几天的天气预报：上海，3"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "planning", height=2400) as page:
        page.panel.locator(".tw-schema-json").filter(has_text="get_forecast").first.wait_for(timeout=WAIT)
        yield page


def top_rounds(lesson) -> list:
    """The run's rounds, each opened as a student opens them to read it."""
    rounds = lesson.panel.locator(".tw-protocol").first.locator(":scope > details.tw-round")
    rounds.evaluate_all("els => els.forEach(e => e.open = true)")
    return rounds.all()


def plans(round_) -> list:
    return round_.locator(".tw-plan").all()


def board(plan, side: str) -> str:
    """The items of the board before or after (below its «之前» / «之后» heading)."""
    return plan.locator(f".tw-plan-{side}").inner_text().split("\n", 1)[1]


def fail(lesson, tool: str):
    choose(lesson.page, lesson.panel.locator(".tw-broken"),
           T("{name} 这次一律失败", "{name} fails every time").format(name=tool) if tool else
           T("不让工具失败", "No tool fails"))


def pick_preset(lesson, question: str):
    """Picks a preset question and waits for the question box to hold it (the page fills it in)."""
    from playwright.sync_api import expect

    choose(lesson.page, lesson.panel.locator(".tw-presets"), question)
    expect(lesson.panel.locator(".tw-question textarea")).to_have_value(question, timeout=WAIT)


def approach(lesson, fixed: bool):
    label = (T("先定计划再执行（课程仓库的写法）", "Plan first, then execute (the course's way)") if fixed else
             T("计划是工具：模型用 write_todos 自己写、自己改", "The plan is a tool: the model writes and rewrites it with write_todos"))
    lesson.panel.locator(".tw-approach").get_by_label(label).check()


def test_the_board_changes_with_every_call(lesson):
    """问「出差前准备：查北京今天的天气，再查上海未来3天的天气预报」：第 1 轮模型只调用 write_todos，写下两项，第一项是
    in_progress；第 2 轮它调用 get_weather。之后每一轮它先交更新过的清单：做完的一项标成 completed，evidence 是从工具结果里
    原样摘的一句，下一项改成 in_progress；再调用下一项的工具。时间线里每次 write_todos 的下面画着之前和之后的计划板，写明
    变了什么。两项都完成了，模型才作答，结论是 ✅。"""
    assert lesson.run(TRIP).startswith("✅")
    rounds = top_rounds(lesson)
    summaries = [r.locator("summary").first.inner_text() for r in rounds]
    assert "调用 write_todos" in summaries[0] and "get_" not in summaries[0]
    assert "调用 get_weather" in summaries[1] and "write_todos" not in summaries[1]
    assert "调用 write_todos, get_forecast" in summaries[2]
    first = plans(rounds[0])[0]
    assert T("写下计划", "the plan written") in first.inner_text()
    assert board(first, "before").endswith(T("（空）", "(empty)"))
    assert f"▶️ {BEIJING} in_progress" in board(first, "after") and f"⬜ {SHANGHAI} pending" in board(first, "after")
    result = rounds[1].inner_text()
    quoted = "北京今天晴，气温 25°C，湿度 30%"
    assert quoted in result
    update = plans(rounds[2])[0]
    assert f"{BEIJING}：in_progress → completed" in update.inner_text()
    assert f"{SHANGHAI}：pending → in_progress" in update.inner_text()
    assert f"✅ {BEIJING} completed" in board(update, "after") and f"“{quoted}”" in board(update, "after")
    assert f"▶️ {BEIJING} in_progress" in board(update, "before")
    last = plans(rounds[3])[0]
    assert board(last, "after").count("completed") == 2 and "in_progress" not in board(last, "after")
    assert rounds[-1].locator(".tw-final").count() == 1 and len(rounds) == 5
    assert all(r.locator(".tw-plan").count() == ("write_todos" in s) for r, s in zip(rounds, summaries))
    screenshot(lesson.page, "planning-board-1280")


def test_a_list_that_breaks_a_rule_is_refused_and_corrected(lesson):
    """选第二个预设问题（让模型故意把前两项同时标成 in_progress）：第 1 轮的清单被退回，结果是 ❌ [计划不合规则]，写明第 1、2 项
    都是 in_progress、该怎么改，计划板没有动；第 2 轮模型改好再交，被接受了。第三个预设问题让模型不做第一项就把它标成
    completed：退回的理由是 evidence 不在这次运行的任何工具结果里。"""
    pick_preset(lesson, QUESTIONS[1])
    assert lesson.run().startswith("✅")
    rounds = top_rounds(lesson)
    refused = plans(rounds[0])[0]
    assert "tw-plan-refused" in refused.get_attribute("class")
    assert T("❌ 退回，计划板没有动", "❌ refused; the board did not change") in refused.inner_text()
    assert "第 1、2 项都是 in_progress：同一时间只能做一件事，把还没开始做的改回 pending" in refused.inner_text()
    assert board(refused, "before") == board(refused, "after")
    assert "❌ [计划不合规则] 计划没有改：第 1、2 项都是 in_progress" in rounds[0].inner_text()
    accepted = plans(rounds[1])[0]
    assert "tw-plan-refused" not in accepted.get_attribute("class")
    assert f"▶️ {BEIJING} in_progress" in board(accepted, "after") and f"⬜ {SHANGHAI} pending" in board(accepted, "after")

    pick_preset(lesson, QUESTIONS[2])
    lesson.run()
    refused = plans(top_rounds(lesson)[0])[0]
    assert "tw-plan-refused" in refused.get_attribute("class")
    assert (f"第 1 项“{BEIJING}”标成了 completed，evidence “这一步已经做过了”不在这次运行的任何工具结果里"
            in refused.inner_text())
    assert "tw-plan-refused" not in plans(top_rounds(lesson)[1])[0].get_attribute("class")


def test_a_failed_step_makes_the_model_replan(lesson):
    """在「让一个工具失败」里选「get_weather 这次一律失败」，再问第一个问题：第 2 轮 get_weather 失败了；第 3 轮模型交来的清单
    把北京那一项改写成用 get_forecast 查，这一轮标着「🔁 改了计划」，之前和之后的计划板都在。结论仍是 ✅，写明 get_weather
    失败以后模型在第 3 轮改了计划、改了什么。"""
    fail(lesson, "get_weather")
    headline = lesson.run(TRIP)
    forecast = "查询指定城市未来几天的天气预报：北京"
    assert headline.startswith(f"✅ 6 轮，7 次工具调用（🔁 get_weather 失败以后，模型在第 3 轮改了计划（改写：{BEIJING} → {forecast}）")
    rounds = top_rounds(lesson)
    assert "❌ [演示：设定为失败] get_weather 这次没有成功" in rounds[1].inner_text()
    assert T("🔁 改了计划", "🔁 replanned") in rounds[2].locator("summary").first.inner_text()
    replan = plans(rounds[2])[0]
    assert T("🔁 改了计划", "🔁 replanned") in replan.inner_text() and f"改写：{BEIJING} → {forecast}" in replan.inner_text()
    assert BEIJING in board(replan, "before") and forecast not in board(replan, "before")
    assert f"▶️ {forecast} in_progress" in board(replan, "after") and BEIJING not in board(replan, "after")
    assert "调用 write_todos, get_forecast" in rounds[2].locator("summary").first.inner_text()
    assert sum(T("🔁 改了计划", "🔁 replanned") in r.locator("summary").first.inner_text() for r in rounds) == 1
    screenshot(lesson.page, "planning-replan-1280")


def test_the_course_s_fixed_plan_marks_a_failed_step_done_and_both_are_compared(lesson):
    """「写法」换成「先定计划再执行」，get_weather 仍设成失败，再问同一个问题：模型先一次写好全部步骤，循环按顺序每一步问一次模型，
    这一步交回一段话就标 completed。第 1 步失败了，计划照样把它标成 completed，后面的步骤照旧执行；结论是 ⚠️，写明这一步没有
    一次成功的工具调用，计划也没有改。点「两种写法各跑一遍」：表格里并排两种写法的请求轮数、token（离线模型的是估算，表格里
    标明）、工具调用和其中失败的次数，以及一步失败以后发生了什么：一边改了计划，一边照样标成 completed。"""
    fail(lesson, "get_weather")
    approach(lesson, fixed=True)
    headline = lesson.run(TRIP)
    assert headline.startswith("⚠️ get_weather 这次被设定为失败（演示：运行设置「让一个工具失败」），不是模型或参数的错")
    assert f"先定好的计划照样把第 1 步「{BEIJING}」标成了 completed，可这一步没有一次成功的工具调用，计划也没有改" in headline
    rounds = top_rounds(lesson)
    first = rounds[0]
    assert "tools" not in first.locator("summary").first.inner_text() and '"steps"' in first.inner_text()
    written = plans(first)
    assert T("📋 计划：先定好，状态由循环来改（课程仓库的写法）", "📋 The plan: written once") in written[0].inner_text()
    assert f"⬜ {BEIJING} pending" in board(written[0], "after") and f"⬜ {SHANGHAI} pending" in board(written[0], "after")
    text = lesson.protocol()
    failed_at = text.index("❌ [演示：设定为失败] get_weather")
    done_at = text.index(f"{BEIJING}：in_progress → completed")
    forecast_at = text.find("调用 get_forecast", done_at)     # the steps after it run as planned
    assert failed_at < done_at < forecast_at
    assert T("🔁 改了计划", "🔁 replanned") not in text
    fixed_rounds = re.search(r"：(\d+) 轮，", headline).group(1)

    approach(lesson, fixed=False)
    lesson.panel.locator(".tw-compare").click()
    table = lesson.panel.locator("table.tw-compare")
    table.wait_for(timeout=WAIT)
    todos = table.locator("tr.tw-compare-todos td").all_inner_texts()
    fixed = table.locator("tr.tw-compare-fixed td").all_inner_texts()
    assert todos[0] == T("计划是工具（write_todos）", "The plan is a tool (write_todos)")
    assert fixed[0] == T("先定计划再执行（课程仓库）", "Plan first, then execute (the course's)")
    assert (todos[1], fixed[1]) == ("6", fixed_rounds)
    assert all(row[2].endswith(T("（离线模型的估算）", " (the offline model's estimate)")) for row in (todos, fixed))
    assert (todos[3], fixed[3]) == ("3（1）", "2（1）")
    assert todos[5] == T("🔁 模型改了计划", "🔁 the model changed its plan")
    assert fixed[5] == T("照样标成 completed：{items}", "marked completed all the same: {items}").format(items=BEIJING)
    assert todos[6].startswith("✅") and fixed[6].startswith("⚠️")
    screenshot(lesson.page, "planning-compare-1280")
