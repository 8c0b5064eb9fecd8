"""code/evaluation.py: matchers, scoring from events, BFCL's categories, totals that invent nothing,
and the built-in case sets, which the offline model passes with the example tools' descriptions."""
from __future__ import annotations

import importlib
import json
import time

import pytest

import evaluation
from evaluation import Case, CaseProblem, Trial, category, evaluate, matches, read_cases, score, table, totals
from evaluation_cases import CASE_SETS
from function_calling_loop import run_function_calling
from llm_clients import make_client

from runs import eval_backend


def run_of(*events: dict) -> list[dict]:
    return list(events)


def call(turn, id, name, arguments, ok=True, code=None):
    return [{"type": "tool_call", "turn": turn, "id": id, "name": name, "arguments": arguments},
            {"type": "tool_result", "turn": turn, "id": id, "name": name, "ok": ok, "error_code": code,
             "content": "好" if ok else f"❌ [{code}] 没成"}]


def final(text="好的", turn=2):
    return {"type": "final", "turn": turn, "content": text}


def response(prompt=None, completion=None, turn=1):
    usage = None if prompt is None else {"prompt_tokens": prompt, "completion_tokens": completion}
    return {"type": "response", "turn": turn, "usage": usage}


WEATHER_CASE = read_cases([{"name": "北京", "question": "北京今天天气怎么样？",
                            "calls": [{"name": "get_weather", "arguments": {"city": {"one_of": ["北京", "北京市"]}}}],
                            "answer": {"contains": "25"}}])[0]


@pytest.mark.parametrize("spec, value, expected", [
    ("北京", "北京", True), ("北京", "北京市", False), (5, 5.0, True), (1, True, False), (True, 1, False),
    ({"one_of": ["北京", "北京市"]}, "北京市", True), ({"near": 0.2, "tolerance": 0.001}, 0.2001, True),
    ({"near": 5}, "5", False), ({"near": 5}, float("nan"), False), ({"contains": "晴"}, "北京今天晴", True),
    ({"matches": r"^\(3\s*\+\s*5\)"}, "(3 + 5)*12", True), ({"matches": "a"}, 3, False),
    ({"absent": True}, evaluation.ABSENT, True), ({"absent": True}, "c", False), ("c", evaluation.ABSENT, False),
    ({"equals": {"a": [1, 2]}}, {"a": [1, 2]}, True), ([1, 2], [2, 1], False),
])
def test_matchers(spec, value, expected):
    assert matches(spec, value) is expected


def test_a_catastrophic_pattern_gives_up_instead_of_holding_the_server():
    started = time.perf_counter()
    assert not matches({"matches": "(a+)+$"}, "a" * 40 + "!")
    assert time.perf_counter() - started < 2


def test_a_right_run_passes_every_criterion():
    got = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}), final("北京今天晴，25°C")))
    assert got.passed and (got.tool, got.arguments, got.answer, got.problem) == (True, True, True, "")


def test_each_criterion_fails_on_its_own_and_names_what_was_wrong():
    wrong_city = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "上海"}), final("25")))
    assert (wrong_city.tool, wrong_city.arguments) == (True, False)
    assert wrong_city.problem == 'get_weather 的参数 city 应为 "北京" / "北京市" 之一，收到 "上海"'
    wrong_tool = score(WEATHER_CASE, run_of(*call(1, "c1", "get_forecast", {"city": "北京"}), final("25")))
    assert wrong_tool.problem == "应调用 get_weather，调用的却是 get_forecast" and not wrong_tool.passed
    no_answer = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}), final("晴")))
    assert no_answer.answer is False and no_answer.problem == '最终回答应包含 "25"'
    out_of_turns = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}),
                                              {"type": "error", "turn": 2, "code": "max_turns", "message": "用完了 1 轮"}))
    assert out_of_turns.scored and not out_of_turns.passed and out_of_turns.problem == "运行没有正常结束：用完了 1 轮"


