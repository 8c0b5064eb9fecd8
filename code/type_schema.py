"""类型注解 → JSON Schema：ToolRegistry 登记工具时，用这里的函数把函数签名翻译成模型看得懂的参数说明。

    SchemaBuilder("工具 add").schema(list[int], "numbers")   # {"type": "array", "items": {"type": "integer"}}

读这个文件的顺序：
1. 还原注解：from __future__ import annotations 之后注解都是字符串，要先变回真正的类型。
2. 文档字符串：摘要当工具描述，Args 段里的说明当参数描述（交给 docstring-parser）。
3. 类型 → schema：一张小表加几条规则；dataclass、TypedDict、pydantic 模型放进 $defs。
4. 严格模式：OpenAI strict 需要的改写。
docstring-parser 和 pydantic 在第一次用到时才导入，所以 import 本模块很快。
"""
from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import json
import math
import re
import types
import typing
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin

NoneType = type(None)


# ═══════════════════════════════════════════════════════════════ 1. 还原注解

def resolve_annotations(func: Callable, where: str) -> dict:
    """参数名 -> 真正的类型（含 Annotated 里的说明）。还原不了时抛 TypeError，指明是哪个参数。"""
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception as exc:
        # 找出是哪个参数的注解还原不了，让报错直接指到那一行
        for param, annotation in getattr(func, "__annotations__", {}).items():
            if isinstance(annotation, str):
                try:
                    eval(annotation, getattr(func, "__globals__", {}))
                except Exception:
                    raise TypeError(f"{where} 的参数 {param} 的注解 {annotation!r} 无法解析"
                                    f"（{type(exc).__name__}: {exc}）。请检查这个名字是否已导入。") from None
        raise TypeError(f"{where} 的类型注解无法解析：{type(exc).__name__}: {exc}") from None


# ═══════════════════════════════════════════════════════════════ 2. 文档字符串

# 先用正则便宜地认出风格，再只调用那一种解析器。
# docstring-parser 的自动识别会把每种解析器都跑一遍（约 90 µs），认准风格只跑一种；没有参数段就不解析。
_REST = re.compile(r"^\s*:param\b", re.M)
_NUMPY = re.compile(r"^\s*Parameters\s*\n\s*-{3,}\s*$", re.M)
_GOOGLE = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$", re.M)
_PARSERS: dict[str, Callable] = {}


def read_docstring(doc: str | None, warnings: list[str] | None = None) -> tuple[str, dict[str, str]]:
    """返回 (摘要, {参数名: 说明})。摘要是第一段文字。
    参数段读不懂时不抛异常（一个写坏的文档字符串不该让整个模块导入失败）：没有参数说明，
    并在 warnings 里说一句。"""
    if not doc or not doc.strip():
        return "", {}
    first = doc.strip().split("\n\n", 1)[0]
    summary = "" if _GOOGLE.match(first) or _REST.match(first) else " ".join(first.split())
    if ":param" in doc and _REST.search(doc):          # 先用 in 粗筛（很快），再用正则确认
        style = "rest"
    elif "---" in doc and _NUMPY.search(doc):
        style = "numpy"
    elif ":\n" in doc and _GOOGLE.search(doc):
        style = "google"
    else:
        return summary, {}
    if not _PARSERS:                     # 解析器对象只建一次：构造时要拼装、编译一批正则
        from docstring_parser import google, numpydoc, rest
        # 只认参数段：Returns、Raises 这些段我们用不上，不认就不用解析
        titles = ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments")
        google_params = [google.Section(t, "param", google.SectionType.MULTIPLE) for t in titles]
        numpy_params = [numpydoc.ParamSection(t, "param") for t in ("Parameters", "Other Parameters")]
        _PARSERS.update(rest=rest.parse, numpy=numpydoc.NumpydocParser(sections=numpy_params).parse,
                        google=google.GoogleParser(sections=google_params).parse)
    from docstring_parser import ParseError
    try:
        params = _PARSERS[style](doc).params
    except ParseError:
        try:                             # 常见的坑：文档字符串第一行就是 Args:，它没有缩进而下面几行有
            params = _PARSERS[style](_indent_first_line(doc)).params
        except ParseError as exc:
            if warnings is not None:
                warnings.append(f"文档字符串的参数段读不懂（{exc}），参数说明没有写进 schema。"
                                f"请让 Args: 下每个参数各占一行、比 Args: 多缩进一级，写成“参数名: 说明”。")
            return summary, {}
    return summary, {p.arg_name: " ".join(p.description.split()) for p in params if p.description}


