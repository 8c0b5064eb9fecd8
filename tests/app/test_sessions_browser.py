"""The sessions lesson (8.11) beyond its text's claims, in real chromium: what reaches a model server
over HTTP holds one branch's messages only, and a session goes on after the server restarts."""
from __future__ import annotations

import json

import pytest

from tests.app.harness import (LessonPage, choose, choose_openai, free_port, pick_fork_point, run_panel, type_key,
                               stream_answered, wait_branch, wait_stored)

pytestmark = pytest.mark.browser
WAIT = 60_000
BEIJING, GUANGZHOU = "北京今天天气怎么样？", "广州冷不冷？"
RAIN, SUNNY = "北京今天大雨，气温 18°C", "北京今天晴"


@pytest.fixture(scope="module")
def llm_server():
    from offline.server import OfflineServer

    server = OfflineServer().start()
    yield server
    server.stop()


def fork(lesson, number: int, text: str) -> str:
    pick_fork_point(lesson.page, lesson.panel, number).fill(text)
    return run_panel(lesson.panel, button=lesson.panel.locator(".tw-fork"), timeout=WAIT)


def branch(lesson, number: int):
    return lesson.panel.locator(f".tw-session-tree .tw-branch[data-number='{number}']")


def test_each_request_the_model_server_receives_holds_only_its_own_branch(browser, app_url, llm_server):
    """Read where the requests arrive (the OpenAI-compatible server's log), not from the page."""
    with LessonPage(browser, app_url, "sessions", height=2600) as lesson:
        choose_openai(lesson.page, llm_server.url + "/v1")
        type_key(lesson.page, "sk-sessions-test-1")
        lesson.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        first = len(llm_server.requests)
        assert lesson.run(BEIJING).startswith("✅")
        wait_branch(lesson.panel, 1)
        forked = len(llm_server.requests)
        assert fork(lesson, 3, RAIN).startswith("✍️")
        wait_branch(lesson.panel, 2)
        asked = len(llm_server.requests)
        choose(lesson.page, lesson.panel.locator(".tw-session-branch"), "分支 1")
        lesson.panel.locator(".tw-session-tree .tw-branch.tw-current[data-number='1']").wait_for(timeout=WAIT)
        lesson.run(GUANGZHOU)
        sent = [json.dumps(r["body"]["messages"], ensure_ascii=False) for r in llm_server.requests
                if r["path"].endswith("/chat/completions")]
        offsets = [first, forked, asked, len(llm_server.requests)]
        branch_one, branch_two, asked_on = (sent[a:b] for a, b in zip(offsets, offsets[1:]))
    assert len(branch_one) == 2 and SUNNY in branch_one[-1] and RAIN not in "".join(branch_one)
    assert len(branch_two) == 1 and RAIN in branch_two[0] and SUNNY not in branch_two[0]
    assert asked_on and all(SUNNY in body and GUANGZHOU in body and RAIN not in body for body in asked_on)


def test_a_session_goes_on_after_the_server_restarts(browser):
    import app

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    demo = app.build_demo()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        with LessonPage(browser, url, "sessions", height=2600) as lesson:
            lesson.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
            lesson.run(BEIJING)
            wait_branch(lesson.panel, 1)
            fork(lesson, 3, RAIN)
            wait_branch(lesson.panel, 2)
            wait_stored(lesson.page, RAIN, key="tool-workshop:lesson:sessions")     # the session, kept
            demo.close()
            demo = app.build_demo()
            app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
            lesson.page.reload()
            lesson.wait_restored()
            wait_branch(lesson.panel, 2)
            assert "没有在本页跑过" in branch(lesson, 2).locator(".tw-verdict").inner_text()
            assert "tw-current" in branch(lesson, 2).get_attribute("class")
            lesson.run(GUANGZHOU)     # asked on branch 2, which was current when the page was left
            lesson.page.wait_for_function("el => el.querySelectorAll('li').length >= 8",
                                          arg=branch(lesson, 2).element_handle(), timeout=WAIT)
            request = branch(lesson, 2).locator(".tw-raw-request pre").text_content()
            assert RAIN in request and GUANGZHOU in request and SUNNY not in request
    finally:
        demo.close()


def test_a_fork_the_session_refuses_starts_no_run_and_says_why(browser, app_url):
    with LessonPage(browser, app_url, "sessions", height=2600) as lesson:
        lesson.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        lesson.run(BEIJING)
        wait_branch(lesson.panel, 1)
        rounds = lesson.rounds()
        said = fork(lesson, 1, BEIJING)          # the question, "edited" into itself
        assert said == "❌ 没有分叉：内容和原来一样：改了什么才会分出新分支"
        pick_fork_point(lesson.page, lesson.panel, 3).fill("   ")
        lesson.panel.locator(".tw-fork").click()
        lesson.panel.locator(".prose.tw-status").filter(has_text="❌ 没有分叉：内容是空的：写点什么再发").wait_for(timeout=WAIT)
        assert lesson.rounds() == rounds and lesson.panel.locator(".tw-session-tree .tw-branch").count() == 1


def test_a_fork_point_picked_before_the_run_is_redrawn_stays_picked(browser, app_url):
    """A run's end writes the session box, and a change of the box redraws the panel. A person who
    picks the message to fork from before that redraw has come back keeps the pick: the redraw of
    what the panel already shows changes nothing, and the fork runs from the message picked."""
    with LessonPage(browser, app_url, "sessions", height=2600, keep_bodies=True) as lesson:
        page = lesson.page
        redraws = page.evaluate("""() => {
          const box = gradio_config.components.find(c => (c.props.elem_classes || []).includes('tw-session-jsonl')).id;
          return gradio_config.dependencies.filter(d => d.backend_fn && d.targets.some(([id, event]) => id === box && event === 'change')).map(d => d.id);
        }""")
        assert redraws, "nothing on the page follows a change of the session box"
        held, holding = [], [True]
        page.route("**/queue/join*", lambda route: held.append(route) if holding[0] and json.loads(
            route.request.post_data or "{}").get("fn_index") in redraws else route.continue_())
        lesson.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        assert lesson.run(BEIJING).startswith("✅")
        wait_branch(lesson.panel, 1)
        for _ in range(1200):
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the run's end never changed the session box"
        pick_fork_point(page, lesson.panel, 3).fill(RAIN)
        holding[0] = False
        events = []
        for route in held:
            answered = route.fetch()
            events.append(answered.json()["event_id"])
            route.fulfill(response=answered)
        stream_answered(page, lesson.watched.bodies, events)
        # Asked after the redraw came back, shown after it: the page has applied the redraw by then.
        lesson.panel.locator(".tw-export-md").click()
        lesson.panel.locator(".prose.tw-session-note").filter(has_text="分支 1 导出好了").wait_for(timeout=WAIT)
        assert lesson.panel.locator(".tw-fork-entry input").input_value().startswith("3. ")
        assert run_panel(lesson.panel, button=lesson.panel.locator(".tw-fork"), timeout=WAIT).startswith("✍️")
        wait_branch(lesson.panel, 2)
