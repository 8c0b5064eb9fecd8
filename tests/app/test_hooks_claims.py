"""hooks/lesson.md, performed: each claim of the hooks lesson (8.7) on its page, offline, in Chinese. The
English page makes the same claims in hooks/lesson.en.md."""
from __future__ import annotations

import pytest

from tests.app.harness import LessonPage, code_text, paste_code, screenshot

pytestmark = pytest.mark.browser
WAIT = 60_000
CONFIG = "读一下 payments 服务的配置"
SELECT = "执行 SQL `SELECT * FROM orders`"
KEY = "sk-live9f3b2c7d1e8a4b6c"
BILLING = "读一下 billing 服务的配置"
BILLING_KEY = "sk-cfg0a1b2c3d4e5f6"
FROM_QUESTION = "fetch_config 对问题里原样给出的参数报了错"
REASON = "模式规则 bash:rm * 匹配命令 rm notes.md：拒绝"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "hooks", height=2400) as page:
        status(page).filter(has_text="mask_secrets").first.wait_for(timeout=WAIT)
        yield page


def status(lesson):
    return lesson.panel.locator(".tw-hooks-status")


def use_hooks(lesson, name: str, first_hook: str):
    """Picks the example hooks `name` and waits until the panel lists their first hook."""
    dropdown = lesson.panel.locator(".tw-hook-set")
    if dropdown.locator("input").input_value() != name:
        dropdown.locator("input").blur()
        dropdown.locator("input").click()
        option = lesson.page.get_by_role("option", name=name).first
        option.wait_for(timeout=WAIT)
        option.dispatch_event("mousedown")          # Gradio's dropdown picks on mousedown
        lesson.page.get_by_role("option").first.wait_for(state="detached", timeout=WAIT)
    first_listed(lesson, first_hook)


def first_listed(lesson, hook: str):
    """Waits until the panel lists `hook` first (the order the hooks run in)."""
    status(lesson).locator("li").first.filter(has_text=f" · {hook} · fail").wait_for(timeout=WAIT)


def edit_hooks(lesson, old: str, new: str, listed: str):
    """Replaces `old` by `new` in the hooks source, as a student pastes it, and waits for the list to say `listed`."""
    source = code_text(lesson.panel.locator(".tw-hooks"))
    assert old in source
    paste_code(lesson.page, lesson.panel.locator(".tw-hooks"), source.replace(old, new))
    status(lesson).locator("li").first.filter(has_text=listed).wait_for(timeout=WAIT)


def hook_runs(lesson) -> list[str]:
    return lesson.panel.locator(".tw-protocol .tw-hook").all_text_contents()


def sent_back(lesson) -> str:
    """The second request's messages: what the model got back from the call."""
    return lesson.rounds()[1]


def test_masking_covers_the_key_and_the_password_and_the_diff_shows_it(lesson):
    """用示例钩子「脱敏」问「读一下 payments 服务的配置」：配置里有 api_key 和 password；mask_secrets 下面的 diff
    显示它遮住了什么，模型收到的是 sk-live**** 和 password=******。"""
    use_hooks(lesson, "脱敏", "mask_secrets")
    assert lesson.run(CONFIG).startswith("✅")
    removed = lesson.panel.locator(".tw-hook .tw-diff .tw-del").all_text_contents()
    added = lesson.panel.locator(".tw-hook .tw-diff .tw-add").all_text_contents()
    assert any(KEY in line and "password=hunter2" in line for line in removed)
    assert any("api_key=sk-live****" in line and "password=******" in line for line in added)
    assert "sk-live****" in sent_back(lesson) and KEY not in sent_back(lesson) and "hunter2" not in sent_back(lesson)
    screenshot(lesson.page, "hooks-masking-1280")