def _indent_first_line(doc: str) -> str:
    """文档字符串开头的三个引号后面紧跟 Args: 时，第一行没有缩进，下面几行却有，解析器就对不齐了。
    把第一行挪到第二行，缩进比下面的参数行少一级（4 个空格）。"""
    first, _, rest = doc.lstrip().partition("\n")
    indents = [len(line) - len(line.lstrip()) for line in rest.splitlines() if line.strip()]
    return f"\n{' ' * max(min(indents, default=0) - 4, 0)}{first}\n{rest}"


# ═══════════════════════════════════════════════════════════════ 3. 类型 → JSON Schema

SIMPLE = {
    str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"}, bool: {"type": "boolean"},
    list: {"type": "array"}, tuple: {"type": "array"}, dict: {"type": "object"},
    set: {"type": "array", "uniqueItems": True}, frozenset: {"type": "array", "uniqueItems": True},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
}
SEQUENCES = (list, collections.abc.Sequence, collections.abc.Iterable, set, frozenset, collections.abc.Set)
MAPPINGS = (dict, collections.abc.Mapping)


def unwrap(tp: Any) -> Any:
    """去掉不影响 JSON 形状的外壳：NewType、TypedDict 的 Required/NotRequired/ReadOnly。"""
    while True:
        if hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        elif getattr(get_origin(tp), "_name", None) in ("Required", "NotRequired", "ReadOnly"):
            tp = get_args(tp)[0]
        else:
            return tp


