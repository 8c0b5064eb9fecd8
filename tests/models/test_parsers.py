"""The text-protocol parsers on replies real models write."""
import pytest

from offline.model import parse_prompt_tools
from react_loop import build_react_prompt
from text_parsers import find_json_objects, parse_json_reply, parse_react

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "查询天气\n（多行说明）",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


@pytest.mark.parametrize("reply", [
    'Thought: 查天气\nAction: get_weather[{"city": "北京"}]',
    'Thought: 查天气\n**Action:** get_weather[{"city": "北京"}]',
    'Thought: 查天气\n**Action**: `get_weather[{"city": "北京"}]`',
    'Action: get_weather\nAction Input: {"city": "北京"}',
    'Action: get_weather\n```json\n{\n  "city": "北京"\n}\n```',
    '<think>也许 Action: wrong[{}]</think>\nThought: 查\nAction: get_weather[{"city": "北京"}]',
])
def test_react_finds_the_action(reply):
    parsed, _ = parse_react(reply)
    assert parsed["kind"] == "action" and parsed["groups"]["tool"] == "get_weather"
    assert '"北京"' in parsed["groups"]["args"]
    start, end = parsed["span"]
    assert "get_weather" in reply[start:end]


def test_react_think_block_notes_and_thought():
    parsed, _ = parse_react('<think>Final Answer: 不算数</think>Thought: 查一下\nAction: get_weather[{"city": "北京"}]')
    assert parsed["kind"] == "action" and parsed["groups"]["thought"] == "查一下"
    assert any("think" in n for n in parsed["notes"])


def test_react_cuts_an_invented_observation():
    reply = 'Thought: 查\nAction: get_weather[{"city": "北京"}]\nObservation: 晴\nThought: 好\nFinal Answer: 晴'
    parsed, cut = parse_react(reply)
    assert parsed["kind"] == "action" and reply[cut:].startswith("Observation")
    assert any("编造" in n for n in parsed["notes"])


def test_react_several_steps_take_the_first():
    parsed, _ = parse_react('Action: get_weather[{"city": "北京"}]\nThought: 再查\nAction: get_weather[{"city": "上海"}]')
    assert '"北京"' in parsed["groups"]["args"] and any("1 个 Action" in n for n in parsed["notes"])


@pytest.mark.parametrize("reply, answer", [
    ("Thought: 好了\nFinal Answer: 北京晴。", "北京晴。"),
    ("**Final Answer:** 北京晴。", "北京晴。"),
    ("Finish[北京晴]", "北京晴"),
])
def test_react_final(reply, answer):
    parsed, _ = parse_react(reply)
    assert parsed["kind"] == "final" and parsed["groups"]["answer"] == answer


def test_react_nothing_to_parse_gives_a_reason():
    parsed, _ = parse_react("我觉得北京应该挺好的。")
    assert not parsed["ok"] and parsed["kind"] == "none" and "Action" in parsed["reason"]


def test_prompt_embeds_tools_in_a_form_the_offline_model_reads_back():
    prompt = build_react_prompt(TOOLS)
    back = parse_prompt_tools(prompt)
    assert back[0]["function"]["name"] == "get_weather" and back[0]["function"]["parameters"] == TOOLS[0]["function"]["parameters"]


@pytest.mark.parametrize("reply, note", [
    ('{"tool": "get_weather", "arguments": {"city": "北京"}}', None),
    ('好的，我来查询。\n{"tool": "get_weather", "arguments": {"city": "北京"}}\n请稍等。', "多余"),
    ('```json\n{"tool": "get_weather", "arguments": {"city": "北京"}}\n```', "代码块"),
    ('{"tool": "get_weather", "arguments": {"city": "北京"}} {"tool": "get_weather", "arguments": {"city": "上海"}}', "2 个"),
])
def test_json_reply_variants(reply, note):
    parsed = parse_json_reply(reply)
    assert parsed["kind"] == "action" and parsed["groups"]["tool"] == "get_weather"
    assert parsed["groups"]["args"] == '{"city": "北京"}'
    assert (note is None and not parsed["notes"]) or any(note in n for n in parsed["notes"])


def test_json_reply_broken_reports_the_parser_message():
    parsed = parse_json_reply('{"tool": "get_weather", "arguments": {"city": "北京"}')
    assert not parsed["ok"] and "Expecting" in parsed["reason"]


def test_json_reply_answer_and_plain_text():
    assert parse_json_reply('{"answer": "晴"}')["groups"]["answer"] == "晴"
    plain = parse_json_reply("北京今天晴。")
    assert plain["kind"] == "final" and plain["notes"]


def test_find_json_objects_skips_nested_and_non_objects():
    found, error = find_json_objects('[1, 2] {"a": {"b": 1}} x {"c": 2}')
    assert [obj for obj, _, _ in found] == [{"a": {"b": 1}}, {"c": 2}] and error is None
