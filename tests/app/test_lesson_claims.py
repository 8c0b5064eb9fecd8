"""Each sentence of the lesson texts (react/lesson.md, registry/lesson.md, function_calling/lesson.md, mcp/lesson.md) that
says what will happen on screen, performed in the real page and checked: one page per lesson,
one test per claim, in the order the text makes them. Everything runs on the offline model.

Each claim is performed once, in Chinese. The English text (react/lesson.en.md and so on) makes the same
claims with the same behaviour: T(zh, en) writes what a claim looks for in both languages, and
test_english_claims.py checks the English as text (it is what the English page says). What the
course itself writes (the offline model, the tools' messages, the parsers' verdicts, the
registry's warnings) is Chinese in both."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from lessons.presets import WALKTHROUGH
from tests.app.harness import (LANGUAGE, PERFORMED, T, choose, code_text, example_name, lesson, lesson_titles, open_in,
                               rounds, set_code, set_number, tab, use_examples)

pytestmark = pytest.mark.browser
WAIT = 30_000
# The weather example's get_weather alone (Annotated descriptions, a Literal unit).
EXAMPLE = ("from typing import Annotated, Literal\nfrom tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"
           '@registry.tool("查询天气")\ndef weather_now(city: Annotated[str, "城市名，如 北京"],\n'
           '                unit: Annotated[Literal["c", "f"], "温度单位"] = "c") -> str:\n    return city\n')
HEADER = "from typing import Optional\nfrom tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"

FEATURES = (HEADER.replace("from typing", "from enum import Enum\nfrom typing")
            + '@registry.tool("类型表")\ndef kinds(a: str, b: int, c: float, d: bool, e: list, f: dict, g: str = "x") -> str:\n'
              '    return ""\n\n\n'
              '@registry.tool("可空")\ndef maybe(n: Optional[int] = None) -> str:\n    return ""\n\n\n'
              '@registry.tool("加法")\ndef add(a: int, b: int) -> int:\n    return a + b\n\n\n'
              'class Size(Enum):\n    S = "s"\n    L = "l"\n\n\n'
              '@registry.tool("尺码")\ndef sizes(size: Size, tags: list[str]) -> str:\n    return ""\n\n\n'
              'assert add(2, 3) == 5\n')
DESCRIPTIONS = (HEADER
                + '@registry.tool\ndef documented(city: str) -> str:\n    """查天气。\n\n    Args:\n'
                  '        city: 城市名\n    """\n    return ""\n\n\n'
                  '@registry.tool\ndef bare(city: str) -> str:\n    return ""\n\n\n'
                  'class Color:\n    def __init__(self, name):\n        self.name = name\n\n\n'
                  '@registry.tool("颜色")\ndef paint(color: Color) -> str:\n    return ""\n')


# ---------------------------------------------------------------- helpers


TITLES_EN = lesson_titles()


def run(panel, question: str | None = None):
    """Runs the panel's question (or `question`) and waits for this run's headline."""
    if question is not None:
        panel.locator(".tw-question textarea").fill(question)
    panel.get_by_role("tab", name=T("协议时间线", "Timeline")).click()
    panel.locator(".tw-protocol .tw-round").evaluate_all("els => els.forEach(e => e.dataset.old = '1')")
    panel.locator(".tw-run").click()
    panel.page.wait_for_function(
        """([root, counted]) => {
            const p = root.querySelector('.tw-protocol');
            const s = root.querySelector('.tw-status');
            return p && p.querySelector('.tw-round') && !p.querySelector('.tw-round[data-old]')
                && !p.querySelector(':scope > .tw-pause') && s && s.innerText.includes(counted)
                && !s.innerText.includes('⏳');
        }""", arg=[panel.element_handle(), T("轮，", "round(s), ")], timeout=WAIT)
    return panel.locator(".tw-status").first.inner_text()


def options_of(page, dropdown) -> list[str]:
    dropdown.locator("input").click()
    page.get_by_role("option").first.wait_for(timeout=WAIT)
    texts = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    dropdown.locator("input").blur()
    return texts


def timings(panel) -> list[tuple[int, int]]:
    """(start, finish) in ms of every call that ran in a batch, as the timeline writes them."""
    texts = panel.locator(".tw-protocol .tw-timing").all_text_contents()
    pattern = T(r"第 (\d+) ms 开始，第 (\d+) ms 结束", r"started at (\d+) ms, finished at (\d+) ms")
    return [tuple(int(n) for n in re.search(pattern, t).groups()) for t in texts]


def params_of(round_text: str) -> str:
    return round_text[round_text.index(T("参数", "request parameters")):]


def cost_numbers(panel) -> dict:
    panel.get_by_role("tab", name=T("模型收到什么 · tokens", "Model input · tokens")).click()
    view = panel.locator(".tw-costs")
    view.locator(".tw-cost-tools").wait_for(timeout=WAIT)
    numbers = {name: view.locator(f".tw-cost-{name}").inner_text() for name in ("tools", "input", "share")}
    numbers["text"] = view.inner_text()
    panel.get_by_role("tab", name=T("协议时间线", "Timeline")).click()
    return numbers


@pytest.fixture(scope="class", params=PERFORMED)
def lang(request):
    return request.param


@pytest.fixture(scope="class")
def page(browser, app_url, lang):
    LANGUAGE.lang = lang
    # Tall, so CodeMirror (which draws only the lines near the viewport) draws whole small schemas.
    try:
        watched = open_in(browser, app_url, lang, height=2400)
        yield watched.page
        assert watched.foreign_requests() == []
        watched.context.close()
    finally:
        LANGUAGE.lang = "zh"


# ---------------------------------------------------------------- react/lesson.md

