"""first_call/lesson.md, performed: each claim of the first-call lesson (8.1) on its page, offline, in Chinese,
in the order the text makes them. The English text (first_call/lesson.en.md) makes the same claims: what a
claim looks for is written T(zh, en) and test_english_claims.py checks the English as text; the last
test here checks that the English lesson names what the Chinese one does."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from catalogue import LESSONS
from tests.app.harness import T, LessonPage, screenshot, set_number

pytestmark = pytest.mark.browser
WAIT = 60_000
ROOT = Path(__file__).resolve().parents[2]
WEATHER, TWO_CITIES, HELLO = "北京今天天气怎么样？", "北京和上海今天天气怎么样？", "你好"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "first_call", height=2400) as page:
        yield page


def streaming(lesson, on: bool) -> None:
    box = lesson.panel.locator(".tw-fc-stream-option input[type=checkbox]")
    box.check() if on else box.uncheck()
    assert box.is_checked() == on


def sent_arguments(code: str) -> dict:
    """The keyword arguments of the snippet's chat.completions.create(...), read as Python reads them."""
    call = next(node for node in ast.walk(ast.parse(code))
                if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "create")
    return {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}


def pieces(lesson) -> list[dict]:
    """The time axis, row by row: which call, when, the fragment, the arguments so far, the parse."""
    rows = []
    for row in lesson.panel.locator(".tw-protocol .tw-fc-piece").all():
        cells = row.locator("td").all_inner_texts()
        rows.append({"index": int(row.get_attribute("data-index")), "closed": row.get_attribute("data-closed") == "true",
                     "ms": float(cells[0].split()[0]), "which": cells[2], "fragment": json.loads(cells[3]),
                     "so_far": cells[4], "parse": cells[5]})
    return rows


def test_what_goes_out_is_the_body_and_the_same_request_in_each_sdk(lesson):
    """点「运行」：时间线里请求的下面是请求体原文，再下面是用 openai SDK 和用 zhipuai SDK 发同一个请求的两段代码，
    参数和请求体一模一样；Key 从环境变量读，代码里没有。"""
    streaming(lesson, True)
    lesson.run(WEATHER)
    body = json.loads(lesson.panel.locator(".tw-protocol .tw-fc-body pre").inner_text())
    assert body["messages"] == [{"role": "user", "content": WEATHER}] and body["stream"] is True
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]
    for sdk, env in (("openai", "OPENAI_API_KEY"), ("zhipuai", "ZHIPUAI_API_KEY")):
        code = lesson.panel.locator(f".tw-protocol .tw-fc-sdk-{sdk} pre").inner_text()
        assert f"from {sdk} import" in code and f'api_key=os.environ["{env}"]' in code
        assert sent_arguments(code) == body
    screenshot(lesson.page, "first-call-request-1280")


def test_not_streamed_the_reply_is_one_block(lesson):
    """取消勾选 stream=True，问「北京今天天气怎么样？」：时间线写着没有分片，响应一次到齐，get_weather 的调用在
    choices[0].message.tool_calls 里，拼好的调用写明它随响应一起到，到了就是完整的。"""
    streaming(lesson, False)
    lesson.run(WEATHER)
    whole = lesson.panel.locator(".tw-protocol .tw-fc-whole")
    assert T("没有分片", "No fragments") in whole.inner_text() and "choices[0].message.tool_calls" in whole.inner_text()
    assert lesson.panel.locator(".tw-protocol .tw-fc-piece").count() == 0
    assert json.loads(lesson.panel.locator(".tw-protocol .tw-fc-body pre").inner_text())["stream"] is False
    protocol = lesson.protocol()
    assert "tool_calls（1 个）" in protocol and '"name": "get_weather"' in protocol
    call = lesson.panel.locator(".tw-protocol .tw-fc-call").inner_text()
    assert 'get_weather({"city": "北京"})' in call
    assert T("随响应一起到", "came with the response") in call and T("到了就是完整的", "complete on arrival") in call


