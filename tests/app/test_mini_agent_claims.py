"""The sentences of mini_agent/lesson.md that promise something on screen, each performed in the real page on
the offline model, its sentence quoted in the docstring. Every test opens its own page (a browser
session of its own, so a workspace of its own): the claims change the rules and the workspace.

Each claim is performed once, in Chinese; mini_agent/lesson.en.md makes the same claims and
test_english_claims.py checks the English of T(zh, en) here as text. What the course writes (the
rules' reasons, the tools' results, the offline model's answers) is Chinese in both."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation_cases import CASE_SETS
from mini_agent import DEMO_RULES
from offline.server import OfflineServer
from tests.app.harness import LessonPage, calls, choose, code_text, screenshot, set_code, show_file, T, wait_ask, wait_stored

pytestmark = pytest.mark.browser
WAIT = 60_000
ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "workspace" / "starter"
TASK = "找出失败的测试并修好它"
BROKEN = "return sum(numbers) / (len(numbers) - 1)"
FIXED = "return sum(numbers) / len(numbers)"
ASKING_RULES = {key: value for key, value in DEMO_RULES.items() if key != "bash:python3 -m unittest*"}
ENV = {key: value for key, value in os.environ.items()
       if key not in ("PYTHONPATH", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MINI_AGENT_MODEL")}


@pytest.fixture
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "mini_agent") as page:
        page.panel.locator(".tw-ws-tree").filter(has_text="notes.md").first.wait_for(timeout=WAIT)
        yield page
        assert page.watched.foreign_requests() == []


def call_boxes(panel, name: str) -> list[str]:
    """The text of each call of `name` in the timeline (folded rounds included), in order."""
    return [box.text_content() for box in panel.locator(".tw-protocol .tw-call").all()
            if box.locator("b").first.text_content() == name]


def set_rules(lesson, rules: dict) -> None:
    set_code(lesson.page, lesson.panel.locator(".tw-ma-rules"), json.dumps(rules, ensure_ascii=False, indent=2))


# The run has gone on after an answer: it asks again (one more rule's ask in the timeline), or it has ended (a headline).
GONE_ON = """([root, asked]) => {
    const box = root.querySelector('.tw-ask');
    const n = root.querySelectorAll('.tw-protocol .tw-gate-ask').length;
    if (box && box.offsetParent !== null) return n > asked;
    return /^(✅|⚠️|❌|🛑|⏹|🔁|✂️|💬|✍️)/u.test((root.querySelector('.tw-status')?.innerText || '').trim());
}"""


def answer(panel, button: str, reason: str = "") -> None:
    """Answers the ask box with one of its buttons and waits until the run asks again or ends."""
    if reason:
        panel.locator(".tw-ask-reason textarea").fill(reason)
    asked = panel.locator(".tw-protocol .tw-gate-ask").count()
    panel.locator(button).click()
    panel.page.wait_for_function(GONE_ON, arg=[panel.element_handle(), asked], timeout=WAIT)


def asking(panel) -> bool:
    return panel.locator(".tw-ask").first.is_visible()


def test_each_part_shows_where_it_acts_and_only_a_passing_test_is_a_success(lesson):
    """「问「找出失败的测试并修好它」：时间线里先是技能目录，模型先用 `load_skill` 读 `fix-tests`；每次调用 read、
    edit、bash 之前是钩子 `protect_tests` 和一条权限规则的决定，之后是钩子 `mask_secrets`；每次写计划之后是
    计划板。`src/calc.py` 改好、测试通过了，顶上的结论才是 ✅。」"""
    headline = lesson.run(TASK)
    panel = lesson.panel
    rounds = lesson.rounds()
    assert T("发出之前：技能", "Before sending: the skills") in rounds[0] and "fix-tests" in rounds[0]
    made = calls(panel)
    assert made[0] == "load_skill" and panel.locator(".tw-protocol .tw-call").first.text_content().count("fix-tests")
    for name in ("read", "edit", "bash"):
        boxes = call_boxes(panel, name)
        assert boxes, name
        for box in boxes:
            before, gate, after = box.find("protect_tests"), box.find("🛡️"), box.find("mask_secrets")
            assert -1 < before < gate < after, (name, box[:400])
    plans = panel.locator(".tw-protocol .tw-plan")
    assert made.count("write_todos") == plans.count() > 0
    assert T("📋 计划板：", "📋 The plan board: ") in plans.last.text_content()
    assert headline.startswith("✅"), headline
    show_file(panel, "src/calc.py", FIXED)
    screenshot(lesson.page, "mini-agent-fixed")
    last_test = call_boxes(panel, "bash")[-1]
    assert "python3 -m unittest" in last_test and "OK" in last_test      # the tests passed after the edit


def test_shrinking_the_context_loses_things_too(lesson):
    """「把「上下文」换成「旧结果换成一行」、预算调到 1000，再问一次：有几轮前面多了一步「发出之前：收拾上下文」，写着收拾
    前后各多少 token；早先的工具结果只剩一行，这一次测试没有修好，结论不是 ✅。」"""
    panel = lesson.panel
    choose(lesson.page, panel.locator(".tw-ma-context"), T("旧结果换成一行", "Old results to one line"))
    budget = panel.locator(".tw-ma-budget input[type=number]")
    budget.fill("1000")
    budget.press("Enter")
    headline = lesson.run(TASK)
    shrunk = [r for r in lesson.rounds() if r.strip().startswith(T("发出之前：收拾上下文", "Before sending: the context shrunk"))]
    assert shrunk and all(re.search(T(r"\d+ → \d+ 个 token", r"\d+ → \d+ tokens"), r) for r in shrunk)
    assert any(re.search(T(r"的结果）换成了一行说明", r"\) became one line"), r) for r in shrunk)
    assert not headline.startswith("✅"), headline
    show_file(panel, "src/calc.py", BROKEN)


def test_a_rule_s_ask_waits_for_you_deny_approve_or_edit(lesson):
    """「从规则里删掉 `"bash:python3 -m unittest*": "allow"` 这一行，再问一次：模型要运行测试时停下来，确认框里是
    将要运行的命令，可以批准、修改参数后批准，或写明理由拒绝。拒绝了，测试就没有运行，结论是 ⚠️，写明是你拒绝的。」"""
    panel = lesson.panel
    set_rules(lesson, ASKING_RULES)
    panel.locator(".tw-question textarea").fill(TASK)
    panel.locator(".tw-run").click()
    assert "python3 -m unittest" in wait_ask(panel)
    answer(panel, ".tw-deny", "先别跑测试")
    headline = lesson.headline()
    assert headline.startswith("⚠️") and T("你拒绝了 bash 的调用", "You denied the call of bash") in headline, headline
    assert "先别跑测试" in lesson.protocol()
    show_file(panel, "src/calc.py", BROKEN)

    panel.locator(".tw-run").click()                          # again: approve with edited arguments, then approve
    wait_ask(panel)
    set_code(lesson.page, panel.locator(".tw-ask-args"), json.dumps({"command": "python3 -m unittest tests.test_calc"}))
    answer(panel, ".tw-approve-edited")
    while asking(panel):
        answer(panel, ".tw-approve")
    assert lesson.headline().startswith("✅"), lesson.headline()
    assert T("✏️ 执行前，人改过这个参数", "✏️ A person edited this argument before it ran") in lesson.protocol()
    show_file(panel, "src/calc.py", FIXED)


def test_a_sub_agent_passes_the_same_rules(lesson):
    """「规则照上面那样改，问「派一个子代理去跑一下测试」：子代理要运行测试时，一样停下来问你；它的整个运行折叠在
    `task` 调用下面。」"""
    panel = lesson.panel
    set_rules(lesson, ASKING_RULES)
    panel.locator(".tw-question textarea").fill("派一个子代理去跑一下测试")
    panel.locator(".tw-run").click()
    assert "python3 -m unittest" in wait_ask(panel)
    assert calls(panel)[-1] == "bash" and panel.locator(".tw-protocol .tw-child").count() == 1
    answer(panel, ".tw-approve")
    assert lesson.headline().startswith("⚠️")        # the sub-agent ran the tests, and they fail: said, not hidden
    task = call_boxes(panel, "task")
    assert len(task) == 1
    child = panel.locator(".tw-protocol .tw-child").first
    assert "bash" in child.text_content() and "🛡️" in child.text_content()


def test_a_deny_rule_means_it_does_not_run(lesson):
    """「问「运行 `rm notes.md`」：规则 `bash:rm *` 拒绝了，notes.md 还在，结论写明是权限规则拒绝的。」"""
    headline = lesson.run("运行 `rm notes.md`")
    assert T("权限规则拒绝了 bash 的调用", "A permission rule refused the call of bash") in headline, headline
    assert "bash:rm *" in call_boxes(lesson.panel, "bash")[0]
    assert "notes.md" in lesson.panel.locator(".tw-ws-tree").inner_text()


def test_8_12_s_cases_score_the_parts_beside_the_plain_loop(lesson):
    """「打开「📊 8.12 的用例给这组零件打分」，点「📊 打分」：每个天气用例一行，写着这组零件和只用 Function Calling 循环
    各自通过没有、没通过的原因，上面是两边各通过几个。」"""
    panel = lesson.panel
    panel.locator(".tw-ma-score-box").get_by_text(T("📊 8.12 的用例给这组零件打分", "📊 8.12's cases score these parts")).click()
    panel.locator(".tw-ma-score").click()
    table = panel.locator(".tw-ma-score-view table").first
    table.wait_for(timeout=WAIT)
    cases = [case["name"] for case in CASE_SETS["examples_weather.py"]]
    rows = [[cell.strip() for cell in row.split("\t")] for row in table.locator("tbody tr").all_inner_texts()]
    assert [row[0] for row in rows] == cases
    assert all(row[1] in ("✓", "✗") and row[2] in ("✓", "✗") for row in rows)
    assert all(len(row) > 3 and row[3] for row in rows if "✗" in row[1:3])      # a failure says why
    mine, plain = (sum(row[column] == "✓" for row in rows) for column in (1, 2))
    said = panel.locator(".tw-ma-score-view").first.inner_text()
    assert T(f"这组零件：通过 {mine} / {len(cases)}；只用 Function Calling：通过 {plain} / {len(cases)}",
             f"These parts: {mine} / {len(cases)} passed; plain Function Calling: {plain} / {len(cases)} passed") in said


@pytest.fixture
def offline_server():
    server = OfflineServer().start()
    yield server
    server.stop()


def test_the_whole_agent_is_one_file_that_runs(lesson, offline_server, tmp_path):
    """「页面最下面是按左边的选择写成的 `mini_agent.py`（默认的任务是上面的问题）：取消「子代理」，文件里就没有 `run_task` 了。点「下载」，
    先运行 `python code/offline_server.py --port 8765`，再在一个有失败测试的文件夹里运行 `python mini_agent.py`，
    它会把测试修好。」"""
    panel = lesson.panel
    source = panel.locator(".tw-ma-file")
    # The box holds the whole file (lessons/code_box.py); that it runs is checked on the download.
    assert "子代理（task）" in code_text(source)
    other = "读一下 notes.md，告诉我练习要做什么"       # 「默认的任务是上面的问题」
    panel.locator(".tw-question textarea").fill(other)
    lesson.page.wait_for_function("([root, task]) => root.querySelector('.tw-ma-file .tw-codebox-code').innerText.includes(task)",
                                  arg=[panel.element_handle(), other], timeout=WAIT)
    panel.locator(".tw-question textarea").fill(TASK)
    # The file follows the question before the next choice is made, as a person reads it first.
    lesson.page.wait_for_function("([root, task]) => root.querySelector('.tw-ma-file .tw-codebox-code').innerText.includes(task)",
                                  arg=[panel.element_handle(), json.dumps(TASK, ensure_ascii=False)], timeout=WAIT)
    panel.locator(".tw-ma-subagents input").uncheck()
    lesson.page.wait_for_function("root => !root.querySelector('.tw-ma-file .tw-codebox-code').innerText.includes('子代理（task）')",
                                  arg=panel.element_handle(), timeout=WAIT)
    assert "计划（write_todos）" in code_text(source)
    panel.locator(".tw-ma-download").click()
    link = panel.locator(".tw-ma-download-file a").first
    link.wait_for(timeout=WAIT)
    with lesson.page.expect_download() as download:
        link.click()
    script = tmp_path / "mini_agent.py"
    download.value.save_as(script)
    text = script.read_text(encoding="utf-8")
    assert "def run_task(" not in text and "def write_todos(" in text and "def decide(" in text
    assert f"DEFAULT_TASK = {json.dumps(TASK, ensure_ascii=False)}" in text
    folder = tmp_path / "project"
    shutil.copytree(STARTER, folder)
    done = subprocess.run([sys.executable, str(script), "--workspace", str(folder)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env={**ENV, "OPENAI_BASE_URL": f"{offline_server.url}/v1"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert FIXED in (folder / "src" / "calc.py").read_text(encoding="utf-8")
    tested = subprocess.run([sys.executable, "-m", "unittest"], cwd=folder, capture_output=True, text=True, timeout=60)
    assert tested.returncode == 0, tested.stderr


# The file shows this question and, as asked, the sub-agent part or not.
FILE_SHOWS = """([root, task, subagents]) => {
    const text = root.querySelector('.tw-ma-file .tw-codebox-code').innerText;
    return text.includes(task) && text.includes('子代理（task）') === subagents; }"""


def test_the_file_follows_two_quick_changes(lesson):
    """「页面最下面是按左边的选择写成的 `mini_agent.py`（默认的任务是上面的问题）」: a person who changes the question
    and then a part at once, without waiting between, sees the file of both, however the two redraws are served."""
    panel = lesson.panel
    subagents = panel.locator(".tw-ma-subagents input")
    for n, (task, keep_subagents) in enumerate([("读一下 notes.md", False), ("再跑一次测试", True),
                                                ("看看 src/calc.py", False), ("把测试修好", True)]):
        task = f"{task}（第 {n + 1} 次）"
        panel.locator(".tw-question textarea").fill(task)
        subagents.set_checked(keep_subagents)
        lesson.page.wait_for_function(FILE_SHOWS, arg=[panel.element_handle(), json.dumps(task, ensure_ascii=False),
                                                       keep_subagents], timeout=WAIT)


def test_the_parts_chosen_and_the_last_run_come_back_after_a_reload(lesson):
    """The page keeps the parts in this browser, as every lesson keeps its options (README): after a
    reload the boxes are as the student left them, and so is the last run's verdict."""
    panel = lesson.panel
    panel.locator(".tw-ma-subagents input").uncheck()
    panel.locator(".tw-ma-hooks label").filter(has_text="mask_secrets").locator("input").uncheck()
    headline = lesson.run("运行 `rm notes.md`")
    wait_stored(lesson.page, '"subagents":false')
    lesson.page.reload()
    lesson.wait_restored()
    panel.locator(".tw-status").filter(has_text=headline[:20]).first.wait_for(timeout=WAIT)
    assert not panel.locator(".tw-ma-subagents input").is_checked()
    assert not panel.locator(".tw-ma-hooks label").filter(has_text="mask_secrets").locator("input").is_checked()
    assert panel.locator(".tw-ma-hooks label").filter(has_text="protect_tests").locator("input").is_checked()
    assert "子代理（task）" not in code_text(panel.locator(".tw-ma-file"))
