"""ToolRegistry：写一个普通函数，加一行装饰器，模型需要的 JSON Schema 就从函数签名推出来。

    registry = ToolRegistry()

    @registry.tool("查询指定城市的当前天气")
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str: ...

    registry.to_schemas()                                 # 交给模型的 tools 列表
    registry.invoke("get_weather", '{"city": "北京"}')    # 永不抛异常，返回给模型看的文本

函数和 schema 只写一份，两者就不会“漂移”。读这个文件的顺序：
1. 注册：装饰器登记函数，登记时就把 schema 算好，注解写错在导入时就报错。
2. 类型 → JSON Schema：一张小表加几条规则；pydantic 模型交给 pydantic。
3. 严格模式：OpenAI strict 需要的改写。
4. 调用：看得见的宽松转换（"5" → 5）→ jsonschema 校验 → 变成 Python 对象 → 执行 → 结果变文本。
jsonschema、docstring-parser、pydantic、asyncio 都在第一次用到时才导入，所以 import 本模块很快。
"""
from __future__ import annotations

import collections.abc
import copy
import dataclasses
import datetime
import enum
import inspect
import json
import math
import re
import time
import types
import typing
from typing import Annotated, Any, Callable, Literal, Optional, Union, get_args, get_origin

MAX_RESULT_CHARS = 4000                          # 工具结果超过这个长度就截断：上下文窗口很贵
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI 对工具名的要求
NoneType = type(None)


# ═══════════════════════════════════════════════════════════════ 1. 注册

@dataclasses.dataclass
class Tool:
    """一个登记好的工具：函数本身 + 登记时算好的 schema 和警告。"""
    name: str
    description: str
    func: Callable
    parameters: dict                     # JSON Schema（Draft 2020-12），即 tools[i].function.parameters
    warnings: list[str]
    is_async: bool
    _annotations: dict = dataclasses.field(default_factory=dict, repr=False)   # 参数名 -> 注解
    _positional: list = dataclasses.field(default_factory=list, repr=False)    # 只能按位置传的参数
    _extra_type: Any = dataclasses.field(default=None, repr=False)             # **kwargs 的注解
    _validator: Any = dataclasses.field(default=None, repr=False)              # 第一次校验时才建
    _strict: dict | None = dataclasses.field(default=None, repr=False)

    def schema(self, strict: bool = False) -> dict:
        """这个工具在 OpenAI tools 列表里的一项。"""
        parameters = self.parameters
        if strict:
            if self._strict is None:
                self._strict = strict_schema(self.parameters, f"工具 {self.name}")
            parameters = self._strict
        function = {"name": self.name, "description": self.description, "parameters": parameters}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}