def test_a_run_the_model_did_not_stop_is_not_scored_and_not_counted():
    """Network, meter, a refused request: not the model answering badly."""
    stopped = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}),
                                         {"type": "error", "turn": 2, "code": "key_limit", "message": "本会话用完了"}))
    assert not stopped.scored and not stopped.passed and stopped.problem == "没有评分：运行没有正常结束（本会话用完了）"
    right = Trial(WEATHER_CASE, 1, run_of(*call(1, "c1", "get_weather", {"city": "北京"}), final("25")),
                  score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}), final("25"))), 5)
    total = totals([right, Trial(WEATHER_CASE, 2, [], stopped, 1)])
    assert (total.runs, total.passed, total.unscored, total.rate, total.p50_ms) == (1, 1, 1, 1.0, 5)
    assert table([right, Trial(WEATHER_CASE, 2, [], stopped, 1)])[0]["unscored"] == 1


def test_a_corrected_mistake_is_still_a_mistake_in_its_own_column():
    corrected = run_of(*call(1, "c1", "get_weather_info", {"city": "北京"}, ok=False, code="unknown_tool"),
                       *call(2, "c2", "get_weather", {"city": "北京"}), final("25", 3))
    got = score(WEATHER_CASE, corrected)
    assert (got.tool, got.arguments, got.answer) == (False, None, True)       # a wrong tool: no arguments to judge
    assert got.problem == "多调用了 get_weather_info（用例里没有它）"
    retyped = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": 3}, ok=False, code="invalid_arguments"),
                                         *call(2, "c2", "get_weather", {"city": "北京"}), final("25", 3)))
    assert (retyped.tool, retyped.arguments, retyped.passed) == (True, False, False)
    assert retyped.problem == "get_weather 的参数被退回过：❌ [invalid_arguments] 没成"


def test_a_tool_the_executor_did_not_run_leaves_the_run_unscored():
    busy = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}, ok=False, code="rate_limited"),
                                      final("没查到", 2)))
    assert not busy.scored and busy.problem == "没有评分：执行端这次没让工具运行（❌ [rate_limited] 没成）"


def request(turn=1, question="北京今天天气怎么样？"):
    return {"type": "request", "turn": turn, "messages": [{"role": "user", "content": question}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "查询城市天气",
                                                        "parameters": {"type": "object", "properties": {
                                                            "city": {"type": "string"}}}}}]}


def test_a_failing_tool_is_counted_apart_from_the_model():
    """The city came from the question: the tool's own failure, not the model's."""
    broken = run_of(request(), *call(1, "c1", "get_weather", {"city": "北京"}, ok=False, code="tool_exception"),
                    final("没查到", 2))
    trial = Trial(WEATHER_CASE, 1, broken, score(WEATHER_CASE, broken), 3)
    assert trial.score.tool and trial.score.arguments and trial.tool_failures() == (0, 1)
    assert (totals([trial]).tool_failures, totals([trial]).invented_failures) == (1, 0)


def test_a_tool_failing_on_a_value_nobody_said_is_the_models_doing():
    """The model called with a city found nowhere in what it was sent (a small model copies the template's
    example): the tool failing on it is the model's, not a tool to fix."""
    made_up = run_of(request(), *call(1, "c1", "get_weather", {"city": "Tokyo"}, ok=False, code="tool_exception"),
                     final("没查到", 2))
    trial = Trial(WEATHER_CASE, 1, made_up, score(WEATHER_CASE, made_up), 3)
    assert trial.tool_failures() == (1, 0) and not trial.score.arguments
    assert (totals([trial]).tool_failures, totals([trial]).invented_failures) == (0, 1)
    unknown = run_of(*call(1, "c1", "get_weather", {"city": "Tokyo"}, ok=False, code="tool_exception"), final())
    assert Trial(WEATHER_CASE, 1, unknown, score(WEATHER_CASE, unknown), 3).tool_failures() == (0, 1)   # nothing sent to compare
    # Called again, the value is in the history now (its own call, the tool's error): still made up.
    echoed = {"role": "tool", "tool_call_id": "c1", "content": "❌ no weather for Tokyo"}
    again = run_of(request(), *call(1, "c1", "get_weather", {"city": "Tokyo"}, ok=False, code="tool_exception"),
                   {**request(2), "messages": request()["messages"] + [echoed]},
                   *call(2, "c2", "get_weather", {"city": "Tokyo"}, ok=False, code="tool_exception"), final(turn=3))
    assert Trial(WEATHER_CASE, 1, again, score(WEATHER_CASE, again), 3).tool_failures() == (2, 0)