def test_a_failed_call_is_masked_too_and_the_question_s_words_not_the_model_are_named(lesson):
    """还是「脱敏」，问「读一下 billing 服务的配置」：工具报错，报错里带着密钥；mask_secrets 也登记在 PostToolUseFailure 上，
    时间线里它在调用失败之后运行，diff 显示它遮住了什么，模型收到 sk-cfg0****。顶上写明 fetch_config 对问题里原样给出的
    参数报了错，不说模型放弃了；问不存在的 orders 也是这样。删掉 @hooks.on(FAILED) 再问 billing：时间线提醒 mask_secrets
    没有看到失败的文本，报错原样交给了模型。"""
    use_hooks(lesson, "脱敏", "mask_secrets")
    headline = lesson.run(BILLING)
    assert headline.startswith("⚠️") and FROM_QUESTION in headline and "模型放弃" not in headline
    (mask,) = hook_runs(lesson)
    assert mask.startswith("🪝 PostToolUseFailure · mask_secrets") and "调用失败了，之后运行的钩子（PostToolUseFailure）" \
        in lesson.protocol()
    assert "它换掉的失败文本（diff）" in mask
    removed = lesson.panel.locator(".tw-hook .tw-diff .tw-del").all_text_contents()
    added = lesson.panel.locator(".tw-hook .tw-diff .tw-add").all_text_contents()
    assert any(BILLING_KEY in line for line in removed) and any("api_key=sk-cfg0**** 已过期" in line for line in added)
    assert "sk-cfg0****" in sent_back(lesson) and BILLING_KEY not in sent_back(lesson)
    assert "钩子之后的结果 失败 tool_exception" in lesson.protocol()         # masked, and still a failure
    assert not lesson.panel.locator(".tw-hook-unseen").count()
    headline = lesson.run("读一下 orders 服务的配置")
    assert headline.startswith("⚠️") and FROM_QUESTION in headline and "模型放弃" not in headline
    assert "没有服务 orders" in sent_back(lesson)
    source = code_text(lesson.panel.locator(".tw-hooks"))
    paste_code(lesson.page, lesson.panel.locator(".tw-hooks"),
               "".join(line for line in source.splitlines(keepends=True) if not line.startswith("@hooks.on(FAILED)")))
    status(lesson).filter(has_text="登记了 1 个钩子").first.wait_for(timeout=WAIT)
    lesson.run(BILLING)
    assert hook_runs(lesson) == [] and BILLING_KEY in sent_back(lesson)
    note = lesson.panel.locator(".tw-hook-unseen").first.inner_text()
    assert "mask_secrets 没有看到失败的文本" in note and "原样交给了模型" in note


def test_a_dangerous_sql_is_denied_the_tool_does_not_run_and_the_model_is_not_blamed(lesson):
    """用「拦下危险的 SQL」问「执行 SQL `DROP TABLE orders`」：工具没有运行，模型收到钩子拒绝的理由；
    顶上的结论写明是钩子拒绝的，不怪模型。"""
    use_hooks(lesson, "拦下危险的 SQL", "read_only_sql")
    headline = lesson.run("执行 SQL `DROP TABLE orders`")
    assert headline.startswith("⚠️") and "钩子拒绝了 run_sql 的调用" in headline and "模型放弃" not in headline
    assert "❌ [钩子拒绝] 钩子 read_only_sql 不允许这次调用：DROP 会删数据" in sent_back(lesson)
    assert "（演示）已执行" not in lesson.protocol()


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_a_hook_s_ask_waits_for_you_and_your_answer_decides(lesson, answer):
    """再问「执行 SQL `UPDATE orders SET paid = 1`」：钩子说 ask，运行停在确认框里等你：批准了才执行；拒绝的话，
    你写的理由交给模型，顶上写明是你拒绝的。"""
    use_hooks(lesson, "拦下危险的 SQL", "read_only_sql")
    assert lesson.run("执行 SQL `UPDATE orders SET paid = 1`").startswith("⏸")
    box = lesson.panel.locator(".tw-ask").first
    box.wait_for(state="visible", timeout=WAIT)
    title = box.locator(".tw-ask-title").first.inner_text()
    assert "钩子 read_only_sql 要先问你" in title and "UPDATE 会改数据，要你点头" in title
    assert not lesson.panel.locator(".tw-approve-edited").is_visible()
    assert "（演示）已执行" not in lesson.protocol()                # nothing has run yet
    if answer == "approve":
        box.locator(".tw-approve").click()
        lesson.panel.locator(".tw-status").filter(has_text="✅").first.wait_for(timeout=WAIT)
        assert "（演示）已执行：UPDATE orders SET paid = 1" in sent_back(lesson)
    else:
        box.locator(".tw-ask-reason textarea").first.fill("月底结账前先别改")
        box.locator(".tw-deny").click()
        status = lesson.panel.locator(".tw-status").filter(has_text="你拒绝了 run_sql 的调用").first
        status.wait_for(timeout=WAIT)
        assert "月底结账前先别改" in sent_back(lesson) and "（演示）已执行" not in lesson.protocol()
    box.wait_for(state="hidden", timeout=WAIT)


