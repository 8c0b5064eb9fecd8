"""The context lesson's run, below the page: the conversation as the API takes it, the offline
model's answers from what it was sent, its 400 for a tool result without its call (in this
process and over HTTP through the openai SDK), and the headline over each ending."""
from __future__ import annotations

import json
import re

import context
import pytest

import i18n
import llm_clients
from offline.server import OfflineServer
from runs import context_backend, headline, purposes

HISTORY, QUESTION = context.EXAMPLE[:-1], context.EXAMPLE[-1]["content"]
ORPHANED = [HISTORY[0], HISTORY[3], {"role": "user", "content": QUESTION}]


def ended(strategy: str, question: str = QUESTION, budget: int = 300, client=None) -> list[dict]:
    steps = context.run_within_budget(client or llm_clients.make_client("offline"), HISTORY, question, strategy, budget)
    events = []
    try:
        for event in steps:
            events.append(event)
    except llm_clients.LLMError as error:        # what runs.backend.advance turns into an error event
        events.append({"type": "error", "turn": None, "code": error.code, "message": str(error)})
    return events


@pytest.mark.parametrize("value, said", [
    ("[", "对话不是合法的 JSON：第 1 行第 2 列"),
    ('{"role": "user"}', "对话应是一个消息列表（JSON 数组），收到的是对象"),
    ('[3]', "第 1 条消息应是一个对象（{\"role\": …, \"content\": …}），收到的是数字"),
    ('[{"role": "robot", "content": "hi"}]', "第 1 条消息的 role 应是 system / user / assistant / tool 之一，收到 'robot'"),
    ('[{"role": "user", "content": 3}]', "第 1 条消息的 content 应是字符串"),
    ('[{"role": "user", "content": null, "tool_calls": []}]', "第 1 条消息的 content 应是字符串"),
    ('[{"role": "user", "content": "", "tool_calls": [{"id": "a"}]}]', "只有 assistant 消息可以带 tool_calls"),
    ('[{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {}}}]}]',
     "arguments\": JSON 字符串"),
    ('[{"role": "tool", "content": "x"}]', "第 1 条消息是工具结果，应带 tool_call_id"),
    (json.dumps([{"role": "user", "content": "x"}] * 201), "对话有 201 条消息，最多 200 条"),
    ("[" + " " * 200_001 + "]", "对话太长：200003 字"),
])
def test_a_conversation_the_api_would_not_take_is_said_where(value, said):
    with pytest.raises(context_backend.Unusable) as problem:
        context_backend.conversation_from(value)
    assert said in str(problem.value)
    with i18n.using("en"), pytest.raises(context_backend.Unusable) as problem:     # an English page says it in English
        context_backend.conversation_from(value)
    assert not re.search(r"[\u4e00-\u9fff]", str(problem.value)), str(problem.value)


def test_the_example_conversation_is_taken_as_it_is():
    assert context_backend.conversation_from(json.dumps(HISTORY, ensure_ascii=False)) == HISTORY


def test_budget_and_strategy_are_checked():
    assert context_backend.budget_from("300") == 300 and context_backend.budget_from(1) == 50
    assert context_backend.budget_from(10**9) == 8_000
    with pytest.raises(context_backend.Unusable, match="预算应是整数"):
        context_backend.budget_from("lots")
    with pytest.raises(context_backend.Unusable, match="做法应是 none / fold"):
        context_backend.strategy_from("magic")
    with i18n.using("en"), pytest.raises(context_backend.Unusable, match="The budget must be a whole number"):
        context_backend.budget_from("lots")


def test_without_tools_the_offline_model_answers_only_from_what_it_was_sent():
    model = llm_clients.make_client("offline")
    asked = [*HISTORY, {"role": "user", "content": QUESTION}]
    assert "你叫小林" in model.complete(asked).text
    assert "不知道你的名字" in model.complete(asked[:1] + asked[4:]).text
    assert "ERROR: test_calc failed" in model.complete([*HISTORY, {"role": "user", "content": "构建为什么失败？"}]).text
    assert "答不了" in model.complete([*HISTORY, {"role": "user", "content": "src 里有几个文件？"}]).text
    said = model.complete([{"role": "user", "content": "my name is Ada"}, {"role": "user", "content": "What's my name?"}])
    assert "你叫Ada" in said.text


def test_a_tool_result_without_its_call_is_refused_in_this_process():
    with pytest.raises(llm_clients.LLMError) as refused:
        llm_clients.make_client("offline").complete(ORPHANED)
    assert refused.value.code == "orphan_result"
    assert "前面找不到它回答的那个调用" in str(refused.value) and "preceeding message with 'tool_calls'" in str(refused.value)


