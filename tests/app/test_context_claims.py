"""context/lesson.md, performed: each claim of the context lesson (8.8) on its page, offline, in Chinese.
The English page makes the same claims in context/lesson.en.md."""
from __future__ import annotations

import context
import pytest

from tests.app.harness import LessonPage, screenshot

pytestmark = pytest.mark.browser
WAIT = 60_000
NAME = "我叫什么名字？"
FAILURE = "构建为什么失败？"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "context", height=2400) as page:
        preview(page).locator("table").first.wait_for(timeout=WAIT)
        yield page


def preview(lesson):
    return lesson.panel.locator(".tw-context-preview").last


def choose(lesson, title: str, first_words: str):
    """Picks the strategy `title` and waits for the preview to say it."""
    lesson.panel.locator(".tw-strategy label").filter(has_text=title).first.click()
    preview(lesson).filter(has_text=first_words).first.wait_for(timeout=WAIT)


def rows(lesson) -> list[list[str]]:
    """The preview's message table: a row of cells per message."""
    table = preview(lesson).locator("table").first
    return [row.locator("td").all_inner_texts() for row in table.locator("tbody tr").all()]


def final(lesson) -> str:
    return lesson.panel.locator(".tw-protocol .tw-final").last.inner_text()


def out_of_range(lesson, budget):
    """A budget typed outside the slider's range (50 to 8000): the page's own warning names the box, the
    number and the range (no English error of Gradio's, no red 错误 badge), the preview says it too and
    shows the nearest end, where the slider goes once the box loses focus."""
    for typed, nearest in (("0", 50), ("-5", 50), ("99999", 8000)):
        budget.fill(typed)
        said = f"「token 预算」填的 {typed} 超出范围：应在 50 到 8000 之间；离开输入框时它回到 {nearest}。"
        preview(lesson).filter(has_text=said + f"下面是按 {nearest} 的预览。").first.wait_for(timeout=WAIT)
        assert f"预算 {nearest} ·" in preview(lesson).inner_text()
        lesson.page.locator('[data-testid="toast-body"]').filter(has_text=said).first.wait_for(timeout=WAIT)
    toast = lesson.page.locator('[data-testid="toast-body"]').first.inner_text()
    assert toast.startswith("警告") and "Value" not in toast and "minimum" not in toast
    assert lesson.page.get_by_text("错误", exact=True).count() == 0
    budget.blur()
    preview(lesson).filter(has_text="预算 8000 ·").filter(has_not_text="超出范围").first.wait_for(timeout=WAIT)
    assert budget.input_value() == "8000"


def test_each_message_has_its_tokens_its_fate_and_the_strategies_sit_side_by_side(lesson):
    """右边是下一次请求的样子：每条消息原来多少 token、去向如何、发出去多少。左边换一种做法、拉一下预算，右边跟着变；
    最下面的表把几种做法放在一起，用时是这次在这台服务器上量的。"""
    choose(lesson, "滑动窗口", "做法：滑动窗口")
    table = rows(lesson)
    assert [row[1] for row in table] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant",
                                         "tool", "assistant", "user"]
    assert all(int(row[3]) > 4 for row in table) and table[0][4] == "原样留着" and table[3][4] == "丢掉了"
    assert table[3][5] == "0" and int(table[7][5]) == int(table[7][3])
    sides = preview(lesson).locator("table").nth(1).locator("tbody tr").all_inner_texts()
    # Every strategy has its row; /compact, which needs the model, is measured when it is the one run.
    assert len(sides) == len(context.STRATEGIES) and all(" ms" in row for row in sides[:-1])
    assert sides[-1].startswith("/compact 摘要") and "选它运行时才量（要调用一次模型）" in sides[-1]
    assert "用时（这次量的）" in preview(lesson).inner_text()
    budget = lesson.panel.locator(".tw-budget input[type=number]")
    budget.fill("2000")
    budget.press("Enter")
    preview(lesson).filter(has_text="预算 2000").first.wait_for(timeout=WAIT)
    assert "✅ 装进了预算" in preview(lesson).inner_text() and all(row[4] == "原样留着" for row in rows(lesson))
    out_of_range(lesson, budget)
    budget.fill("300")
    budget.press("Enter")
    preview(lesson).filter(has_text="预算 300").first.wait_for(timeout=WAIT)
    screenshot(lesson.page, "context-window-1280")


