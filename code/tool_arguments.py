"""模型给的参数 → 函数能用的参数。模型的输出不可信：JSON 可能写坏，类型可能不对，键可能是编的。

ToolRegistry.validate 按这个顺序调用本文件的函数：
1. parse_arguments：参数可能是 dict，也可能是一段（可能写坏了的）JSON 文本。
2. coerce：看得见的宽松转换（"5" → 5），每改一处都记一笔，让学生和模型都看得到。
3. find_problems：按发布出去的 schema 用 jsonschema 校验，把英文报错翻译成给模型看的中文。
4. convert_arguments：JSON 里没有 Enum、tuple、日期和 dataclass，函数却要它们：逐个转换。
校验器由 build_validator 建，每个工具一个，建好后一直用；jsonschema 导入要一百多毫秒，所以到这时才导入。
"""
from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import json
import re
import types
import typing
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin

from type_schema import MAPPINGS, SEQUENCES, NoneType, accepts_null, is_typeddict, join_path, json_type, unwrap


# ═══════════════════════════════════════════════════════════════ 1. 解析 JSON 文本

# 参数不是 JSON 对象时给模型的下一步。注册表和循环都用这一句，同样的坏 JSON 在哪条路上都得到同样的话
JSON_HINT = "请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）"


def parse_arguments(args: Any, notes: list[str]) -> tuple[dict, str | None]:
    """返回 (参数 dict, 问题)。问题不为 None 时说明参数根本不是一个 JSON 对象。"""
    if args is None or (isinstance(args, str) and not args.strip()):
        return {}, None                  # 无参数工具常见的空字符串
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except json.JSONDecodeError as exc:
            return {}, f"参数不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列附近出错（{exc.msg}）"
        if isinstance(parsed, str) and parsed.strip()[:1] in ("{", "[", ""):   # 有的模型会把 JSON 再包一层字符串
            notes.append("参数被多编码了一层字符串，已解开")
            return parse_arguments(parsed, notes)
        args = parsed
    if not isinstance(args, dict):
        return {}, f"参数应为 JSON 对象（{{\"参数名\": 值}}），收到{received_text(args)}"
    return args, None


# ═══════════════════════════════════════════════════════════════ 2. 宽松转换

# 只在值的类型不被 schema 接受时才动手，每次改动都记一笔（notes）
_INTEGER = re.compile(r"[-+]?\d+")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_NOTHING = object()                      # “转不了”，和 None（JSON 的 null）区分开


def coerce(args: dict, schema: dict, notes: list[str]) -> dict:
    """按工具的参数 schema 宽松转换，再补上默认值。返回新的 dict，不改调用方传进来的参数。"""
    defs = schema.get("$defs", {})
    args = _coerce(args, schema, defs, "", notes)
    for key, prop in schema["properties"].items():
        if key not in args and "default" in prop:
            args[key] = copy.deepcopy(prop["default"])
    return args


def _coerce(value: Any, schema: dict, defs: dict, path: str, notes: list[str]) -> Any:
    schema = resolve_ref(schema, defs)
    allowed = _json_types(schema, defs)
    if allowed is not None and not _fits(value, allowed):
        new = _convert_text(value, allowed)
        if new is not _NOTHING:
            notes.append(f"{path}: {shorten(dumps(value), 40)} → {shorten(dumps(new), 40)}")
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
        where = join_path(path, key)
        if sub is None:
            out[key] = item              # 未知的键留给校验去报
        elif item is None and key not in required and not accepts_null(resolve_ref(sub, defs)):
            # 严格模式下模型用 null 表示“不填”：换成默认值，或者不传、让函数用自己的默认值
            if "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
                notes.append(f"{where}: null → 默认值 {shorten(dumps(sub['default']), 40)}")
            else:
                notes.append(f"{where}: null → 不传（用函数的默认值）")
        else:
            out[key] = _coerce(item, sub, defs, where, notes)
    return out


def resolve_ref(schema: dict, defs: dict) -> dict:
    """顺着 {"$ref": "#/$defs/名字"} 找到真正的定义。"""
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
            arm_kinds = _json_types(resolve_ref(arm, defs), defs)
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
        arm = resolve_ref(arm, defs)
        kinds = _json_types(arm, defs)
        if kinds and kind in kinds:
            return arm
    return None


# ═══════════════════════════════════════════════════════════════ 3. 校验：交给 jsonschema，报错翻译成中文