class TestReactLesson:
    @pytest.fixture(scope="class")
    @classmethod
    def panel(cls, page):
        panel = lesson(page, "正则 ReAct")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        return panel

    def test_the_prompt_asks_for_the_bracket_format_and_sits_left_below_the_schema(self, panel):
        prompt = panel.locator(".tw-system-prompt")
        prompt.filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        assert "Action: 工具名[" in code_text(prompt)
        box, schema, run_button = (x.bounding_box() for x in
                                   (prompt, panel.locator(".tw-schema-json"), panel.locator(".tw-run")))
        assert box["x"] < run_button["x"] and box["y"] > schema["y"]

    def test_a_react_request_carries_no_tools_and_the_model_writes_the_bracket_format(self, panel):
        status = run(panel, "北京今天天气怎么样？")
        assert status.startswith("✅")
        first = rounds(panel)[0]
        assert T("tools（", "tools (") not in first and 'Action: get_weather[{"city": "北京"}]' in first
        assert "Observation:" in rounds(panel)[-1]
        assert panel.locator(".tw-protocol .tw-match .tw-g0").count() >= 1
        assert T("系统提示词（ReAct / JSON 模式不发送 tools", "the system prompt (ReAct / JSON mode send no tools"
                 ) in cost_numbers(panel)["text"]

    def test_the_request_stops_before_an_observation(self, panel):
        if not rounds(panel):    # run alone, with no run of the test before it on the page
            assert run(panel, "北京今天天气怎么样？").startswith("✅")
        assert '"stop": [\n    "Observation:"\n  ]' in params_of(rounds(panel)[0])

    def test_the_mistake_list_holds_only_what_the_approach_can_show(self, page, panel):
        react = options_of(page, panel.locator(".tw-mistake"))
        assert any(T("粗体", "bold") in o for o in react) and any(T("方括号写成圆括号", "parentheses") in o for o in react)
        # The list follows the approach in the page itself: opened at once, with the server not answering
        # yet, it holds only what JSON can show (an open list that shrank later would keep stale options).
        held, events = [], ("**/queue/join*", "**/run/predict*")
        for pattern in events:
            page.route(pattern, lambda route: held.append(route))
        try:
            panel.get_by_text(T("从文本中解析 JSON", "Parse JSON from text")).click()
            panel.locator(".tw-mistake input").click()
            options = page.get_by_role("option")
            options.first.wait_for(timeout=WAIT)
            expect(options.filter(has_text=re.compile(T("粗体|方括号", "bold|parentheses")))).to_have_count(0,
                                                                                                           timeout=WAIT)
            json_mode = options.all_inner_texts()
            page.keyboard.press("Escape")
        finally:
            for route in held:
                route.continue_()
            for pattern in events:
                page.unroute(pattern)
        assert any(T("编造 Observation", "invented Observation") in o for o in json_mode)
        panel.locator(".tw-system-prompt").filter(has_text='"tool": "工具名"').first.wait_for(timeout=WAIT)

    def test_json_from_text_finds_the_json_object(self, panel):
        status = run(panel, "北京今天天气怎么样？")
        assert status.startswith("✅")
        text = "".join(rounds(panel))
        assert T("从文本中找 JSON：找到了", "Finding JSON in the text: found") in text and T("正则解析", "Regex parse") not in text
        panel.get_by_text(T("正则 ReAct（Thought / Action / Observation）", "Regex ReAct (Thought / Action / Observation)")).click()
        panel.locator(".tw-system-prompt").filter(has_text="Action: 工具名[").first.wait_for(timeout=WAIT)

    def test_a_tolerated_bold_action_is_a_grey_note_not_a_failure(self, page, panel):
        choose(page, panel.locator(".tw-mistake"), re.compile(T("粗体", "bold")))
        status = run(panel, "北京今天天气怎么样？")
        assert status.startswith("✅") and T("改正", "corrected") not in status
        notes = panel.locator(".tw-protocol .tw-parse-note")
        assert notes.count() >= 1 and "粗体" in " ".join(notes.all_text_contents())
        assert panel.locator(".tw-protocol .tw-error").count() == 0
        assert all(T("匹配成功", "matched") in t for t in panel.locator(".tw-protocol .tw-parse-label").all_text_contents())

    def test_beside_ours_the_naive_regex_misses_or_misreads(self, page, panel):
        # The mistake chosen above (bold **Action:**): ours reads the action, the naive regex has no match.
        first = panel.locator(".tw-protocol details.tw-round").first
        assert T("正则解析：匹配成功 · 调用工具 (Action)", "Regex parse: matched · a tool call (Action)"
                 ) in first.locator(".tw-parse-label").text_content()
        naive = first.locator(".tw-naive-regex")
        assert "^Action: (\\w+)\\[(.*)\\]$" in naive.text_content() and T("没有匹配", "does not match") in naive.text_content()
        assert "tw-naive-regex-differs" in naive.get_attribute("class")
        for mistake, misread in ((T("编造 Observation", "invented Observation"), T("当成了最终回答", "for the final answer")),
                                (T("好几步", "several steps"), T("参数读成了", "read the arguments as"))):
            choose(page, panel.locator(".tw-mistake"), re.compile(mistake))
            assert run(panel, "北京今天天气怎么样？").startswith("✅")
            first = panel.locator(".tw-protocol details.tw-round").first
            assert T("匹配成功 · 调用工具 (Action)", "matched · a tool call (Action)") in first.locator(
                ".tw-parse-label").text_content()
            assert T("匹配到了错误的内容", "matched the wrong thing") in first.locator(".tw-naive-regex").text_content()
            assert misread in first.locator(".tw-naive-regex").text_content()
        # A well-formed reply: both read the same.
        choose(page, panel.locator(".tw-mistake"), T("不模拟（模型表现正常）", "None (the model behaves normally)"))
        run(panel, "北京今天天气怎么样？")
        assert T("朴素正则读出的结果相同", "the naive regex reads the same") in panel.locator(
            ".tw-protocol .tw-naive-regex").first.text_content()

    def test_broken_formats_match_neither_and_the_reason_goes_back_verbatim(self, page, panel):
        for mistake in ("Action Input", T("圆括号", "parentheses")):
            choose(page, panel.locator(".tw-mistake"), re.compile(mistake))
            status = run(panel, "北京今天天气怎么样？")
            first_round = panel.locator(".tw-protocol details.tw-round").first
            assert T("正则解析：没有匹配", "Regex parse: no match") in first_round.locator(".tw-parse-label").text_content()
            assert T("朴素正则也没有匹配", "the naive regex does not match either") in first_round.locator(
                ".tw-naive-regex").text_content()
            reason = first_round.locator(".tw-error").text_content().split(T("为什么没有匹配：", "why it did not match: "), 1)[1]
            said = reason.split('"', 1)[0]       # up to the first quote (escaped inside the JSON messages)
            assert len(said) > 20 and f"Observation: ❌ [格式错误] {said}" in rounds(panel)[1]
            assert status.startswith("✅") and T("第 2 轮改正了 1 次", "corrected 1 failed call(s) in round 2") in status

    def test_a_missing_action_line_says_why_and_the_model_rewrites(self, page, panel):
        choose(page, panel.locator(".tw-mistake"), re.compile(T("只有 Thought", "only Thought, no Action")))
        status = run(panel, "北京今天天气怎么样？")
        text = rounds(panel)
        assert T("没有匹配", "no match") in text[0] and T("为什么没有匹配", "why it did not match") in text[0]
        assert T("匹配成功", "matched") in text[1]
        assert status.startswith("✅") and T("第 2 轮改正了 1 次", "corrected 1 failed call(s) in round 2") in status

    def test_max_turns_stops_an_endless_model(self, page, panel):
        choose(page, panel.locator(".tw-mistake"), re.compile(T("停不下来", "endless")))
        status = run(panel, "北京今天天气怎么样？")
        assert status.startswith("⏹") and "max_turns" in status
        choose(page, panel.locator(".tw-mistake"), T("不模拟（模型表现正常）", "None (the model behaves normally)"))

    def test_the_envelope_makes_the_observation_a_fixed_json(self, page, panel):
        choose(page, panel.locator(".tw-mistake"), T("不模拟（模型表现正常）", "None (the model behaves normally)"))
        panel.locator(".tw-envelope input").check()
        assert run(panel, "北京今天天气怎么样？").startswith("✅")
        observation = rounds(panel)[1]
        assert 'Observation: {\\"status\\": \\"ok\\", \\"data\\": \\"北京' in observation
        assert '\\"error_code\\": null, \\"message\\": null}' in observation
        panel.locator(".tw-envelope input").uncheck()

    def test_the_token_view_counts_the_system_prompt(self, panel):
        run(panel, "北京今天天气怎么样？")
        numbers = cost_numbers(panel)
        assert int(numbers["tools"]) > 100 and int(numbers["input"]) > int(numbers["tools"])
        assert T("OpenAI cl100k_base", "OpenAI's cl100k_base") in numbers["text"] and T("离线模型按字数粗估", "rough estimate") in numbers["text"]


# ---------------------------------------------------------------- registry/lesson.md

