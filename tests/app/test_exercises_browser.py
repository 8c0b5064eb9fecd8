"""An exercise solved on the page the way a student would: load its starting state, press 检查 and
see what failed, ask for the hint, type the fix, press 检查 again, see ✓ on the lesson list; the ✓
is still there after a reload (this browser keeps it). A link ?exercise=<id> opens that exercise."""
from __future__ import annotations

import json
import re
import urllib.request

import pytest

from catalogue import LESSONS
from catalogue.exercises import BY_ID, GUARD_RM, STORM
from lessons import context_view
from tests.app.harness import (Watched, choose, lesson_address, nav_link, open_page, record_streams, set_code,
                               storage, stream_answered)

pytestmark = pytest.mark.browser
WAIT = 90_000


def summary(page):
    return page.locator("#exercise-summary")


def test_a_student_solves_the_rm_rf_hook(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "hooks"), height=2400)
    page = watched.page
    panel = page.locator("#exercise-panel")
    panel.get_by_text("拦下 rm -rf，放行 ls").first.click()
    page.locator("#exercise-load").click()
    page.locator("#exercise-note").filter(has_text="已载入起始状态").wait_for(timeout=WAIT)

    page.locator("#exercise-check").click()
    summary(page).filter(has_text="还没通过").wait_for(timeout=WAIT)
    assert "钩子应回答 deny" in page.locator("#exercise-verdict").inner_text()
    page.locator("#exercise-verdict details[open] .tw-protocol, #exercise-verdict details[open]").first.wait_for()
    assert "·" in nav_link(page, "钩子").inner_text() and "✓" not in nav_link(page, "钩子").inner_text()
    # The second question's run (ls) did not fail: the first failing run's timeline is the one open.
    assert page.locator("#exercise-run-0").get_attribute("open") is not None

    page.locator("#exercise-hint").click()
    page.locator("#exercise-shown").filter(has_text="permissionDecision").wait_for(timeout=WAIT)

    set_code(page, page.locator(".tw-hooks"), GUARD_RM)
    page.locator("#exercise-check").click()
    summary(page).filter(has_text="✓ 通过").wait_for(timeout=WAIT)
    page.wait_for_function("() => document.querySelector('#lesson-nav a[data-lesson=hooks]').innerText.includes('✓')",
                           timeout=WAIT)
    kept = [value for key, value in storage(page).items() if key.endswith("exercises")]
    assert kept and '"hooks_block_rm"' in kept[0]

    page.reload()
    page.wait_for_function("() => document.querySelector('#lesson-nav a[data-lesson=hooks]')?.innerText.includes('✓')",
                           timeout=WAIT)

    # The teacher's file: downloaded by the browser from what it keeps, with the student's name.
    page.locator("#exercise-student textarea, #exercise-student input").first.fill("小林")
    with page.expect_download(timeout=WAIT) as download:
        page.locator("#exercise-export").click()
    exported = json.loads(open(download.value.path(), encoding="utf-8").read())
    assert exported["student"] == "小林" and exported["results"]["hooks_block_rm"]["passed"] is True
    assert exported["results"]["hooks_block_rm"]["tries"] == 2
    watched.context.close()


def test_rules_typed_on_the_permission_page(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "permissions"), height=2400)
    page = watched.page
    page.locator("#exercise-panel").get_by_text("全部信任也不许删").first.click()
    page.locator("#exercise-load").click()
    page.locator("#exercise-note").filter(has_text="已载入起始状态").wait_for(timeout=WAIT)
    page.locator("#exercise-check").click()
    summary(page).filter(has_text="还没通过").wait_for(timeout=WAIT)
    assert "应被拒绝，它却运行了" in page.locator("#exercise-verdict").inner_text()

    set_code(page, page.locator(".tw-rules"), BY_ID["perm_deny_rm"].solution["rules"])
    page.locator("#exercise-check").click()
    summary(page).filter(has_text="✓ 通过").wait_for(timeout=WAIT)
    assert "✓" in nav_link(page, "权限与确认").inner_text()
    watched.context.close()