class ToolRegistry:
    def __init__(self, *, max_result_chars: int = MAX_RESULT_CHARS, timeout: float | None = None):
        self.tools: dict[str, Tool] = {}
        self.max_result_chars = max_result_chars
        self.timeout = timeout           # 秒；None 表示不限（沙箱另有硬性的时间上限）

    def tool(self, description: str | Callable | None = None, *, name: str | None = None):
        """@registry.tool("给模型看的描述")、@registry.tool 或 @registry.tool(name="x")。函数原样返回。"""
        if callable(description):        # 不带括号的 @registry.tool：参数就是函数本身
            return self._register(description, None, name)
        return lambda func: self._register(func, description, name)

    def _register(self, func: Callable, description: str | None, name: str | None) -> Callable:
        tool = build_tool(func, description, name)
        if tool.name in self.tools:      # 静默覆盖是个坑：两个模块各写一个 search，只剩一个
            other = self.tools[tool.name].func
            raise ValueError(f"工具名 {tool.name} 已被函数 {other.__module__}.{other.__qualname__} "
                             f"注册，不能重复注册。请给其中一个改名，或用 name= 指定别的名字。")
        self.tools[tool.name] = tool
        return func

    def to_schemas(self, strict: bool = False) -> list[dict]:
        """OpenAI 的 tools 列表。schema 在注册时已算好，这里只是读；返回的是拷贝，改了也不影响注册表。"""
        return [_copy_json(tool.schema(strict)) for tool in self.tools.values()]

    def warnings(self) -> dict[str, list[str]]:
        """工具名 -> 老师希望学生看到的问题（中文）。"""
        return {name: list(tool.warnings) for name, tool in self.tools.items()}

    # ── 调用（用到的辅助函数在第 4 部分）

    def validate(self, name: str, args: dict | str | None) -> Validation:
        """宽松转换 → 补默认值 → 按发布出去的 schema 校验 → 变成函数要的 Python 对象。"""
        tool = self.tools.get(name)
        if tool is None:
            import difflib
            close = difflib.get_close_matches(str(name), self.tools, n=1)
            guess = f"（是不是想用 {close[0]}？）" if close else ""
            return Validation({}, [f"没有名为 {json.dumps(name, ensure_ascii=False)} 的工具{guess}"], [], "unknown_tool",
                              f"请从这些工具中选择：{'、'.join(self.tools) or '（注册表是空的）'}")
        coercions: list[str] = []
        args, problem = _parse_arguments(args, coercions)
        if problem:
            return Validation({}, [problem], coercions, "invalid_json",
                              "请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）")
        schema = tool.parameters
        defs = schema.get("$defs", {})
        args = _coerce(args, schema, defs, "", coercions)
        for key, prop in schema["properties"].items():
            if key not in args and "default" in prop:
                args[key] = copy.deepcopy(prop["default"])
        problems, hint = _check(tool, args)
        call: tuple = ((), {})
        if not problems:
            call, problems, hint = _to_call(tool, args)
        return Validation(args, problems, coercions, "invalid_arguments" if problems else None, hint, call)


    def call(self, name: str, args: dict | str | None = None) -> ToolOutcome:
        """执行一次工具调用。永不抛异常：任何失败都变成一段给模型看的文本。"""
        start = time.perf_counter()

        def outcome(ok, content, code=None, arguments=None, problems=(), coercions=()):
            return ToolOutcome(ok, content, code, round((time.perf_counter() - start) * 1000, 3),
                               arguments, list(problems), list(coercions))

        try:
            check = self.validate(name, args)
        except Exception as exc:             # 兜底：校验本身出错也不能让调用方崩掉
            return outcome(False, error_text("invalid_arguments", f"参数无法校验：{type(exc).__name__}: {exc}",
                                             "请检查参数后重试"), "invalid_arguments")
        if not check.ok:
            label = "；".join(check.problems)
            return outcome(False, error_text(check.error_code, label, check.hint), check.error_code,
                           None, check.problems, check.coercions)
        tool = self.tools[name]
        positional, keywords = check._call
        try:
            result = _run(tool, positional, keywords, self.timeout)
        except _Timeout:
            return outcome(False, error_text("timeout", f"{name} 超过 {self.timeout:g} 秒没有返回",
                                             "请稍后重试，或缩小请求的范围"),
                           "timeout", check.arguments, (), check.coercions)
        except (Exception, SystemExit) as exc:
            message = _shorten(f"{type(exc).__name__}: {exc}", 300)
            return outcome(False, error_text("tool_exception", f"{name} 执行出错：{message}",
                                             "请检查参数是否合理后重试，或换一种做法"),
                           "tool_exception", check.arguments, (), check.coercions)
        return outcome(True, format_result(result, self.max_result_chars), None, check.arguments, (), check.coercions)


    def invoke(self, name: str, args: dict | str | None = None) -> str:
        """给模型的文本结果，就是 call(...).content。"""
        return self.call(name, args).content


def _copy_json(value: Any) -> Any:
    """JSON 数据的深拷贝（只有 dict、list 和不可变的标量），比 copy.deepcopy 快几倍。"""
    if type(value) is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy_json(v) for v in value]
    return value


