"""The offline model: sensible choices on the example tools, always schema-valid arguments, honest about itself."""
import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import examples_calculator
import examples_employees
import examples_weather
from offline.model import MISTAKES, NOTICE, OfflineModel, plan_calls


@pytest.mark.parametrize("module, question, expected", [
    (examples_weather, "北京今天天气怎么样？", [("get_weather", {"city": "北京"})]),
    (examples_weather, "北京和上海的天气", [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]),
    (examples_weather, "上海未来5天的天气预报", [("get_forecast", {"city": "上海", "days": 5})]),
    (examples_weather, "广州冷不冷，用华氏度", [("get_weather", {"city": "广州", "unit": "f"})]),
    (examples_calculator, "帮我算一下 (3+4)*5", [("calculate", {"expression": "(3+4)*5"})]),
    (examples_calculator, "把 10 km 换算成 mi", [("convert_unit", {"value": 10, "from_unit": "km", "to_unit": "mi"})]),
    (examples_employees, "张三的工资是多少？", [("calculate_salary", {"name": "张三"})]),
    (examples_employees, "研发部有哪些人", [("list_department", {"department": "研发部"})]),
    (examples_employees, "查一下李四的档案，再算一下张三的工资",
     [("get_employee", {"name": "李四"}), ("calculate_salary", {"name": "张三"})]),
])
def test_plans_on_the_example_tools(module, question, expected):
    plan = plan_calls(question, module.registry.to_schemas())
    assert plan == expected
    assert all(module.registry.call(name, args).ok for name, args in plan)


@pytest.mark.parametrize("question, cities", [
    ("北京🌧️天气", ["北京"]),
    ("🌧️北京天气怎么样", ["北京"]),
    ("Beijing🌧️ weather", ["北京"]),
    ("👨‍👩‍👧 上海天气", ["上海"]),
    ("weather in beijing", ["北京"]),
    ("Weather in Xi'an", ["西安"]),               # a known name with an apostrophe stays one name
    ("weather in New York", ["New York"]),        # unknown English names are passed whole, as said
    ("How is the weather in Paris and Beijing?", ["Paris", "北京"]),
])
def test_a_city_is_the_name_alone_as_the_weather_tool_writes_it(question, cities):
    plan = plan_calls(question, examples_weather.registry.to_schemas())
    assert plan == [("get_weather", {"city": city}) for city in cities]
    for (name, args), city in zip(plan, cities):
        outcome = examples_weather.registry.call(name, args)
        assert outcome.ok == (city in examples_weather.WEATHER), outcome.content
        assert outcome.ok or f"没有 {city} 的天气数据" in outcome.content     # the tool, not the model, says it is unknown


def test_english_city_names_stay_english_where_the_examples_are_english():
    tools = json.loads(json.dumps(examples_weather.registry.to_schemas(), ensure_ascii=False)
                       .replace("如 北京、上海", "e.g. London, Paris"))
    assert "London" in json.dumps(tools)
    assert plan_calls("What is the weather in Beijing?", tools) == [("get_weather", {"city": "Beijing"})]


def test_a_remembered_plan_is_handed_out_as_a_copy():
    tools = examples_weather.registry.to_schemas()
    first = plan_calls("北京和上海的天气", tools)
    first[0][1]["city"] = "改掉"
    first.append(("extra", {}))
    assert plan_calls("北京和上海的天气", tools) == [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    renamed = json.loads(json.dumps(tools).replace("get_weather", "weather_now"))
    assert plan_calls("北京和上海的天气", renamed)[0][0] == "weather_now"      # other tools: planned anew


def test_no_matching_tool_answers_plainly():
    message, finish = OfflineModel().respond([{"role": "user", "content": "你好"}], examples_weather.registry.to_schemas())
    assert finish == "stop" and "没有找到" in message["content"] and NOTICE in message["content"]


def test_deterministic_and_says_it_is_rule_based():
    request = {"messages": [{"role": "user", "content": "北京天气"}], "tools": examples_weather.registry.to_schemas()}
    first, second = OfflineModel().completion_body(request), OfflineModel().completion_body(request)
    assert first == second and first["model"] == "offline-rule-model" and "rule-based" in first["system_fingerprint"]


def test_mistake_only_on_the_first_turn():
    tools = examples_weather.registry.to_schemas()
    model = OfflineModel("unknown_tool")
    history = [{"role": "user", "content": "北京天气"}]
    first, _ = model.respond(history, tools)
    assert first["tool_calls"][0]["function"]["name"] == "get_weather_info"
    history += [first, {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "❌ [未知工具] ..."}]
    second, _ = model.respond(history, tools)
    assert second["tool_calls"][0]["function"]["name"] == "get_weather"


def test_stop_sequence_is_honoured():
    prompt = {"role": "system", "content": "Action: 工具名[参数]\n- get_weather: 天气\n  参数 JSON Schema: {\"type\": \"object\"}"}
    message, _ = OfflineModel("multi_step").respond([prompt, {"role": "user", "content": "天气"}], stop=["Thought: 接着"])
    assert message["content"].count("Action:") == 1


def test_unknown_mistake_name_is_refused():
    with pytest.raises(ValueError):
        OfflineModel("typo")
    assert len(MISTAKES) == 15


# ---- property test: arguments always validate against whatever schema the tool has

NAMES = st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True)
TEXT = st.text(alphabet="北京上海天气查询城市名字数量abc XYZ,，和再0123456789()+*-/", max_size=30)