def test_the_offline_server_refuses_it_over_http_as_openai_does():
    server = OfflineServer().start()
    try:
        client = llm_clients.make_client("openai", api_key="sk-offline", base_url=server.url)
        with pytest.raises(llm_clients.LLMError) as refused:
            client.complete(ORPHANED)
        assert refused.value.code == "orphan_result" and "HTTP 400" in str(refused.value)
        assert "前面找不到它回答的那个调用" in str(refused.value)
        assert client.complete(HISTORY[:1] + [{"role": "user", "content": QUESTION}]).text     # the same server still answers
    finally:
        server.stop()


def test_the_headline_over_each_ending():
    window = headline.verdict(ended("window"))
    assert window["state"] == "doubtful" and "上下文：滑动窗口" in window["title"] and "不知道" in window["detail"]
    assert window["title"].startswith("「滑动窗口」之后，发出去的上下文仍有 393 个 token，超出预算 300")
    # Judged against what the question is for (runs/purposes.py): the name is in the answer, or why it is not.
    asked = purposes.CONTEXT[QUESTION]
    window = headline.verdict(ended("window"), asked)
    assert window["state"] == "missed" and window["icon"] == "⚠️"
    assert window["title"].startswith("这个问题的回答里应有「小林」，实际没有：「滑动窗口」之后，发给模型的消息里已经没有它了"
                                      "（第 2 条丢掉了）")
    assert "超出预算 300" in window["title"]
    compact = headline.verdict(ended("compact", budget=2000), asked)
    assert compact["state"] == "answered" and "你叫小林" in compact["detail"]
    assert headline.verdict(ended("compact"), asked)["state"] == "doubtful"      # right, but over its budget of 300
    rejected = headline.verdict(ended("naive_window"))
    assert rejected["state"] == "context_rejected" and "课程仓库的窗口" in rejected["title"]
    assert "不是模型的错" in rejected["title"] and "HTTP 400" in rejected["detail"]
    broken = headline.verdict(list(context_backend.context_loop(None, QUESTION, {"conversation": "[", "budget": 300},
                                                                max_turns=2, temperature=None, stream=False)))
    assert broken["state"] == "conversation_invalid" and "模型还没被问到" in broken["title"]


def test_a_400_without_an_orphan_is_not_blamed_on_the_strategy():
    events = ended("window")[:1] + [{"type": "error", "turn": 1, "code": "bad_request", "message": "HTTP 400"}]
    assert headline.verdict(events)["state"] == "error"
    orphaned_elsewhere = [{"type": "error", "turn": 1, "code": "orphan_result", "message": "HTTP 400"}]
    assert headline.verdict(orphaned_elsewhere)["state"] == "error"     # no strategy ran: nothing to name


def test_streaming_the_refusal_is_named_the_same():
    steps = context.run_within_budget(llm_clients.make_client("offline"), HISTORY, QUESTION, "naive_window", 300,
                                      stream=True)
    events = ended_from(steps)
    assert headline.verdict(events)["state"] == "context_rejected"


def ended_from(steps) -> list[dict]:
    events = []
    try:
        for event in steps:
            events.append(event)
    except llm_clients.LLMError as error:
        events.append({"type": "error", "turn": None, "code": error.code, "message": str(error)})
    return events