_TYPE_NAMES = {"string": "字符串", "integer": "整数", "number": "数字", "boolean": "布尔值（true/false）",
               "array": "数组", "object": "对象", "null": "null"}
_FORMAT_NAMES = {"date": "日期字符串（如 \"2024-05-01\"）", "date-time": "日期时间字符串（如 \"2024-05-01T08:30:00\"）",
                 "time": "时间字符串（如 \"08:30:00\"）"}
_LIMITS = {"minimum": "应 ≥ {}", "maximum": "应 ≤ {}", "exclusiveMinimum": "应 > {}", "exclusiveMaximum": "应 < {}",
           "minLength": "长度应至少为 {}", "maxLength": "长度应不超过 {}", "minItems": "应至少有 {} 个元素",
           "maxItems": "应最多有 {} 个元素", "uniqueItems": "元素不能重复", "pattern": "应匹配正则 {}",
           "multipleOf": "应为 {} 的倍数", "minProperties": "应至少有 {} 个键", "maxProperties": "应最多有 {} 个键"}


def build_validator(schema: dict) -> Any:
    """每个工具建一次。校验用的就是发布给模型的那份 schema，两者不会不一致。"""
    from jsonschema import Draft202012Validator   # 导入要一百多毫秒：放在这里，import 本模块仍然很快
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def find_problems(validator: Any, args: dict) -> tuple[list[str], str]:
    """返回 (问题列表, 给模型的下一步建议)。每条问题都写明参数、期望什么、收到什么。"""
    defs = validator.schema.get("$defs", {})
    problems: dict[str, str] = {}        # 问题 -> 建议；用 dict 去重并保持顺序
    for error in sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path]):
        problems.update(_explain(error, defs))
    hints = list(problems.values())
    return list(problems), hints[0] if len(hints) == 1 else "请逐条修正以上问题后重试"


def _explain(error: Any, defs: dict) -> dict[str, str]:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    kind, schema, value = error.validator, error.schema, error.instance
    if kind == "required":
        out = {}
        for key in (k for k in error.validator_value if k not in value):
            expected = expected_text(schema.get("properties", {}).get(key, {}), defs)
            out[f"缺少必填参数 {join_path(path, key)}（{expected}）"] = f"请补上 {key} 后重试"
        return out
    if kind == "additionalProperties":
        known = "、".join(schema.get("properties", {})) or "无"
        unknown = [key for key in value if key not in schema.get("properties", {})]
        out = {}
        for key in unknown:
            meant = renamed_to(key, unknown, schema, value)
            guess, hint = ((f"是不是想用 {meant}？", f"请把 {key} 改成 {meant}") if meant
                           else ("", f"请去掉 {key}，只用列出的参数"))
            out[f"未知参数 {join_path(path, key)}（{guess}可用参数：{known}）"] = hint
        return out
    received = received_text(value)
    if kind in _LIMITS:
        rule = _LIMITS[kind].format(json.dumps(error.validator_value, ensure_ascii=False))
        return {f"参数 {path} {rule}，收到{received}": "请按这个限制修改后重试"}
    if kind in ("type", "enum", "const", "anyOf", "oneOf", "format", "$ref"):
        expected = expected_text(schema, defs)
        return {f"参数 {path} 应为{expected}，收到{received}": f"请改为{expected}后重试"}
    return {f"参数 {path} 不符合要求（{error.message}），收到{received}": "请按参数说明修改后重试"}


def renamed_to(key: str, unknown: list[str], schema: dict, given: dict) -> str | None:
    """一个未知参数最可能是哪个参数：拼写很像的那个（citty → city）；没有的话，只有这一个未知参数、
    又正好缺一个必填参数时，就是缺的那个——函数改了参数名、schema 或调用方没跟着改，就是这个样子。"""
    import difflib
    free = [name for name in schema.get("properties", {}) if name not in given]
    close = difflib.get_close_matches(key, free, n=1, cutoff=0.8)   # 参数名都很短：太宽松会乱猜
    if close:
        return close[0]
    missing = [name for name in schema.get("required", []) if name not in given]
    return missing[0] if len(unknown) == 1 and len(missing) == 1 else None


