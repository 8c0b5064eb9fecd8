"""What the timeline says about the naive ReAct regex, calls that ran together and clipped results,
the result envelope through the named endpoints, and error sentences without a doubled full stop.
Events come from the real loops on the offline model, through the same backend as the page."""
from __future__ import annotations
from runs import starters

import json
import re

import pytest
from gradio_client import Client

import tool_outcome
from lessons import timeline
from runs import backend
from lessons.editor_panel import EXAMPLE_SETS, example_text
from access.clients import Settings


def events_of(start, example_set: str, question: str, options: dict, mistake: str | None = None) -> list[dict]:
    run = backend.run_to_end(backend.start_run(start, example_text(EXAMPLE_SETS[example_set]), question, Settings(),
                                               options, secrets={}, mistake=mistake, session_id="timeline-truth"))
    assert run.error is None
    return [e for e in run.events if e.get("type") != "delta"]


def test_the_naive_regex_is_shown_beside_ours_with_its_verdict():
    events = events_of(starters.react, "天气", "北京今天天气怎么样？", {"approach": "react"}, "bold_action")
    parse = next(e for e in events if e["type"] == "parse")
    page = timeline.render_protocol(events, "react")
    assert parse["ok"] and not parse["naive"]["matched"]
    assert timeline.esc(parse["naive"]["pattern"]) in page and timeline.esc(parse["naive"]["verdict"]) in page
    assert "tw-naive-regex-differs" in page
    plain = events_of(starters.react, "天气", "北京今天天气怎么样？", {"approach": "react"})
    assert "tw-naive-regex-differs" not in timeline.render_protocol(plain, "react")
    assert "朴素正则读出的结果相同" in timeline.render_protocol(plain, "react")


def test_calls_of_one_response_show_when_they_started_and_finished():
    events = events_of(starters.function_calling, "天气", "北京和上海今天天气怎么样？",
                       {"tool_choice": "auto", "parallel_tool_calls": True})
    results = [e for e in events if e["type"] == "tool_result"]
    page = timeline.render_protocol(events, "function_calling")
    assert len(results) == 2 and page.count('class="tw-bar"') == 2
    for result in results:
        assert f"第 {result['started_ms']:.0f} ms 开始，第 {result['finished_ms']:.0f} ms 结束" in page
    one_by_one = events_of(starters.function_calling, "天气", "北京和上海今天天气怎么样？",
                           {"tool_choice": "auto", "parallel_tool_calls": False})
    assert "tw-timing" not in timeline.render_protocol(one_by_one, "function_calling")


def test_a_calls_time_is_one_figure_in_its_result_line_and_beside_its_bar():
    """The result line and the "ran together" line of a call show the same measurement, the same way."""
    events = events_of(starters.function_calling, "天气", "北京和上海今天天气怎么样？",
                       {"tool_choice": "auto", "parallel_tool_calls": True})
    blocks = timeline.render_protocol(events, "function_calling").split('<div class="tw-call">')[1:]
    assert len(blocks) == 2
    for block in blocks:
        beside_bar = re.search(r"用时 ([\d.]+ m?s)；", block).group(1)
        result_line = re.search(r"成功</span> · ([\d.]+ m?s)</div>", block).group(1)
        assert beside_bar == result_line


def test_a_clipped_result_says_so_and_a_whole_one_does_not():
    long = events_of(starters.function_calling, "超长结果（截断）", "列出上海的全部门店", {})
    result = next(e for e in long if e["type"] == "tool_result")
    page = timeline.render_protocol(long, "function_calling")
    assert result["clipped_from"] > tool_outcome.RESULT_LIMIT
    assert f"原来 {result['clipped_from']} 个字符，回填给模型的只有前 {tool_outcome.RESULT_LIMIT} 个" in page
    short = events_of(starters.function_calling, "超长结果（截断）", "上海的前 5 家门店", {})
    assert "tw-clipped" not in timeline.render_protocol(short, "function_calling")


def test_a_sentence_ending_in_a_full_stop_or_whitespace_is_not_doubled():
    assert tool_outcome.error_text("timeout", "结论。\n", "下一步。 \n") == "❌ [超时] 结论。下一步。"
    report = backend.extract('raise ValueError("坏了。")\n', "registry", False, "timeline-truth")
    assert "。。" not in report["error"]["message"] and report["error"]["message"].endswith("坏了。请修正后再试。")


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def test_the_envelope_parameter_of_the_endpoints(client):
    weather = example_text(EXAMPLE_SETS["天气"])
    plain = client.predict(weather, "北京今天天气怎么样？", api_name="/run_function_calling")
    wrapped = client.predict(weather, "北京今天天气怎么样？", envelope=True, api_name="/run_function_calling")
    content = [next(e for e in run["events"] if e["type"] == "tool_result")["content"] for run in (plain, wrapped)]
    assert not content[0].startswith("{")
    assert json.loads(content[1]) == {"status": "ok", "data": content[0], "error_code": None, "message": None}
    react = client.predict(weather, "北京今天天气怎么样？", envelope=True, api_name="/run_react")
    assert json.loads(next(e for e in react["events"] if e["type"] == "tool_result")["content"])["status"] == "ok"
    assert wrapped["ok"] and react["ok"]