def test_the_window_keeps_the_system_message_and_the_model_forgets_the_name(lesson):
    """预算 300，做法「滑动窗口」：从最早的对话开始丢，system 留着，一个调用和它的结果一起丢。点 ▶ 运行问「我叫什么名字？」：
    第一句「我叫小林」已经丢了，模型说它不知道你的名字。预算 300 时窗口自己也装不下：它至少留 4 条，不把调用和结果拆开，
    也不丢刚问的问题，表里写着「超出」。"""
    choose(lesson, "滑动窗口", "做法：滑动窗口")
    fates = [row[4] for row in rows(lesson)]
    assert fates[0] == "原样留着" and fates[1:4] == ["丢掉了"] * 3
    # 预算 300 时窗口自己也装不下：它至少留 4 条，不把调用和结果拆开，也不丢刚问的问题，表里写着「超出」。
    sides = preview(lesson).locator("table").nth(1).locator("tbody tr").all_inner_texts()
    window = next(row for row in sides if row.startswith("👉 滑动窗口"))
    assert window.split("\t")[1] == "5" and "⚠️ 超出" in window
    assert fates[6:] == ["原样留着"] * 4 and "⚠️ 仍然超出预算" in preview(lesson).inner_text()
    headline = lesson.run(NAME)
    sent = lesson.rounds()[1]
    assert "你是构建助手" in sent and "我叫小林" not in sent
    assert "不知道你的名字" in final(lesson)
    # 顶上的结论是 ⚠️：回答里应有「小林」却没有，「滑动窗口」之后发给模型的消息里已经没有它了（第 2 条丢掉了）；
    # 发出去的上下文也超出了预算。
    assert headline.startswith("⚠️ 这个问题的回答里应有「小林」，实际没有：「滑动窗口」之后，发给模型的消息里已经没有它了"
                               "（第 2 条丢掉了）")
    assert "超出预算 300" in headline and "✅" not in headline


def test_the_summary_is_one_more_model_call_and_keeps_the_name(lesson):
    """换成「/compact 摘要」再运行：时间线的第一步里有这次模型调用和它写的摘要。摘要里留着「我叫小林」，模型答得上来。
    离线模型的摘要末尾写着它不是真正的大模型。"""
    choose(lesson, "/compact 摘要", "要模型来写摘要")
    headline = lesson.run(NAME)       # the name is answered; the summary's context is over the budget of 300
    assert headline.startswith("⚠️ 「/compact 摘要」之后，发出去的上下文仍有") and "超出预算 300" in headline
    assert "应有「小林」" not in headline
    first = lesson.panel.locator(".tw-protocol details.tw-round").first
    call = first.locator("details").filter(has_text="摘要是一次模型调用").first
    assert "我叫小林" in call.inner_text() and "不是真正的大模型" in call.inner_text()
    assert "交给模型写摘要" in first.inner_text()
    assert "你叫小林" in final(lesson)
    # Run, the summary has its numbers beside the other strategies' (its time includes the model call).
    compact = first.locator(".tw-context-table").last.locator("tbody tr").filter(has_text="/compact 摘要").inner_text()
    assert compact.startswith("👉 /compact 摘要") and " ms" in compact and "选它运行时才量" not in compact