def build_tool(func: Callable, description: str | None = None, name: str | None = None) -> Tool:
    """读函数签名、类型注解和文档字符串，得到 Tool。注解有问题时抛 TypeError，指明函数和参数。"""
    name = name or func.__name__
    if not _TOOL_NAME.match(name):
        raise ValueError(f"工具名 {name!r} 不合法：只能用 1~64 个英文字母、数字、_ 或 -。请用 name= 指定一个。")
    where = f"工具 {name}（函数 {func.__qualname__}）"
    summary, param_docs = read_docstring(func.__doc__)
    warnings = []
    description = description if description is not None else summary
    if not description.strip():
        warnings.append("没有描述：模型只能凭工具名猜用途。请在 @registry.tool(\"...\") 里写一句给模型看的说明。")

    hints = _type_hints(func, where)     # 还原字符串注解（from __future__ import annotations）
    builder = _SchemaBuilder(where)
    properties, required, undocumented = {}, [], []
    tool = Tool(name, description, func, {}, warnings, inspect.iscoroutinefunction(func))
    extra: Any = False                   # 没有 **kwargs 时，函数不接受多余的参数
    signature = inspect.signature(func)
    for pname, p in signature.parameters.items():
        kind, default = p.kind, p.default
        annotation = hints.get(pname, Any)
        if pname not in hints:
            warnings.append(f"参数 {pname} 没有类型注解：schema 不限制它的类型，模型可能传任何值。"
                            f"请加上注解，例如 {pname}: str。")
        if kind is inspect.Parameter.VAR_POSITIONAL:
            warnings.append(f"*{pname} 无法用 JSON 按名字传入，已从 schema 中省略。")
            continue
        if kind is inspect.Parameter.VAR_KEYWORD:
            warnings.append(f"**{pname} 接受任意参数名：schema 允许额外字段（严格模式无法表达）。")
            extra = builder.schema(annotation, pname) or True
            tool._extra_type = annotation
            continue
        schema = builder.schema(annotation, pname)
        if default is None and not accepts_null(schema):
            # def f(limit: int = None)：函数显然能处理 None，schema 也得接受 null
            schema, annotation = or_null(schema), Optional[annotation]
            warnings.append(f"参数 {pname} 的默认值是 None，但注解没写 Optional：已按“可为 null”处理。"
                            f"建议写成 {pname}: ... | None = None。")
        if "description" not in schema:
            if pname in param_docs:      # Annotated 里写的说明优先，其次才是文档字符串
                schema = {"description": param_docs[pname], **schema}
            else:
                undocumented.append(pname)
        if default is inspect.Parameter.empty:
            required.append(pname)
        elif _is_json_value(default):    # 不能写成 JSON 的默认值就不写进 schema，调用时函数自己补
            schema["default"] = _to_json(default)
        properties[pname] = schema
        tool._annotations[pname] = annotation
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            tool._positional.append(pname)

    if undocumented:
        warnings.append(f"参数 {'、'.join(undocumented)} 没有说明：模型只能凭参数名猜含义。"
                        f"可以写 Annotated[类型, \"说明\"]，或在文档字符串的 Args 段里写。")
    for documented in param_docs.keys() - properties.keys():
        if documented.lstrip("*") not in signature.parameters:
            warnings.append(f"文档字符串写了参数 {documented}，函数签名里却没有：文档和代码已经不一致。")
    warnings.extend(builder.warnings)

    tool.parameters = {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": extra}
    if builder.defs:                     # dataclass / TypedDict / pydantic 模型放在根上的 $defs 里
        tool.parameters["$defs"] = builder.defs
    return tool


def _type_hints(func: Callable, where: str) -> dict:
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


# 文档字符串：先用正则便宜地认出风格，再只调用那一种解析器。
# docstring-parser 的自动识别会把每种解析器都跑一遍（约 90 µs），认准风格只跑一种；没有参数段就不解析。
_REST = re.compile(r"^\s*:param\b", re.M)
_NUMPY = re.compile(r"^\s*Parameters\s*\n\s*-{3,}\s*$", re.M)
_GOOGLE = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$", re.M)


_PARSERS: dict[str, Callable] = {}


def read_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """返回 (摘要, {参数名: 说明})。摘要是第一段文字。"""
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
    params = _PARSERS[style](doc).params
    return summary, {p.arg_name: " ".join(p.description.split()) for p in params if p.description}


# ═══════════════════════════════════════════════════════════════ 2. 类型 → JSON Schema

_SIMPLE = {
    str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"}, bool: {"type": "boolean"},
    list: {"type": "array"}, tuple: {"type": "array"}, dict: {"type": "object"},
    set: {"type": "array", "uniqueItems": True}, frozenset: {"type": "array", "uniqueItems": True},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
}
_SEQUENCES = (list, collections.abc.Sequence, collections.abc.Iterable, set, frozenset, collections.abc.Set)
_MAPPINGS = (dict, collections.abc.Mapping)


def _unwrap(tp: Any) -> Any:
    """去掉不影响 JSON 形状的外壳：NewType、TypedDict 的 Required/NotRequired/ReadOnly。"""
    while True:
        if hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        elif getattr(get_origin(tp), "_name", None) in ("Required", "NotRequired", "ReadOnly"):
            tp = get_args(tp)[0]
        else:
            return tp


class _SchemaBuilder:
    """把注解翻译成 schema 片段。类（dataclass、TypedDict、pydantic 模型）进 $defs，用 $ref 引用，递归类型也就不怕了。"""

    def __init__(self, where: str):
        self.where = where
        self.defs: dict[str, dict] = {}
        self.names: dict[Any, str] = {}   # 类 -> $defs 里的名字
        self.warnings: list[str] = []

    def fail(self, param: str, why: str):
        raise TypeError(f"{self.where} 的参数 {param}：{why}")

    def schema(self, tp: Any, param: str) -> dict:
        if type(tp) is type and tp in _SIMPLE:          # 最常见的 str、int……直接查表
            return dict(_SIMPLE[tp])
        tp = _unwrap(tp)
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
        if origin is tuple or origin in _SEQUENCES:                   # list[T]、tuple[T, ...]、set[T]
            schema = {"type": "array"}
            items = self.schema(args[0], f"{param}[]") if args else {}
            if items:
                schema["items"] = items
            if origin in (set, frozenset, collections.abc.Set):
                schema["uniqueItems"] = True
            return schema
        if origin in _MAPPINGS:                                        # dict[str, T]
            if args and _unwrap(args[0]) not in (str, Any):
                self.fail(param, f"JSON 对象的键只能是字符串，{tp!r} 的键类型无法表达。请改用 dict[str, ...]。")
            values = self.schema(args[1], f"{param}{{}}") if args else {}
            return {"type": "object", "additionalProperties": values} if values else {"type": "object"}
        if tp in _SIMPLE:
            return dict(_SIMPLE[tp])
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return enum_schema([m.value for m in tp], self, param)
            if hasattr(tp, "model_json_schema") or dataclasses.is_dataclass(tp) or _is_typeddict(tp):
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
                        if f.default is not dataclasses.MISSING and _is_json_value(f.default)}
        else:                                          # TypedDict
            keys, required, defaults = list(hints), [k for k in hints if k in cls.__required_keys__], {}
        properties = {}
        for key in keys:
            properties[key] = self.schema(hints.get(key, Any), f"{param}.{key}")
            if key in defaults:
                properties[key]["default"] = _to_json(defaults[key])
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


