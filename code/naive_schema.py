"""课程一开始的朴素做法：inspect.signature + 一张固定的类型表，查不到就当 "string"。

留着它做对照：在 `from __future__ import annotations` 的模块里，注解全是字符串，
表里一个都查不到，于是 count: int 悄悄变成 "string"；list[str] 丢了 items，
Literal、Enum 的可选值也没了。没有报错，只有模型的行为变得奇怪。

    python code/naive_schema.py      # 同一个函数，朴素做法和 ToolRegistry 的结果并排打印
"""
import inspect
import types
import typing

TYPE_TABLE = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def naive_type(annotation) -> dict:
    """查表；Optional[T] 先拆掉 None；查不到的一律 "string"（问题就出在这里）。"""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            annotation = rest[0]
    annotation = typing.get_origin(annotation) or annotation   # list[str] → list：元素类型丢了
    return {"type": TYPE_TABLE.get(annotation, "string")}


def naive_function_schema(func, description=None) -> dict:
    """返回 OpenAI tools 列表里的一项，用的是 p.annotation（可能只是一个字符串）。"""
    properties, required = {}, []
    for name, p in inspect.signature(func).parameters.items():
        properties[name] = naive_type(p.annotation)
        if p.default is inspect.Parameter.empty:
            required.append(name)
    return {"type": "function",
            "function": {"name": func.__name__,
                         "description": description or (func.__doc__ or "").strip(),
                         "parameters": {"type": "object", "properties": properties, "required": required}}}


if __name__ == "__main__":
    import json

    import examples_future_trap as trap      # 这个模块顶部写了 from __future__ import annotations

    for tool in trap.registry.tools.values():
        naive = naive_function_schema(tool.func, tool.description)["function"]["parameters"]["properties"]
        for name, schema in tool.parameters["properties"].items():
            right = {k: v for k, v in schema.items() if k not in ("description", "default")}
            mark = "  " if naive[name] == right else "✗ "
            print(f"{mark}{tool.name}.{name}: 朴素 {json.dumps(naive[name])}  正确 {json.dumps(right, ensure_ascii=False)}")