def test_the_courses_window_leaves_an_orphan_and_the_headline_names_the_strategy(lesson):
    """「课程仓库的窗口」一条一条地丢：右边先用 ⛔ 标出这条找不到调用的结果；运行时服务端回 400 拒收整个请求，
    顶上的结论说是这种做法留下的，不怪模型。"""
    choose(lesson, "课程仓库的窗口", "做法：课程仓库的窗口")
    assert "⛔ 第 8 条（call_2 的结果）留下了，它的调用却丢了" in preview(lesson).inner_text()
    assert rows(lesson)[7][4] == "原样留着 ⛔" and rows(lesson)[6][4] == "丢掉了"      # the table's row 8, its call row 7
    headline = lesson.run(NAME)
    assert headline.startswith("❌ 服务端拒收了这次请求：「课程仓库的窗口（一条一条地丢）」留下了找不到调用的工具结果，不是模型的错")
    assert "HTTP 400" in headline and "模型放弃" not in headline
    # The refused request carried no tools: its system message is the conversation's, not a tool description.
    lesson.panel.get_by_role("tab", name="模型收到什么 · tokens").click()
    costs = lesson.panel.locator(".tw-costs-view").first
    costs.filter(has_text="这次请求没有带任何工具说明").wait_for(timeout=WAIT)
    assert "系统提示词" not in costs.inner_text() and "（工具说明 0）" in lesson.rounds()[-1]
    lesson.panel.get_by_role("tab", name="协议时间线").click()


def test_folding_keeps_the_error_at_the_end_of_the_log(lesson):
    """「折叠长结果」把超过 40 行的工具结果只留开头和结尾各 20 行，中间写明省略了多少行：构建日志的最后一行
    ERROR: test_calc failed 还在。问「构建为什么失败？」，模型读到的就是这一行。"""
    choose(lesson, "折叠长结果", "做法：折叠长结果")
    assert rows(lesson)[3][4] == "折叠了" and rows(lesson)[7][4] == "折叠了"
    headline = lesson.run(FAILURE)
    assert headline.startswith("⚠️ 「折叠长结果」之后，发出去的上下文仍有")      # the answer is right: only the budget
    assert "test_calc" not in headline.split("。", 1)[0]
    sent = lesson.rounds()[1]
    assert "中间省略了 80 行" in sent and "[020] building module 20" in sent and "[021] building" not in sent
    assert "ERROR: test_calc failed" in final(lesson)


def test_old_results_become_one_line_and_the_error_is_gone(lesson):
    """「旧结果换成一行」把最后一个之外的工具结果都换成一行说明。再问「构建为什么失败？」：日志不在了，离线模型在发出的消息里
    找不到 ERROR 行，就照实说看不出来。"""
    choose(lesson, "旧结果换成一行", "做法：旧结果换成一行")
    assert rows(lesson)[3][4] == "换成一行说明" and rows(lesson)[7][4] == "原样留着"
    headline = lesson.run(FAILURE)
    assert "[之前调用过 read_log" in lesson.rounds()[1]
    assert "没有带 ERROR 的行" in final(lesson)
    # 结论是 ⚠️，写明发给模型的消息里还有 test_calc（助手那句「test_calc 失败了」），回答没有用上。
    assert headline.startswith("⚠️ 这个问题的回答里应有「test_calc」，实际没有（发给模型的消息里有它，回答没有用上）")


def test_a_broken_conversation_is_said_on_the_right(lesson):
    """对话也能改（展开「对话」），改坏了右边会说哪里不对。"""
    from tests.app.harness import paste_code

    lesson.panel.get_by_text("对话（JSON，可编辑").first.click()
    editor = lesson.panel.locator(".tw-conversation")
    paste_code(lesson.page, editor, '[{"role": "robot", "content": "hi"}]')
    preview(lesson).filter(has_text="对话用不了").first.wait_for(timeout=WAIT)
    assert "第 1 条消息的 role 应是 system / user / assistant / tool 之一" in preview(lesson).inner_text()
    lesson.panel.locator(".tw-conversation-reset").click()
    preview(lesson).locator("table").first.wait_for(timeout=WAIT)


def test_a_link_sets_the_strategy_and_the_budget(browser, app_url):
    with LessonPage(browser, app_url, "context", query="strategy=fold_window&budget=420&question=构建为什么失败？") as page:
        preview(page).filter(has_text="预算 420").first.wait_for(timeout=WAIT)
        assert "做法：先折叠，再滑动窗口" in preview(page).inner_text()
        assert page.panel.locator(".tw-question textarea").input_value() == FAILURE