class TestRegistryLesson:
    @pytest.fixture(scope="class")
    @classmethod
    def panel(cls, page):
        panel = lesson(page, "工具注册")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        return panel

    def schema_for(self, page, panel, source: str, *names: str) -> dict:
        """{name: tool} once the schema panel shows exactly the tools `names` (small sources: every line is drawn)."""
        set_code(page, panel.locator(".tw-editor"), source)
        schema = panel.locator(".tw-schema-json")
        schema.filter(has_text=f'"name": "{names[-1]}"').first.wait_for(timeout=WAIT)
        for _ in range(100):
            try:
                tools = json.loads(code_text(schema))
            except json.JSONDecodeError:   # drawn while CodeMirror was still updating
                tools = []
            if [t["function"]["name"] for t in tools] == list(names):
                return {t["function"]["name"]: t["function"] for t in tools}
            page.wait_for_timeout(100)
        raise AssertionError(f"the schema panel never showed {names}: "
                             f"{panel.locator('.tw-schema-status').first.inner_text()}")

    @pytest.fixture(scope="class")
    @classmethod
    def features(cls, page, panel):
        """One source for the claims about types (one extraction, not one per claim)."""
        return cls.schema_for(cls, page, panel, FEATURES, "kinds", "maybe", "add", "sizes")

    @pytest.fixture(scope="class")
    @classmethod
    def descriptions(cls, page, panel):
        """One source for the claims about descriptions and unknown types."""
        tools = cls.schema_for(cls, page, panel, DESCRIPTIONS, "documented", "bare", "paint")
        return tools, panel.locator(".tw-schema-status").first.inner_text()

    def test_the_default_examples_already_differ_from_the_naive_generator(self, panel):
        diff = panel.locator(".tw-diff-view")
        diff.filter(has_text=T("朴素 → 正确", "naive → correct")).first.wait_for(timeout=WAIT)
        summary = diff.locator(".tw-diff-summary").inner_text()
        assert "unit: string → string{c,f}" in summary and "days: string → integer" in summary
        assert "enum" not in code_text(panel.locator(".tw-naive"))
        # 左边是朴素做法，右边是 ToolRegistry.
        assert panel.locator(".tw-naive").bounding_box()["x"] < panel.locator(".tw-schema-json").bounding_box()["x"]

    def test_literal_becomes_an_enum_and_annotated_a_description(self, page, panel):
        weather = self.schema_for(page, panel, EXAMPLE, "weather_now")["weather_now"]["parameters"]
        assert weather["properties"]["unit"]["enum"] == ["c", "f"]
        assert weather["properties"]["city"]["description"].startswith("城市名")

    def test_the_type_map_and_required(self, features):
        params = features["kinds"]["parameters"]
        types = {name: prop["type"] for name, prop in params["properties"].items()}
        assert types == {"a": "string", "b": "integer", "c": "number", "d": "boolean", "e": "array",
                         "f": "object", "g": "string"}
        assert params["required"] == ["a", "b", "c", "d", "e", "f"]

    def test_optional_keeps_null(self, features):
        assert features["maybe"]["parameters"]["properties"]["n"]["type"] == ["integer", "null"]

    def test_the_decorated_function_is_returned_unchanged(self, features, panel):
        # The source ends with `assert add(2, 3) == 5`: had the decorator replaced add, importing it would fail.
        assert "add" in features and "✅" in panel.locator(".tw-schema-status").first.inner_text()

    def test_the_future_trap_turns_int_into_string_for_the_naive_generator(self, panel):
        panel.locator(".tw-trap").click()
        panel.locator(".tw-diff-view").filter(has_text="count: string → integer").first.wait_for(timeout=WAIT)

    def test_a_hand_written_schema_drifts_and_the_old_call_fails_only_when_made(self, page, panel):
        """改了函数忘了改 schema，模型就拿着旧参数调新函数，错误只在运行时出现。"""
        panel.locator(".tw-drift").click()
        schema = panel.locator(".tw-schema-json")
        schema.filter(has_text='"location"').first.wait_for(timeout=WAIT)
        source = code_text(panel.locator(".tw-editor"))
        assert "HAND_WRITTEN_SCHEMA" in source and '"city": {"type": "string"' in source    # the old name, by hand
        tools = json.loads(code_text(schema))
        assert [t["function"]["name"] for t in tools] == ["get_weather"]
        assert set(tools[0]["function"]["parameters"]["properties"]) == {"location", "unit"}
        # Nothing notices the drift before a call: the schema loads without a warning.
        status = panel.locator(".tw-schema-status").first.inner_text()
        assert "✅" in status and "city" not in status
        assert panel.locator(".tw-try-tool input").input_value() == "get_weather"
        content = panel.locator(".tw-try-content textarea")
        for arguments, answer in (('{"city": "北京"}', "❌ [参数错误]"), ('{"location": "北京"}', "北京今天")):
            set_code(page, panel.locator(".tw-try-args"), arguments)
            panel.locator(".tw-try-btn").click()
            page.wait_for_function("([e, a]) => e.value.startsWith(a)", arg=[content.element_handle(), answer],
                                   timeout=WAIT)
            if answer.startswith("❌"):
                failed = content.input_value()
                assert "未知参数 city（是不是想用 location？" in failed
                assert "error_code = invalid_arguments" in panel.locator(".tw-try-report").first.inner_text()
        assert panel.locator(".tw-try-report").first.inner_text().startswith(T("✅ 调用成功", "✅ The call succeeded"))

    def test_try_call_converts_and_reports(self, page, panel):
        panel.locator(".tw-reset").click()
        panel.locator(".tw-schema-json").filter(has_text="get_forecast").first.wait_for(timeout=WAIT)
        choose(page, panel.locator(".tw-try-tool"), "get_forecast")
        set_code(page, panel.locator(".tw-try-args"), '{"city": "北京", "days": "5"}')
        panel.locator(".tw-try-btn").click()
        report = panel.locator(".tw-try-report").first
        report.filter(has_text=T("类型转换", "Type conversions")).first.wait_for(timeout=WAIT)
        assert "days" in report.inner_text() and "5" in report.inner_text()
        set_code(page, panel.locator(".tw-try-args"), '{"days": 3}')
        panel.locator(".tw-try-btn").click()
        report.filter(has_text=T("调用失败", "The call failed")).first.wait_for(timeout=WAIT)
        content = panel.locator(".tw-try-content textarea").input_value()
        # 状态 + 结论 + 下一步: a label, what went wrong, what to do about it.
        assert content.startswith("❌ [") and "city" in content and "请" in content

    def test_try_call_says_which_json_is_not_an_object(self, page, panel):
        """Valid JSON that is not an object is reported as such, never as invalid JSON."""
        panel.locator(".tw-reset").click()
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        choose(page, panel.locator(".tw-try-tool"), "get_weather")
        report = panel.locator(".tw-try-report").first
        for typed, kind in (('"hello"', T('字符串 "hello"', 'the string "hello"')), ("42", T("数字 42", "the number 42")),
                            ("[1, 2]", T("数组 [1, 2]", "the array [1, 2]")), ("null", T("是 null", "is null"))):
            set_code(page, panel.locator(".tw-try-args"), typed)
            panel.locator(".tw-try-btn").click()
            report.filter(has_text=kind).first.wait_for(timeout=WAIT)
            text = report.inner_text()
            assert T("参数应是 JSON 对象", "must be a JSON object") in text and "error_code = invalid_json" in text
            assert "不是合法的 JSON" not in text and "not valid JSON" not in text
            assert "收到" in panel.locator(".tw-try-content textarea").input_value()     # what the model reads

    def try_call(self, page, panel, example_set: str, tool: str, arguments: str, answer: str) -> tuple[str, str]:
        """Try-calls `tool` of an example set; waits for the result that starts with `answer`."""
        use_examples(page, panel, example_set, tool)
        choose(page, panel.locator(".tw-try-tool"), tool)
        set_code(page, panel.locator(".tw-try-args"), arguments)
        panel.locator(".tw-try-btn").click()
        content = panel.locator(".tw-try-content textarea")
        page.wait_for_function("([e, a]) => e.value.startsWith(a)", arg=[content.element_handle(), answer],
                               timeout=WAIT)
        return panel.locator(".tw-try-report").first.inner_text(), content.input_value()

    def test_valid_arguments_are_not_permission_and_the_new_sets_behave(self, page, panel):
        report, content = self.try_call(page, panel, "转账与删除用户（Schema ≠ 授权）", "transfer_money",
                                        '{"payee": "张三", "amount": 8000}', "❌ [业务规则不允许]")
        assert "error_code = forbidden" in report and '"amount": 8000' in report     # the arguments were valid
        assert "单笔转账上限是 5000 元" in content
        report, content = self.try_call(page, panel, "异步工具（async def）", "get_air_quality", '{"city": "北京"}',
                                        "北京当前 AQI")
        assert report.startswith(T("✅ 调用成功", "✅ The call succeeded"))
        report, content = self.try_call(page, panel, "会超时的工具（timeout）", "get_traffic", '{"city": "北京"}',
                                        "❌ [超时]")
        assert "error_code = timeout" in report and "超过 0.8 秒没有返回" in content
        report, content = self.try_call(page, panel, "超长结果（截断）", "list_stores", '{"city": "上海"}', "[{")
        assert T("结果过长已截断", "Result too long, cut") in report and content.endswith("只保留了前 4000 个）")
        assert "原样回填" not in panel.locator(".tw-try-content").inner_text()
        use_examples(page, panel, "天气", "get_weather")

    def test_strict_makes_every_parameter_required_and_defaults_nullable(self, page, panel):
        self.schema_for(page, panel, EXAMPLE, "weather_now")
        panel.locator(".tw-strict input").check()
        panel.locator(".tw-schema-json").filter(has_text='"strict": true').first.wait_for(timeout=WAIT)
        weather = json.loads(code_text(panel.locator(".tw-schema-json")))[0]["function"]["parameters"]
        assert set(weather["required"]) == set(weather["properties"])
        assert "null" in weather["properties"]["unit"]["type"]
        panel.locator(".tw-strict input").uncheck()
        panel.locator(".tw-schema-json").filter(has_not_text='"strict": true').first.wait_for(timeout=WAIT)

    def test_a_duplicate_name_is_an_error(self, page, panel):
        source = HEADER + ('@registry.tool("a")\ndef twice(x: int) -> str:\n    return ""\n\n\n'
                           '@registry.tool("b", name="twice")\ndef other(x: int) -> str:\n    return ""\n')
        set_code(page, panel.locator(".tw-editor"), source)
        panel.locator(".tw-schema-status").filter(has_text="不能重复注册").first.wait_for(timeout=WAIT)

    def test_a_bare_decorator_uses_the_docstring_and_warns_without_one(self, descriptions):
        tools, status = descriptions
        assert tools["documented"]["description"] == "查天气。"
        assert tools["documented"]["parameters"]["properties"]["city"]["description"] == "城市名"
        assert "bare：没有描述" in status and "bare：参数 city 没有说明" in status

    def test_an_unknown_type_is_a_string_with_a_warning(self, descriptions):
        tools, status = descriptions
        assert tools["paint"]["parameters"]["properties"]["color"]["type"] == "string"
        assert "paint：参数 color 的类型 Color 没有对应的 JSON 类型" in status

    def test_list_items_enum_and_tool_names(self, page, panel, features):
        props = features["sizes"]["parameters"]["properties"]
        assert props["size"]["enum"] == ["s", "l"] and props["tags"]["items"] == {"type": "string"}
        set_code(page, panel.locator(".tw-editor"), HEADER + '@registry.tool("x", name="查 天气")\n'
                                                             'def f(x: int) -> str:\n    return ""\n')
        panel.locator(".tw-schema-status").filter(has_text="不合法").first.wait_for(timeout=WAIT)
        panel.locator(".tw-reset").click()
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)


