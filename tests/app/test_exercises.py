"""Every exercise of the catalogue, on the offline model: its starting state fails the check and its
reference solution passes it. A check that passes by itself would teach nothing; one that the
solution fails would be unsolvable."""
from __future__ import annotations

import pytest

from catalogue import LESSONS
from catalogue.exercises import BY_ID, EXERCISES
from runs import exercises

ALL = [exercise for found in EXERCISES.values() for exercise in found]


@pytest.mark.parametrize("exercise", ALL, ids=[e.id for e in ALL])
def test_the_start_fails_and_the_solution_passes(exercise):
    started = exercises.check(exercise)
    assert not started["passed"], f"{exercise.id}: the starting state passes by itself"
    assert started["failures"] and all(f["zh"] and f["en"] for f in started["failures"])
    solved = exercises.check(exercise, exercise.solution)
    assert solved["passed"], f"{exercise.id}: the reference solution fails: {solved['failures']}"
    assert solved["failures"] == []


@pytest.mark.parametrize("exercise", ALL, ids=[e.id for e in ALL])
def test_each_exercise_is_whole(exercise):
    assert exercise.lesson in LESSONS and exercise in LESSONS[exercise.lesson].exercises
    assert exercise.task.zh and exercise.task.en and exercise.hint.zh and exercise.hint.en
    assert set(exercise.solution) <= set(exercise.start) and exercise.solution
    assert all(exercise.start[name] != value for name, value in exercise.solution.items())
    for probe in exercise.probes:
        assert probe["expect"]
        for matcher in probe["expect"]:
            exercises.kind(matcher)     # exactly one known matcher


def test_every_lesson_has_two_to_four():
    assert set(EXERCISES) == set(LESSONS)
    for lesson_id, found in EXERCISES.items():
        assert 2 <= len(found) <= 4, lesson_id
    assert len(BY_ID) == len(ALL)      # ids are unique


def test_a_state_field_the_exercise_has_not_is_refused():
    exercise = BY_ID["hooks_block_rm"]
    with pytest.raises(exercises.ExerciseProblem, match="hooks_block_rm 没有字段 rules"):
        exercises.state_of(exercise, {"rules": "{}"})
    with pytest.raises(exercises.ExerciseProblem, match="registry 没有练习 nope"):
        exercises.find("registry", "nope")


def test_a_failure_says_which_argument_in_both_languages():
    exercise = BY_ID["registry_integer"]
    verdict = exercises.check(exercise)
    said = [f["zh"] for f in verdict["failures"]]
    assert any("days" in s and "integer" in s for s in said), said
    assert any("days" in f["en"] for f in verdict["failures"])


def call(name, turn=1, ident="c1", **arguments):
    return {"type": "tool_call", "turn": turn, "id": ident, "name": name, "arguments": arguments}


def result(name, content, ok=True, turn=1, ident="c1", code=None):
    return {"type": "tool_result", "turn": turn, "id": ident, "name": name, "content": content, "ok": ok,
            "error_code": code}


def final(text):
    return {"type": "final", "turn": 9, "content": text}


def problem(matcher, run_events, tools=()):
    return exercises.MATCHERS[exercises.kind(matcher)](matcher, run_events, list(tools))


def test_each_matcher_passes_and_fails_on_events():
    weather = [call("get_weather", city="北京"), result("get_weather", "北京今天晴，气温 25°C"),
               call("get_forecast", turn=2, ident="c2", city="北京"), result("get_forecast", "[]", turn=2, ident="c2")]
    assert problem({"order": ["get_weather", "get_forecast"]}, weather) is None
    assert "get_forecast → get_weather" in problem({"order": ["get_forecast", "get_weather"]}, weather)["zh"]
    assert problem({"answer_names_result": "get_weather"}, [*weather, final("北京 25 度")]) is None
    assert "25" in problem({"answer_names_result": "get_weather"}, [*weather, final("天气不错")])["zh"]
    assert problem({"called": "get_weather", "arguments": {"city": "上海"}}, weather)["en"].startswith(
        "get_weather's argument city")
    refused = [call("bash", command="rm x"), result("bash", "❌ [权限规则拒绝]", ok=False, code="rule_denied")]
    assert problem({"denied": "bash"}, refused) is None
    assert "却运行了" in problem({"denied": "bash"}, [call("bash", command="rm x"), result("bash", "ok")])["zh"]
    assert problem({"never": "bash"}, refused)["zh"] == "不该调用 bash，模型调用了它 1 次"
    assert problem({"no_tool": True}, [final("你好")]) is None and problem({"no_tool": True}, refused)
    shrunk = {"type": "context", "budget": 300, "after_tokens": 301}
    assert "301" in problem({"budget_kept": True}, [shrunk])["zh"]
    assert problem({"budget_kept": True}, [{**shrunk, "after_tokens": 300}]) is None


