"""注册表的短版本：读 tool_registry.py（参考实现）之前，先读这一个。

比 naive_schema.py 多了四样东西：
  1. 一个装饰器注册表：@registry.tool("给模型看的描述") 把函数登记进来，函数原样返回，照常能调用；
  2. schema 由签名 + 文档字符串推出：先用 typing.get_type_hints() 把注解还原成真实类型
     （所以 from __future__ import annotations 也不会让 count: int 变成 "string"），
     认得 Optional[T]（写成 [T, "null"]）、Literal（enum）、list[T]（带 items）；认不出的类型在登记时就报错；
     没给描述就用文档字符串的第一段，参数说明取文档字符串的 Args: 段；
  3. 调用前用 jsonschema 按同一份 schema 检查参数类型：不合格的参数不会进函数，而是变成一段给模型看的错误文字；
  4. 一个分派 dict：工具名 -> 函数，调用就是查这张表。
任何失败都交回文字（"❌ [标签] 结论。下一步。"，写法来自 tool_outcome.py），从不抛异常：错误就是模型下一轮的输入。

tool_registry.py 在此之上还有：宽松转换（"5" -> 5，并记下转换）、strict 模式、Annotated 里的参数说明、
Enum / TypedDict / dataclass / pydantic 类型、async 工具、超时、结果截断和统一的 ToolOutcome。

    python code/simple_registry.py      # 登记两个工具，打印 schema 和几次调用的结果
"""
from __future__ import annotations

import inspect
import json
import re
import types
import typing

import jsonschema

from tool_outcome import error_text

TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")      # Args: 段里的 "city (str): 城市名"


def json_type(annotation, where: str) -> dict:
    """一个类型注解 -> JSON Schema。where 是 "函数.参数"，只用来写报错。"""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):                    # Optional[int] 就是 int | None
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"{where}：短版本只认 Optional[T]，不认 {annotation}")
        schema = json_type(rest[0], where)
        enum = {"enum": [*schema["enum"], None]} if "enum" in schema else {}   # null 不在 enum 里就会被 enum 拦下
        return {**schema, "type": [schema["type"], "null"], **enum}
    if origin is typing.Literal:
        return {"type": TYPES[type(args[0])], "enum": list(args)}
    if origin is list and args:
        return {"type": "array", "items": json_type(args[0], where)}
    if (origin or annotation) in TYPES:
        return {"type": TYPES[origin or annotation]}
    raise TypeError(f"{where}：不认识的类型注解 {annotation!r}（短版本只认 str/int/float/bool/list/dict、"
                    f"Optional、Literal；更多的类型见 tool_registry.py）")


def read_docstring(func) -> tuple[str, dict[str, str]]:
    """-> (第一段, {参数名: Args: 段里的说明})。"""
    doc = inspect.getdoc(func) or ""
    summary = doc.split("\n\n")[0].strip()
    notes, in_args = {}, False
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
        elif in_args and (match := ARG_LINE.match(line)):
            notes[match.group(1)] = match.group(2).strip()
        elif in_args and line.strip() and not line.startswith(" "):
            in_args = False                                          # 下一段（Returns: ……）开始了
    return summary, notes


def function_schema(func, description: str | None = None) -> dict:
    """函数 -> OpenAI tools 列表里的一项。"""
    hints = typing.get_type_hints(func)              # 字符串注解（__future__）在这里变回真实类型
    summary, notes = read_docstring(func)
    properties, required = {}, []
    for name, param in inspect.signature(func).parameters.items():
        if name not in hints:
            raise TypeError(f"{func.__name__}.{name}：参数没有类型注解，推不出 schema")
        properties[name] = json_type(hints[name], f"{func.__name__}.{name}")
        if name in notes:
            properties[name]["description"] = notes[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)                    # 没有默认值的才是必填
    return {"type": "function", "function": {
        "name": func.__name__, "description": description or summary,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


class SimpleRegistry:
    def __init__(self):
        self.functions = {}      # 工具名 -> 函数：分派就是查这一个 dict
        self.schemas = {}        # 工具名 -> 交给模型的 schema（登记时就算好）

    def tool(self, description: str | None = None):
        """@registry.tool("描述")：登记函数，原样返回它。"""
        def register(func):
            if func.__name__ in self.functions:
                raise ValueError(f"工具 {func.__name__} 已经登记过了：同名的后来者不能悄悄覆盖先来的")
            self.schemas[func.__name__] = function_schema(func, description)
            self.functions[func.__name__] = func
            return func
        return register

    def to_schemas(self) -> list[dict]:
        return list(self.schemas.values())

    def call(self, name: str, arguments: str | dict) -> str:
        """执行一次工具调用 -> 给模型看的文字。arguments 可以是模型给的 JSON 文本，也可以是 dict。"""
        if name not in self.functions:
            return error_text("unknown_tool", f"没有叫 {name} 的工具", f"可用的工具：{'、'.join(self.functions)}")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as error:
                return error_text("invalid_json", f"参数不是合法的 JSON：{error.msg}", "请重新生成一个 JSON 对象")
        schema = self.schemas[name]["function"]["parameters"]
        problems = [f"{'.'.join(map(str, e.path)) or '参数'}：{e.message}"
                    for e in jsonschema.Draft202012Validator(schema).iter_errors(arguments)]
        if problems:
            return error_text("invalid_arguments", "；".join(sorted(problems)), "请按 schema 改正参数后再调用")
        try:
            result = self.functions[name](**arguments)
        except Exception as error:                   # 工具自己出错：也变成文字，循环照常继续
            return error_text("tool_exception", f"{name} 出错：{type(error).__name__}: {error}")
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


if __name__ == "__main__":
    registry = SimpleRegistry()

    @registry.tool("查询指定城市的天气预报")
    def get_forecast(city: str, days: int = 1, unit: typing.Literal["c", "f"] = "c") -> str:
        """天气预报。

        Args:
            city: 城市名，如 北京
            days: 预报几天（1~7）
        """
        return f"{city} 未来 {days} 天：晴，25°{unit.upper()}"

    @registry.tool()
    def add(a: float, b: float | None = None) -> float:
        """把两个数相加；b 不给就当 0。"""
        return a + (b or 0)

    for schema in registry.to_schemas():                  # 交给模型的 tools 列表
        print(json.dumps(schema, ensure_ascii=False))
    for name, arguments in [("get_forecast", '{"city": "北京", "days": 3}'), ("add", {"a": 1.5, "b": None}),
                            ("get_forecast", '{"city": "北京", "days": "3"}'),     # 类型不对：不进函数
                            ("get_forecast", '{"city": "北京"'), ("get_weather", "{}")]:
        print(f"{name}({arguments}) -> {registry.call(name, arguments)}")