def test_streamed_a_call_arrives_in_fragments_and_parses_only_at_the_last(lesson):
    """勾上 stream=True 再运行：时间轴上一片一行，按到达的时刻排开。调用的第一片带着 index、id 和函数名，参数还是空的；
    后面几片只带 index 和几个字的参数。每一片旁边是参数拼到这一片为止的样子，和 json.loads 读它的结果：最后一片之前都是 ✗
    （读不出来，连要查哪个城市都还不知道），最后一片才是 ✓。拼好的调用写明由几片拼成、第几片到了才能执行它。"""
    streaming(lesson, True)
    lesson.run(WEATHER)
    rows = pieces(lesson)
    assert len(rows) >= 3 and [r["ms"] for r in rows] == sorted(r["ms"] for r in rows)
    first, rest = rows[0], rows[1:]
    assert re.fullmatch(r"tool_calls\[index=0 id=\S+ name=get_weather\]", first["which"]) and first["fragment"] == ""
    assert all(r["which"] == "tool_calls[index=0]" and r["fragment"] for r in rest)
    so_far = ""
    for row in rows:                                   # what the page says it read is what was received so far
        so_far += row["fragment"]
        assert row["so_far"] == so_far
    assert [r["closed"] for r in rows] == [False] * (len(rows) - 1) + [True]
    for row in rows[:-1]:
        assert row["parse"].startswith("✗ " + T("json.loads 读不出来", "json.loads fails")) and "北京\"" not in row["so_far"]
        with pytest.raises(ValueError):
            json.loads(row["so_far"])
    assert rows[-1]["parse"] == "✓ " + T("完整的 JSON", "complete JSON") and json.loads(rows[-1]["so_far"]) == {"city": "北京"}
    call = lesson.panel.locator(".tw-protocol .tw-fc-call").inner_text()
    assert T("由 {n} 片拼成；第 {k} 片", "Made of {n} fragments; only when fragment {k}").format(n=len(rows), k=len(rows)) in call
    assert T("才能执行它", "can it run") in call
    screenshot(lesson.page, "first-call-stream-1280")


def test_two_calls_are_assembled_apart_by_index(lesson):
    """问「北京和上海今天天气怎么样？」：两个调用的碎片 index 分别是 0 和 1，客户端按 index 把它们分开拼；
    每个调用在它自己的最后一片才变成 ✓。"""
    streaming(lesson, True)
    lesson.run(TWO_CITIES)
    rows = pieces(lesson)
    assert {r["index"] for r in rows} == {0, 1}
    for index, city in ((0, "北京"), (1, "上海")):
        mine = [r for r in rows if r["index"] == index]
        assert [r["closed"] for r in mine] == [False] * (len(mine) - 1) + [True]
        assert json.loads(mine[-1]["so_far"]) == {"city": city} and mine[0]["which"].startswith(f"tool_calls[index={index} id=")
    calls = lesson.panel.locator(".tw-protocol .tw-fc-call").all_inner_texts()
    assert len(calls) == 2 and '{"city": "北京"}' in calls[0] and '{"city": "上海"}' in calls[1]


def finish_shown(lesson) -> tuple[str, list[str], dict[str, str]]:
    """(what the finish_reason line says, the marked row's values, each value's explanation)."""
    finish = lesson.panel.locator(".tw-protocol .tw-fc-finish")
    rows = finish.locator("tr[data-reason]")
    meanings = dict(zip(rows.evaluate_all("rs => rs.map(r => r.dataset.reason)"),
                        [t.split("\t", 1)[-1] for t in rows.all_inner_texts()]))
    marked = finish.locator('tr[data-current="true"]').evaluate_all("rs => rs.map(r => r.dataset.reason)")
    return finish.locator(".tw-fc-came").inner_text(), marked, meanings


def test_finish_reason_says_why_the_model_stopped_and_every_value_is_explained(lesson):
    """时间线最后写着这次的 finish_reason 和它的意思：要调用工具时是 tool_calls（轮到你执行工具、把结果发回去）；
    问「你好」是 stop（一段文字回答，没有要调用的工具）。下面的表逐个解释它可能的每个值（length、content_filter，
    智谱的 sensitive、network_error……），这次收到的那一行标出来。"""
    streaming(lesson, True)
    lesson.run(WEATHER)
    came, marked, meanings = finish_shown(lesson)
    assert came.startswith("finish_reason = tool_calls") and "把结果发回去" in came and marked == ["tool_calls"]
    assert {"tool_calls", "stop", "length", "content_filter", "sensitive", "network_error"} <= set(meanings)
    assert "max_tokens" in meanings["length"] and all(meanings.values())
    lesson.run(HELLO)
    came, marked, _ = finish_shown(lesson)
    assert came.startswith("finish_reason = stop") and "没有要调用的工具" in came and marked == ["stop"]
    assert lesson.panel.locator(".tw-protocol .tw-fc-text").count() > 0          # the text arrived in fragments too
    assert lesson.panel.locator(".tw-protocol .tw-fc-piece").count() == 0