class SchemaBuilder:
    """把一个工具的注解逐个翻译成 schema 片段。

    类（dataclass、TypedDict、pydantic 模型）进 $defs，用 $ref 引用，递归类型也就不怕了。
    一个工具用一个 builder：$defs 放在这个工具参数的根上。"""

    def __init__(self, where: str):
        self.where = where
        self.defs: dict[str, dict] = {}
        self.names: dict[Any, str] = {}   # 类 -> $defs 里的名字
        self.warnings: list[str] = []

    def fail(self, param: str, why: str):
        raise TypeError(f"{self.where} 的参数 {param}：{why}")

    def schema(self, tp: Any, param: str) -> dict:
        if type(tp) is type and tp in SIMPLE:           # 最常见的 str、int……直接查表
            return dict(SIMPLE[tp])
        tp = unwrap(tp)
        origin, args = get_origin(tp), get_args(tp)
        if origin is Annotated:
            return self._annotated(tp, param)
        if tp is Any or tp is object:
            return {}                                   # 任何值都行
        if tp is None or tp is NoneType:
            return {"type": "null"}
        if origin is Literal:
            return enum_schema([v.value if isinstance(v, enum.Enum) else v for v in args], self, param)
        if origin is Union or origin is types.UnionType:
            arms = [a for a in args if a is not NoneType]
            schema = self.schema(arms[0], param) if len(arms) == 1 else {"anyOf": [self.schema(a, param) for a in arms]}
            return or_null(schema) if len(arms) < len(args) else schema
        if origin is tuple and args and args[-1] is not Ellipsis:      # tuple[int, str]：位置固定
            return {"type": "array", "prefixItems": [self.schema(a, param) for a in args],
                    "minItems": len(args), "maxItems": len(args)}
        if origin is tuple or origin in SEQUENCES:                    # list[T]、tuple[T, ...]、set[T]
            schema = {"type": "array"}
            items = self.schema(args[0], f"{param}[]") if args else {}
            if items:
                schema["items"] = items
            if origin in (set, frozenset, collections.abc.Set):
                schema["uniqueItems"] = True
            return schema
        if origin in MAPPINGS:                                         # dict[str, T]
            if args and unwrap(args[0]) not in (str, Any):
                self.fail(param, f"JSON 对象的键只能是字符串，{tp!r} 的键类型无法表达。请改用 dict[str, ...]。")
            values = self.schema(args[1], f"{param}{{}}") if args else {}
            return {"type": "object", "additionalProperties": values} if values else {"type": "object"}
        if tp in SIMPLE:
            return dict(SIMPLE[tp])
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return enum_schema([m.value for m in tp], self, param)
            if hasattr(tp, "model_json_schema") or dataclasses.is_dataclass(tp) or is_typeddict(tp):
                return self._class(tp, param)
            # 没有对应 JSON 类型的类（Path、Decimal……）：按字符串收，调用时用 类(值) 转换
            self.warnings.append(f"参数 {param} 的类型 {tp.__name__} 没有对应的 JSON 类型，已按字符串处理"
                                 f"（调用时用 {tp.__name__}(值) 转换）。")
            return {"type": "string"}
        self.fail(param, f"无法把注解 {tp!r} 翻译成 JSON Schema。请改用 str、int、list[...] 这类能用 JSON 表达的类型。")

    def _annotated(self, tp: Any, param: str) -> dict:
        inner, *extras = get_args(tp)
        notes = [m for m in extras if isinstance(m, str)]
        if len(notes) == len(extras):                  # Annotated[int, "说明"]：说明就是 description
            schema = self.schema(inner, param)
        else:                                          # Annotated[int, Field(ge=1)]：约束交给 pydantic 翻译
            schema = self._pydantic(tp, param)
        if notes and "description" not in schema:
            schema = {"description": " ".join(notes), **schema}
        return schema

    def _class(self, cls: type, param: str) -> dict:
        if cls in self.names:                          # 同一个类只定义一次；递归引用也走这里
            return {"$ref": f"#/$defs/{self.names[cls]}"}
        if hasattr(cls, "model_json_schema"):
            return self._pydantic(cls, param)
        name = self._def_name(cls)
        self.names[cls] = name
        self.defs[name] = {}                           # 先占位，字段里引用到自己时已经有名字了
        hints = typing.get_type_hints(cls, include_extras=True)
        if dataclasses.is_dataclass(cls):
            fields = [f for f in dataclasses.fields(cls) if f.init]
            keys = [f.name for f in fields]
            required = [f.name for f in fields
                        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
            defaults = {f.name: f.default for f in fields
                        if f.default is not dataclasses.MISSING and is_json_value(f.default)}
        else:                                          # TypedDict
            keys, required, defaults = list(hints), [k for k in hints if k in cls.__required_keys__], {}
        properties = {}
        for key in keys:
            properties[key] = self.schema(hints.get(key, Any), f"{param}.{key}")
            if key in defaults:
                properties[key]["default"] = to_json(defaults[key])
        schema = {"type": "object", "properties": properties, "required": required}
        if dataclasses.is_dataclass(cls):
            schema["additionalProperties"] = False     # dataclass 的构造函数不收多余的键
        doc = cls.__dict__.get("__doc__")
        if doc and not doc.startswith(cls.__name__ + "("):   # dataclass 自动生成的 doc 不算说明
            schema = {"description": " ".join(doc.split()), **schema}
        self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}

    def _pydantic(self, tp: Any, param: str) -> dict:
        from pydantic import TypeAdapter               # 只有用到 pydantic 类型时才导入（约 100 ms）
        try:
            schema = TypeAdapter(tp).json_schema()
        except Exception as exc:
            self.fail(param, f"pydantic 无法为 {tp!r} 生成 schema：{type(exc).__name__}: {exc}")
        for name, definition in schema.pop("$defs", {}).items():   # 把 pydantic 的 $defs 提到参数的根上
            if self.defs.get(name, definition) != definition:
                self.fail(param, f"有两个不同的类都叫 {name}，$defs 里放不下。请给其中一个改名。")
            self.defs[name] = definition
        if isinstance(tp, type) and "$ref" not in schema:        # 模型本身也放进 $defs，和 dataclass 一致
            name = self._def_name(tp)
            self.defs[name] = schema
            schema = {"$ref": f"#/$defs/{name}"}
        if isinstance(tp, type):
            self.names[tp] = schema["$ref"].rsplit("/", 1)[-1]
        return schema

    def _def_name(self, cls: type) -> str:
        name = cls.__name__
        if name in self.defs:                          # 不同模块里的同名类
            name = re.sub(r"\W", "_", f"{cls.__module__}.{cls.__qualname__}")
        return name


def is_typeddict(tp: type) -> bool:
    # typing 和 typing_extensions 的 TypedDict 都是带 __required_keys__ 的 dict 子类
    return issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def enum_schema(values: list, builder: SchemaBuilder, param: str) -> dict:
    """Literal / Enum → {"type": ..., "enum": [...]}；同一种类型时写上 type，模型更容易看懂。"""
    kinds = []
    for value in values:
        if not isinstance(value, (str, int, float, bool, NoneType)):
            builder.fail(param, f"枚举值 {value!r} 不是 JSON 能表达的字符串、数字或布尔值。")
        kinds.append(json_type(value))
    schema = {"enum": list(values)}
    if len(set(kinds)) == 1:
        schema = {"type": kinds[0], **schema}
    return schema


def json_type(value: Any) -> str:
    """Python 值在 JSON Schema 里的类型名。"""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", NoneType: "null", list: "array", dict: "object"}.get(type(value), "object")


