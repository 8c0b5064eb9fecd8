"""评估（8.12）：一组用例，每个跑几次，每次按事件打分——工具描述写得好不好，从此能量出来。

比 function_calling_loop.py 多了这些：
  - 用例（Case）：一个问题 + 应该发生什么。该调哪些工具、每个参数怎样算对、顺序要不要紧，
    或者"这里不该调用工具"；可选：最终回答里该有什么。用例集是 JSON，老师可以发给全班；
  - 匹配器（matches）：写死的值、几个可接受的值之一（one_of）、误差内的数（near + tolerance）、
    包含某段文字（contains）、符合正则（matches）、不该出现的参数（absent）；
  - 打分（score）：只看循环的事件（events.py）：调了什么、参数是什么、工具收没收下。三格各管一件事：
    工具（选对了、次数对），参数（工具选对了才比对），回答。模型说"已完成"不是证据；
  - 评估（evaluate）：每个用例跑 trials 次，每跑完一次交回一条 Trial（事件、得分、用时）；
  - 汇总（totals）：通过率（带次数）、这次量到的用时 p50 / p95、token（服务端 usage 报的数；
    没报的请求单独数出来，估算的标明是估算）、费用（只在配置了价格时才算，绝不编一个价格）；
    工具没成的调用分开数：参数是模型编的（模型的错），还是参数有来处、工具自己没成（可能是工具要修）。

和 BFCL（Berkeley Function Calling Leaderboard）的对照：BFCL 只看模型的一次回复，按函数名和
每个参数的"可接受值列表"比对（字符串先去标点、转小写；列表里有 "" 表示可以不传）。它的类别
在这里都写得出来（category 给每个用例归类）：simple（一个工具，一次调用）、multiple（几个工具里
选一个）、parallel（同一个回复里调同一工具几次）、parallel_multiple（同一回复里调不同工具）、
irrelevance（不该调用：calls 为空）、multi_turn（用例带着前几轮对话 before）。三处不同：
  1. 这里跑的是整个循环，模型可以看到错误再改，可改对了不等于没错过：先调了不存在的工具，"工具"
     一格就是错；参数写错被退回过，"参数"一格就是错。工具超时、被业务规则拒绝、重试了一次，调用
     本身是对的，不算模型的错。模型把运行弄坏了（用完轮数、连续失败、服务端在它写的东西上出错），是一次
     没通过的运行，照样算进通过率、用时和 token；执行端太忙没让工具运行、网络断了、用量限额，这次运行不评分；
  2. 字符串默认原样比较，不去标点、不转小写：要宽松就写 one_of 或 contains；
     用例里没写的参数不检查（BFCL 会判多传的参数为错：要这样就写 {"absent": true}）；
  3. multi_turn 简化了：before 是写好的几轮问答（只有文字，没有工具调用），只给最后一个问题打分；
     BFCL 的多轮用例每一轮都要调用、都打分，前几轮的调用还会改变后面的状态。
手写的话，jsonschema 检查用例格式这一步要自己写一个递归；其余就是下面这些 for 循环。

    python code/evaluation.py
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from typing import Any, Callable, Iterable, Iterator

import jsonschema
import regex

import events
from accents import string_values, unsaid_arguments
from tool_outcome import CALL_MISTAKES, NOT_RUN

ORDERS = ("sequence", "any", "parallel")     # 按顺序调用 / 顺序不要紧 / 同一个回复里一起调用
CRITERIA = ("tool", "arguments", "answer")   # 选对工具、参数都对、最终回答（用例写了才查）
REGEX_SECONDS = 0.05      # 正则来自用例文件（别人写的）：跑不完就算不匹配，不能卡住服务器
MAX_CASES = 50
MAX_TEXT = 2000           # 问题、期望值这些文字的长度上限
# 循环因为模型的表现而停下：用完轮数、连续失败（stopped_by_model 还认一种：服务端在模型写的东西上出错）。
MODEL_STOPS = ("max_turns", "too_many_failures")
ARGUMENT_MISTAKES = ("invalid_json", "invalid_arguments")   # 工具退回的调用里，错在参数的那些

# 匹配器的写法。不是 {...} 的值（字符串、数字、列表……）就是"必须等于它"。
MATCHER = {"oneOf": [
    {"not": {"type": "object"}},
    {"type": "object", "additionalProperties": False, "required": ["equals"], "properties": {"equals": {}}},
    {"type": "object", "additionalProperties": False, "required": ["one_of"],
     "properties": {"one_of": {"type": "array", "minItems": 1, "maxItems": 50}}},
    {"type": "object", "additionalProperties": False, "required": ["near"],
     "properties": {"near": {"type": "number"}, "tolerance": {"type": "number", "minimum": 0}}},
    {"type": "object", "additionalProperties": False, "required": ["contains"],
     "properties": {"contains": {"type": "string", "maxLength": MAX_TEXT}}},
    {"type": "object", "additionalProperties": False, "required": ["matches"],
     "properties": {"matches": {"type": "string", "maxLength": 200}}},
    {"type": "object", "additionalProperties": False, "required": ["absent"],
     "properties": {"absent": {"const": True}}},
]}
CASE_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["name", "question"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 100},
        "question": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
        "calls": {"type": "array", "maxItems": 10, "items": {
            "type": "object", "additionalProperties": False, "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1},
                           "arguments": {"type": "object", "additionalProperties": MATCHER}}}},
        "order": {"enum": list(ORDERS)},
        "answer": {"allOf": [MATCHER, {"not": {"type": "object", "required": ["absent"]}}]},   # 回答总是有的
        "before": {"type": "array", "maxItems": 20, "items": {
            "type": "object", "required": ["role", "content"], "additionalProperties": False,
            "properties": {"role": {"enum": ["user", "assistant"]},
                           "content": {"type": "string", "maxLength": MAX_TEXT}}}},
    },
}
CASES_SCHEMA = {"type": "array", "minItems": 1, "maxItems": MAX_CASES, "items": CASE_SCHEMA}


# ═══════════════════════════════════════════════════════════════ 1. 用例

@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    question: str
    calls: tuple[dict, ...] = ()        # [{"name", "arguments": {参数: 匹配器}}]；空 = 不该调用工具
    order: str = "sequence"
    answer: Any = None                  # 最终回答的匹配器；None = 不查
    before: tuple[dict, ...] = ()       # 多轮：问题之前的几条对话

    def messages(self) -> list[dict]:
        return [*map(dict, self.before), {"role": "user", "content": self.question}]

    def to_json(self) -> dict:
        written = {"name": self.name, "question": self.question, "calls": list(self.calls)}
        if self.order != "sequence":
            written["order"] = self.order
        if self.answer is not None:
            written["answer"] = self.answer
        if self.before:
            written["before"] = list(self.before)
        return written


class CaseProblem(ValueError):
    """用例集的格式不对：说清是第几个用例的哪一处。"""


def read_cases(data: Any) -> list[Case]:
    """JSON（列表，或 {"cases": 列表}）-> 用例。格式不对就抛 CaseProblem。"""
    try:
        if isinstance(data, str):
            data = json.loads(data)
        if isinstance(data, dict) and "cases" in data:
            data = data["cases"]
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(CASES_SCHEMA).iter_errors(data))
    except json.JSONDecodeError as exc:
        raise CaseProblem(f"用例集不是合法的 JSON：第 {exc.lineno} 行第 {exc.colno} 列，{exc.msg}") from None
    except RecursionError:
        raise CaseProblem("用例集嵌套得太深，不像是一个用例集") from None
    if error is not None:
        raise CaseProblem(case_problem(error))
    names = [case["name"] for case in data]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice:
        raise CaseProblem(f"用例名 \"{twice}\" 出现了两次：每个用例的 name 要不一样，结果表才分得清")
    for case in data:
        for spec in [*(a for c in case.get("calls", []) for a in (c.get("arguments") or {}).values()),
                     case.get("answer")]:
            if isinstance(spec, dict) and "matches" in spec:
                try:
                    regex.compile(spec["matches"])
                except regex.error as exc:
                    raise CaseProblem(f"用例 \"{case['name']}\" 的正则 {spec['matches']!r} 写错了：{exc}") from None
    return [Case(case["name"], case["question"], tuple(case.get("calls", [])), case.get("order", "sequence"),
                 case.get("answer"), tuple(case.get("before", []))) for case in data]


JSON_TYPES = {"string": "字符串", "number": "数字", "integer": "整数", "boolean": "布尔值", "array": "数组",
              "object": "对象"}


LENGTHS = {"minItems": "至少要有 {n} 个", "maxItems": "最多 {n} 个", "minLength": "至少要写 {n} 个字",
           "maxLength": "最多 {n} 个字"}


def case_problem(error: jsonschema.ValidationError) -> str:
    """jsonschema 的一条错误 -> 一句中文：第几个用例、哪个字段、应该是什么。"""
    path = list(error.absolute_path)
    where = f"第 {path[0] + 1} 个用例" if path and isinstance(path[0], int) else "用例集"
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:]).lstrip(".")
    where += f" 的 {field}" if field else ""
    kind = error.validator
    if kind == "required":
        missing = next((name for name in error.validator_value if name not in (error.instance or {})), "?")
        return f"{where} 缺少 \"{missing}\""
    if kind == "additionalProperties":
        return f"{where} 里有不认识的字段：{error.message.split('(')[-1].rstrip(')')}"
    if kind == "enum":
        return f"{where} 只能是 {' / '.join(map(str, error.validator_value))}，收到 {json.dumps(error.instance, ensure_ascii=False)}"
    if kind == "type":
        wanted = JSON_TYPES.get(error.validator_value, error.validator_value)
        return f"{where} 应为{wanted}，收到 {json.dumps(error.instance, ensure_ascii=False)[:60]}"
    if kind in LENGTHS:
        return f"{where} {LENGTHS[kind].format(n=error.validator_value)}"
    if kind == "oneOf":
        return (f"{where} 不是认得的匹配器：写一个值，或 {{\"one_of\": [...]}}、{{\"near\": 数, \"tolerance\": 误差}}、"
                f"{{\"contains\": \"文字\"}}、{{\"matches\": \"正则\"}}、{{\"absent\": true}}、{{\"equals\": 值}} 之一")
    return f"{where}：{error.message}"


def against_tools(cases: list[Case], tools: list[dict]) -> str:
    """用例要的工具和参数，工具清单里有没有：没有的话是用例写错了（或者拿错了用例集），不能算到模型头上。
    返回第一处对不上的地方，一句话；都对得上就是 ""。"""
    schemas = {t["function"]["name"]: (t["function"].get("parameters") or {}).get("properties") or {} for t in tools}
    for case in cases:
        for call in case.calls:
            if call["name"] not in schemas:
                return (f"用例「{case.name}」要的工具 {call['name']} 不在工具清单里"
                        f"（有：{'、'.join(schemas) or '没有工具'}）：先改用例，或者换成对应的工具源码")
            unknown = [name for name in call.get("arguments") or {} if name not in schemas[call["name"]]]
            if unknown:
                return (f"用例「{case.name}」里 {call['name']} 的参数 {unknown[0]} 不在它的 schema 里"
                        f"（有：{'、'.join(schemas[call['name']]) or '没有参数'}）")
    return ""


def category(case: Case, tool_count: int) -> str:
    """用例属于 BFCL 的哪一类（multi_step：几轮里先后调用，BFCL 没有单列）。"""
    if case.before:
        return "multi_turn"
    if not case.calls:
        return "irrelevance"
    if len(case.calls) == 1:
        return "simple" if tool_count <= 1 else "multiple"
    if case.order == "parallel":
        return "parallel" if len({c["name"] for c in case.calls}) == 1 else "parallel_multiple"
    return "multi_step"


# ═══════════════════════════════════════════════════════════════ 2. 匹配

ABSENT = object()     # 参数没有传


def matches(spec: Any, value: Any) -> bool:
    """value（模型给的参数值，或最终回答）符不符合 spec。"""
    if not isinstance(spec, dict):
        return value is not ABSENT and same(spec, value)
    if "absent" in spec:
        return value is ABSENT
    if value is ABSENT:
        return False
    if "equals" in spec:
        return same(spec["equals"], value)
    if "one_of" in spec:
        return any(same(option, value) for option in spec["one_of"])
    if "near" in spec:
        return is_number(value) and abs(value - spec["near"]) <= spec.get("tolerance", 0)
    if "contains" in spec:
        return isinstance(value, str) and spec["contains"] in value
    if "matches" in spec:
        try:
            return isinstance(value, str) and regex.search(spec["matches"], value, timeout=REGEX_SECONDS) is not None
        except TimeoutError:
            return False
    return False


def is_number(value: Any) -> bool:
    """一个能比大小的数。特别大的整数（几百位）不算：和小数一比就溢出，模型和用例文件都可能写出来。"""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2 ** 53
    return isinstance(value, float) and math.isfinite(value)


def same(expected: Any, value: Any) -> bool:
    """JSON 意义上相等：5 和 5.0 相等，True 和 1 不相等，[5] 和 [5.0] 相等。"""
    if is_number(expected) and is_number(value):
        return expected == value
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(map(same, expected, value))
    if isinstance(expected, dict):
        return (isinstance(value, dict) and value.keys() == expected.keys()
                and all(same(expected[key], value[key]) for key in expected))
    return type(expected) is type(value) and expected == value


def describe(spec: Any) -> str:
    """匹配器说成一句话，用在"参数 city 应为……"里。"""
    shown = lambda v: json.dumps(v, ensure_ascii=False)   # noqa: E731
    if not isinstance(spec, dict):
        return f"应为 {shown(spec)}"
    if "absent" in spec:
        return "不该传"
    if "equals" in spec:
        return f"应为 {shown(spec['equals'])}"
    if "one_of" in spec:
        return "应为 " + " / ".join(map(shown, spec["one_of"])) + " 之一"
    if "near" in spec:
        return f"应在 {spec['near']} ± {spec.get('tolerance', 0)} 之内"
    if "contains" in spec:
        return f"应包含 {shown(spec['contains'])}"
    return f"应符合正则 /{spec['matches']}/"


# ═══════════════════════════════════════════════════════════════ 3. 打分

@dataclasses.dataclass(frozen=True)
class Score:
    """一次运行对一个用例：每一项 True / False，None 表示这一项不查。problem：第一处不对，一句话。"""
    tool: bool
    arguments: bool | None
    answer: bool | None
    finished: bool
    problem: str = ""
    scored: bool = True       # False：运行不是因为模型停下的（MODEL_STOPS 之外），不评分

    @property
    def passed(self) -> bool:
        return self.scored and self.finished and all(getattr(self, name) is not False for name in CRITERIA)


def score(case: Case, run: list[dict]) -> Score:
    tried, results, final, stopped = [], [], None, None
    for event in events.own(run):
        kind = event["type"]
        if kind == "tool_call":
            tried.append(event)
        elif kind == "tool_result":
            results.append(event)
        elif kind == "final":
            final = final or event
        elif kind == "error":
            stopped = stopped or event
    if final is None and stopped is not None and not stopped_by_model(stopped):
        return Score(False, None, None, False, f"没有评分：运行没有正常结束（{stopped['message']}）"[:300], scored=False)
    not_run = next((r for r in results if r.get("error_code") in NOT_RUN), None)
    if not_run is not None:
        return Score(False, None, None, final is not None,
                     f"没有评分：执行端这次没让工具运行（{not_run['content']}）"[:300], scored=False)
    paired = pairs(tried, results)
    done = taken(paired)
    problems = []

    tool_ok, why = right_tools(case, tried, done)
    problems.append(why)
    arguments_ok = None
    if case.calls and tool_ok:          # 工具选错了，参数就无从比对：这一格不查
        arguments_ok, why = right_arguments(case, done, paired)
        problems.append(why)
    answer_ok = None
    if case.answer is not None:
        answer_ok = final is not None and matches(case.answer, final["content"])
        problems.append("" if answer_ok else f"最终回答{describe(case.answer)}" if final else "")
    if final is None:
        # 一个调用都没有就停了（比如模型那边出错）：停下的原因最要紧；调用过的，先说调用错在哪
        reason = stopped["message"] if stopped else "运行中途停止了"
        problems.insert(0 if not tried else len(problems), f"运行没有正常结束：{reason}")
    problem = next((p for p in problems if p), "")
    return Score(tool_ok, arguments_ok, answer_ok, final is not None, problem[:300])


def stopped_by_model(stopped: dict) -> bool:
    """运行停在这个错误上，是不是模型弄坏的——是，就是一次没通过的运行，和别的运行一样算进通过率、用时和 token。
    是：循环因为它停下（MODEL_STOPS：用完轮数、连续失败），或者模型服务端接下了请求、模型也写了，服务端却在
    处理时出了错（HTTP 500：llama.cpp 解析不了模型写到一半被 max_tokens 截断的工具调用，就这样回答）。
    不是，这次就不评分：请求没到模型那里，或者没让它到——连不上、超时、流断了、网关或服务端忙（502 / 503 / 504）、
    用量限额、密钥不对、请求被拒收（参数不被支持、模型名写错）。"""
    return stopped.get("code") in MODEL_STOPS or (stopped.get("code") == "server" and stopped.get("status") == 500)


def pairs(tried: list[dict], results: list[dict]) -> list[tuple[dict, dict | None]]:
    """(调用, 它的结果)。同一轮里按先后一一对应：循环按调用的顺序交回结果（有的服务端会重复 id）。"""
    by_turn: dict = {}
    for result in results:
        by_turn.setdefault(result["turn"], []).append(result)
    seen: dict = {}
    paired = []
    for call in tried:
        position = seen[call["turn"]] = seen.get(call["turn"], -1) + 1
        row = by_turn.get(call["turn"], [])
        paired.append((call, row[position] if position < len(row) else None))
    return paired


def taken(paired: list[tuple[dict, dict | None]]) -> list[dict]:
    """工具收下的调用：成功了，或者是工具、规则、人让它没成（超时、超限额、被拒绝）——那不是模型的错。
    不算的：模型自己写错、被退回的调用（CALL_MISTAKES，工具根本没运行；参数那一格另外记它），
    以及没成、后来又原样重试了的那一次（重试是对的做法）。"""
    kept = [(call, result) for call, result in paired
            if result is not None and (result.get("ok") or result.get("error_code") not in CALL_MISTAKES)]
    return [call for i, (call, result) in enumerate(kept)
            if result.get("ok") or not any(same_call(call, later) for later, _ in kept[i + 1:])]


def same_call(one: dict, other: dict) -> bool:
    return one["name"] == other["name"] and same(one.get("arguments"), other.get("arguments"))


def right_tools(case: Case, tried: list[dict], done: list[dict]) -> tuple[bool, str]:
    """调过的工具（包括被退回的尝试）正好是用例要的那几个，工具收下的调用次数也对，parallel 的要在
    同一个回复里；不该调用时一个也没调。"""
    wanted = list(dict.fromkeys(call["name"] for call in case.calls))
    used = list(dict.fromkeys(call["name"] for call in tried))
    if not wanted:
        return (True, "") if not used else (False, f"不该调用工具，却调用了 {'、'.join(used)}")
    if not used:
        return False, f"没有调用工具，应调用 {'、'.join(wanted)}"
    if set(used) != set(wanted):
        extra = [name for name in used if name not in wanted]
        lacking = [name for name in wanted if name not in used]
        if extra and lacking:
            return False, f"应调用 {'、'.join(lacking)}，调用的却是 {'、'.join(extra)}"
        if extra:
            return False, f"多调用了 {'、'.join(extra)}（用例里没有它）"
        return False, f"没有调用 {'、'.join(lacking)}"
    if len(done) != len(case.calls):
        return False, f"应调用 {len(case.calls)} 次，工具收下的调用有 {len(done)} 次"
    if case.order == "parallel" and len({call["turn"] for call in done}) > 1:
        return False, "这几个调用应在同一个回复里一起发出（并行），模型分了几轮"
    return True, ""


def right_arguments(case: Case, done: list[dict], paired: list[tuple[dict, dict | None]]) -> tuple[bool, str]:
    """参数写错被工具退回过，就算写错过（后来改对了也一样）；工具收下的调用和用例要的调用一一对上，
    参数都符合：sequence 按顺序对，any / parallel 不管顺序。"""
    returned = next(((call, result) for call, result in paired
                     if result is not None and result.get("error_code") in ARGUMENT_MISTAKES), None)
    if returned is not None:
        call, result = returned
        return False, f"{call['name']} 的参数被退回过：{result['content'][:120]}"
    expected = list(case.calls)
    if case.order == "sequence":
        problem = next((p for p in map(call_problem, expected, done) if p), "")
        return not problem, problem
    # 不管顺序：先算出每个"要的调用 × 做了的调用"对不对得上（最多 10 × 10 次比对），再找一一配对
    problems = [[call_problem(want, made) for made in done] for want in expected]
    partner = pairing([[not p for p in row] for row in problems])
    if partner is not None:
        return True, ""
    lonely = next(i for i, row in enumerate(problems) if all(row)) if any(all(row) for row in problems) else 0
    row = problems[lonely]
    same_name = next((p for p, made in zip(row, done) if made["name"] == expected[lonely]["name"]), row[0])
    return False, same_name


def pairing(fits: list[list[bool]]) -> list[int] | None:
    """二分图的完美匹配（增广路）：fits[i][j] 表示要的第 i 个调用能由做了的第 j 个满足。
    返回每个 j 配给了哪个 i；配不齐就是 None。"""
    partner = [-1] * (len(fits[0]) if fits else 0)

    def place(i: int, visited: set) -> bool:
        for j, fit in enumerate(fits[i]):
            if fit and j not in visited:
                visited.add(j)
                if partner[j] < 0 or place(partner[j], visited):
                    partner[j] = i
                    return True
        return False

    return partner if all(place(i, set()) for i in range(len(fits))) else None


def call_problem(expected: dict, made: dict) -> str:
    if made["name"] != expected["name"]:
        return f"这一步应调用 {expected['name']}，调用的是 {made['name']}"
    arguments = made.get("arguments") or {}
    for name, spec in (expected.get("arguments") or {}).items():
        value = arguments.get(name, ABSENT)
        if not matches(spec, value):
            got = "没有传" if value is ABSENT else "收到 " + json.dumps(value, ensure_ascii=False)[:80]
            return f"{made['name']} 的参数 {name} {describe(spec)}，{got}"
    return ""


# ═══════════════════════════════════════════════════════════════ 4. 跑、汇总

@dataclasses.dataclass
class Trial:
    """一个用例的一次运行。"""
    case: Case
    number: int               # 第几次（从 1 数）
    events: list[dict]
    score: Score
    ms: float                 # 这次运行从头到尾的用时（本机这次量的）

    def tool_failures(self) -> tuple[int, int]:
        """工具收下了、却没成的调用（出错、超时、被规则拒绝），分两种数：(参数是模型编的, 参数有来处)。
        模型头一回写出某个值时，它在发给模型的内容里从没出现过（accents.unsaid_arguments：问的是北京，它填了
        Tokyo），这个值就是编的——之后它再用，历史里虽然有了（它自己的调用、工具的报错），也还是编的。
        工具在编的值上失败，是模型的错；参数都有来处、工具还是没成，才不算模型的错——可能是工具要修。"""
        own = events.own(self.events)
        sent = {e["turn"]: e for e in own if e["type"] == "request"}
        tried = [e for e in own if e["type"] == "tool_call"]
        made_up, first_seen = set(), set()
        for call in tried:                    # 按先后：每个值只在它第一次出现的那一轮查
            request = sent.get(call["turn"])  # 这一轮发给模型的内容：没有它就无从判断，不算模型编的
            if request is None or not isinstance(call.get("arguments"), dict):
                continue
            new = {value for _, value in string_values(call["arguments"]) if value not in first_seen}
            made_up |= {value for _, value in unsaid_arguments(call["arguments"], request.get("messages") or [],
                                                               request.get("tools")) if value in new}
            first_seen |= new
        invented = tools_own = 0
        for call, result in pairs(tried, [e for e in own if e["type"] == "tool_result"]):
            if result is None or result.get("ok") or result.get("error_code") in CALL_MISTAKES + NOT_RUN:
                continue
            if isinstance(call.get("arguments"), dict) and any(
                    value in made_up for _, value in string_values(call["arguments"])):
                invented += 1
            else:
                tools_own += 1
        return invented, tools_own

    def usage(self) -> tuple[int, int, int]:
        """(输入 token, 输出 token, 没报 usage 的请求数)：只加服务端报的数，不估。"""
        answered = [e for e in events.own(self.events) if e["type"] == "response"]
        reported = [e["usage"] for e in answered if counted(e.get("usage"))]
        prompt = sum(u["prompt_tokens"] for u in reported)
        completion = sum(u["completion_tokens"] for u in reported)
        return prompt, completion, len(answered) - len(reported)


def counted(usage: Any) -> bool:
    """服务端真的报了输入和输出各多少 token（只有 total_tokens、或者写成了文字的，都不算）。"""
    return isinstance(usage, dict) and all(
        isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) and 0 <= usage[k] < 2 ** 53
        for k in ("prompt_tokens", "completion_tokens"))


def evaluate(run_once: Callable[[list[dict]], Iterable[dict]], cases: list[Case], trials: int = 3) -> Iterator[Trial]:
    """每个用例跑 trials 次；每跑完一次 yield 一条 Trial（页面据此画进度，随时可以停）。
    run_once(messages) 是一次完整的循环，例如 run_function_calling(client, messages, tools, registry)。"""
    for case in cases:
        for number in range(1, trials + 1):
            started = time.perf_counter()
            run = []
            try:
                for event in run_once(case.messages()):
                    run.append(event)
            except Exception as exc:   # 循环自己出了错：这一次记为没有结束，评估接着跑下一次
                run.append(events.error(None, "exception", f"{type(exc).__name__}: {exc}"))
            yield Trial(case, number, run, score(case, run), (time.perf_counter() - started) * 1000)


@dataclasses.dataclass(frozen=True)
class Totals:
    runs: int                  # 评了分的运行（模型弄坏的运行也在里面：没通过）
    passed: int
    criteria: dict             # 每一项：(对了几次, 查了几次)
    p50_ms: float | None
    p95_ms: float | None
    prompt_tokens: int
    completion_tokens: int
    unreported: int            # 没报 usage 的请求：没算进 token，也不估
    estimated: bool            # usage 本身就是估的（离线模型按字数粗估）
    cost: float | None         # 配了价格才有
    unscored: int = 0          # 没评分的运行（网络、用量限额……）：不算进通过率和用时，token 照算（花出去了）
    tool_failures: int = 0     # 参数有来处、工具自己没成的调用（Trial.tool_failures 的第二个数）
    invented_failures: int = 0  # 工具在模型编的参数上没成的调用：模型的错（Trial.tool_failures 的第一个数）

    @property
    def rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    @property
    def tokens_per_run(self) -> float | None:
        """每次运行平均花了多少 token：没评分的运行也花了，分母是所有跑过的运行。"""
        spent = self.runs + self.unscored
        return (self.prompt_tokens + self.completion_tokens) / spent if spent else None


def percentile(values: list[float], share: float) -> float | None:
    """最近秩法：排好序，取第 ⌈share·n⌉ 个。样本少时就是实际量到的某一个值，不插值。"""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def totals(done: list[Trial], estimated: bool = False, price: dict | None = None) -> Totals:
    """price：{"input": 每百万输入 token 的价格, "output": 每百万输出 token 的价格}；不给就不算费用。"""
    scored = [t for t in done if t.score.scored]
    criteria = {name: (sum(getattr(t.score, name) is True for t in scored),
                       sum(getattr(t.score, name) is not None for t in scored)) for name in CRITERIA}
    usages = [t.usage() for t in done]
    prompt, completion, unreported = (sum(usage[i] for usage in usages) for i in range(3))
    cost = None
    if price and not unreported and not estimated:
        cost = prompt / 1e6 * float(price["input"]) + completion / 1e6 * float(price["output"])
    times = [t.ms for t in scored]
    failures = [t.tool_failures() for t in scored]
    return Totals(len(scored), sum(t.score.passed for t in scored), criteria, percentile(times, 0.5),
                  percentile(times, 0.95), prompt, completion, unreported, estimated, cost, len(done) - len(scored),
                  sum(own for _, own in failures), sum(invented for invented, _ in failures))


def table(done: list[Trial]) -> list[dict]:
    """每个用例一行：评了分的运行里通过了几次，每一项 [对了几次, 查了几次]，没评分的几次，第一处不对的地方。"""
    rows: dict[str, dict] = {}
    for trial in done:
        row = rows.setdefault(trial.case.name, {"case": trial.case.name, "runs": 0, "passed": 0,
                                                **{name: [0, 0] for name in CRITERIA}, "unscored": 0, "problem": ""})
        row["problem"] = row["problem"] or trial.score.problem
        if not trial.score.scored:
            row["unscored"] += 1
            continue
        row["runs"] += 1
        row["passed"] += trial.score.passed
        for name in CRITERIA:
            checked = getattr(trial.score, name)
            row[name][0] += checked is True
            row[name][1] += checked is not None
    return list(rows.values())


if __name__ == "__main__":
    from examples_weather import registry
    from function_calling_loop import run_function_calling
    from llm_clients import make_client

    client = make_client("offline")
    cases = read_cases([
        {"name": "今天的天气", "question": "北京今天天气怎么样？",
         "calls": [{"name": "get_weather", "arguments": {"city": {"one_of": ["北京", "北京市"]}}}],
         "answer": {"contains": "25"}},
        {"name": "两个城市", "question": "北京和上海今天天气怎么样？", "order": "any",
         "calls": [{"name": "get_weather", "arguments": {"city": "北京"}},
                   {"name": "get_weather", "arguments": {"city": "上海"}}]},
        {"name": "预报", "question": "杭州未来 5 天的天气预报",
         "calls": [{"name": "get_forecast", "arguments": {"city": "杭州", "days": {"near": 5}}}]},
        {"name": "不该调用", "question": "你好，介绍一下你自己", "calls": []},
    ])
    done = list(evaluate(lambda messages: run_function_calling(client, messages, registry.to_schemas(), registry),
                         cases, trials=2))
    for row in table(done):
        print(f"{row['case']:<8} 通过 {row['passed']}/{row['runs']}  {row['problem']}")
    total = totals(done, estimated=True)
    print(f"通过率 {total.passed}/{total.runs}，用时 p50 {total.p50_ms:.0f} ms / p95 {total.p95_ms:.0f} ms，"
          f"token {total.prompt_tokens} + {total.completion_tokens}（离线模型的 usage 是估算）")