@pytest.mark.parametrize("value, said", [
    (json.dumps([HISTORY[0], HISTORY[3]]), "第 2 条是 call_1 的结果，可它前面没有这个调用：这段对话原样发出去就会被 API 拒收"),
    ("[" * 5000 + "]" * 5000, "嵌套太深或数字太长"),
    ('[{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}]", "嵌套太深或数字太长"),
    ('[{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "web", '
     '"function": {"name": "f", "arguments": "{}"}}]}]', "\"type\": \"function\""),
])
def test_a_conversation_the_api_would_refuse_as_it_is_is_not_blamed_on_a_strategy(value, said):
    with pytest.raises(context_backend.Unusable) as problem:
        context_backend.conversation_from(value)
    assert said in str(problem.value)


CALL = HISTORY[2]       # call_1
RESULT = HISTORY[3]


@pytest.mark.parametrize("conversation, said", [
    ([HISTORY[1], CALL, {"role": "assistant", "content": "好"}], "第 2 条的调用 call_1 后面没有紧跟着恰好一条它的结果"),
    ([HISTORY[1], CALL, {"role": "user", "content": "等等"}, RESULT], "第 2 条的调用 call_1 后面没有紧跟着"),
    ([HISTORY[1], CALL, RESULT, RESULT], "第 2 条的调用 call_1 后面没有紧跟着恰好一条"),
])
def test_a_call_must_be_answered_right_after_and_once(conversation, said):
    with pytest.raises(context_backend.Unusable) as problem:
        context_backend.conversation_from(conversation)
    assert said in str(problem.value) and "原样发出去就会被 API 拒收" in str(problem.value)


def test_content_as_text_parts_is_taken():
    parts = [{"role": "user", "content": [{"type": "text", "text": "我叫小林"}]}]
    assert context_backend.conversation_from(parts) == parts
    with pytest.raises(context_backend.Unusable, match="文字段列表"):
        context_backend.conversation_from([{"role": "user", "content": [{"type": "image_url"}]}])


def test_what_a_stranger_adds_to_a_message_is_not_forwarded():
    sent = context_backend.conversation_from([{"role": "user", "content": "hi", "x-secret": 1},
                                              {**HISTORY[2], "extra": True}, {**HISTORY[3], "cache": "no"}])
    assert sent == [{"role": "user", "content": "hi"}, HISTORY[2], HISTORY[3]]
    with pytest.raises(context_backend.Unusable):
        context_backend.budget_from("inf")


def test_no_window_drops_the_question_even_when_system_messages_fill_the_minimum():
    systems = [{"role": "system", "content": f"规则 {n}"} for n in range(4)]
    asked = [*systems, *HISTORY[1:], {"role": "user", "content": QUESTION}]
    for strategy in ("window", "naive_window"):
        shrunk = context.shrink(strategy, asked, 50)
        assert shrunk.messages[-1]["content"] == QUESTION, strategy


def test_a_summary_cut_at_max_tokens_or_empty_is_said():
    class Cut:
        def complete(self, messages, temperature=None):
            return llm_clients.Completion(message={"role": "assistant", "content": None}, raw={}, text=None,
                                          usage=None, duration_ms=1.0, finish_reason="length", model="x")

    shrunk = context.compact(Cut(), [*HISTORY, {"role": "user", "content": QUESTION}])
    assert shrunk.messages[1]["content"] == context.SUMMARY_HEAD + "\n"
    assert any("摘要是空的" in note for note in shrunk.notes) and any("被截断" in note for note in shrunk.notes)
    event = context.context_event("compact", 300, [*HISTORY, {"role": "user", "content": QUESTION}], shrunk, 1.0)
    assert "摘要写到 max_tokens 被截断了" in headline._context_clause(event)


def test_a_failed_summary_call_says_it_was_the_summary():
    class Down:
        def complete(self, messages, temperature=None):
            raise llm_clients.LLMError("rate_limit", "请求太频繁（HTTP 429）")

    events = list(context.run_within_budget(Down(), HISTORY, QUESTION, "compact", 300))
    assert events == [{"type": "error", "turn": None, "code": "rate_limit",
                       "message": "写摘要的那次模型调用失败了（对话还没有发出去）：请求太频繁（HTTP 429）"}]


def test_a_name_is_taken_only_from_what_the_user_said():
    model = llm_clients.make_client("offline")
    asked = [{"role": "user", "content": "我叫什么名字？"}, {"role": "assistant", "content": "我叫助手"},
             {"role": "user", "content": "我的名字是什么？"}]
    assert "不知道你的名字" in model.complete(asked).text


def test_an_imported_context_event_is_escaped_and_odd_values_do_not_break_the_view():
    from lessons import context_view

    hostile = {"type": "context", "strategy": "<b>x</b>", "budget": "<img src=x onerror=alert(1)>",
               "rows": [{"role": "<script>", "preview": "<img>", "tokens": "<i>", "fate": "<u>", "after": "<s>"}, 3],
               "added": "nope", "before_tokens": "<b>", "after_tokens": None, "notes": "<x>", "orphans": ["<y>"],
               "model_call": "z", "compared": [{"strategy": "<q>", "messages": "<m>", "tokens": 1, "saved": "<p>",
                                                "ms": "<t>", "orphans": "<o>", "fits": False}], "ms": "?"}
    shown = context_view.render(hostile)
    assert "<img" not in shown and "<script>" not in shown and "<i>" not in shown and "<o>" not in shown


def test_the_views_say_the_request_carried_no_tools():
    from lessons import cost_view, timeline

    events = ended("window")
    shown = timeline.render_protocol(events, "context")
    assert "请求：messages 发给模型（这次不带 tools）" in shown and "握手" not in shown
    assert "（工具说明 0）" in shown
    assert "这次请求没有带任何工具说明" in cost_view.render(events)