def _is_typeddict(tp: type) -> bool:
    # typing 和 typing_extensions 的 TypedDict 都是带 __required_keys__ 的 dict 子类
    return issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def enum_schema(values: list, builder: _SchemaBuilder, param: str) -> dict:
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


def _is_json_value(value: Any) -> bool:
    """这个默认值能写成 JSON 吗？（Enum、tuple、日期先按 _to_json 的规则换算）"""
    if value is None or isinstance(value, (str, bool, int, enum.Enum, datetime.date, datetime.time)):
        return not isinstance(value, enum.Enum) or _is_json_value(value.value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_is_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_value(v) for k, v in value.items())
    return False


def _to_json(value: Any) -> Any:
    """默认值写进 schema 时的 JSON 形式：Enum 取值、tuple/set 变数组、日期变 ISO 字符串。"""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list, set, frozenset)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


# ═══════════════════════════════════════════════════════════════ 3. 严格模式

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
            node["properties"] = {key: visit(sub if key in required else _optional(sub), _join(path, key))
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


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ═══════════════════════════════════════════════════════════════ 4. 调用

@dataclasses.dataclass
class Validation:
    arguments: dict                      # 转换后、补好默认值的参数（JSON 形式）
    problems: list[str]                  # 每条都写明参数、期望什么、收到什么
    coercions: list[str]                 # 看得见的转换记录，如 count: "5" → 5
    error_code: str | None = None
    hint: str = ""                       # 给模型的下一步建议（“请……”）
    _call: tuple = dataclasses.field(default=((), {}), repr=False)   # 真正传给函数的 (位置参数, 关键字参数)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclasses.dataclass
class ToolOutcome:
    ok: bool
    content: str                         # 回填给模型的文本
    error_code: str | None               # unknown_tool / invalid_json / invalid_arguments / tool_exception / timeout
    duration_ms: float
    arguments: dict | None               # 实际执行时的参数
    problems: list[str]
    coercions: list[str]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


_LABELS = {"unknown_tool": "未知工具", "invalid_json": "参数格式错误", "invalid_arguments": "参数错误",
           "tool_exception": "工具异常", "timeout": "超时"}


def error_text(code: str, conclusion: str, hint: str) -> str:
    """所有失败都用同一个形状：状态、结论、下一步怎么做。模型读得懂，界面也好展示。"""
    return f"❌ [{_LABELS[code]}] {conclusion.rstrip('。.')}。{hint}。"


def _parse_arguments(args: Any, notes: list[str]) -> tuple[dict, str | None]:
    """模型给的参数可能是 dict，也可能是一段（可能写坏了的）JSON 文本。"""
    if args is None or (isinstance(args, str) and not args.strip()):
        return {}, None                  # 无参数工具常见的空字符串
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except json.JSONDecodeError as exc:
            return {}, f"参数不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列附近出错（{exc.msg}）"
        if isinstance(parsed, str):      # 有的模型会把 JSON 再包一层字符串
            notes.append("参数被多编码了一层字符串，已解开")
            return _parse_arguments(parsed, notes)
        args = parsed
    if not isinstance(args, dict):
        return {}, f"参数应为 JSON 对象（{{\"参数名\": 值}}），收到{_received(args)}"
    return args, None


# ── 宽松转换：只在值的类型不被 schema 接受时才动手，每次改动都记一笔

_INTEGER = re.compile(r"[-+]?\d+")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_NOTHING = object()


def _coerce(value: Any, schema: dict, defs: dict, path: str, notes: list[str]) -> Any:
    schema = _resolve(schema, defs)
    allowed = _json_types(schema, defs)
    if allowed is not None and not _fits(value, allowed):
        new = _convert_text(value, allowed)
        if new is not _NOTHING:
            notes.append(f"{path}: {_shorten(_dumps(value), 40)} → {_shorten(_dumps(new), 40)}")
            value = new
    if isinstance(value, dict) and (obj := _arm(schema, defs, "object")):
        return _coerce_object(value, obj, defs, path, notes)
    if isinstance(value, list) and (arr := _arm(schema, defs, "array")):
        prefix = arr.get("prefixItems", [])
        return [_coerce(item, prefix[i] if i < len(prefix) else arr.get("items", {}), defs, f"{path}[{i}]", notes)
                for i, item in enumerate(value)]
    return value


def _coerce_object(value: dict, schema: dict, defs: dict, path: str, notes: list[str]) -> dict:
    properties, required = schema.get("properties", {}), schema.get("required", [])
    extra = schema.get("additionalProperties")
    out = {}
    for key, item in value.items():
        sub = properties.get(key, extra if isinstance(extra, dict) else None)
        where = _join(path, key)
        if sub is None:
            out[key] = item              # 未知的键留给校验去报
        elif item is None and key not in required and not accepts_null(_resolve(sub, defs)):
            # 严格模式下模型用 null 表示“不填”：换成默认值，或者不传、让函数用自己的默认值
            if "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
                notes.append(f"{where}: null → 默认值 {_shorten(_dumps(sub['default']), 40)}")
            else:
                notes.append(f"{where}: null → 不传（用函数的默认值）")
        else:
            out[key] = _coerce(item, sub, defs, where, notes)
    return out


def _resolve(schema: dict, defs: dict) -> dict:
    while "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema


def _json_types(schema: dict, defs: dict) -> set | None:
    """schema 允许的 JSON 类型集合；None 表示不限。"""
    if "type" in schema:
        return {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
    if "enum" in schema:
        return {json_type(v) for v in schema["enum"]}
    if "anyOf" in schema:
        kinds: set = set()
        for arm in schema["anyOf"]:
            arm_kinds = _json_types(_resolve(arm, defs), defs)
            if arm_kinds is None:
                return None
            kinds |= arm_kinds
        return kinds
    return None


def _fits(value: Any, allowed: set) -> bool:
    kind = json_type(value)
    if kind in allowed:
        return True
    if kind == "integer" and "number" in allowed:
        return True
    return kind == "number" and "integer" in allowed and value.is_integer()   # JSON 里 5.0 也是整数


def _convert_text(value: Any, allowed: set) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "string" in allowed:
        return str(value)                # 邮编、编号常被模型写成数字
    if not isinstance(value, str):
        return _NOTHING
    text = value.strip()
    if "integer" in allowed and _INTEGER.fullmatch(text):
        return int(text)
    if "number" in allowed and _NUMBER.fullmatch(text):
        return int(text) if _INTEGER.fullmatch(text) else float(text)
    if "boolean" in allowed and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if allowed & {"object", "array"} and text[:1] in ("{", "["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return _NOTHING
        return parsed if _fits(parsed, allowed) else _NOTHING
    return _NOTHING


def _arm(schema: dict, defs: dict, kind: str) -> dict | None:
    """schema 里描述 kind（object/array）的那一支（Optional[Model] 时是 anyOf 的一支）。"""
    for arm in schema.get("anyOf", [schema]):
        arm = _resolve(arm, defs)
        kinds = _json_types(arm, defs)
        if kinds and kind in kinds:
            return arm
    return None


# ── 校验：交给 jsonschema，再把它的英文报错翻译成给模型看的中文

_TYPE_NAMES = {"string": "字符串", "integer": "整数", "number": "数字", "boolean": "布尔值（true/false）",
               "array": "数组", "object": "对象", "null": "null"}
_FORMAT_NAMES = {"date": "日期字符串（如 \"2024-05-01\"）", "date-time": "日期时间字符串（如 \"2024-05-01T08:30:00\"）",
                 "time": "时间字符串（如 \"08:30:00\"）"}
_LIMITS = {"minimum": "应 ≥ {}", "maximum": "应 ≤ {}", "exclusiveMinimum": "应 > {}", "exclusiveMaximum": "应 < {}",
           "minLength": "长度应至少为 {}", "maxLength": "长度应不超过 {}", "minItems": "应至少有 {} 个元素",
           "maxItems": "应最多有 {} 个元素", "uniqueItems": "元素不能重复", "pattern": "应匹配正则 {}",
           "multipleOf": "应为 {} 的倍数", "minProperties": "应至少有 {} 个键", "maxProperties": "应最多有 {} 个键"}


def _check(tool: Tool, args: dict) -> tuple[list[str], str]:
    if tool._validator is None:          # jsonschema 导入要一百多毫秒：第一次校验时才导入，之后按工具缓存
        from jsonschema import Draft202012Validator
        tool._validator = Draft202012Validator(tool.parameters, format_checker=Draft202012Validator.FORMAT_CHECKER)
    problems: dict[str, str] = {}        # 问题 -> 建议；用 dict 去重并保持顺序
    for error in sorted(tool._validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path]):
        problems.update(_explain(error, tool.parameters.get("$defs", {})))
    hints = list(problems.values())
    return list(problems), hints[0] if len(hints) == 1 else "请逐条修正以上问题后重试"


def _explain(error: Any, defs: dict) -> dict[str, str]:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    kind, schema, value = error.validator, error.schema, error.instance
    if kind == "required":
        out = {}
        for key in (k for k in error.validator_value if k not in value):
            expected = _expected(schema.get("properties", {}).get(key, {}), defs)
            out[f"缺少必填参数 {_join(path, key)}（{expected}）"] = f"请补上 {key} 后重试"
        return out
    if kind == "additionalProperties":
        known = "、".join(schema.get("properties", {})) or "无"
        return {f"未知参数 {_join(path, key)}（可用参数：{known}）": f"请去掉 {key}，只用列出的参数"
                for key in value if key not in schema.get("properties", {})}
    received = _received(value)
    if kind in _LIMITS:
        rule = _LIMITS[kind].format(json.dumps(error.validator_value, ensure_ascii=False))
        return {f"参数 {path} {rule}，收到{received}": "请按这个限制修改后重试"}
    if kind in ("type", "enum", "const", "anyOf", "oneOf", "format", "$ref"):
        expected = _expected(schema, defs)
        return {f"参数 {path} 应为{expected}，收到{received}": f"请改为{expected}后重试"}
    return {f"参数 {path} 不符合要求（{error.message}），收到{received}": "请按参数说明修改后重试"}


def _expected(schema: dict, defs: dict) -> str:
    """用中文说出一个 schema 期望什么。"""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        keys = "、".join(_resolve(schema, defs).get("properties", {}))
        return f"对象 {name}（键：{keys}）" if keys else f"对象 {name}"
    if "enum" in schema:
        return "以下之一：" + "、".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "anyOf" in schema:
        return "或".join(_expected(arm, defs) for arm in schema["anyOf"])
    if schema.get("format") in _FORMAT_NAMES:
        return _FORMAT_NAMES[schema["format"]]
    kinds = schema.get("type")
    if kinds is None:
        return "任意值"
    names = []
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        name = _TYPE_NAMES.get(kind, kind)
        if kind == "array" and schema.get("items", {}).get("type"):
            name = f"数组（元素为{_expected(schema['items'], defs)}）"
        names.append(name)
    return "或".join(names)


def _received(value: Any) -> str:
    kind = {bool: "布尔值 ", int: "整数 ", float: "数字 ", str: "字符串 ", list: "数组 ", dict: "对象 ", NoneType: "空值 "}
    return kind.get(type(value), "") + _shorten(_dumps(value), 60)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ── 变成 Python 对象：JSON 里没有 Enum、tuple、日期和 dataclass，函数却要它们

def _to_call(tool: Tool, args: dict) -> tuple[tuple, list[str], str]:
    positional, keywords, problems, hints = [], {}, [], []
    for key, value in args.items():
        try:
            converted = to_python(tool._annotations.get(key, tool._extra_type or Any), value)
        except (TypeError, ValueError):     # 多半是日期格式不对：jsonschema 不检查 date-time
            schema = tool.parameters["properties"].get(key, {})
            expected = _expected(schema, tool.parameters.get("$defs", {}))
            problems.append(f"参数 {key} 应为{expected}，收到{_received(value)}")
            hints.append(f"请改为{expected}后重试")
            continue
        if key in tool._positional:
            positional.append(converted)
        else:
            keywords[key] = converted
    hint = hints[0] if len(hints) == 1 else "请逐条修正以上问题后重试"
    return (tuple(positional), keywords), problems, hint


def to_python(tp: Any, value: Any) -> Any:
    """把（已通过校验的）JSON 值变成注解要的 Python 对象；对不上时抛 ValueError，联合类型靠它挑分支。"""
    tp = _unwrap(tp)
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return to_python(args[0], value)
    if tp is Any or tp is object:
        return value
    if tp is None or tp is NoneType:
        if value is None:
            return None
        raise ValueError("应为 null")
    if origin is Union or origin is types.UnionType:
        for arm in args:
            try:
                return to_python(arm, value)
            except (TypeError, ValueError):
                continue
        raise ValueError("不符合任何一个分支")
    if origin is Literal:
        for option in args:
            raw = option.value if isinstance(option, enum.Enum) else option
            if raw == value and json_type(raw) == json_type(value):
                return option
        raise ValueError("不在可选值里")
    if tp in _CONVERTERS:
        return _CONVERTERS[tp](value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    container = origin or tp
    if container in _SEQUENCES or container is tuple:
        if not isinstance(value, list):
            raise TypeError("应为数组")
        if container is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise ValueError("元素个数不对")
            return tuple(to_python(a, v) for a, v in zip(args, value))
        items = [to_python(args[0] if args else Any, v) for v in value]
        return container(items) if container in (list, tuple, set, frozenset) else items
    if container in _MAPPINGS:
        if not isinstance(value, dict):
            raise TypeError("应为对象")
        return {k: to_python(args[1] if args else Any, v) for k, v in value.items()}
    if isinstance(tp, type):
        if hasattr(tp, "model_validate"):                      # pydantic 模型自己会转换
            return tp.model_validate(value)
        if dataclasses.is_dataclass(tp) or _is_typeddict(tp):
            if not isinstance(value, dict):
                raise TypeError("应为对象")
            hints = typing.get_type_hints(tp, include_extras=True)
            fields = {k: to_python(hints.get(k, Any), v) for k, v in value.items()}
            return tp(**fields) if dataclasses.is_dataclass(tp) else fields
        return value if isinstance(value, tp) else tp(value)   # 按字符串收的类：Path("...")、Decimal("...")
    raise TypeError(f"无法转换为 {tp!r}")


def _exact(kind: type) -> Callable:
    def check(value):
        if type(value) is not kind:
            raise TypeError(f"应为 {kind.__name__}")
        return value
    return check


def _to_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise TypeError("应为整数")
    return int(value)


def _to_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("应为数字")
    return float(value)


def _iso(kind: type) -> Callable:
    def parse(value):
        if not isinstance(value, str):
            raise TypeError("应为字符串")
        return kind.fromisoformat(value)                        # 格式不对时抛 ValueError
    return parse


_CONVERTERS = {str: _exact(str), bool: _exact(bool), int: _to_int, float: _to_float,
               datetime.datetime: _iso(datetime.datetime), datetime.date: _iso(datetime.date),
               datetime.time: _iso(datetime.time)}


# ── 执行与结果

class _Timeout(Exception):
    pass


def _run(tool: Tool, positional: tuple, keywords: dict, timeout: float | None) -> Any:
    if tool.is_async:                    # async def 工具：在一个新的事件循环里等它跑完
        import asyncio

        async def main():
            try:
                return await asyncio.wait_for(tool.func(*positional, **keywords), timeout)
            except asyncio.TimeoutError:
                raise _Timeout from None

        return _without_running_loop(lambda: asyncio.run(main()))
    if timeout is None:
        return tool.func(*positional, **keywords)
    # Python 无法强行结束一个线程：超时后只是不再等它，结果丢弃。真正的硬超时由沙箱（独立进程）负责。
    import concurrent.futures
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(tool.func, *positional, **keywords)
    pool.shutdown(wait=False)
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        if future.done():                # 工具自己抛的 TimeoutError 照常算工具异常
            raise
        raise _Timeout from None


def _without_running_loop(run: Callable) -> Any:
    """asyncio.run 不能在已有事件循环的线程里调用（比如在异步的网页回调里）：那就换个线程跑。"""
    import asyncio
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def format_result(result: Any, limit: int = MAX_RESULT_CHARS) -> str:
    """tool 消息的 content 只能是字符串：非字符串转成 JSON（中文不转义），太长就截断并明确标出来。"""
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=_jsonable)
    if len(text) > limit:
        text = text[:limit] + f"\n…（结果过长已截断：共 {len(text)} 个字符，只保留了前 {limit} 个）"
    return text


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (enum.Enum, datetime.date, datetime.time, set, frozenset)):
        return _to_json(value)
    return str(value)


# ═══════════════════════════════════════════════════════════════ 自己跑一遍：python code/tool_registry.py

if __name__ == "__main__":
    demo = ToolRegistry()

    @demo.tool("查询指定城市的当前天气")
    def get_weather(city: Annotated[str, "城市名，如 北京"], unit: Literal["c", "f"] = "c") -> str:
        return f"{city} 晴，{25 if unit == 'c' else 77}°{unit.upper()}"

    @demo.tool
    def add(a: int, b: int = 1) -> int:
        """把两个整数相加。

        Args:
            a: 第一个加数
            b: 第二个加数
        """
        return a + b

    print(json.dumps(demo.to_schemas(), ensure_ascii=False, indent=2))
    print("警告：", json.dumps(demo.warnings(), ensure_ascii=False, indent=2))
    for name, arguments in [("get_weather", '{"city": "北京"}'), ("add", {"a": "5"}),
                            ("add", {"a": "abc"}), ("get_wether", {})]:
        print(f"{name}({arguments}) →", demo.invoke(name, arguments))
