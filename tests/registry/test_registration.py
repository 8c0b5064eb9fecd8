"""Registration pitfalls: string annotations, duplicates, description precedence, Optional, docstrings, warnings."""
import dataclasses
import pathlib
import typing
from typing import Annotated, Any, Literal, Optional

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

import examples_future_trap
from tool_registry import ToolRegistry


def test_decorator_forms_return_the_function_unchanged():
    registry = ToolRegistry()

    def plain(city: str) -> str:
        """查天气。"""
        return city

    assert registry.tool("描述")(plain) is plain
    assert plain("北京") == "北京"

    @registry.tool
    def bare(x: int) -> int:
        """摘要第一段
        可以跨两行。

        更长的说明不进 description。
        """
        return x

    @registry.tool(name="renamed")
    def original(x: int) -> int:
        """改名的工具"""
        return x

    @registry.tool("带描述也改名", name="other-name")
    def original2(x: int) -> int:
        return x

    assert bare(3) == 3 and original(4) == 4
    assert list(registry.tools) == ["plain", "bare", "renamed", "other-name"]
    assert registry.tools["bare"].description == "摘要第一段 可以跨两行。"
    assert registry.tools["renamed"].func is original
    assert registry.tools["other-name"].description == "带描述也改名"


def test_description_precedence_decorator_over_docstring():
    registry = ToolRegistry()

    @registry.tool("写给模型的描述")
    def f(x: int) -> int:
        """写给读代码的人的说明。"""
        return x

    @registry.tool
    def g(x: int) -> int:
        return x

    assert registry.tools["f"].description == "写给模型的描述"
    assert registry.tools["g"].description == ""
    assert any("没有描述" in w for w in registry.warnings()["g"])
    assert not any("没有描述" in w for w in registry.warnings()["f"])


def test_duplicate_names_are_an_error_not_a_silent_overwrite():
    registry = ToolRegistry()

    @registry.tool("第一个")
    def search(q: str) -> str:
        return "first"

    with pytest.raises(ValueError, match="search.*已被.*注册"):
        @registry.tool("第二个")
        def search(q: str) -> str:  # noqa: F811
            return "second"

    assert registry.invoke("search", {"q": "x"}) == "first"

    @registry.tool("第二个", name="search_v2")
    def search(q: str) -> str:  # noqa: F811
        return "second"

    assert registry.invoke("search_v2", {"q": "x"}) == "second"


def test_invalid_tool_names_are_rejected():
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="工具名"):
        registry.tool("x")(lambda a: a)
    with pytest.raises(ValueError, match="工具名"):
        registry.tool("x", name="has space")(lambda a: a)
    with pytest.raises(ValueError, match="工具名"):
        registry.tool("x", name="get_weather\n")(lambda a: a)     # ^…$ with .match let a trailing newline in
    with pytest.raises(ValueError, match="工具名"):
        registry.tool("x", name="a" * 65)(lambda a: a)
    assert registry.tools == {}


def test_string_annotations_are_resolved():
    registry = ToolRegistry()

    def f(count: "int", tags: "list[str]", mode: "Literal['a', 'b']" = "a") -> str:
        return ""

    registry.tool("t")(f)
    props = registry.tools["f"].parameters["properties"]
    assert props["count"]["type"] == "integer"
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["mode"]["enum"] == ["a", "b"]


def test_future_annotations_module_gets_real_types():
    props = examples_future_trap.registry.tools["add_todo"].parameters["properties"]
    assert props["count"]["type"] == "integer"
    assert props["tags"]["items"] == {"type": "string"}
    assert props["priority"]["enum"] == ["低", "中", "高"]
    assert props["due"]["format"] == "date"