def test_a_link_opens_an_exercise(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "context", "exercise=context_fit"), height=2400)
    page = watched.page
    page.locator("#exercise-task").filter(has_text="装进预算，还答得出").wait_for(timeout=WAIT)
    page.locator("#exercise-answer").click()
    page.locator("#exercise-shown").filter(has_text="fold").wait_for(timeout=WAIT)
    watched.context.close()


def test_a_start_loaded_before_the_link_is_read_stays(browser, app_url):
    """A link to a lesson's first exercise shows its task at once, so a student may load its start before
    the server has read the link. The link's answer, arriving after, leaves the loaded start and its note."""
    exercise = BY_ID["fc_vague_forecast"]
    assert LESSONS[exercise.lesson].exercises[0] is exercise      # on screen before the link is read
    address = lesson_address(app_url, exercise.lesson, f"exercise={exercise.id}")
    with urllib.request.urlopen(address, timeout=60) as response:
        html = response.read().decode("utf-8")
    config = json.loads(re.search(r"window\.gradio_config = (.*?);</script>", html, re.S).group(1))
    box = next(c["id"] for c in config["components"] if (c.get("props") or {}).get("elem_id") == "exercise-linked")
    reads_link = next(d["id"] for d in config["dependencies"] if [box, "change"] in d["targets"])

    context = browser.new_context(viewport={"width": 1280, "height": 2400}, locale="zh-CN")
    page = context.new_page()
    watched = Watched(context, page, keep_bodies=True)
    record_streams(context, page, watched.bodies)
    held = []
    page.route("**/queue/join*", lambda route: held.append(route)
               if json.loads(route.request.post_data or "{}").get("fn_index") == reads_link else route.continue_())
    page.goto(address)
    page.locator("#exercise-task").filter(has_text=exercise.title.zh).wait_for(timeout=WAIT)
    for _ in range(600):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page never asked the server to read the link"
    page.locator("#exercise-load").click()
    note = page.locator("#exercise-note")
    note.filter(has_text="已载入起始状态").wait_for(timeout=WAIT)

    answered = held[0].fetch()
    event_id = answered.json()["event_id"]
    held[0].fulfill(response=answered)

    stream_answered(page, watched.bodies, [event_id])
    # Asked after the link's answer came, drawn after it: the note is read once the page has applied both.
    page.locator("#exercise-answer").click()
    page.locator("#exercise-shown").filter(has_text="参考答案").wait_for(timeout=WAIT)
    assert "已载入起始状态" in note.inner_text()
    watched.context.close()


def test_the_english_page_shows_the_panel_in_english(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "skills", "lang=en"), height=2400)
    page = watched.page
    page.locator("#exercise-task").filter(has_text="Get the right skill loaded").wait_for(timeout=WAIT)
    for label in ("Load the starting state", "Check", "Show the answer", "Export my results"):
        assert page.get_by_role("button", name=label, exact=True).count() == 1, label
    page.locator("#exercise-panel").get_by_text("A skill's name that does not pass").first.click()
    page.locator("#exercise-task").filter(has_text="capitals and underscores").wait_for(timeout=WAIT)
    watched.context.close()


def test_a_failed_runs_link_opens_its_timeline(browser, app_url):
    watched = open_page(browser, lesson_address(app_url, "function_calling", "exercise=fc_vague_forecast"),
                        height=2400)
    page = watched.page
    page.locator("#exercise-task").filter(has_text="让模型分清今天和这几天").wait_for(timeout=WAIT)
    page.locator("#exercise-load").click()
    page.locator("#exercise-note").filter(has_text="已载入起始状态").wait_for(timeout=WAIT)
    page.locator("#exercise-check").click()
    summary(page).filter(has_text="还没通过").wait_for(timeout=WAIT)
    second = page.locator("#exercise-run-1")
    assert second.get_attribute("open") is None and "深圳周末" in second.locator("summary").first.inner_text()
    page.locator('#exercise-verdict a[href="#exercise-run-1"]').click()
    page.wait_for_function("() => document.getElementById('exercise-run-1').open", timeout=WAIT)
    assert second.locator(".tw-round").count() >= 1
    watched.context.close()