# ---------------------------------------------------------------- function_calling/lesson.md

class TestFunctionCallingLesson:
    @pytest.fixture(scope="class")
    @classmethod
    def panel(cls, page):
        panel = lesson(page, "Function Calling")
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        return panel

    def test_the_handshake_is_labelled_and_the_raw_tool_calls_shown(self, panel):
        assert run(panel, "北京今天天气怎么样？").startswith("✅")
        text = "".join(rounds(panel))
        one, two, three = T("握手第一步", "Handshake step one"), T("握手第二步", "Handshake step two"), \
            T("握手第三步", "Handshake step three")
        assert one in text and two in text and three in text and "tool_call_id" in text
        panel.get_by_role("tab", name=T("原始 JSON", "Raw JSON")).click()
        second_step = text[text.index(two):text.index(three)]
        assert T("tool_calls（1 个）", "tool_calls (1)") in second_step and '"arguments": "{' in second_step
        assert T("原始响应体 raw", "raw response body") in second_step and '"finish_reason": "tool_calls"' in second_step
        assert '"type": "request"' in code_text(panel.locator(".tw-raw"))
        panel.get_by_role("tab", name=T("查看代码", "Code")).click()
        panel.locator(".tw-code").filter(has_text="from openai import OpenAI").first.wait_for(timeout=WAIT)

    def test_parallel_calls_in_one_round_or_one_per_round(self, panel):
        run(panel, "北京和上海今天天气怎么样？")
        first = rounds(panel)
        assert len(first) == 2 and T("调用 ", "calls ") + "get_weather, get_weather" in first[0]
        parallel = panel.get_by_label(T("允许并行调用 parallel_tool_calls", "Allow parallel calls parallel_tool_calls"))
        parallel.uncheck()
        run(panel)
        split = rounds(panel)
        assert len(split) == 3 and all(T("调用 ", "calls ") + "get_weather" in r and "get_weather, get_weather" not in r
                                       for r in split[:2])
        parallel.check()

    def test_parallel_calls_run_together_and_show_when(self, page, panel):
        use_examples(page, panel, "异步工具（async def）", "get_air_quality")
        assert run(panel, "北京和上海的空气质量怎么样？").startswith("✅")
        first = rounds(panel)[0]
        assert T("调用 ", "calls ") + "get_air_quality, get_air_quality" in first
        assert first.count(T("同时执行", "Ran together")) == 2
        (a_start, a_end), (b_start, b_end) = timings(panel)
        assert a_start < b_end and b_start < a_end          # the two intervals overlap
        assert panel.locator(".tw-protocol .tw-lane .tw-bar").count() == 2
        parallel = panel.get_by_label(T("允许并行调用 parallel_tool_calls", "Allow parallel calls parallel_tool_calls"))
        parallel.uncheck()
        run(panel)
        assert timings(panel) == [] and len(rounds(panel)) == 3
        parallel.check()

    def test_the_envelope_hands_the_model_a_fixed_json(self, page, panel):
        use_examples(page, panel, "天气", "get_weather")
        panel.locator(".tw-envelope input").check()
        assert run(panel, "北京今天天气怎么样？").startswith("✅")
        back = rounds(panel)[0].split(T("回填给模型的消息", "The message sent back to the model"), 1)[1]
        assert '"content": "{\\"status\\": \\"ok\\", \\"data\\": \\"北京' in back
        use_examples(page, panel, "转账与删除用户（Schema ≠ 授权）", "transfer_money")
        assert run(panel, "给张三转账 8000 元").startswith("⚠️")
        back = rounds(panel)[0].split(T("回填给模型的消息", "The message sent back to the model"), 1)[1]
        assert '{\\"status\\": \\"error\\", \\"data\\": null, \\"error_code\\": \\"forbidden\\"' in back
        panel.locator(".tw-envelope input").uncheck()
        use_examples(page, panel, "天气", "get_weather")

    def test_none_keeps_the_tools_but_no_call_is_made(self, page, panel):
        choose(page, panel.locator(".tw-tool-choice"), T("none（不许调用工具）", "none (no tool calls allowed)"))
        panel.locator(".tw-choice-note").filter(has_text=T("它是一个设置", "It is a setting")).first.wait_for(timeout=WAIT)
        run(panel, "北京今天天气怎么样？")
        text = rounds(panel)
        assert len(text) == 1 and T("tools（2 个）", "tools (2)") in text[0] and '"tool_choice": "none"' in params_of(text[0])
        assert T("握手第三步", "Handshake step three") not in text[0]
        final = panel.locator(".tw-protocol .tw-final").text_content()
        assert 'tool_choice="none"，不允许调用工具' in final and "没有调用任何工具" in final

    def test_a_forced_tool_is_forced_on_the_first_request_only(self, page, panel):
        choose(page, panel.locator(".tw-tool-choice"), T("强制调用 get_forecast", "force get_forecast"))
        panel.locator(".tw-choice-note").filter(has_text=T("强制只用在第一次请求", "It is forced on the first request only")
                                                ).first.wait_for(timeout=WAIT)
        run(panel, "北京今天天气怎么样？")
        first, second = rounds(panel)[:2]
        assert T("调用 ", "calls ") + "get_forecast" in first and '"name": "get_forecast"' in params_of(first)
        assert '"tool_choice": null' in params_of(second)
        final = panel.locator(".tw-protocol .tw-final").text_content()
        assert "get_forecast(city=北京)" in final and "get_weather" not in final

    def test_required_forces_a_call_in_the_first_round(self, page, panel):
        choose(page, panel.locator(".tw-tool-choice"), T("required（第一轮必须调用）", "required (must call in the first round)"))
        run(panel, "北京今天天气怎么样？")
        first, second = rounds(panel)[:2]
        assert '"tool_choice": "required"' in params_of(first) and T("调用 ", "calls ") + "get_weather" in first
        assert '"tool_choice": null' in params_of(second)
        choose(page, panel.locator(".tw-tool-choice"), T("auto（模型自己决定）", "auto (the model decides)"))

    def test_glm_is_warned_about(self, page, panel):
        settings = T("⚙️ 模型设置", "⚙️ Model settings")
        page.get_by_text(settings).click()
        page.locator("#provider").wait_for(state="visible")
        choose(page, page.locator("#provider"), T("智谱 GLM", "Zhipu GLM"))
        only = T("只支持", "supports only")
        panel.locator(".tw-choice-note").filter(has_text=only).first.wait_for(timeout=WAIT)
        choose(page, page.locator("#provider"), T("离线演示模型", "Offline demo model"))
        panel.locator(".tw-choice-note").filter(has_not_text=only).first.wait_for(timeout=WAIT)
        page.get_by_text(settings).click()

    def test_only_native_mistakes_are_offered(self, page, panel):
        offered = options_of(page, panel.locator(".tw-mistake"))
        assert any(T("参数类型写错", "wrong argument type") in o for o in offered)
        assert not any("Observation" in o or "粗体" in o or "Action" in o for o in offered)

    def test_an_error_travels_back_and_the_model_corrects_it(self, page, panel):
        choose(page, panel.locator(".tw-mistake"), re.compile(T("参数类型写错", "wrong argument type")))
        status = run(panel, "北京今天天气怎么样？")
        first = rounds(panel)[0]
        assert "❌ [参数错误]" in first and '"role": "tool"' in first
        assert status.startswith("✅") and T("模型在第 2 轮改正了 1 次失败的调用",
                                             "the model corrected 1 failed call(s) in round 2") in status

    def test_a_tolerated_quirk_is_not_a_red_problem(self, page, panel):
        choose(page, panel.locator(".tw-mistake"), re.compile(T("代码块", "code fence")))
        status = run(panel, "北京今天天气怎么样？")
        assert status.startswith("✅") and T("改正", "corrected") not in status
        assert panel.locator(".tw-protocol .tw-call-note").count() >= 1
        assert panel.locator(".tw-protocol .tw-call-problem").count() == 0
        choose(page, panel.locator(".tw-mistake"), re.compile(T("数字写成字符串", "numbers as strings")))
        run(panel, "杭州未来 5 天的天气预报")
        assert T("类型转换", "Type conversion") in "".join(rounds(panel))
        assert panel.locator(".tw-protocol .tw-call-problem").count() == 0
        choose(page, panel.locator(".tw-mistake"), T("不模拟（模型表现正常）", "None (the model behaves normally)"))

    def test_a_preset_says_what_it_wants_and_the_headline_checks_it(self, page, panel):
        """每个预设问题都写着它要什么，✅ 只在做到了时才出现。选 tool_choice「强制调用 get_weather」再问"北京明天会下雨吗？"：
        结论是 ⚠️，写明这个问题要调用 get_forecast，调用的却是 get_weather。"""
        assert run(panel, "北京明天会下雨吗？").startswith("✅")
        assert T("调用 ", "calls ") + "get_forecast" in rounds(panel)[0]
        choose(page, panel.locator(".tw-tool-choice"), T("强制调用 get_weather", "force get_weather"))
        try:
            status = run(panel, "北京明天会下雨吗？")
        finally:
            choose(page, panel.locator(".tw-tool-choice"), T("auto（模型自己决定）", "auto (the model decides)"))
        assert status.startswith("⚠️ " + T('这个问题要调用 get_forecast(city="北京" / "北京市")，调用的却是 get_weather',
                                           'This question wants get_forecast(city="北京" / "北京市"), but what was '
                                           'called is get_weather')) and "✅" not in status

    def test_a_failed_result_answered_anyway_is_a_warning(self, page, panel):
        choose(page, panel.locator(".tw-example-set"), example_name("工资/员工档案"))
        panel.locator(".tw-schema-json").filter(has_text="calculate_salary").first.wait_for(timeout=WAIT)
        status = run(panel, WALKTHROUGH)
        assert status.startswith("⚠️") and "✅" not in status
        choose(page, panel.locator(".tw-example-set"), example_name("天气"))
        panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)

    def test_a_greeting_answered_without_a_tool_is_not_a_check_mark(self, panel):
        status = run(panel, "你好")
        assert status.startswith("💬") and "✅" not in status
        assert T("不来自工具", "does not come from a tool") in status and T("可能是编的", "may be invented") in status
        assert T("由你判断", "you judge") in status
        assert T("握手第三步", "Handshake step three") not in "".join(rounds(panel))

    def test_a_small_max_tokens_cuts_the_answer_and_says_length(self, page, panel):
        page.get_by_text(T("⚙️ 模型设置", "⚙️ Model settings")).click()
        limit = page.locator("#max-tokens input[type=number]")
        set_number(limit, "16")
        try:
            status = run(panel, "北京今天天气怎么样？")
            last = rounds(panel)[-1]
            assert status.startswith("✂️") and "✅" not in status and T("截断", "cut off") in status
            assert '"finish_reason": "length"' in last and "被截断" in last
        finally:
            set_number(limit, "1024")
            page.get_by_text(T("⚙️ 模型设置", "⚙️ Model settings")).click()
        assert run(panel, "北京今天天气怎么样？").startswith("✅")

    def test_step_mode_pauses_before_the_tool(self, panel):
        panel.locator(".tw-question textarea").fill("北京今天天气怎么样？")
        panel.locator(".tw-step-btn").click()
        panel.locator(".tw-stepbox").first.wait_for(state="visible", timeout=WAIT)
        assert "北京" in code_text(panel.locator(".tw-step-args"))
        panel.locator(".tw-finish").click()
        panel.locator(".tw-stepbox").first.wait_for(state="hidden", timeout=WAIT)

    def test_a_hand_written_result_is_said_over_the_answer(self, panel):
        """「单步」……或者干脆手写工具结果，看模型怎么接着说：顶上的结论说明结果是你手写的，不是工具的回答。"""
        panel.locator(".tw-question textarea").fill("北京今天天气怎么样？")
        panel.locator(".tw-step-btn").click()
        panel.locator(".tw-stepbox").first.wait_for(state="visible", timeout=WAIT)
        panel.locator(".tw-step-result textarea").fill("北京：暴雪，零下 20℃")
        panel.locator(".tw-continue").click()
        panel.locator(".tw-stepbox").first.wait_for(state="hidden", timeout=WAIT)
        status = panel.locator(".tw-status").filter(has_text=T("手写", "by hand")).first
        status.wait_for(timeout=WAIT)
        text = status.inner_text()
        assert text.startswith("✍️") and "✅" not in text
        assert T("回答用的是你手写的结果（第 1 轮 get_weather：工具没有运行）",
                 "The answer uses a result you wrote by hand (get_weather in round 1: the tool did not run)") in text

    def test_step_mode_with_parallel_calls_pauses_for_each_then_runs_them_together(self, panel):
        panel.locator(".tw-question textarea").fill("北京和上海今天天气怎么样？")
        panel.locator(".tw-step-btn").click()
        panel.locator(".tw-stepbox").first.wait_for(state="visible", timeout=WAIT)
        assert "北京" in code_text(panel.locator(".tw-step-args"))
        panel.locator(".tw-continue").click()
        panel.locator(".tw-step-args").filter(has_text="上海").first.wait_for(timeout=WAIT)
        # Second pause: the first call has not run yet either.
        assert panel.locator(".tw-protocol .tw-call .tw-pause").count() == 2
        panel.locator(".tw-continue").click()
        panel.locator(".tw-stepbox").first.wait_for(state="hidden", timeout=WAIT)
        panel.locator(".tw-status").filter(has_text="✅").first.wait_for(timeout=WAIT)
        assert len(timings(panel)) == 2

    def test_the_new_example_sets_refuse_time_out_and_clip(self, page, panel):
        use_examples(page, panel, "转账与删除用户（Schema ≠ 授权）", "transfer_money")
        status = run(panel, "给张三转账 8000 元")
        assert status.startswith("⚠️") and "✅" not in status
        # The tool's own rule refused a valid call: the headline names it and does not blame the model.
        assert T("工具 transfer_money 按自己的业务规则拒绝了调用（参数本身没有错）",
                 "The tool transfer_money refused the call by its own business rule (the arguments were valid)") in status
        assert T("模型放弃", "gave up") not in status
        assert "❌ [业务规则不允许] 单笔转账上限是 5000 元" in rounds(panel)[0]
        use_examples(page, panel, "会超时的工具（timeout）", "get_traffic")
        status = run(panel, "北京现在的路况怎么样？")
        assert status.startswith("⚠️") and "❌ [超时] get_traffic 超过 0.8 秒没有返回" in rounds(panel)[0]
        # A slow tool is stopped at the time limit: the headline says so and does not blame the model.
        assert T("get_traffic 运行到了限额", "get_traffic was stopped at a limit") in status
        assert T("模型放弃", "gave up") not in status
        use_examples(page, panel, "超长结果（截断）", "list_stores")
        assert run(panel, "列出上海的全部门店").startswith("✅")
        clipped = panel.locator(".tw-protocol .tw-clipped")
        assert clipped.count() == 1 and T("结果过长已截断", "Result too long, cut") in clipped.text_content()
        assert T("前 4000 个", "only the first 4000") in clipped.text_content()
        assert "只保留了前 4000 个）" in rounds(panel)[0]
        run(panel, "上海的前 5 家门店")
        assert panel.locator(".tw-protocol .tw-clipped").count() == 0
        use_examples(page, panel, "天气", "get_weather")

    def test_the_tools_json_is_counted_and_takes_most_of_the_input(self, panel):
        run(panel, "北京今天天气怎么样？")
        numbers = cost_numbers(panel)
        assert T("请求里的 tools 参数", "the request's tools parameter") in numbers["text"]
        assert '"name":"get_weather"' in numbers["text"]
        assert int(numbers["tools"]) > 100 and int(numbers["share"].rstrip("%")) > 50

    def test_one_call_repeated_until_the_context_overflows_is_named(self, page, panel):
        """「模拟模型失误」选「原地打转」，问"北京今天天气怎么样？"：一个回答里同一个调用写了三十多遍，写到 max_tokens 才停
        （调大 max_tokens 没有用）；全部执行，每一轮都这样，第 3 轮的请求超出了服务端的上下文，被拒收。结论是 ❌：对话超出了
        上下文、🔁 同一个调用重复了几十次，和时间线一样是 3 轮；不让你去查消息格式。
        The class's last test: its sixty-odd tool calls use much of one session's sandbox starts for a minute."""
        choose(page, panel.locator(".tw-mistake"), re.compile(T("原地打转", "going round")))
        try:
            status = run(panel, "北京今天天气怎么样？")
        finally:
            choose(page, panel.locator(".tw-mistake"), T("不模拟（模型表现正常）", "None (the model behaves normally)"))
        shown = rounds(panel)
        assert status.startswith("❌ " + T("对话超出了服务端的上下文长度，第 3 轮的请求被拒收了",
                                           "The conversation outgrew the server's context: the request of round 3 "
                                           "was refused"))
        assert status.count("🔁") == 1 and T('同一个调用 get_weather(city="北京") 重复了',
                                              'one call, get_weather(city="北京"), was made') in status
        assert T("：3 轮，", ": 3 round(s), ") in status and len(shown) == 3
        assert "GLM" not in status and "max_tokens" not in status
        assert "调大 max_tokens 没有用" in shown[0] and '"finish_reason": "length"' in shown[0]
        assert "请求超出了模型的上下文长度" in shown[2] and "服务端的上下文只有 4096 个" in shown[2]
        assert T("沙箱", "sandbox") not in status          # every call ran: none was refused on the way


