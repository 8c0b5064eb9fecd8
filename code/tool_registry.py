"""ToolRegistry：写一个普通函数，加一行装饰器，模型需要的 JSON Schema 就从函数签名推出来。

这是参考实现（本工坊的页面、沙箱、循环用的都是它）。第一次读，先看 simple_registry.py：
同样的思路（装饰器登记、schema 由签名和文档字符串推出、jsonschema 检查、一个分派 dict），一百多行写完。

    registry = ToolRegistry()

    @registry.tool("查询指定城市的当前天气")
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str: ...

    registry.to_schemas()                                 # 交给模型的 tools 列表
    registry.invoke("get_weather", '{"city": "北京"}')    # 永不抛异常，返回给模型看的文本

函数和 schema 只写一份，两者就不会“漂移”。这个文件讲两件事：
1. 注册：装饰器登记函数，登记时就把 schema 算好，注解写错在导入时就报错。
2. 调用：校验参数 → 执行 → 结果变成文本；任何失败都变成同一种形状的文本交还给模型
   （结果的形状、错误标签、截断上限都在 tool_outcome.py，全项目共用）。
细节在两个兄弟模块里：type_schema.py 把类型注解翻译成 JSON Schema，
tool_arguments.py 把模型给的参数转换、校验、变成函数要的 Python 对象。
jsonschema、docstring-parser、pydantic、asyncio 都在第一次用到时才导入，所以 import 本模块很快。
"""
from __future__ import annotations

import dataclasses
import datetime
import enum
import inspect
import json
import re
import time
from typing import Any, Callable, Optional

from tool_arguments import (JSON_HINT, build_validator, coerce, convert_arguments, find_problems, parse_arguments,
                            shorten)
from tool_outcome import RESULT_LIMIT, ToolOutcome, clip, error_text
from type_schema import (SchemaBuilder, accepts_null, is_json_value, or_null, read_docstring,
                         resolve_annotations, strict_schema, to_json)

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # OpenAI 对工具名的要求；用 fullmatch（$ 会放过结尾的换行）


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
    # MCP 的工具注解（readOnlyHint / destructiveHint）：None 表示没说。只是给客户端的提示，不进 schema，
    # 也不是授权——真正拦住危险操作的是权限检查和沙箱（见 permissions.py）。
    read_only: bool | None = None
    destructive: bool | None = None
    _annotations: dict = dataclasses.field(default_factory=dict, repr=False)   # 参数名 -> 注解
    _positional: list = dataclasses.field(default_factory=list, repr=False)    # 只能按位置传的参数，按签名顺序
    _extra_type: Any = dataclasses.field(default=None, repr=False)             # **kwargs 的注解
    _validator: Any = dataclasses.field(default=None, repr=False)              # 第一次校验前才建
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

    def validator(self) -> Any:
        """按 parameters 校验参数的 jsonschema 校验器：第一次用到时才建，之后一直用这一个。"""
        if self._validator is None:
            self._validator = build_validator(self.parameters)
        return self._validator