def error(code, message="出错了", status=None, turn=2):
    event = {"type": "error", "turn": turn, "code": code, "message": message}
    return {**event, "status": status} if status is not None else event


def test_a_run_the_model_broke_is_a_failed_run_and_counts_everywhere():
    """The server failing on what the model wrote (HTTP 500: llama.cpp on a tool call cut off by max_tokens), out
    of rounds, failing round after round: failed runs, in the pass rate, the latency and the tokens per run."""
    broke = [run_of(response(300, 64), error("server", "模型服务端出错（HTTP 500）", 500, turn=1)),
             run_of(response(100, 10), *call(1, "c1", "get_weather", {"city": "北京"}), response(200, 64, turn=2),
                    error("server", "模型服务端出错（HTTP 500）", 500)),
             run_of(*call(1, "c1", "get_weather", {"city": "北京"}), error("max_turns", "用完了 1 轮")),
             run_of(*call(1, "c1", "get_weather", {"city": "北", }, ok=False, code="invalid_arguments"),
                    error("too_many_failures", "连续 3 轮都没有成功"))]
    scores = [score(WEATHER_CASE, run) for run in broke]
    assert all(s.scored and not s.passed for s in scores)
    assert scores[0].problem == "运行没有正常结束：模型服务端出错（HTTP 500）"
    right = run_of(response(50, 10), *call(1, "c1", "get_weather", {"city": "北京"}), final("25"))
    done = [Trial(WEATHER_CASE, n, run, s, ms) for n, (run, s, ms) in
            enumerate(zip([*broke, right], [*scores, score(WEATHER_CASE, right)], [30_000, 20_000, 25_000, 22_000, 10]), 1)]
    total = totals(done)
    assert (total.runs, total.passed, total.unscored, total.rate) == (5, 1, 0, 0.2)
    assert (total.p50_ms, total.p95_ms) == (22_000, 30_000)
    assert total.tokens_per_run == (300 + 64 + 100 + 10 + 200 + 64 + 50 + 10) / 5


def test_the_request_not_reaching_the_model_is_not_the_models_doing():
    """Unreachable, cut, slow, busy, limited, refused: not scored, and not in the pass rate or the latency; its
    tokens were spent, so they count, and per run over every run."""
    for stop in (error("connection", "连不上"), error("timeout", "超时了"), error("stream_cut", "断了"),
                 error("server", "网关返回了 HTML 错误页（HTTP 502）", 502), error("server", "忙（HTTP 503）", 503),
                 error("rate_limit", "请求太频繁（HTTP 429）", 429), error("auth", "Key 无效（HTTP 401）", 401),
                 error("bad_request", "不支持 tool_choice（HTTP 400）", 400), error("key_limit", "本会话用完了"),
                 error("exception", "RuntimeError: sandbox went away")):
        got = score(WEATHER_CASE, run_of(*call(1, "c1", "get_weather", {"city": "北京"}), stop))
        assert not got.scored and got.problem.startswith("没有评分：运行没有正常结束（"), stop
    unreached = run_of(response(40, 0), error("server", "忙（HTTP 503）", 503))
    right = run_of(response(50, 10), *call(1, "c1", "get_weather", {"city": "北京"}), final("25"))
    total = totals([Trial(WEATHER_CASE, 1, unreached, score(WEATHER_CASE, unreached), 60_000),
                    Trial(WEATHER_CASE, 2, right, score(WEATHER_CASE, right), 10)])
    assert (total.runs, total.unscored, total.rate, total.p95_ms, total.tokens_per_run) == (1, 1, 1.0, 10, 50)