# ---------------------------------------------------------------- mcp/lesson.md

AUTHORIZATION_SET = "转账与删除用户（Schema ≠ 授权）"
# The lesson's step 8: a source with one more line at its end, which raises at import.
DIES_AT_IMPORT = ("from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"
                  '@registry.tool("回声")\ndef echo(text: str) -> str:\n    return text\n\n\n'
                  'raise RuntimeError("服务器不想启动")\n')


def same() -> str:
    return T("：inputSchema 与注册表的 parameters 完全相同", ": inputSchema is exactly the registry's parameters")


def request(method: str) -> str:
    return T("请求 ", "request ") + method


def response(method: str) -> str:
    return T("响应 ", "response ") + method


def rpc_json(panel, head: str, round_index: int = 0):
    """The body (params / result / error) of the first JSON-RPC message whose head has `head`, in a round."""
    message = panel.locator(".tw-protocol details.tw-round").nth(round_index).locator(".tw-rpc").filter(
        has=panel.page.locator(".tw-rpc-head", has_text=head)).first
    return json.loads(message.locator("pre").first.text_content())


def sent_tools(panel, round_index: int = 0):
    step = panel.locator(".tw-protocol details.tw-round").nth(round_index).locator(".tw-step").filter(has_text="①")
    return json.loads(step.locator("details").filter(has_text=T("tools（", "tools (")).locator("pre").first.text_content())


