"""The type matrix: every annotation gives a Draft 2020-12 schema that accepts exactly what the function accepts."""
import dataclasses
import datetime
import enum
import typing
from typing import Annotated, Any, Literal, NewType, Optional, Union

import pytest
import typing_extensions
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from tool_registry import ToolRegistry


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    """平面上的点"""
    x: int
    y: int = 0


@dataclasses.dataclass
class TreeNode:
    name: str
    children: "list[TreeNode]" = dataclasses.field(default_factory=list)


class Movie(typing.TypedDict):
    title: str
    year: int


class Book(typing_extensions.TypedDict, total=False):
    title: typing_extensions.Required[str]
    pages: int


class Address(BaseModel):
    city: str = Field(description="城市")
    zip_code: str = Field(pattern=r"^\d{6}$")


class Node(BaseModel):
    value: int
    children: list["Node"] = []


UserId = NewType("UserId", int)

# (annotation, values the schema must accept, values it must reject, type the function receives for accepted[0])
MATRIX = [
    (str, ["a", ""], [1, None, True, []], str),
    (int, [1, -3, 0], [1.5, "1", True, None], int),
    (float, [1.5, 2], ["1.5", True, None], float),
    (bool, [True, False], [1, "true", None], bool),
    (list, [[], [1, "a"]], [{}, "x", None], list),
    (list[int], [[1, 2], []], [[1, "a"], ["1"], {}], list),
    (typing.List[str], [["a"]], [[1]], list),
    (tuple[int, str], [[1, "a"]], [[1], [1, "a", 2], ["a", 1]], tuple),
    (tuple[int, ...], [[], [1, 2, 3]], [["a"], 1], tuple),
    (tuple, [[], [1, "a"]], [{}, "a"], tuple),
    (set[str], [["a", "b"], []], [["a", "a"], [1]], set),
    (frozenset[int], [[1, 2]], [[1, 1]], frozenset),
    (dict, [{}, {"a": 1}], [[], "x"], dict),
    (dict[str, int], [{"a": 1}, {}], [{"a": "x"}, []], dict),
    (dict[str, list[int]], [{"a": [1]}], [{"a": [1.5]}], dict),
    (Optional[int], [None, 3], ["a", 1.5], type(None)),
    (int | None, [None, 3], ["a"], type(None)),
    (Union[int, str], [1, "a"], [None, [], 1.5], int),
    (Union[int, list[str], None], [1, ["a"], None], ["a", [1]], int),
    (Any, [1, "a", None, [], {}], [], int),
    (Literal["a", "b"], ["a", "b"], ["c", 1, None], str),
    (Literal[1, 2], [1, 2], [3, "1", True], int),
    (Literal["a", 1], ["a", 1], ["b", 2], str),
    (Optional[Literal["a", "b"]], ["a", None], ["c"], str),
    (Color, ["red", "green"], ["RED", 1, None], Color),
    (Level, [1, 2], [3, "1", "LOW"], Level),
    (list[Literal["x", "y"]], [["x", "y"], []], [["z"], "x"], list),
    (list[Color], [["red"]], [["blue"]], list),
    (Annotated[int, "说明"], [1], ["a"], int),
    (Annotated[int, Field(ge=1, le=10, description="一到十")], [1, 5, 10], [0, 11, "5"], int),
    (Annotated[str, Field(min_length=2, max_length=4, pattern="^[a-z]+$")], ["ab", "abcd"], ["a", "abcde", "AB"], str),
    (Annotated[list[int], Field(min_length=1)], [[1]], [[]], list),
    (Annotated[float, Field(gt=0, lt=1)], [0.5], [0, 1], float),
    (Point, [{"x": 1}, {"x": 1, "y": 2}], [{"y": 1}, {"x": 1, "z": 1}, {"x": "1"}, []], Point),
    (TreeNode, [{"name": "a", "children": [{"name": "b", "children": []}]}, {"name": "c"}],
     [{"name": "a", "children": [{"children": []}]}, {"children": []}], TreeNode),
    (Movie, [{"title": "a", "year": 1}], [{"title": "a"}, {"title": "a", "year": "x"}], dict),
    (Book, [{"title": "a"}, {"title": "a", "pages": 3}], [{"pages": 3}, {"title": 1}], dict),
    (Address, [{"city": "北京", "zip_code": "100000"}], [{"city": "北京"}, {"city": "北京", "zip_code": "1"}], Address),
    (Node, [{"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}],
     [{"value": 1, "children": [{"value": "x"}]}, {"children": []}], Node),
    (Optional[Address], [None, {"city": "a", "zip_code": "123456"}], [{"city": "a"}], type(None)),
    (list[Point], [[{"x": 1}, {"x": 2, "y": 3}]], [[{"y": 1}]], list),
    (datetime.datetime, ["2024-05-01T08:30:00Z", "2024-05-01T08:30:00+08:00"], [5, None], datetime.datetime),
    (datetime.date, ["2024-05-01"], ["2024-13-01", "tomorrow", 5], datetime.date),
    (datetime.time, ["08:30:00Z"], [5], datetime.time),
    (UserId, [7], ["7", 1.5], int),
]


_NO_DEFAULT = object()


def make_tool(annotation, default=_NO_DEFAULT):
    registry = ToolRegistry()
    received = []

    def tool_x(x):
        received.append(x)
        return "ok"

    tool_x.__annotations__ = {"x": annotation}
    if default is not _NO_DEFAULT:
        tool_x.__defaults__ = (default,)
    registry.tool("测试工具")(tool_x)
    return registry, registry.tools["tool_x"], received


@pytest.mark.parametrize("annotation, accepted, rejected, python_type", MATRIX, ids=lambda v: repr(v)[:40])
def test_schema_is_valid_and_accepts_exactly(annotation, accepted, rejected, python_type):
    registry, tool, received = make_tool(annotation)
    Draft202012Validator.check_schema(tool.parameters)
    validator = Draft202012Validator(tool.parameters, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert tool.parameters["required"] == ["x"]
    assert tool.parameters["additionalProperties"] is False
    for value in accepted:
        errors = list(validator.iter_errors({"x": value}))
        assert not errors, f"{value!r} should be accepted: {errors}"
    for value in rejected:
        assert list(validator.iter_errors({"x": value})), f"{value!r} should be rejected"
    # what the published schema accepts, the registry runs, handing the function the annotated Python type
    for value in accepted:
        outcome = registry.call("tool_x", {"x": value})
        assert outcome.ok, (value, outcome.content)
    assert isinstance(received[0], python_type), (received[0], python_type)


def test_converted_values_are_the_annotated_python_objects():
    cases = [
        (Color, "red", Color.RED), (Level, 2, Level.HIGH), (tuple[int, str], [1, "a"], (1, "a")),
        (set[str], ["a", "b"], {"a", "b"}), (datetime.date, "2024-05-01", datetime.date(2024, 5, 1)),
        (Point, {"x": 1}, Point(1, 0)), (Literal["a", "b"], "b", "b"), (float, 2, 2.0), (int, 5.0, 5),
        (list[Color], ["green"], [Color.GREEN]), (dict[str, Level], {"k": 1}, {"k": Level.LOW}),
        (Union[int, Color], "red", Color.RED), (Optional[Point], {"x": 3, "y": 4}, Point(3, 4)),
    ]
    for annotation, value, expected in cases:
        registry, _, received = make_tool(annotation)
        assert registry.call("tool_x", {"x": value}).ok
        assert received[0] == expected and type(received[0]) is type(expected), (annotation, received)
    registry, _, received = make_tool(TreeNode)
    registry.call("tool_x", {"x": {"name": "a", "children": [{"name": "b"}]}})
    assert received[0] == TreeNode("a", [TreeNode("b", [])])
    registry, _, received = make_tool(Node)
    registry.call("tool_x", {"x": {"value": 1, "children": [{"value": 2}]}})
    assert isinstance(received[0].children[0], Node) and received[0].children[0].value == 2


def test_exact_schema_shapes():
    def params(annotation):
        return make_tool(annotation)[1].parameters["properties"]["x"]
    assert params(str) == {"type": "string"}
    assert params(Optional[int]) == {"type": ["integer", "null"]}
    assert params(Literal["c", "f"]) == {"type": "string", "enum": ["c", "f"]}
    assert params(Optional[Literal["c", "f"]]) == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert params(Color) == {"type": "string", "enum": ["red", "green"]}
    assert params(Level) == {"type": "integer", "enum": [1, 2]}
    assert params(list[str]) == {"type": "array", "items": {"type": "string"}}
    assert params(tuple[int, str]) == {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                                       "minItems": 2, "maxItems": 2}
    assert params(set[int]) == {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert params(dict[str, int]) == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert params(Union[int, str]) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert params(Any) == {}
    assert params(datetime.datetime) == {"type": "string", "format": "date-time"}
    assert params(datetime.date) == {"type": "string", "format": "date"}
    assert params(Annotated[int, "数量"]) == {"description": "数量", "type": "integer"}
    field = params(Annotated[int, Field(ge=1, le=10, description="一到十")])
    assert field == {"description": "一到十", "type": "integer", "minimum": 1, "maximum": 10}


def test_classes_live_in_root_defs():
    _, tool, _ = make_tool(Point)
    assert tool.parameters["properties"]["x"] == {"$ref": "#/$defs/Point"}
    point = tool.parameters["$defs"]["Point"]
    assert point["required"] == ["x"] and point["properties"]["y"]["default"] == 0
    assert point["description"] == "平面上的点" and point["additionalProperties"] is False
    _, tool, _ = make_tool(Node)
    assert tool.parameters["properties"]["x"] == {"$ref": "#/$defs/Node"}
    assert tool.parameters["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    _, tool, _ = make_tool(TreeNode)
    assert tool.parameters["$defs"]["TreeNode"]["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}


def test_defaults_and_required():
    registry = ToolRegistry()

    @registry.tool("t")
    def f(a: int, b: str = "x", c: Color = Color.GREEN, d: tuple[int, int] = (1, 2), e: list[int] | None = None,
          when: datetime.date = datetime.date(2024, 1, 2), opaque: object = object()):
        return "ok"

    params = registry.tools["f"].parameters
    Draft202012Validator.check_schema(params)
    assert params["required"] == ["a"]
    props = params["properties"]
    assert props["b"]["default"] == "x" and props["c"]["default"] == "green" and props["d"]["default"] == [1, 2]
    assert props["e"]["default"] is None and props["when"]["default"] == "2024-01-02"
    assert "default" not in props["opaque"]          # not expressible in JSON: the function applies it itself
    validation = registry.validate("f", {"a": 1})
    assert validation.arguments == {"a": 1, "b": "x", "c": "green", "d": [1, 2], "e": None, "when": "2024-01-02"}


def test_bare_containers_and_newtype_subtypes():
    _, tool, _ = make_tool(typing.Sequence[int])
    assert tool.parameters["properties"]["x"] == {"type": "array", "items": {"type": "integer"}}
    _, tool, _ = make_tool(typing.Mapping[str, str])
    assert tool.parameters["properties"]["x"] == {"type": "object", "additionalProperties": {"type": "string"}}