def accepts_null(schema: dict) -> bool:
    """这个 schema 接受 null 吗？（保守判断：$ref 指向的类一律当作不接受）"""
    if "anyOf" in schema:
        return any(accepts_null(s) for s in schema["anyOf"])
    if "enum" in schema:
        return None in schema["enum"]
    if "type" in schema:
        return "null" in (schema["type"] if isinstance(schema["type"], list) else [schema["type"]])
    return "$ref" not in schema and "const" not in schema


def or_null(schema: dict) -> dict:
    """让 schema 也接受 null：简单类型写成 ["integer", "null"]，其它的包一层 anyOf。"""
    if accepts_null(schema):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema:
        nullable = {**schema, "type": [kind, "null"]}
        if "enum" in nullable:
            nullable["enum"] = [*nullable["enum"], None]
        return nullable
    inner = {k: v for k, v in schema.items() if k != "description"}
    nullable = {"anyOf": [inner, {"type": "null"}]}
    return {"description": schema["description"], **nullable} if "description" in schema else nullable


def is_json_value(value: Any) -> bool:
    """这个默认值能写成 JSON 吗？（Enum、tuple、日期先按 to_json 的规则换算）"""
    if value is None or isinstance(value, (str, bool, int, enum.Enum, datetime.date, datetime.time)):
        return not isinstance(value, enum.Enum) or is_json_value(value.value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(is_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json_value(v) for k, v in value.items())
    return False


def to_json(value: Any) -> Any:
    """默认值写进 schema 时的 JSON 形式：Enum 取值、tuple/set 变数组、日期变 ISO 字符串。"""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list, set, frozenset)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


# ═══════════════════════════════════════════════════════════════ 4. 严格模式

def strict_schema(schema: dict, where: str) -> dict:
    """OpenAI strict：每层对象列出全部属性、全部必填、禁止额外字段；原本可选的改成“值或 null”。"""

    def visit(node: Any, path: str) -> Any:
        if not isinstance(node, dict):
            return node
        node = dict(node)
        if not any(k in node for k in ("type", "enum", "const", "anyOf", "$ref")):
            raise ValueError(f"{where} 的参数 {path or '（根）'} 没有具体类型（Any 或没写注解），"
                             f"OpenAI 严格模式要求每个值都有类型。请写上具体注解，或不用 strict。")
        kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
        if "object" in kinds:
            if not node.get("properties") and path:
                raise ValueError(f"{where} 的参数 {path} 是键不固定的字典，OpenAI 严格模式无法表达。"
                                 f"请改用 TypedDict、dataclass 或 pydantic 模型列出每个键，或不用 strict。")
            if node.get("additionalProperties", False) is not False:
                raise ValueError(f"{where} 的 {path or '参数'} 接受任意额外字段（**kwargs 或开放字典），"
                                 f"OpenAI 严格模式无法表达。请列出具体参数，或不用 strict。")
            required = set(node.get("required", []))
            properties = node.get("properties", {})
            node["properties"] = {key: visit(sub if key in required else _optional(sub), join_path(path, key))
                                  for key, sub in properties.items()}
            node["required"] = list(properties)
            node["additionalProperties"] = False
        if "items" in node:
            node["items"] = visit(node["items"], f"{path}[]")
        for key in ("prefixItems", "anyOf"):
            if key in node:
                node[key] = [visit(sub, path) for sub in node[key]]
        if "$defs" in node:
            node["$defs"] = {name: visit(sub, name) for name, sub in node["$defs"].items()}
        return node

    return visit(schema, "")


def _optional(schema: dict) -> dict:
    """strict 里可选参数也必须出现：改成“值或 null”。strict 不认 default，就把默认值写进说明。"""
    schema = dict(schema)
    if "default" in schema:
        default = json.dumps(schema.pop("default"), ensure_ascii=False)
        schema["description"] = f"{schema.get('description', '')}（传 null 表示用默认值 {default}）".lstrip()
    return or_null(schema)


def join_path(path: str, key: str) -> str:
    """参数路径，用在报错里：order.items、address.city。"""
    return f"{path}.{key}" if path else key


if __name__ == "__main__":
    from typing import Optional

    builder = SchemaBuilder("示例")
    for annotation in (int, list[str], Optional[int], Literal["c", "f"], dict[str, float], tuple[int, str]):
        print(f"{annotation!r:45} → {json.dumps(builder.schema(annotation, 'x'), ensure_ascii=False)}")
    print(read_docstring("把两个数相加。\n\nArgs:\n    a: 第一个数\n    b: 第二个数\n"))