# One exercise per page whose fix is typed (the hooks and permission pages are above; context, sessions and
# MiniAgent below): the box the student types into, by the state's field.
TYPED_INTO = {"source": ".tw-editor", "skills": ".tw-skills-box", "question": ".tw-question textarea"}
TYPED = ["registry_enum", "fc_vague_forecast", "react_days", "mcp_enum", "subagent_description", "eval_irrelevance",
         "skills_name", "ws_new_file", "first_two_calls", "plan_vague"]


@pytest.mark.parametrize("exercise_id", TYPED)
def test_one_typed_fix_per_page(browser, app_url, exercise_id):
    exercise = BY_ID[exercise_id]
    (field, fix), = exercise.solution.items()
    watched = opened_at_start(browser, app_url, exercise_id)
    page = watched.page
    box = page.locator(f".tw-lesson {TYPED_INTO[field]}").first
    if field == "question":
        box.fill(fix)
    elif field == "source":
        # As a person does: the fix typed, and the schema it makes on screen, before pressing 检查.
        schema = page.locator(".tw-lesson .tw-schema-json .tw-codebox-code").first
        before = schema.inner_text()
        set_code(page, box, fix)
        page.wait_for_function("([box, before]) => box.innerText !== before", arg=[schema.element_handle(), before],
                               timeout=WAIT)
    else:
        set_code(page, box, fix)
    solved(page, exercise.lesson)
    watched.context.close()


def opened_at_start(browser, app_url, exercise_id: str):
    """The exercise's page, its starting state loaded and checked once: not yet passed."""
    exercise = BY_ID[exercise_id]
    watched = open_page(browser, lesson_address(app_url, exercise.lesson, f"exercise={exercise_id}"), height=2600)
    page = watched.page
    page.locator("#exercise-task").filter(has_text=exercise.title.zh).wait_for(timeout=WAIT)
    page.locator("#exercise-load").click()
    page.locator("#exercise-note").filter(has_text="已载入起始状态").wait_for(timeout=WAIT)
    page.locator("#exercise-check").click()
    summary(page).filter(has_text="还没通过").wait_for(timeout=WAIT)
    return watched


def solved(page, lesson_id: str):
    page.locator("#exercise-check").click()
    summary(page).filter(has_text="✓ 通过").wait_for(timeout=WAIT)
    page.wait_for_function("(id) => document.querySelector(`#lesson-nav a[data-lesson=${id}]`).innerText.includes('✓')",
                           arg=lesson_id, timeout=WAIT)


def test_a_student_forks_the_tool_result(browser, app_url):
    """The session the exercise loads shows its messages; the student picks the tool result (the box fills
    with it), writes the storm over it, and the check runs on from that fork."""
    watched = opened_at_start(browser, app_url, "sessions_fork_result")
    page = watched.page
    assert "没有分叉" in page.locator("#exercise-verdict").inner_text()
    panel = page.locator(".tw-lesson").first
    choose(page, panel.locator(".tw-fork-entry"), "3. ")
    box = panel.locator(".tw-fork-text textarea")
    page.wait_for_function("(box) => box.value.includes('25°C')", arg=box.element_handle(), timeout=WAIT)
    box.fill(STORM)
    solved(page, "sessions")
    page.locator("#exercise-run-0 summary").first.click()      # the passing run's timeline: the branch's answer
    answer = page.locator("#exercise-run-0 .tw-final").last
    answer.filter(has_text="12°C").wait_for(timeout=WAIT)
    assert "25°C" not in answer.inner_text()
    watched.context.close()


def test_a_student_types_the_mini_agent_rules(browser, app_url):
    watched = opened_at_start(browser, app_url, "mini_rules")
    page = watched.page
    assert "unittest" in page.locator("#exercise-verdict").inner_text()
    set_code(page, page.locator(".tw-lesson .tw-ma-rules").first, BY_ID["mini_rules"].solution["rules"])
    solved(page, "mini_agent")
    watched.context.close()


def test_a_student_picks_the_strategy_that_fits_the_budget(browser, app_url):
    watched = opened_at_start(browser, app_url, "context_fit")
    page = watched.page
    page.locator(".tw-lesson .tw-strategy label").filter(has_text=context_view.title("fold")).first.click()
    solved(page, "context")
    watched.context.close()