def test_a_tool_that_timed_out_or_a_rule_that_refused_is_not_the_models_fault():
    for code in ("timeout", "forbidden", "denied", "hook_denied"):
        run = run_of(*call(1, "c1", "get_weather", {"city": "北京"}, ok=False, code=code), final("没查到，25", 2))
        assert score(WEATHER_CASE, run).passed, code


def test_no_call_due():
    [chat] = read_cases([{"name": "闲聊", "question": "你好", "calls": []}])
    assert score(chat, run_of(final("你好"))).passed
    called = score(chat, run_of(*call(1, "c1", "get_weather", {"city": "北京"}), final()))
    assert not called.passed and called.problem == "不该调用工具，却调用了 get_weather" and called.arguments is None
    gave_up = score(chat, run_of(*call(1, "c1", "get_weather", {"city": "东京"}, ok=False, code="tool_exception"),
                                 {"type": "error", "turn": 3, "code": "too_many_failures", "message": "连续 3 轮都没有成功"}))
    assert gave_up.problem == "不该调用工具，却调用了 get_weather" and not gave_up.finished
    refused = score(WEATHER_CASE, run_of({"type": "error", "turn": 1, "code": "max_turns", "message": "用完了"}))
    assert refused.problem == "运行没有正常结束：用完了"


def test_orders():
    expected = [{"name": "get_weather", "arguments": {"city": "北京"}}, {"name": "get_weather", "arguments": {"city": "上海"}}]
    together = run_of(*call(1, "a", "get_weather", {"city": "上海"}), *call(1, "b", "get_weather", {"city": "北京"}), final())
    apart = run_of(*call(1, "a", "get_weather", {"city": "北京"}), *call(2, "b", "get_weather", {"city": "上海"}), final())
    cases = {order: Case("两城", "?", tuple(expected), order) for order in evaluation.ORDERS}
    assert not score(cases["sequence"], together).passed and score(cases["sequence"], apart).passed
    assert score(cases["any"], together).passed and score(cases["any"], apart).passed
    assert score(cases["parallel"], together).passed
    assert score(cases["parallel"], apart).problem == "这几个调用应在同一个回复里一起发出（并行），模型分了几轮"
    once = score(cases["any"], run_of(*call(1, "a", "get_weather", {"city": "北京"}), final()))
    assert once.problem == "应调用 2 次，工具收下的调用有 1 次" and once.tool is False and once.arguments is None


def test_a_sub_agents_calls_are_not_the_loops_own():
    child = [{**event, "child": "t1"} for event in call(1, "c1", "get_weather", {"city": "北京"})]
    assert score(WEATHER_CASE, run_of(*call(1, "t1", "task", {}), *child, final("25"))).tool is False


def test_categories_cover_bfcl():
    def one(**written):
        return read_cases([{"name": "x", "question": "q", **written}])[0]
    w = {"name": "get_weather"}
    f = {"name": "get_forecast"}
    assert category(one(calls=[w]), 1) == "simple" and category(one(calls=[w]), 2) == "multiple"
    assert category(one(calls=[w, w], order="parallel"), 2) == "parallel"
    assert category(one(calls=[w, f], order="parallel"), 2) == "parallel_multiple"
    assert category(one(calls=[]), 2) == "irrelevance" and category(one(calls=[w, f]), 2) == "multi_step"
    assert category(one(calls=[w], before=[{"role": "user", "content": "我在北京"}]), 2) == "multi_turn"