def test_plan_done_reads_the_last_accepted_plan():
    def plan(status, accepted=True):
        return {"type": "plan", "turn": 1, "accepted": accepted,
                "after": [{"content": "运行测试", "status": status, "done_when": "退出码 0"}]}
    assert problem({"plan_done": "运行测试"}, [plan("in_progress"), plan("completed")]) is None
    assert problem({"plan_done": "运行测试"}, [plan("completed"), plan("in_progress")])
    assert problem({"plan_done": "运行测试"}, [plan("in_progress"), plan("completed", accepted=False)])


def test_the_schema_matcher_names_what_the_schema_has():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "unit": {"type": "string"}}}}}]
    said = problem({"schema": "get_weather", "parameter": "unit", "enum": ["c", "f"]}, [], tools)
    assert "enum" in said["zh"] and '"string"' in said["zh"]
    assert problem({"schema": "get_weather", "parameter": "unit", "type": "string"}, [], tools) is None
    assert "没有参数 city" in problem({"schema": "get_weather", "parameter": "city", "type": "string"}, [], tools)["zh"]


def test_the_students_own_model_runs_three_times_beside_the_offline_one():
    """A model of the student's choosing (here the project's own OpenAI-compatible server): three runs of
    each probe, reported n of 3 beside the offline model's verdict, which decides."""
    from access.clients import settings_from
    from offline.server import OfflineServer

    server = OfflineServer().start()
    try:
        settings, _ = settings_from({"provider": "openai", "model": "offline-rule-model",
                                     "base_url": server.url + "/v1"}, "")
        verdict = exercises.check(BY_ID["fc_no_tool"], {"tool_choice": "auto"}, settings, session_key="sk-test")
    finally:
        server.stop()
    assert verdict["passed"]
    own = [t for t in verdict["trials"] if t["model"] != "offline"]
    assert len(own) == 3 * len(BY_ID["fc_no_tool"].probes) and {t["trial"] for t in own} == {1, 2, 3}
    assert all("offline-rule-model" in t["model"] and "openai" in t["model"] for t in own)
    assert verdict["own"]["trials"] == 3 and verdict["own"]["passed"] == 3, [t["failures"] for t in own]


@pytest.mark.parametrize("exercise", ALL, ids=[e.id for e in ALL])
def test_the_english_quotes_chinese_only_as_code(exercise):
    """The course is Chinese: an English task may quote a Chinese question, as code (what the page shows as
    course content), never as its own words."""
    import re
    for text in (exercise.title, exercise.task, exercise.hint):
        assert not re.search(r"[\u4e00-\u9fff]", re.sub(r"`[^`]*`", "", text.en)), text.en


def test_forked_tells_a_new_branch_from_more_of_the_same():
    def entry(role, **marks):
        return {"type": "entry", "turn": 0, "branch": "b", "entry": {"id": "e1", "message": {"role": role,
                                                                                           "content": "x"}, **marks}}
    assert problem({"forked": "tool"}, [entry("tool", edited_from="e0")]) is None
    assert "这次改的是 user" in problem({"forked": "tool"}, [entry("user", edited_from="e0")])["zh"]
    # A question asked on the end of the branch writes entries too, none edited from another.
    assert "没有分叉" in problem({"forked": "user"}, [entry("user"), entry("assistant")])["zh"]


def test_requests_within_names_the_largest_request():
    def request(turn, text):
        return {"type": "request", "turn": turn, "messages": [{"role": "user", "content": text}]}
    small, large = request(1, "修好测试"), request(2, "修好测试。" * 400)
    assert problem({"requests_within": 1200}, [small]) is None
    said = problem({"requests_within": 1200}, [small, large])
    assert "第 2 轮" in said["zh"] and "估计值" in said["zh"] and "an estimate" in said["en"]
    assert problem({"requests_within": 1200}, [])["zh"] == "这次运行没有发出请求"


def test_the_mini_agent_exercises_start_from_the_pages_own_parts():
    from catalogue.exercises import agent_parts
    from runs.mini_agent_backend import default_options
    assert agent_parts() == default_options()


def test_what_the_mini_agent_hints_say_holds():
    """The hints name a trap and another way out: each is what the offline model does."""
    budget = BY_ID["mini_budget"]
    window_only = exercises.check(budget, {"context": "window"})
    assert not window_only["passed"] and any("edit" in f["zh"] for f in window_only["failures"])
    assert exercises.check(budget, {"context": "compact", "plan": False})["passed"]
    allow_all = exercises.check(BY_ID["mini_rules"], {"rules": '{"read": "allow", "edit:src/*": "allow", "bash": "allow"}'})
    assert not allow_all["passed"] and "却运行了" in allow_all["failures"][0]["zh"]


def test_asking_about_shanghai_on_the_same_branch_is_not_a_fork():
    asked_on = exercises.check(BY_ID["sessions_fork_city"], {"question": "上海今天天气怎么样？"})
    assert not asked_on["passed"] and "没有分叉" in asked_on["failures"][0]["zh"]