def test_bad_annotations_fail_at_registration_naming_function_and_parameter():
    registry = ToolRegistry()

    def unresolved(ok: int, broken: "NoSuchType") -> str:  # noqa: F821
        return ""

    with pytest.raises(TypeError, match=r"unresolved.*broken.*NoSuchType"):
        registry.tool("t")(unresolved)

    def not_json(callback: typing.Callable[[int], int]) -> str:
        return ""

    with pytest.raises(TypeError, match=r"not_json.*callback"):
        registry.tool("t")(not_json)

    def int_keys(table: dict[int, str]) -> str:
        return ""

    with pytest.raises(TypeError, match=r"int_keys.*table.*键"):
        registry.tool("t")(int_keys)
    assert registry.tools == {}


def test_optional_without_default_is_required_but_nullable():
    registry = ToolRegistry()

    @registry.tool("t")
    def f(limit: Optional[int], other: int | None = None) -> str:
        return repr(limit)

    params = registry.tools["f"].parameters
    assert params["required"] == ["limit"]
    assert params["properties"]["limit"]["type"] == ["integer", "null"]
    assert registry.invoke("f", {"limit": None}) == "None"
    assert registry.call("f", {}).error_code == "invalid_arguments"


def test_none_default_without_optional_is_nullable_and_warned():
    registry = ToolRegistry()

    @registry.tool("t")
    def f(limit: int = None) -> str:
        return repr(limit)

    assert registry.tools["f"].parameters["properties"]["limit"] == {"type": ["integer", "null"], "default": None}
    assert any("默认值是 None" in w for w in registry.warnings()["f"])
    assert registry.invoke("f", {"limit": None}) == "None"


@pytest.mark.parametrize("doc", [
    """查询天气。

    Args:
        city: 城市名
        days (int): 预报天数
    """,
    """查询天气。

    Parameters
    ----------
    city : str
        城市名
    days : int
        预报天数
    """,
    """查询天气。

    :param city: 城市名
    :param days: 预报天数
    """,
], ids=["google", "numpy", "rest"])
def test_parameter_descriptions_from_docstrings(doc):
    registry = ToolRegistry()

    def f(city: str, days: int = 1) -> str:
        return ""

    f.__doc__ = doc
    registry.tool(f)
    tool = registry.tools["f"]
    assert tool.description == "查询天气。"
    assert tool.parameters["properties"]["city"]["description"] == "城市名"
    assert tool.parameters["properties"]["days"]["description"] == "预报天数"
    assert tool.warnings == []


def test_annotated_description_beats_docstring():
    registry = ToolRegistry()

    @registry.tool
    def f(city: Annotated[str, "来自 Annotated"], n: Annotated[int, Field(description="来自 Field")] = 1) -> str:
        """摘要。

        Args:
            city: 来自文档
            n: 来自文档
        """
        return ""

    props = registry.tools["f"].parameters["properties"]
    assert props["city"]["description"] == "来自 Annotated"
    assert props["n"]["description"] == "来自 Field"


def test_teaching_warnings():
    registry = ToolRegistry()

    @registry.tool
    def messy(a, path: pathlib.Path, *args, **kwargs):
        """做点什么。

        Args:
            a: 第一个
            ghost: 签名里没有的参数
        """
        return str(path)

    warnings = registry.warnings()["messy"]
    text = "\n".join(warnings)
    assert "参数 a 没有类型注解" in text
    assert "*args" in text and "**kwargs" in text
    assert "Path 没有对应的 JSON 类型，已按字符串处理" in text
    assert "ghost" in text
    assert "path 没有说明" in text
    params = registry.tools["messy"].parameters
    assert params["properties"]["a"] == {"description": "第一个"}
    assert params["properties"]["path"]["type"] == "string"
    assert params["additionalProperties"] is True           # **kwargs accepts any other name
    assert "args" not in params["properties"]
    Draft202012Validator.check_schema(params)
    assert registry.invoke("messy", {"a": 1, "path": "/tmp/x", "extra": 2}) == "/tmp/x"


