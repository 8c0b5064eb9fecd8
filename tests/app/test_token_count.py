"""Token counts beside a run: a real tokenizer that works with no network, the tools' text
counted in both protocols, and the provider's usage kept apart from the count."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lessons import cost_view, token_count
from runs import backend
from lessons.editor_panel import EXAMPLE_SETS, example_text
from runs.starters import function_calling as fc_start
from runs.starters import react as react_start
from access.clients import Settings

WEATHER = example_text(EXAMPLE_SETS["天气"])
QUESTION = "北京今天天气怎么样？"


def events_of(start, options):
    return backend.run_to_end(backend.start_run(start, WEATHER, QUESTION, Settings(), options)).events


def test_the_tokenizer_loads_without_network_or_cache(tmp_path):
    # A fresh cache directory and a proxy that refuses everything: a download would fail.
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"), "HTTPS_PROXY": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    script = ("import sys; sys.path.insert(0, '.');"
              "from lessons import token_count as t; print(t.count('Action: get_weather[{\"city\": \"北京\"}]'))")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) == 12


def test_counts_are_the_real_tokenizers():
    assert token_count.available()
    assert token_count.count("hello world") == 2       # cl100k_base: "hello", " world"
    assert token_count.count("<|endoftext|>") > 1      # special-token text counted as plain text


def test_function_calling_counts_the_tools_json_and_is_comparable_to_react():
    fc = token_count.per_turn(events_of(fc_start, {}))[0]
    react = token_count.per_turn(events_of(react_start, {"approach": "react"}))[0]
    assert fc["tools_kind"] == "tools" and react["tools_kind"] == "system"
    assert fc["tools"] == token_count.count(fc["tools_text"]) and '"name":"get_weather"' in fc["tools_text"]
    assert react["tools_text"].startswith("你是一个会使用工具的助手")
    # Same tools, same question: the inputs are of the same order (the offline usage said 10 vs 1011).
    assert 0.3 < fc["input"] / react["input"] < 3
    assert fc["share"] > 0.5 and react["share"] > 0.5


def test_the_tools_are_sent_again_every_round():
    rows = token_count.per_turn(events_of(fc_start, {}))
    assert len(rows) >= 2 and len({row["tools"] for row in rows}) == 1
    assert rows[-1]["input"] > rows[0]["input"]     # the conversation grows, the tools stay


def test_the_offline_usage_is_marked_as_an_estimate():
    rows = token_count.per_turn(events_of(fc_start, {}))
    assert rows[0]["usage"]["estimate"] is True
    page = cost_view.render(events_of(fc_start, {}), "offline")
    assert "离线模型按字数粗估" in page and "OpenAI 分词器的计数" in page
    assert "与 gpt-4" in cost_view.render(events_of(fc_start, {}), "openai")


@pytest.mark.parametrize("usage, shown", [(None, "未报告"), ({"prompt_tokens": 50, "completion_tokens": 7}, "50 / 7")])
def test_a_real_providers_usage_is_shown_as_reported(usage, shown):
    events = [{"type": "request", "turn": 1, "messages": [{"role": "user", "content": "hi"}], "tools": None},
              {"type": "response", "turn": 1, "usage": usage, "raw": {"model": "gpt-4o-mini"}}]
    page = cost_view.render(events, "openai")
    assert shown in page and "粗估" not in page


def test_a_request_has_one_count_wherever_the_page_shows_it():
    """The tokens tab and the context lesson's table count a message the same way (context.tokens)."""
    import context

    for events in (events_of(fc_start, {}), events_of(react_start, {"approach": "react"})):
        for request, row in zip((e for e in events if e["type"] == "request"), token_count.per_turn(events)):
            tools = token_count.count(token_count.tools_json(request["tools"])) if request.get("tools") else 0
            assert row["input"] == tools + sum(context.tokens(request["messages"]))


def test_the_summary_call_is_a_row_of_its_own_with_its_usage():
    """/compact spends one more model call before the run's own: the tokens tab lists it, with the
    usage it reported (the offline model's marked as an estimate), before the rounds."""
    import json

    import context
    from runs.starters import context as context_start

    options = {"conversation": json.dumps(context.EXAMPLE[:-1], ensure_ascii=False), "strategy": "compact",
               "budget": 300}
    events = events_of(context_start, options)
    call = next(e for e in events if e["type"] == "context")["model_call"]
    rows = token_count.per_turn(events)
    assert [row["turn"] for row in rows] == ["summary", 1]
    assert rows[0]["input"] == sum(context.tokens(call["messages"]))
    assert rows[0]["usage"] == {"prompt": call["usage"]["prompt_tokens"],
                                "completion": call["usage"]["completion_tokens"], "estimate": True}
    page = cost_view.render(events, "offline")
    assert "写摘要（多出的一次模型调用）" in page and "第 1 轮请求" in page
    # The context lesson sends no tools: nothing about tools sent again, no empty text of them.
    assert "每一轮都要重新发送" not in page and "原文（" not in page and "转写进提示词" not in page
    with_tools = cost_view.render(events_of(fc_start, {}), "offline")
    assert "每一轮都要重新发送" in with_tools and "原文（" in with_tools and "转写进提示词" in with_tools


def test_a_second_system_message_is_conversation_not_tools():
    import context

    messages = [{"role": "system", "content": "你是一个会使用工具的助手。工具：get_weather"},
                {"role": "system", "content": "以下是早先对话的摘要：用户叫小林。"},
                {"role": "user", "content": "北京今天天气怎么样？"}]
    cost = token_count.request_cost({"messages": messages, "tools": None}, text_protocol=True)
    assert cost["tools"] == token_count.count(messages[0]["content"])
    assert cost["input"] == sum(context.tokens(messages))