@pytest.mark.parametrize("written, said", [
    ("{", "用例集不是合法的 JSON：第 1 行第 2 列"),
    ([], "用例集 至少要有 1 个"),
    ([{"name": "x", "question": "q", "answer": {"foo": 1}}], "第 1 个用例 的 answer 不是认得的匹配器：写一个值，或"),
    ([{"name": "", "question": "q"}], "第 1 个用例 的 name 至少要写 1 个字"),
    ([{"name": "x"}], '第 1 个用例 缺少 "question"'),
    ([{"name": "x", "question": "q", "order": "random"}], "第 1 个用例 的 order 只能是 sequence / any / parallel"),
    ([{"name": "x", "question": "q", "colour": 1}], "第 1 个用例 里有不认识的字段：'colour' was unexpected"),
    ([{"name": "x", "question": "q", "answer": {"matches": "("}}], '用例 "x" 的正则 \'(\' 写错了'),
    ([{"name": "x", "question": "q"}, {"name": "x", "question": "r"}], '用例名 "x" 出现了两次'),
    ([{"name": "x", "question": "q"}] * 51, "用例集 最多 50 个"),
])
def test_a_case_set_it_cannot_use_is_said_precisely(written, said):
    with pytest.raises(CaseProblem) as problem:
        read_cases(written)
    assert str(problem.value).startswith(said)


def test_a_multi_turn_case_sends_the_turns_before_its_question():
    [case] = read_cases([{"name": "x", "question": "那上海呢？", "before": [
        {"role": "user", "content": "北京天气"}, {"role": "assistant", "content": "北京晴"}]}])
    assert [m["content"] for m in case.messages()] == ["北京天气", "北京晴", "那上海呢？"]
    assert read_cases([case.to_json()]) == [case]


def test_totals_count_only_what_the_server_reported_and_price_only_real_counts():
    def trial(ms, *usage):
        return Trial(WEATHER_CASE, 1, [*usage, final()], score(WEATHER_CASE, [final()]), ms)
    done = [trial(10, response(100, 20)), trial(30, response(50, 5), response()), trial(20, response(10, 1))]
    total = totals(done, price={"input": 2, "output": 8})
    assert (total.runs, total.passed, total.p50_ms, total.p95_ms) == (3, 0, 20, 30)
    assert (total.prompt_tokens, total.completion_tokens, total.unreported) == (160, 26, 1)
    assert total.cost is None                                  # one request had no usage: no cost to invent
    exact = totals([done[0], done[2]], price={"input": 2, "output": 8})
    assert exact.cost == pytest.approx(110 / 1e6 * 2 + 21 / 1e6 * 8)
    assert totals([done[0]], estimated=True, price={"input": 2, "output": 8}).cost is None
    assert totals([done[0]]).cost is None and totals([]).rate is None and totals([]).p50_ms is None


def test_trials_and_the_table():
    client = make_client("offline")
    weather = importlib.import_module("examples_weather").registry
    cases = read_cases(CASE_SETS["examples_weather.py"])[:2]
    done = list(evaluate(lambda m: run_function_calling(client, m, weather.to_schemas(), weather), cases, trials=3))
    assert [(t.case.name, t.number) for t in done] == [(c.name, n) for c in cases for n in (1, 2, 3)]
    assert all(t.ms > 0 for t in done)
    rows = table(done)
    assert rows[0] == {"case": "今天的天气", "runs": 3, "passed": 3, "tool": [3, 3], "arguments": [3, 3],
                       "answer": [3, 3], "unscored": 0, "problem": ""}


@pytest.mark.parametrize("example", sorted(CASE_SETS))
def test_every_built_in_case_set_is_passed_offline_with_clear_descriptions(example):
    """The vague weather set is the one meant to lose cases (and exactly the two forecast ones)."""
    client = make_client("offline")
    registry = importlib.import_module(example[:-3]).registry
    cases = read_cases(CASE_SETS[example])
    done = list(evaluate(lambda m: run_function_calling(client, m, registry.to_schemas(), registry), cases, 1))
    failed = [t.case.name for t in done if not t.score.passed]
    assert failed == (["这几天", "周末"] if example == "examples_weather_vague.py" else [])
    assert any(not case.calls for case in cases)                # each set has a case where no call is due