def test_a_rewritten_argument_runs_and_the_model_is_told(lesson):
    """用「改写参数」问「读一下 Payments 服务的配置」：钩子把服务名改成小写，工具照常返回；回填的结果开头写明钩子改了参数。
    钩子换上的参数先按 schema 校验：改成一个数组再问，lowercase_service 出错，工具没有运行，模型不被要求改参数，顶上点名它。"""
    use_hooks(lesson, "改写参数", "lowercase_service")
    assert lesson.run("读一下 Payments 服务的配置").startswith("✅")
    (call,) = lesson.panel.locator(".tw-protocol .tw-call").all_text_contents()
    assert '"service": "payments"' in call and "没有服务 Payments" not in call
    assert '"content": "（执行前，钩子 lowercase_service 改了你写的参数，实际执行的是 {\\"service\\": \\"payments\\"}' \
        in sent_back(lesson)                                  # the first words of what the model gets back
    assert "服务 payments 的配置" in sent_back(lesson)
    edit_hooks(lesson, '"service": service.strip().lower()', '"service": [service.strip().lower()]',
               "lowercase_service · fail closed")
    headline = lesson.run("读一下 Payments 服务的配置")
    assert headline.startswith("⚠️") and "钩子 lowercase_service 自己出错了" in headline and "模型放弃" not in headline
    (hook,) = hook_runs(lesson)
    assert '出错：updatedInput 不合 fetch_config 的参数：参数 service 应为字符串，收到数组 ["payments"]' in hook
    assert "它是 fail closed 的：这次调用被拦下，工具没有运行" in hook
    (call,) = lesson.panel.locator(".tw-protocol .tw-call").all_text_contents()
    assert "这次调用没有执行；它的参数" in call and '"service": "Payments"' in call and "实际执行的参数" not in call
    back = sent_back(lesson)
    assert "不要改参数重试" in back and "请改为字符串后重试" not in back and "服务 payments 的配置" not in back


def test_a_hook_keeps_no_state_and_its_print_is_under_it(lesson):
    """用「审计与计时」问「读一下 payments 和 search 服务的配置」：时间线里每个钩子下面是它打印的那一行；
    模型调用了两次工具，两行「开始」里的计数 calls_seen 都是 1。"""
    use_hooks(lesson, "审计与计时", "audit_before")
    assert lesson.run("读一下 payments 和 search 服务的配置").startswith("✅")
    runs = hook_runs(lesson)
    assert [run.split(" · ")[1].split(" ")[0] for run in runs] == ["audit_before", "audit_after"] * 2
    started = [run.split("它打印的")[1] for run in runs[::2]]
    assert "开始 fetch_config {'service': 'payments'}（calls_seen = 1）" in started[0]
    assert "开始 fetch_config {'service': 'search'}（calls_seen = 1）" in started[1]
    assert all("结束 fetch_config，结果" in run.split("它打印的")[1] for run in runs[1::2])


def test_the_tools_are_left_of_the_hooks(lesson):
    """工具源码在左，钩子源码在右：两份都能改，都在沙箱里运行。"""
    tools, hooks = (lesson.panel.locator(name).first.bounding_box() for name in (".tw-editor", ".tw-hooks"))
    assert tools["x"] + tools["width"] <= hooks["x"] and abs(tools["y"] - hooks["y"]) < 80
    assert "也在沙箱里运行" in lesson.panel.locator(".tw-hooks").first.inner_text()