def scalar_schemas():
    integer = st.builds(lambda lo, span, desc: {"type": "integer", "minimum": lo, "maximum": lo + span, "description": desc},
                        st.integers(-50, 50), st.integers(0, 100), TEXT)
    number = st.builds(lambda lo, desc: {"type": "number", "exclusiveMinimum": lo, "description": desc},
                       st.floats(-10, 10, allow_nan=False), TEXT)
    string = st.builds(lambda lo, extra, desc: {"type": "string", "minLength": lo, "maxLength": lo + extra, "description": desc},
                       st.integers(0, 3), st.integers(0, 8), TEXT)
    enum = st.lists(st.one_of(TEXT.filter(bool), st.integers(0, 9)), min_size=1, max_size=4, unique=True).map(
        lambda values: {"enum": values})
    boolean = st.just({"type": "boolean"})
    nullable = st.just({"type": ["string", "null"], "default": None})
    return st.one_of(integer, number, string, enum, boolean, nullable)


def object_schema(children):
    return st.dictionaries(NAMES, children, max_size=4).flatmap(lambda props: st.builds(
        lambda required, closed: {"type": "object", "properties": props,
                                  "required": [k for k in props if k in required],
                                  **({"additionalProperties": False} if closed else {})},
        st.sets(st.sampled_from(sorted(props) or ["_"])), st.booleans()))