def test_a_small_max_tokens_cuts_the_answer_and_finish_reason_says_length(lesson):
    """在「⚙️ 模型设置」里把 max_tokens 调到 16，再问「你好」：回答写到一半就停了，finish_reason 是 length，
    顶上的结论是 ✂️。"""
    streaming(lesson, True)
    whole = lesson.run(HELLO)
    assert lesson.panel.locator(".tw-fc-came").inner_text().startswith("finish_reason = stop")
    answer = "".join(json.loads(cell) for cell in lesson.panel.locator(".tw-fc-text td:nth-child(4)").all_inner_texts())
    settings = lesson.page.get_by_text(T("⚙️ 模型设置", "⚙️ Model settings"))
    settings.click()
    limit = lesson.page.locator("#max-tokens input[type=number]")
    set_number(limit, "16")
    try:
        headline = lesson.run(HELLO)
        sent = json.loads(lesson.panel.locator(".tw-protocol .tw-fc-body pre").inner_text())
        assert sent.get("max_tokens") == 16, f"the run sent max_tokens={sent.get('max_tokens')!r}; the box shows " \
                                             f"{limit.input_value()!r}; the headline: {headline!r}"
        came, marked, _ = finish_shown(lesson)
        assert came.startswith("finish_reason = length") and marked == ["length"]
        assert headline.startswith("✂️") and "✅" not in headline and "max_tokens" in headline and headline != whole
        cut = "".join(json.loads(cell) for cell in lesson.panel.locator(".tw-fc-text td:nth-child(4)").all_inner_texts())
        assert cut and answer.startswith(cut) and len(cut) < len(answer)          # the same answer, stopped halfway
    finally:
        set_number(limit, "1024")
        settings.click()


def test_the_headline_of_a_requested_call_is_not_a_success(lesson):
    """模型要调用工具时，顶上的结论是 📨 而不是 ✅：这一课只问一次，工具没有执行。"""
    streaming(lesson, True)
    headline = lesson.run(WEATHER)
    assert headline.startswith("📨") and "✅" not in headline
    assert T("工具没有执行", "no tool ran") in headline and 'get_weather({"city": "北京"})' in headline
    assert "tool_result" not in lesson.protocol() and lesson.panel.locator(".tw-protocol .tw-final").count() == 0


def test_a_link_sets_the_stream_box_and_runs_its_question(browser, app_url):
    """Not a claim of the lesson: a teacher's link (lessons/deep_links.py) carries the stream=True box too."""
    with LessonPage(browser, app_url, "first_call", query="question=%E4%BD%A0%E5%A5%BD&stream=0&run=1") as page:
        page.panel.locator(".tw-protocol .tw-fc-whole").wait_for(timeout=WAIT)
        assert not page.panel.locator(".tw-fc-stream-option input[type=checkbox]").is_checked()
        assert page.panel.locator(".tw-question textarea").input_value() == HELLO
        page.panel.locator(".tw-status").filter(has_text="finish_reason").first.wait_for(timeout=WAIT)
        assert page.panel.locator(".tw-fc-came").inner_text().startswith("finish_reason = stop")


# What each claim turns on, in the Chinese lesson and in the English one.
CLAIM_WORDS = [("openai", "openai"), ("zhipuai", "zhipuai"), ("Key 从环境变量读", "key is read from the environment"),
               ("取消勾选 `stream=True`", "Untick `stream=True`"), ("没有分片", "no fragments"),
               ("`choices[0].message.tool_calls`", "`choices[0].message.tool_calls`"),
               ("`index`、`id` 和函数名", "`index`, its `id` and the function's name"), ("`json.loads`", "`json.loads`"),
               ("最后一片之前都是 ✗", "✗ before the last fragment"), ("最后一片才是 ✓", "✓ only at the last"),
               ("「北京和上海今天天气怎么样？」", "「北京和上海今天天气怎么样？」"), ("分别是 0 和 1", "`index` 0 and 1"),
               ("`tool_calls`", "`tool_calls`"), ("「你好」是 `stop`", "「你好」 (hello) gives `stop`"),
               ("`length`、`content_filter`", "`length`, `content_filter`"), ("max_tokens 调到 16", "max_tokens to 16"),
               ("是 `length`，顶上的结论是 ✂️", "is `length`, and the headline is ✂️"), ("📨 而不是 ✅", "📨, not ✅")]


def test_the_english_lesson_makes_the_same_claims():
    chinese = (ROOT / LESSONS["first_call"].texts.zh).read_text(encoding="utf-8")
    english = (ROOT / LESSONS["first_call"].texts.en).read_text(encoding="utf-8")
    assert [zh for zh, _ in CLAIM_WORDS if zh not in chinese] == []
    assert [en for _, en in CLAIM_WORDS if en not in english] == []
    assert chinese.count("**") == english.count("**")          # the same paragraphs, each named