def test_an_audit_before_the_masking_logs_the_key_until_the_order_is_swapped(lesson):
    """「顺序的坑」：审计打印的日志里是没遮住的密钥，模型收到的却是遮住的；把两行 hooks.add 换个顺序，日志里的密钥也遮住了。"""
    use_hooks(lesson, "顺序的坑", "audit")
    assert lesson.run(CONFIG).startswith("✅")
    audit, mask = hook_runs(lesson)
    assert "audit" in audit and KEY in audit.split("它打印的")[1]
    assert "mask_secrets" in mask and KEY not in sent_back(lesson) and "sk-live****" in sent_back(lesson)
    edit_hooks(lesson, 'hooks.add(POST, audit, fail="open")\nhooks.add(POST, mask_secrets)',
               'hooks.add(POST, mask_secrets)\nhooks.add(POST, audit, fail="open")', "PostToolUse · mask_secrets")
    assert lesson.run(CONFIG).startswith("✅")
    mask, audit = hook_runs(lesson)
    printed = audit.split("它打印的")[1]
    assert "mask_secrets" in mask and KEY not in printed and "sk-live****" in printed


def test_a_hook_that_raises_stops_the_call_when_closed_and_not_when_open(lesson):
    """「钩子出错」：fail="closed" 时调用被拦下；改成 fail="open" 再运行：调用照常执行，时间线里记着它的错。"""
    use_hooks(lesson, "钩子出错", "region_check")
    headline = lesson.run(CONFIG)
    assert headline.startswith("⚠️") and "钩子 region_check 自己出错了" in headline
    (closed,) = hook_runs(lesson)
    assert "出错：KeyError: 'region'" in closed and "它是 fail closed 的：这次调用被拦下，工具没有运行" in closed
    assert "服务 payments 的配置" not in lesson.protocol()
    edit_hooks(lesson, 'fail="closed"', 'fail="open"', "region_check · fail open")
    headline = lesson.run(CONFIG)
    assert headline.startswith("✅") and "钩子 region_check 出错了，它是 fail open 的，出错不拦下什么，运行照常" in headline
    (opened,) = hook_runs(lesson)
    assert "出错：KeyError: 'region'" in opened and "它是 fail open 的：记下这个错，调用照常" in opened
    assert "服务 payments 的配置" in sent_back(lesson)


def test_a_hook_without_return_leaves_the_result_as_it_was(lesson):
    """「忘了 return」问「执行 SQL `SELECT * FROM orders`」：返回 None 就是没意见，模型收到的结果原样不动。"""
    use_hooks(lesson, "忘了 return", "shout")
    assert lesson.run(SELECT).startswith("✅")
    (shout,) = hook_runs(lesson)
    assert "没意见（返回 None 或空 dict）" in shout
    assert "（演示）已执行：SELECT * FROM orders。示例订单库返回 3 行。" in sent_back(lesson)
    assert "SELECT * FROM ORDERS" not in sent_back(lesson)


def test_a_permission_rule_as_a_hook_gives_the_permission_lesson_s_reason(browser, app_url, lesson):
    """「权限规则也是钩子」问「运行 `rm notes.md`」：拒绝的理由和「权限与确认」一课用「默认」规则拒绝同一条命令时一字不差。"""
    use_hooks(lesson, "权限规则也是钩子", "permission_rules")
    headline = lesson.run("运行 `rm notes.md`")
    assert headline.startswith("⚠️") and "钩子拒绝了 bash 的调用" in headline
    assert f"钩子 permission_rules 不允许这次调用：{REASON}" in sent_back(lesson)
    with LessonPage(browser, app_url, "permissions") as permissions:
        permissions.panel.locator(".tw-rules-status").filter(has_text="规则有效").first.wait_for(timeout=WAIT)
        assert permissions.run("运行 `rm notes.md`").startswith("⚠️")
        assert f"权限规则不允许这次调用（{REASON}）" in permissions.protocol()