def expected_text(schema: dict, defs: dict) -> str:
    """用中文说出一个 schema 期望什么。"""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        keys = "、".join(resolve_ref(schema, defs).get("properties", {}))
        return f"对象 {name}（键：{keys}）" if keys else f"对象 {name}"
    if "enum" in schema:
        return "以下之一：" + "、".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "anyOf" in schema:
        return "或".join(expected_text(arm, defs) for arm in schema["anyOf"])
    if schema.get("format") in _FORMAT_NAMES:
        return _FORMAT_NAMES[schema["format"]]
    kinds = schema.get("type")
    if kinds is None:
        return "任意值"
    names = []
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        name = _TYPE_NAMES.get(kind, kind)
        if kind == "array" and schema.get("items", {}).get("type"):
            name = f"数组（元素为{expected_text(schema['items'], defs)}）"
        names.append(name)
    return "或".join(names)


def received_text(value: Any) -> str:
    """收到的值，带上中文类型名：字符串 "abc"、整数 3。"""
    kind = {bool: "布尔值 ", int: "整数 ", float: "数字 ", str: "字符串 ", list: "数组 ", dict: "对象 ", NoneType: "空值 "}
    return kind.get(type(value), "") + shorten(dumps(value), 60)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ═══════════════════════════════════════════════════════════════ 4. 变成 Python 对象

def convert_arguments(args: dict, annotations: dict, extra_type: Any, schema: dict) -> tuple[dict, list[str], str]:
    """校验过的 JSON 参数 → 函数要的 Python 对象。返回 (参数名 -> 值, 问题列表, 建议)。

    annotations 是参数名 -> 注解；extra_type 是 **kwargs 的注解（收多余的键时用）。"""
    values, problems, hints = {}, [], []
    for key, value in args.items():
        try:
            values[key] = to_python(annotations.get(key, extra_type or Any), value)
        except (TypeError, ValueError):     # 多半是日期格式不对：jsonschema 不检查 date-time
            expected = expected_text(schema["properties"].get(key, {}), schema.get("$defs", {}))
            problems.append(f"参数 {key} 应为{expected}，收到{received_text(value)}")
            hints.append(f"请改为{expected}后重试")
    return values, problems, hints[0] if len(hints) == 1 else "请逐条修正以上问题后重试"


def to_python(tp: Any, value: Any) -> Any:
    """把（已通过校验的）JSON 值变成注解要的 Python 对象；对不上时抛 ValueError，联合类型靠它挑分支。"""
    tp = unwrap(tp)
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
    if container in SEQUENCES or container is tuple:
        if not isinstance(value, list):
            raise TypeError("应为数组")
        if container is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise ValueError("元素个数不对")
            return tuple(to_python(a, v) for a, v in zip(args, value))
        items = [to_python(args[0] if args else Any, v) for v in value]
        return container(items) if container in (list, tuple, set, frozenset) else items
    if container in MAPPINGS:
        if not isinstance(value, dict):
            raise TypeError("应为对象")
        return {k: to_python(args[1] if args else Any, v) for k, v in value.items()}
    if isinstance(tp, type):
        if hasattr(tp, "model_validate"):                      # pydantic 模型自己会转换
            return tp.model_validate(value)
        if dataclasses.is_dataclass(tp) or is_typeddict(tp):
            if not isinstance(value, dict):
                raise TypeError("应为对象")
            hints = typing.get_type_hints(tp, include_extras=True)
            fields = {k: to_python(hints.get(k, Any), v) for k, v in value.items()}
            return tp(**fields) if dataclasses.is_dataclass(tp) else fields
        return value if isinstance(value, tp) else tp(value)   # 按字符串收的类：Path("...")、Decimal("...")
    raise TypeError(f"无法转换为 {tp!r}")


def _exact(kind: type) -> Callable:
    def check(value: Any) -> Any:
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
    def parse(value: Any) -> Any:
        if not isinstance(value, str):
            raise TypeError("应为字符串")
        return kind.fromisoformat(value)                        # 格式不对时抛 ValueError
    return parse


_CONVERTERS = {str: _exact(str), bool: _exact(bool), int: _to_int, float: _to_float,
               datetime.datetime: _iso(datetime.datetime), datetime.date: _iso(datetime.date),
               datetime.time: _iso(datetime.time)}


if __name__ == "__main__":
    schema = {"type": "object", "properties": {"count": {"type": "integer"}, "unit": {"enum": ["c", "f"], "default": "c"}},
              "required": ["count"], "additionalProperties": False}
    notes: list[str] = []
    args, problem = parse_arguments('{"count": "5"}', notes)
    args = coerce(args, schema, notes)
    print(args, notes)                                          # {'count': 5, 'unit': 'c'} ['count: "5" → 5']
    print(find_problems(build_validator(schema), {"count": "abc", "colour": 1}))
    print(convert_arguments(args, {"count": int, "unit": Literal["c", "f"]}, None, schema))