def compared(panel) -> str:
    return panel.locator(".tw-mcp-compare").first.inner_text()


def wait_compared(panel, text: str):
    """Waits until the comparison under the schema says `text`; a timeout says what it and the schema's status said."""

    try:
        expect(panel.locator(".tw-mcp-compare").first).to_contain_text(text, timeout=WAIT)
    except AssertionError as missing:
        status = panel.locator(".tw-schema-status").first.inner_text(timeout=1000)
        source = panel.locator(".tw-editor .cm-content").inner_text(timeout=1000)
        raise AssertionError(f"{missing}\nschema status: {status}\nsource: {source}") from None


class TestMcpLesson:
    @pytest.fixture(scope="class")
    @classmethod
    def panel(cls, page):
        panel = tab(page, "MCP")
        wait_compared(panel, T("完全相同", "exactly"))
        return panel

    def test_the_tools_live_in_a_server_and_the_two_sides_talk_json_rpc(self, panel):
        """MCP 让工具住在另一个进程里：工具在 MCP 服务器上，循环是 MCP 客户端，两边用一条条 JSON-RPC 消息说话。"""
        assert run(panel, "北京今天天气怎么样？").startswith("✅")
        text = "".join(rounds(panel))
        assert T("→ 客户端发给服务器", "→ client to server") in text and T("← 服务器发给客户端", "← server to client") in text
        assert rpc_json(panel, request("initialize"))["clientInfo"]["name"] == "tool-workshop-loop"
        heads = panel.locator(".tw-protocol .tw-rpc-head").all_text_contents()
        assert all(re.search(r"@ \d+ ms", h) for h in heads) and len(heads) >= 7
        assert [h for h in heads if "id=" in h and "initialize" in h][0].count("id=0") == 1

    def test_the_server_is_the_course_server_and_the_answer_is_the_function_calling_one(self, page, panel):
        """服务器是 code/mcp_server.py，和工具一样在沙箱里运行（页面顶上写着有哪些隔离层），加载的是编辑器里的源码；
        客户端是 code/mcp_client_loop.py，
        里面的循环还是上一课的 Function Calling 循环，问同一个问题，得到同样的回答。"""
        run(panel, "北京今天天气怎么样？")
        assert rpc_json(panel, response("initialize"))["serverInfo"]["name"] == "tool-workshop"
        over_mcp = panel.locator(".tw-protocol .tw-final").text_content()
        notice = page.locator("#sandbox-notice").inner_text()
        assert T("工具代码在一次性的隔离进程中运行", "Tool code runs in single-use isolated processes") in notice and "seccomp" in notice and "Landlock" in notice
        said = rpc_json(panel, response("tools/list"))["tools"][0]["description"]
        assert said == "查询指定城市今天的天气（天气、气温、湿度）。用户问“某地天气怎么样”“冷不冷”时使用"   # the editor's source
        direct = tab(page, "Function Calling")
        direct.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=WAIT)
        run(direct, "北京今天天气怎么样？")
        assert direct.locator(".tw-protocol .tw-final").text_content() == over_mcp
        tab(page, "MCP")

    def test_the_server_lists_its_tools_first(self, panel):
        """点「运行」，第 1 轮最上面先是 initialize 握手，接着是 tools/list，响应里是服务器的全部工具。"""
        run(panel, "北京今天天气怎么样？")
        first = rounds(panel)[0]
        assert first.index(request("initialize")) < first.index(response("initialize")) \
            < first.index(request("tools/list")) < first.index(response("tools/list")) < first.index("①")
        listed = rpc_json(panel, response("tools/list"))["tools"]
        assert [t["name"] for t in listed] == ["get_weather", "get_forecast"]

    def test_the_listed_tools_are_the_tools_sent_to_the_model(self, panel):
        """发给模型的 tools 就是 tools/list 里的工具，inputSchema 原样成为 parameters。"""
        run(panel, "北京今天天气怎么样？")
        listed, sent = rpc_json(panel, response("tools/list"))["tools"], sent_tools(panel)
        assert [t["function"]["name"] for t in sent] == [t["name"] for t in listed]
        assert [t["function"]["parameters"] for t in sent] == [t["inputSchema"] for t in listed]

    def test_each_tool_call_becomes_a_tools_call(self, panel):
        """调用框里能看到这次请求的 name 和 arguments，以及服务器的响应。"""
        run(panel, "北京和上海今天天气怎么样？")
        boxes = panel.locator(".tw-protocol details.tw-round").first.locator(".tw-call")
        assert boxes.count() == 2
        for box, city in zip(boxes.all(), ("北京", "上海")):
            sent = json.loads(box.locator(".tw-rpc").filter(has_text=request("tools/call")).locator("pre").first
                                 .text_content())
            assert sent == {"name": "get_weather", "arguments": {"city": city}}
            answer = box.locator(".tw-rpc").filter(has_text=response("tools/call")).locator("pre").first.text_content()
            assert city in json.loads(answer)["content"][0]["text"]

    def test_a_failure_is_an_is_error_result_fed_back_as_a_tool_message(self, page, panel):
        """选示例「转账与删除用户（Schema ≠ 授权）」，问"给张三转账 8000 元"。工具拒绝了，响应里的 isError: true
        标成红色，这段文字照样以 role: "tool" 的消息回到模型，顶上的结论是 ⚠️。"""
        use_examples(page, panel, AUTHORIZATION_SET, "transfer_money")
        assert run(panel, "给张三转账 8000 元").startswith("⚠️")
        failed = panel.locator(".tw-protocol .tw-rpc.tw-rpc-failed")
        assert failed.count() == 1 and "isError: true" in failed.text_content()    # in round 1, folded
        assert failed.evaluate("e => getComputedStyle(e).borderLeftColor") == "rgb(220, 38, 38)"
        assert json.loads(failed.locator("pre").first.text_content())["isError"] is True
        back = rounds(panel)[0].split(T("回填给模型的消息", "The message sent back to the model"), 1)[1]
        assert '"role": "tool"' in back and "单笔转账上限是 5000 元" in back

    def test_a_request_that_cannot_stand_is_a_protocol_error_and_the_model_is_told(self, page, panel):
        """在「模拟模型失误」里选「【出错】调用不存在的工具」，再问"北京今天天气怎么样？"。服务器没有这个工具，tools/call 的响应
        不是结果，而是 JSON-RPC 错误 -32602（标着"协议层出错"，里面没有 isError）。……这里的客户端替模型写一条
        "没有这个工具"的结果，下一轮模型就改用 get_weather。"""
        use_examples(page, panel, "天气", "get_weather")
        choose(page, panel.locator(".tw-mistake"), re.compile(re.escape(T("【出错】调用不存在的工具", "【error】unknown tool"))))
        try:
            run(panel, "北京今天天气怎么样？")
            first, second = rounds(panel)[:2]
            failed = panel.locator(".tw-protocol details.tw-round").first.locator(".tw-rpc.tw-rpc-failed")
            assert failed.count() == 1
            assert T("协议层出错", "protocol error") in failed.text_content() and "isError" not in failed.text_content()
            assert json.loads(failed.locator("pre").first.text_content())["code"] == -32602
            back = first.split(T("回填给模型的消息", "The message sent back to the model"), 1)[1]
            assert '"role": "tool"' in back and "没有名为" in back and "get_weather" in back
            sent = json.loads(panel.locator(".tw-protocol details.tw-round").nth(1).locator(".tw-rpc")
                              .filter(has_text=request("tools/call")).locator("pre").first.text_content())
            assert sent["name"] == "get_weather" and response("tools/call") in second
        finally:
            choose(page, panel.locator(".tw-mistake"), T("不模拟（模型表现正常）", "None (the model behaves normally)"))

    def test_the_same_schema_and_what_fastmcp_derives(self, page, panel):
        """左边每个工具都有一行 ✅，说 tools/list 里的 inputSchema 和上一课注册表生成的 parameters 完全相同。
        旁边的对照是 FastMCP 用 pydantic 从同一个函数自己推出的 schema：多了 title 键，参数的说明丢了，
        也没有 additionalProperties: false。"""
        use_examples(page, panel, AUTHORIZATION_SET, "transfer_money")
        wait_compared(panel, "delete_user")
        text = compared(panel)
        for name in ("transfer_money", "delete_user"):
            assert f"✅ {name}" + same() in text
        assert T("【title 键】参数 payee 的 title：注册表 （没有），FastMCP \"Payee\"",
                 "[title key] parameter payee, title: registry (none), FastMCP \"Payee\"") in text
        assert T("【描述】参数 payee 的 description：注册表 \"收款人姓名，如 张三\"，FastMCP （没有）",
                 "[description] parameter payee, description: registry \"收款人姓名，如 张三\", FastMCP (none)") in text
        assert T("根上的 additionalProperties：注册表 false，FastMCP （没有）",
                 "at the root, additionalProperties: registry false, FastMCP (none)") in text
        fastmcp = code_text(panel.locator(".tw-mcp-fastmcp"))
        first_input = fastmcp[fastmcp.index('"inputSchema"'):fastmcp.index('"outputSchema"')]
        assert '"title": "Payee"' in first_input and "additionalProperties" not in first_input
        listed = code_text(panel.locator(".tw-mcp-listed"))
        assert '"inputSchema"' in listed and '"additionalProperties": false' in listed
        left, right = (panel.locator(f".tw-mcp-{name}").bounding_box() for name in ("listed", "fastmcp"))
        assert left["x"] + left["width"] <= right["x"]                        # side by side, as the panel says
        assert T("左边是课程的服务器（code/mcp_server.py 的 mcp_tool）在 tools/list 里列出的一项",
                 "on the left, the item the course's server (mcp_tool in code/mcp_server.py) lists in tools/list") in text

    def test_annotations_are_shown_and_can_be_the_default_rules(self, page, panel):
        """每个工具后面写着它的注解，readOnlyHint 是"只读"，destructiveHint 是"会删改"。勾选「用工具注解作为默认规则」
        后问"删除用户 42"：delete_user 标了 destructiveHint，运行停下来等你批准或拒绝；天气示例的工具都标了
        readOnlyHint，直接执行；去掉 get_weather 的 read_only=True，它没有注解，也先问你。
        （复选框的说明：其余的也先问你。）"""
        use_examples(page, panel, AUTHORIZATION_SET, "transfer_money")
        assert "delete_user" + same() + T("；注解：会删改 destructiveHint", "; annotations: destructive destructiveHint") \
            in compared(panel)
        panel.locator(".tw-mcp-annotations input").check()
        try:
            panel.locator(".tw-question textarea").fill("删除用户 42")
            panel.locator(".tw-run").click()
            panel.locator(".tw-ask").first.wait_for(state="visible", timeout=WAIT)
            assert "delete_user" in panel.locator(".tw-ask-title").first.inner_text()
            preview = json.loads(code_text(panel.locator(".tw-ask-preview")))
            assert preview == {"method": "tools/call", "params": {"name": "delete_user", "arguments": {"user_id": "42"}}}
            assert request("tools/call") not in "".join(rounds(panel))           # held back: nothing sent yet
            panel.locator(".tw-deny").click()
            panel.locator(".tw-ask").first.wait_for(state="hidden", timeout=WAIT)
            panel.locator(".tw-status").filter(has_text=T("轮，", "round(s), ")).first.wait_for(timeout=WAIT)
            assert request("tools/call") not in "".join(rounds(panel)) and "用户没有说明理由" in "".join(rounds(panel))
            use_examples(page, panel, "天气", "get_weather")
            assert "get_weather" + same() + T("；注解：只读 readOnlyHint", "; annotations: read-only readOnlyHint") in compared(panel)
            assert run(panel, "北京今天天气怎么样？").startswith("✅")
            assert not panel.locator(".tw-ask").first.is_visible()
            source = code_text(panel.locator(".tw-editor"))
            unmarked = source.replace('时使用", read_only=True)\ndef get_weather', '时使用")\ndef get_weather')
            assert unmarked != source
            set_code(page, panel.locator(".tw-editor"), unmarked)
            wait_compared(panel, "get_weather" + same() + T("；注解：没有注解", "; annotations: no annotations"))
            panel.locator(".tw-run").click()
            panel.locator(".tw-ask").first.wait_for(state="visible", timeout=WAIT)
            assert "get_weather" in panel.locator(".tw-ask-title").first.inner_text()
            panel.locator(".tw-approve").click()
            panel.locator(".tw-status").filter(has_text="✅").first.wait_for(timeout=WAIT)
        finally:
            panel.locator(".tw-mcp-annotations input").uncheck()
            panel.locator(".tw-reset").click()

    def test_a_hint_is_not_a_guarantee(self, page, panel):
        """把 delete_user 的装饰器改成 read_only=True 再问一次，它就不再问你，直接删了。服务器怎么描述自己都可以：
        注解是它的自我介绍，不是授权。"""
        use_examples(page, panel, AUTHORIZATION_SET, "transfer_money")
        source = code_text(panel.locator(".tw-editor"))
        lying = source.replace('时使用", read_only=False, destructive=True)\ndef delete_user',
                               '时使用", read_only=True)\ndef delete_user')
        assert lying != source
        set_code(page, panel.locator(".tw-editor"), lying)
        wait_compared(panel, "delete_user" + same() + T("；注解：只读", "; annotations: read-only"))
        panel.locator(".tw-mcp-annotations input").check()
        try:
            assert run(panel, "删除用户 42").startswith("✅")
            assert not panel.locator(".tw-ask").first.is_visible()
            assert "已删除用户 42" in panel.locator(".tw-protocol .tw-call").first.text_content()
        finally:
            panel.locator(".tw-mcp-annotations input").uncheck()
            panel.locator(".tw-reset").click()

    def test_a_server_that_cannot_be_reached_is_a_failure(self, page, panel):
        """服务器加载源码时出错，initialize 就得不到响应。顶上的结论是 ❌，写着服务器自己报的错，模型一次也没被问到。"""
        set_code(page, panel.locator(".tw-editor"), DIES_AT_IMPORT)
        panel.locator(".tw-schema-status").filter(has_text="服务器不想启动").first.wait_for(timeout=WAIT)
        panel.locator(".tw-question textarea").fill("回声一下你好")
        panel.locator(".tw-run").click()
        status = panel.locator(".tw-status").filter(has_text=T("MCP 服务器没有连上", "The MCP server was not reached")).first
        status.wait_for(timeout=WAIT)
        text = status.inner_text()
        assert text.startswith("❌") and "✅" not in text and "第 11 行" in text and "RuntimeError: 服务器不想启动" in text
        shown = "".join(rounds(panel))
        assert request("initialize") in shown and response("initialize") not in shown and "①" not in shown
        answer = panel.locator(".tw-protocol .tw-rpc.tw-rpc-failed").filter(has_text="initialize").first
        assert T("JSON-RPC 错误", "JSON-RPC error") in answer.text_content()
        assert "第 11 行" in json.loads(answer.locator("pre").first.text_content())["message"]
        use_examples(page, panel, "天气", "get_weather")

    def test_step_export_and_import_as_on_the_other_tabs(self, page, panel, tmp_path):
        """单步暂停时，这次的 tools/call 还没有发出；导入的会话回放时，JSON-RPC 消息也在。"""
        panel.locator(".tw-question textarea").fill("北京今天天气怎么样？")
        panel.locator(".tw-step-btn").click()
        panel.locator(".tw-stepbox").first.wait_for(state="visible", timeout=WAIT)
        paused = "".join(rounds(panel))
        assert response("tools/list") in paused and request("tools/call") not in paused and T("尚未执行", "Not run yet") in paused
        panel.locator(".tw-finish").click()
        panel.locator(".tw-stepbox").first.wait_for(state="hidden", timeout=WAIT)
        panel.locator(".tw-status").filter(has_text="✅").first.wait_for(timeout=WAIT)
        assert request("tools/call") in "".join(rounds(panel))
        panel.get_by_role("tab", name=T("导出/导入", "Export/import")).click()
        panel.locator(".tw-export").click()
        link = panel.locator(".tw-export-file a").first
        link.wait_for(timeout=WAIT)
        with page.expect_download() as download:
            link.click()
        saved = tmp_path / "session.json"
        download.value.save_as(saved)
        document = json.loads(saved.read_text(encoding="utf-8"))
        assert document["lesson"] == "mcp" and any(e["type"] == "rpc" for e in document["events"])
        panel.locator(".tw-import input[type=file]").set_input_files(str(saved))
        panel.locator(".tw-status").filter(has_text=T("已导入录制的运行", "Recorded run imported")).first.wait_for(timeout=WAIT)
        panel.locator(".tw-all").click()
        panel.locator(".tw-protocol .tw-final").first.wait_for(timeout=WAIT)
        replayed = "".join(rounds(panel))
        assert all(head in replayed for head in (request("initialize"), request("tools/call"), response("tools/call")))