class ToolRegistry:
    def __init__(self, *, max_result_chars: int = RESULT_LIMIT, timeout: float | None = None):
        self.tools: dict[str, Tool] = {}
        self.max_result_chars = max_result_chars     # 默认就是全项目那一个上限（tool_outcome.RESULT_LIMIT）
        self.timeout = timeout           # 秒；None 表示不限（沙箱另有硬性的时间上限）

    def tool(self, description: str | Callable | None = None, *, name: str | None = None,
             read_only: bool | None = None, destructive: bool | None = None) -> Callable:
        """@registry.tool("给模型看的描述")、@registry.tool 或 @registry.tool(name="x")。函数原样返回。
        read_only=True：只读，不改变任何东西；destructive=True：可能删改已有的东西（MCP 的工具注解）。"""
        if callable(description):        # 不带括号的 @registry.tool：参数就是函数本身
            return self._register(description, None, name)
        return lambda func: self._register(func, description, name, read_only, destructive)

    def _register(self, func: Callable, description: str | None, name: str | None,
                  read_only: bool | None = None, destructive: bool | None = None) -> Callable:
        tool = build_tool(func, description, name)
        tool.read_only, tool.destructive = read_only, destructive
        if read_only and destructive:    # MCP 规定 destructiveHint 只在“不是只读”时才有意义
            tool.warnings.append("read_only=True 又写了 destructive=True：只读的工具不会删改东西，两者矛盾。请只保留一个。")
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

    # ── 调用（第 2 部分讲细节）

    def validate(self, name: str, args: dict | str | None) -> Validation:
        """宽松转换 → 补默认值 → 按发布出去的 schema 校验 → 变成函数要的 Python 对象。"""
        tool = self.tools.get(name)
        if tool is None:
            problem, hint = unknown_tool(name, list(self.tools))
            return Validation({}, [problem], [], "unknown_tool", hint)
        coercions: list[str] = []
        args, problem = parse_arguments(args, coercions)
        if problem:
            return Validation({}, [problem], coercions, "invalid_json", JSON_HINT)
        args = coerce(args, tool.parameters, coercions)
        problems, hint = find_problems(tool.validator(), args)
        call: tuple = ((), {})
        if not problems:
            values, problems, hint = convert_arguments(args, tool._annotations, tool._extra_type, tool.parameters)
            # 只能按位置传的参数（def f(a, /)）按签名顺序放进位置参数，其余按名字传
            positional = []
            for param in tool._positional:
                if param not in values:
                    break
                positional.append(values.pop(param))
            call = (tuple(positional), values)
        return Validation(args, problems, coercions, "invalid_arguments" if problems else None, hint, call)

    def call(self, name: str, args: dict | str | None = None) -> ToolOutcome:
        """执行一次工具调用。永不抛异常：任何失败都变成一段给模型看的文本。
        交回的是 tool_outcome.ToolOutcome，失败文本由 tool_outcome.error_text 写：沙箱、循环、界面认的都是这一个形状，
        同一种失败在哪里看到的都是同一句话。duration_ms 只算校验 + 执行 + 结果转文本，不含一次性的准备。"""
        _get_ready(self.tools.get(name) if isinstance(name, str) else None)
        start = time.perf_counter()      # 从这里起才计时：duration_ms 只算这次调用本身

        def outcome(ok: bool, content: str, code: str | None = None, arguments: dict | None = None,
                    problems: tuple | list = (), coercions: tuple | list = (),
                    clipped_from: int | None = None) -> ToolOutcome:
            return ToolOutcome(ok, content, code, round((time.perf_counter() - start) * 1000, 3),
                               arguments, list(problems), list(coercions), clipped_from)

        try:
            check = self.validate(name, args)
        except Exception as exc:             # 兜底：校验本身出错也不能让调用方崩掉
            return outcome(False, error_text("invalid_arguments", f"参数无法校验：{_describe(exc)}",
                                             "请检查参数后重试"), "invalid_arguments")
        if not check.ok:
            label = "；".join(check.problems)
            return outcome(False, error_text(check.error_code, label, check.hint), check.error_code,
                           None, check.problems, check.coercions)
        positional, keywords = check._call
        try:
            result = _run(self.tools[name], positional, keywords, self.timeout)
        except _Timeout:
            return outcome(False, error_text("timeout", f"{name} 超过 {self.timeout:g} 秒没有返回",
                                             "请稍后重试，或缩小请求的范围"),
                           "timeout", check.arguments, (), check.coercions)
        except BaseException as exc:         # 学生的工具什么都可能抛：SystemExit、CancelledError……
            if isinstance(exc, KeyboardInterrupt):
                raise                        # Ctrl+C 是人要停下来，不是工具出错
            return outcome(False, error_text("tool_exception", f"{name} 执行出错：{_describe(exc)}",
                                             "请检查参数是否合理后重试，或换一种做法"),
                           "tool_exception", check.arguments, (), check.coercions)
        if isinstance(result, ToolOutcome):  # 工具自己判定了结果，通常是 failure("forbidden", ...)：业务规则不允许
            content, clipped_from = clip(result.content, self.max_result_chars)
            return outcome(result.ok, content, result.error_code, check.arguments, result.problems, check.coercions,
                           clipped_from)
        try:                                 # 返回值也可能转不成文本：str() 抛异常、循环引用、超长整数……
            content, clipped_from = format_result(result, self.max_result_chars)
        except Exception as exc:
            return outcome(False, error_text("tool_exception", f"{name} 的返回值无法转成文本：{_describe(exc)}",
                                             "请让工具返回字符串、数字、列表或字典"),
                           "tool_exception", check.arguments, (), check.coercions)
        return outcome(True, content, None, check.arguments, (), check.coercions, clipped_from)

    def invoke(self, name: str, args: dict | str | None = None) -> str:
        """给模型的文本结果，就是 call(...).content。"""
        return self.call(name, args).content