def test_the_cap_is_lower_on_a_public_space_and_nothing_runs_past_it(monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("MODELSCOPE_ENVIRONMENT", raising=False)
    assert eval_backend.run_cap() == eval_backend.RUNS_MAX
    monkeypatch.setenv("MODELSCOPE_ENVIRONMENT", "studio")
    assert eval_backend.run_cap() == eval_backend.HOSTED_RUNS_MAX and "公开的 Space" in str(eval_backend.cap_note())
    cases = [{"name": f"c{i}", "question": "北京今天天气怎么样？", "calls": []} for i in range(21)]
    models = [eval_backend.Contender("A", eval_backend.Settings())]
    [state] = list(eval_backend.run_evaluation("", cases, models, 3))
    assert state.done == 0 and state.problem.startswith("这次评估要跑 63 次（21 个用例 × 3 次 × 1 个模型），超过了上限 60 次")


@pytest.mark.parametrize("text, price", [("2, 8", {"input": 2.0, "output": 8.0}), ("0，0.5", {"input": 0.0, "output": 0.5}),
                                         ("", None), (None, None)])
def test_a_price_is_two_numbers_or_nothing(text, price):
    assert eval_backend.parse_price(text) == price


@pytest.mark.parametrize("text", ["2", "a, b", "-1, 2", "nan, 1", "1, 2, 3"])
def test_anything_else_is_no_price(text):
    with pytest.raises(ValueError):
        eval_backend.parse_price(text)


def test_the_csv_has_a_row_per_run_and_the_report_carries_no_key():
    import csv
    import io

    from lessons.editor_panel import example_text

    key = "sk-typed-by-a-student-0000"
    settings = eval_backend.Settings()
    models = [eval_backend.Contender("A", settings, key), eval_backend.Contender("B", settings, key, "unknown_tool")]
    cases = CASE_SETS["examples_weather.py"][:2]
    for state in eval_backend.run_evaluation(example_text("examples_weather.py"), cases, models, 2):
        pass
    rows = list(csv.DictReader(io.StringIO(eval_backend.as_csv(state))))
    assert len(rows) == 8 and [r["label"] for r in rows] == ["A"] * 4 + ["B"] * 4
    assert rows[0]["case"] == "今天的天气" and rows[0]["category"] == "multiple" and rows[0]["passed"] == "True"
    assert all(r["scored"] == "True" and r["not_run"] == "0" for r in rows)
    assert rows[4]["tool"] == "False" and rows[4]["problem"].startswith("多调用了 get_weather_info")
    written = json.dumps(eval_backend.report(state), ensure_ascii=False)
    assert key not in written and key not in eval_backend.as_csv(state)


def test_any_order_pairs_many_calls_without_trying_every_order():
    expected = tuple({"name": "f", "arguments": {"i": i}} for i in range(10))
    made = [e for i in reversed(range(10)) for e in call(1, f"c{i}", "f", {"i": i})]
    case = Case("十个", "?", expected, "any")
    started = time.perf_counter()
    assert score(case, run_of(*made, final())).passed
    assert not score(case, run_of(*made[:-2], *call(1, "x", "f", {"i": 99}), final())).passed
    assert time.perf_counter() - started < 1
    two = Case("两个", "?", ({"name": "f", "arguments": {"i": {"one_of": [1, 2]}}}, {"name": "f", "arguments": {"i": 1}}), "any")
    assert score(two, run_of(*call(1, "a", "f", {"i": 1}), *call(1, "b", "f", {"i": 2}), final())).passed


def test_a_retry_after_a_timeout_is_the_right_thing_not_an_extra_call():
    retried = run_of(*call(1, "c1", "get_weather", {"city": "北京"}, ok=False, code="timeout"),
                     *call(2, "c2", "get_weather", {"city": "北京"}), final("25", 3))
    assert score(WEATHER_CASE, retried).passed


def test_calls_meet_their_results_by_position_when_a_server_repeats_an_id():
    bad_json = {"type": "tool_call", "turn": 1, "id": "same", "name": "get_weather", "arguments": None}
    good = {"type": "tool_call", "turn": 1, "id": "same", "name": "get_weather", "arguments": {"city": "北京"}}
    results = [{"type": "tool_result", "turn": 1, "id": "same", "name": "get_weather", "ok": False,
                "error_code": "invalid_json", "content": "❌ [参数格式错误] 不是 JSON"},
               {"type": "tool_result", "turn": 1, "id": "same", "name": "get_weather", "ok": True, "error_code": None,
                "content": "北京今天晴"}]
    got = score(WEATHER_CASE, run_of(bad_json, good, *results, final("25")))
    # Paired by id, both calls would meet the last result and count as two taken calls.
    assert got.tool and got.problem == "get_weather 的参数被退回过：❌ [参数格式错误] 不是 JSON"


@pytest.mark.parametrize("value", [10 ** 400, -10 ** 400, 2 ** 60])
def test_a_huge_number_is_no_number_and_raises_nothing(value):
    assert not matches({"near": 5}, value) and not matches(5.0, value) and matches(value, value)


def test_usage_counts_only_what_the_server_reported_as_numbers():
    trial = Trial(WEATHER_CASE, 1, [response(10, 2), {"type": "response", "turn": 2, "usage": {"total_tokens": 500}},
                                    {"type": "response", "turn": 3, "usage": {"prompt_tokens": "abc",
                                                                              "completion_tokens": 1}}], None, 1)
    assert trial.usage() == (10, 2, 2)


@pytest.mark.parametrize("written, said", [
    ("[" * 100_000, "用例集"),
    ([{"name": "x", "question": "q", "answer": {"absent": True}}], "第 1 个用例 的 answer"),
    ([{"name": "x", "question": "q", "before": [{"role": "assistant", "content": "长" * 2001}]}],
     "第 1 个用例 的 before[0].content 最多 2000 个字"),
    ([{"name": "x", "question": "q", "before": [{"role": "user", "content": "a", "tool_calls": []}]}],
     "第 1 个用例 的 before[0] 里有不认识的字段"),
])
def test_hostile_case_sets_are_refused_with_a_sentence(written, said):
    with pytest.raises(CaseProblem) as problem:
        read_cases(written)
    assert str(problem.value).startswith(said)


def test_a_loop_that_raises_is_one_failed_run_and_the_evaluation_goes_on():
    def broken(messages):
        yield {"type": "request", "turn": 1}
        raise RuntimeError("sandbox went away")
    done = list(evaluate(broken, [WEATHER_CASE], trials=2))
    assert len(done) == 2 and all(not t.score.scored for t in done)
    assert done[0].score.problem == "没有评分：运行没有正常结束（RuntimeError: sandbox went away）"


def test_a_case_the_tools_cannot_meet_is_said_before_anything_runs():
    from lessons.editor_panel import example_text

    weather = example_text("examples_weather.py")
    models = [eval_backend.Contender("A", eval_backend.Settings())]
    typo = [{"name": "拼错", "question": "北京天气", "calls": [{"name": "get_wether"}]}]
    [*_, state] = eval_backend.run_evaluation(weather, typo, models, 1)
    assert state.done == 0 and state.problem.startswith("用例「拼错」要的工具 get_wether 不在工具清单里（有：get_weather、get_forecast）")
    town = [{"name": "参数名", "question": "北京天气", "calls": [{"name": "get_weather", "arguments": {"town": "北京"}}]}]
    [*_, state] = eval_backend.run_evaluation(weather, town, models, 1)
    assert state.problem == "用例「参数名」里 get_weather 的参数 town 不在它的 schema 里（有：city、unit）"


def test_an_evaluation_waits_out_the_sandboxs_budget_and_keeps_the_wait_out_of_its_time(monkeypatch):
    calls = []

    def turned_away_twice(name, arguments):
        calls.append(name)
        if len(calls) <= 2:
            return {"ok": False, "error_code": "rate_limited", "content": "❌ [请稍后再试] 一分钟内运行次数太多。"}
        return {"ok": True, "content": "北京今天晴，25°C", "error_code": None}

    monkeypatch.setattr(eval_backend.Patient, "PAUSE_S", 0.05)
    patient = eval_backend.Patient(turned_away_twice)
    assert patient("get_weather", {"city": "北京"})["ok"] and len(calls) == 3
    assert patient.waited == pytest.approx(0.1)
    monkeypatch.setattr(eval_backend.Patient, "PATIENCE_S", 0.12)
    calls.clear()
    never = eval_backend.Patient(lambda name, arguments: {"ok": False, "error_code": "busy", "content": "❌ 忙"})
    assert never("get_weather", {})["error_code"] == "busy"          # past its patience: said, the run unscored


def test_the_exports_say_which_model_did_not_run_and_why(monkeypatch):
    """B on an OpenAI-compatible endpoint with no key: A's runs are there, and both files say B's did not run."""
    import csv
    import io

    from lessons.editor_panel import example_text

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    models = [eval_backend.Contender("A", eval_backend.Settings()),
              eval_backend.Contender("B", eval_backend.Settings(provider="openai", base_url="http://127.0.0.1:9/v1"))]
    for state in eval_backend.run_evaluation(example_text("examples_weather.py"), CASE_SETS["examples_weather.py"][:2],
                                             models, 2):
        pass
    rows = list(csv.DictReader(io.StringIO(eval_backend.as_csv(state))))
    assert [r["label"] for r in rows] == ["A"] * 4 + ["B"]
    assert rows[-1]["not_run"] == "4" and rows[-1]["scored"] == "" and rows[-1]["case"] == ""
    assert rows[-1]["problem"].startswith("模型 B 没有运行：没有可用的 API Key")
    b = eval_backend.report(state)["models"][1]
    assert b["not_run"] == 4 and b["why_not_run"].startswith("模型 B 没有运行：没有可用的 API Key") and "runs" not in b
    stopped = eval_backend.Evaluation(contenders=models[:1], trials={"A": state.trials["A"][:1]}, each=4, stopped=True)
    assert stopped.why_not_run("A") == "模型 A 有 3 次没有运行：评估被停止了"


TRUNCATED = {"id": "cut", "object": "chat.completion", "created": 0, "model": "offline-rule-model",
             "choices": [{"index": 0, "finish_reason": "length", "message": {
                 "role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                     "name": "get_weather", "arguments": '{"city": "北'}}]}}],
             "usage": {"prompt_tokens": 120, "completion_tokens": 64, "total_tokens": 184}}
# llama-server's answer when it cannot parse what the model wrote (its error shape; the words it uses for a cut-off
# call sent back, measured in the real-model lane).
PARSE_FAILED = {"status": 500, "json": {"error": {"code": 500, "type": "server_error", "message": (
    "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 10: "
    "syntax error while parsing value - invalid string: missing closing quote")}}}


@pytest.mark.parametrize("provider", ["openai", "glm"])
def test_over_http_who_broke_the_run_decides_whether_it_is_scored(connect, server, provider):
    """Through the real SDKs: a call cut off by max_tokens goes back, and the server answers HTTP 500 on it (as
    llama-server does): a failed run. The server busy (503) or a gateway's page (502): the request never reached
    the model, the run is not scored."""
    weather = importlib.import_module("examples_weather").registry

    def run_with(*answers):
        server.reset()
        server.queue(*answers)
        return list(run_function_calling(connect(provider), WEATHER_CASE.messages(), weather.to_schemas(), weather))

    broke = run_with({"body": TRUNCATED}, PARSE_FAILED)
    assert [e["type"] for e in broke if e["type"] in ("tool_result", "error")] == ["tool_result", "error"]
    assert (broke[-1]["code"], broke[-1]["status"]) == ("server", 500)
    got = score(WEATHER_CASE, broke)
    assert got.scored and not got.passed and not got.finished and got.tool is False   # its cut-off call was sent back
    assert eval_backend.run_record(Trial(WEATHER_CASE, 1, broke, got, 5))["stopped_by"] == {"code": "server", "status": 500}
    at_once = run_with(PARSE_FAILED)
    assert score(WEATHER_CASE, at_once).scored and at_once[-1]["turn"] == 1
    for answer, status in (({"status": 503, "json": {"error": {"message": "The engine is currently overloaded"}}}, 503),
                           ({"fault": "gateway_html"}, 502)):
        unreached = run_with(answer)
        assert unreached[-1]["status"] == status and not score(WEATHER_CASE, unreached).scored