def test_async_tools_are_flagged():
    registry = ToolRegistry()

    @registry.tool("t")
    async def fetch(url: str) -> str:
        return url

    @registry.tool("t")
    def sync(url: str) -> str:
        return url

    assert registry.tools["fetch"].is_async and not registry.tools["sync"].is_async


def test_to_schemas_shape_and_copies():
    registry = ToolRegistry()

    @registry.tool("查询指定城市的当前天气")
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        return city

    schemas = registry.to_schemas()
    assert schemas == [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                         "unit": {"type": "string", "enum": ["c", "f"], "default": "c"}},
                       "required": ["city"], "additionalProperties": False}}}]
    schemas[0]["function"]["parameters"]["properties"].clear()
    assert registry.to_schemas()[0]["function"]["parameters"]["properties"]   # the registry is untouched

    @registry.tool("后注册的")
    def later(x: int) -> int:
        return x

    assert [s["function"]["name"] for s in registry.to_schemas()] == ["get_weather", "later"]


# ── strict mode ──────────────────────────────────────────────────────────────

def walk_objects(schema):
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield schema
        for value in schema.values():
            yield from walk_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from walk_objects(value)


@dataclasses.dataclass
class Filter:
    field: str
    limit: int = 10


class Owner(BaseModel):
    name: str
    email: str | None = None


def test_strict_mode_every_property_required_optional_nullable():
    registry = ToolRegistry()

    @registry.tool("搜索")
    def search(query: str, unit: Literal["c", "f"] = "c", filters: list[Filter] | None = None,
               owner: Owner | None = None, page: int = 1) -> str:
        return f"{query}|{unit}|{filters}|{owner}|{page}"

    strict = registry.to_schemas(strict=True)[0]
    assert strict["function"]["strict"] is True
    params = strict["function"]["parameters"]
    Draft202012Validator.check_schema(params)
    objects = list(walk_objects(params))
    assert len(objects) == 3          # root, Filter, Owner
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert "default" not in str(params).replace("默认", "")
    assert params["properties"]["unit"]["type"] == ["string", "null"]
    assert "传 null 表示用默认值 \"c\"" in params["properties"]["unit"]["description"]
    assert params["$defs"]["Filter"]["properties"]["limit"]["type"] == ["integer", "null"]
    # what a strict-mode model sends (every key, null for "not given") is accepted, defaults applied
    args = {"query": "猫", "unit": None, "filters": [{"field": "名字", "limit": None}],
            "owner": {"name": "张三", "email": None}, "page": None}
    Draft202012Validator(params).validate(args)
    outcome = registry.call("search", args)
    assert outcome.ok, outcome.content
    assert outcome.arguments["unit"] == "c" and outcome.arguments["page"] == 1
    assert outcome.content == "猫|c|[Filter(field='名字', limit=10)]|name='张三' email=None|1"
    assert any("unit: null → 默认值" in c for c in outcome.coercions)
    # the non-strict schema is unaffected
    assert registry.to_schemas()[0]["function"]["parameters"]["required"] == ["query"]


@pytest.mark.parametrize("annotation, fragment", [
    (dict, "items"), (dict[str, int], "items"), (Any, "items"), (list[dict], "items[]"),
])
def test_strict_mode_rejects_what_it_cannot_express(annotation, fragment):
    registry = ToolRegistry()

    def bulk(items):
        return ""

    bulk.__annotations__ = {"items": annotation}
    registry.tool("批量")(bulk)
    registry.to_schemas()                     # fine without strict
    with pytest.raises(ValueError, match=rf"工具 bulk.*{fragment.replace('[', '.').replace(']', '.')}.*严格模式"):
        registry.to_schemas(strict=True)


def test_strict_mode_rejects_kwargs():
    registry = ToolRegistry()

    @registry.tool("t")
    def f(a: int, **options: str) -> str:
        return ""

    with pytest.raises(ValueError, match="工具 f.*严格模式"):
        registry.to_schemas(strict=True)