def build_tool(func: Callable, description: str | None = None, name: str | None = None) -> Tool:
    """读函数签名、类型注解和文档字符串，得到 Tool。注解有问题时抛 TypeError，指明函数和参数。"""
    name = name or func.__name__
    if not TOOL_NAME.fullmatch(name):
        raise ValueError(f"工具名 {name!r} 不合法：只能用 1~64 个英文字母、数字、_ 或 -。请用 name= 指定一个。")
    where = f"工具 {name}（函数 {func.__qualname__}）"
    warnings: list[str] = []
    summary, param_docs = read_docstring(func.__doc__, warnings)
    description = description if description is not None else summary
    if not description.strip():
        warnings.append("没有描述：模型只能凭工具名猜用途。请在 @registry.tool(\"...\") 里写一句给模型看的说明。")

    hints = resolve_annotations(func, where)     # 还原字符串注解（from __future__ import annotations）
    builder = SchemaBuilder(where)
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
        elif is_json_value(default):     # 不能写成 JSON 的默认值就不写进 schema，调用时函数自己补
            schema["default"] = to_json(default)
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


def _copy_json(value: Any) -> Any:
    """JSON 数据的深拷贝（只有 dict、list 和不可变的标量），比 copy.deepcopy 快几倍。"""
    if type(value) is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy_json(v) for v in value]
    return value


# ═══════════════════════════════════════════════════════════════ 2. 调用

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


def _describe(exc: BaseException) -> str:
    """异常的一句话说明。连 str(exc) 都可能抛异常（学生自己写的异常类），那就只报类名。"""
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception:
        text = type(exc).__name__
    return shorten(text, 300)


def unknown_tool(name: Any, names: list[str]) -> tuple[str, str]:
    """模型点了不存在的工具 -> (结论, 下一步)。猜一个最像的名字：模型多半只是拼错了。
    循环在执行函数说不清楚时也用这一句，所以同一个错在哪里看到的都一样。"""
    import difflib
    close = difflib.get_close_matches(str(name), names, n=1)
    guess = f"（是不是想用 {close[0]}？）" if close else ""
    return (f"没有名为 {json.dumps(name, ensure_ascii=False)} 的工具{guess}",
            f"请从这些工具中选择：{'、'.join(names) or '（没有可用的工具）'}")


# ── 执行与结果

def _get_ready(tool: Tool | None) -> None:
    """一次性的准备，放在计时之前：第一次校验要导入 jsonschema（一百多毫秒）并建校验器，
    执行 async 工具要导入 asyncio。算进 duration_ms 的话，第一次调用会显得慢一百倍。"""
    try:
        import difflib  # noqa: F401                           # 工具名写错时猜一个相近的
        from concurrent.futures import ThreadPoolExecutor  # noqa: F401   # 设了超时的同步工具在线程里跑
        if tool is not None:
            tool.validator()
            if tool.is_async:
                import asyncio  # noqa: F401
    except Exception:
        pass                             # 准备失败也不要紧：call 里的校验会再试一次，并把错误变成文本


class _Timeout(Exception):
    pass


def _run(tool: Tool, positional: tuple, keywords: dict, timeout: float | None) -> Any:
    if tool.is_async:                    # async def 工具：在一个新的事件循环里等它跑完
        import asyncio

        async def main() -> Any:
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


def format_result(result: Any, limit: int = RESULT_LIMIT) -> tuple[str, int | None]:
    """tool 消息的 content 只能是字符串：非字符串转成 JSON（中文不转义），太长就截断并明确标出来。
    -> (回填的文本, 截断前的长度；没截断是 None)，截断由 tool_outcome.clip 做。"""
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=_jsonable)
    return clip(text, limit)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (enum.Enum, datetime.date, datetime.time, set, frozenset)):
        return to_json(value)
    return str(value)


# ═══════════════════════════════════════════════════════════════ 自己跑一遍：python code/tool_registry.py

if __name__ == "__main__":
    from typing import Annotated, Literal

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