SCHEMAS = st.recursive(scalar_schemas(), lambda inner: st.one_of(
    st.builds(lambda items, lo: {"type": "array", "items": items, "minItems": lo, "maxItems": lo + 3}, inner, st.integers(0, 2)),
    object_schema(inner),
    st.builds(lambda branch: {"anyOf": [branch, {"type": "null"}]}, inner),
), max_leaves=8)
TOOL_LISTS = st.lists(st.builds(lambda name, desc, params: {"type": "function", "function": {
    "name": name, "description": desc, "parameters": params}}, NAMES, TEXT, object_schema(SCHEMAS)),
    min_size=1, max_size=3, unique_by=lambda t: t["function"]["name"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=TOOL_LISTS, question=TEXT, mistake_free=st.booleans())
def test_arguments_always_validate_against_the_schema(tools, question, mistake_free):
    message, _ = OfflineModel().respond([{"role": "user", "content": question}], tools,
                                        tool_choice=None if mistake_free else "required")
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for call in message.get("tool_calls", []):
        arguments = json.loads(call["function"]["arguments"])
        jsonschema.validate(arguments, by_name[call["function"]["name"]])


def test_plain_chat_without_tools_is_plain_text():
    message, finish = OfflineModel().respond([{"role": "user", "content": "你好"}])
    assert finish == "stop" and not message["content"].startswith("{") and NOTICE in message["content"]


def test_local_refs_and_nested_objects_are_filled_validly():
    schema = {"type": "object", "$defs": {"Point": {"type": "object", "properties": {
        "x": {"type": "integer", "minimum": 10}, "label": {"type": "string", "minLength": 2}}, "required": ["x", "label"]}},
        "properties": {"where": {"$ref": "#/$defs/Point"}, "city": {"type": "string", "description": "城市名"}},
        "required": ["where", "city"]}
    tools = [{"type": "function", "function": {"name": "locate", "description": "定位城市", "parameters": schema}}]
    message, _ = OfflineModel().respond([{"role": "user", "content": "定位北京"}], tools)
    arguments = json.loads(message["tool_calls"][0]["function"]["arguments"])
    jsonschema.validate(arguments, schema)
    assert arguments["city"] == "北京" or arguments["where"]["label"] == "北京"


# ---- numbers carry their labels: amounts go to the parameter they are said for

from offline.arguments import said_numbers  # noqa: E402


def test_each_number_keeps_the_words_said_next_to_it():
    said = said_numbers("基本工资 30000 加上奖金 8000 的税后收入（税率 20%）")
    assert [(s.value, s.percent) for s in said] == [(30000, False), (8000, False), (20, True)]
    assert "基本工资" in said[0].label and said[1].label == "奖金" and "税率" in said[2].label
    tail_first = said_numbers("3万 元底薪和 8000 元奖金")          # "number, then what it is": split at 和
    assert [s.value for s in tail_first] == [30000, 8000]
    assert "底薪" in tail_first[0].label and "奖金" in tail_first[1].label and "底薪" not in tail_first[1].label


def tool(name, properties, required=None):
    return [{"type": "function", "function": {"name": name, "description": "计算", "parameters": {
        "type": "object", "properties": properties, "required": required or list(properties)}}}]


def test_a_percentage_becomes_a_fraction_only_for_a_rate():
    rate = tool("calc_tax", {"amount": {"type": "number", "description": "金额"},
                             "rate": {"type": "number", "description": "税率"}})
    assert plan_calls("计算金额 500，税率 20%", rate) == [("calc_tax", {"amount": 500, "rate": 0.2})]
    percent = tool("calc_tax", {"amount": {"type": "number", "description": "金额"},
                                "percent": {"type": "integer", "description": "百分比，如 20"}})
    assert plan_calls("计算金额 500，百分比 20%", percent) == [("calc_tax", {"amount": 500, "percent": 20})]


def test_amounts_follow_their_labels_not_their_order():
    swapped = tool("calculate_salary", {"base": {"type": "number"}, "bonus": {"type": "number"}})
    assert plan_calls("计算奖金 100 和底薪 900", swapped) == [("calculate_salary", {"base": 900, "bonus": 100})]
    assert plan_calls("计算 900 和 100", swapped) == [("calculate_salary", {"base": 900, "bonus": 100})]


def test_an_id_written_as_a_string_parameter_takes_the_number():
    lookup = [{"type": "function", "function": {"name": "get_user", "description": "查询用户资料", "parameters": {
        "type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}}]
    assert plan_calls("查询用户 42 的资料", lookup) == [("get_user", {"user_id": "42"})]
    assert plan_calls("查询用户 123456789 的资料", lookup) == [("get_user", {"user_id": "123456789"})]


def test_a_comma_and_bing_splits_two_requests_but_a_word_with_bing_does_not():
    tools = examples_employees.registry.to_schemas()
    assert [name for name, _ in plan_calls("查一下李四的档案，并算一下张三的工资", tools)] == ["get_employee", "calculate_salary"]
    assert len(plan_calls("合并计算张三的工资", tools)) == 1


# ---- honest about what it cannot do: no made-up values, no retrying a call that failed as planned

def test_a_required_name_missing_from_the_question_is_asked_for_not_invented():
    tools = examples_employees.registry.to_schemas()
    message, finish = OfflineModel().respond([{"role": "user", "content": "查一下员工档案"}], tools)
    assert finish == "stop" and "get_employee" in message["content"] and "员工姓名" in message["content"]
    forced, finish = OfflineModel().respond([{"role": "user", "content": "查一下员工档案"}], tools, tool_choice="required")
    assert finish == "tool_calls" and forced["tool_calls"]         # forced to call: a placeholder it must be


@pytest.mark.parametrize("loop_name", ["function_calling", "react", "json"])
def test_a_call_that_fails_as_planned_is_not_repeated(loop_name):
    from function_calling_loop import run_function_calling
    from json_loop import run_json_from_text
    from llm_clients import make_client
    from react_loop import run_react
    loop = {"function_calling": run_function_calling, "react": run_react, "json": run_json_from_text}[loop_name]
    events = list(loop(make_client("offline"), "火星和北京今天天气怎么样", None, examples_weather.registry))
    results = [e for e in events if e["type"] == "tool_result"]
    assert sorted(r["ok"] for r in results) == [False, True] and len(results) == 2       # once each, no retry
    final = events[-1]
    assert final["type"] == "final" and "没有成功" in final["content"] and "北京今天晴" in final["content"]
