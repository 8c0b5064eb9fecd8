"""一次工具调用的结果：一个形状，一张标签表，一个写错误文本的函数，一处截断。

不管工具是在注册表里直接调用、在沙箱进程里运行，还是循环发现模型点了不存在的工具，
交还给循环（再交还给模型）的都是同一个 ToolOutcome。失败的文本永远是同一个形状：

    ❌ [标签] 结论。下一步怎么做。

模型读得懂“错在哪、该怎么改”，界面也能按 error_code 上色，而不用去解析文字。
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

# 工具结果最多回填这么多字：上下文窗口很贵，太长的结果还会淹没关键信息。全项目只有这一个上限。
RESULT_LIMIT = 4000

# error_code -> 错误文本里方括号中的标签。新增一种失败，就在这里加一行。
LABELS = {
    # 调用之前：模型写的调用本身不对
    "unknown_tool": "未知工具",
    "invalid_json": "参数格式错误",
    "invalid_arguments": "参数错误",
    "format_error": "格式错误",            # 文本协议（ReAct / JSON）里没找到动作
    # 调用之中：工具自己出了问题
    "tool_exception": "工具异常",
    "timeout": "超时",
    "output_too_large": "输出过多",
    "memory_limit": "内存超限",
    "recursion": "递归太深",
    "blocked": "操作被拦截",
    "forbidden": "业务规则不允许",     # 参数合法，但这次调用不被允许（限额、名单、受保护的对象）
    "worker_crashed": "运行崩溃",
    # 工作区里的文件工具（atomic_tools.py）
    "path_outside": "路径越界",
    "not_found": "找不到文件",
    "no_match": "没有匹配",
    "ambiguous_match": "匹配不唯一",
    "workspace_full": "工作区已满",
    # 源码或环境的问题：工具根本没跑起来
    "syntax_error": "语法错误",
    "module_exception": "源码出错",
    "no_registry": "缺少注册表",
    "source_too_large": "源码太长",
    "invalid_request": "请求无效",
    "sandbox": "沙箱错误",
    "sandbox_refused": "沙箱不可用",
    "busy": "请稍后再试",
    "rate_limited": "请稍后再试",
    "probation": "观察期限额",        # 公开服务器上，这个会话之前的任务超了限，之后的任务限额更小
    "no_executor": "无法执行",
    "exit_status": "命令失败",        # bash 的命令运行了，但退出码不是 0（输出照样交给模型）
    # 人类在环（loop_parts.run_tool）：用户在确认框里点了“拒绝”；或者权限规则不允许这次调用
    "denied": "用户拒绝",
    "rule_denied": "权限规则拒绝",
    # 钩子（hooks.py）：PreToolUse 钩子不允许这次调用，或者它自己出错（fail closed）没有放行；执行之后的钩子拦下了结果
    "hook_denied": "钩子拒绝",
    "hook_failed": "钩子出错",
    "hook_blocked": "钩子拦下结果",
    # 子代理（subagents.py）：交给它的事它没做完（用完轮数、出了错）
    "subagent_failed": "子代理没做完",
    # 计划（planning.py）：write_todos 交来的清单不合规则（两项同时在做、没有证据就标完成……），计划板没有改
    "plan_rule": "计划不合规则",
    # 计划（planning.py 的 breaking）：演示“一步失败了”，这个工具这次被设定为一律失败，不是模型或参数的错
    "demo_failure": "演示：设定为失败",
}
# 上面第一组：模型写的调用本身不对，工具没有运行。其余的失败，调用是对的，是工具、规则或人没让它成。
CALL_MISTAKES = ("unknown_tool", "invalid_json", "invalid_arguments", "format_error")
# 执行端这次没让工具运行（太忙、超了限额、沙箱不可用）：既不是模型的错，也不是工具的错。
NOT_RUN = ("busy", "rate_limited", "probation", "sandbox", "sandbox_refused", "no_executor")


SENTENCE_END = "。. \n\t"      # 句末的句号和空白：拼句子前去掉，免得出现“。。”


def error_text(code: str, conclusion: str, hint: str = "") -> str:
    """❌ [标签] 结论。下一步。——所有失败文本都由这一个函数写。"""
    label = LABELS.get(code, "运行失败")
    text = f"❌ [{label}] {conclusion.rstrip(SENTENCE_END)}。"
    return f"{text}{hint.rstrip(SENTENCE_END)}。" if hint else text


CLIPPED = "\n…（结果过长已截断：共 {total} 个字符，只保留了前 {kept} 个）"
_CLIPPED = re.compile(r"\n…（结果过长已截断：共 (\d+) 个字符，只保留了前 (\d+) 个）\Z")


def clip(text: str, limit: int = RESULT_LIMIT) -> tuple[str, int | None]:
    """太长的结果截断，并在末尾明确写出来。-> (回填的文本, 截断前的长度；没截断是 None)。
    已经截断过的文本（比如从沙箱进程传回来、丢了 clipped_from 的）不再截第二次，原来的长度从标记里读回来。"""
    if len(text) <= limit:
        return text, None
    marked = _CLIPPED.search(text)
    if marked and marked.start() != int(marked.group(2)):
        marked = None                    # 只是看起来像标记：照普通文本处理
    total = int(marked.group(1)) if marked else len(text)
    if marked and marked.start() <= limit:
        return text, total
    return text[:limit] + CLIPPED.format(total=total, kept=limit), total


@dataclasses.dataclass
class ToolOutcome:
    ok: bool
    content: str                         # 回填给模型的文本（已按 RESULT_LIMIT 截断）
    error_code: str | None = None        # LABELS 里的一个键；成功时是 None
    duration_ms: float = 0.0             # 校验 + 执行 + 结果转文本
    arguments: dict | None = None        # 实际执行时的参数（转换、补默认值之后）
    problems: list[str] = dataclasses.field(default_factory=list)    # 参数的问题，每条一句
    coercions: list[str] = dataclasses.field(default_factory=list)   # 看得见的宽松转换，如 count: "5" → 5
    clipped_from: int | None = None      # 截断前的字数；None 表示原样回填
    edited: list[str] = dataclasses.field(default_factory=list)     # 执行前人改过的参数，如 city: "北京" → "上海"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


FIELDS = tuple(field.name for field in dataclasses.fields(ToolOutcome))


def failure(code: str, conclusion: str, hint: str = "", **fields: Any) -> ToolOutcome:
    """一次失败的调用：文本由 error_text 写，其余字段（arguments、problems……）照传。"""
    return ToolOutcome(False, error_text(code, conclusion, hint), code, **fields)


def success(result: str, **fields: Any) -> ToolOutcome:
    """一次成功的调用：结果太长就截断，并记下原来有多长。"""
    content, clipped_from = clip(result)
    return ToolOutcome(True, content, None, clipped_from=clipped_from, **fields)


def as_outcome(value: Any, **defaults: Any) -> ToolOutcome:
    """执行函数可能交回 ToolOutcome、dict（比如从沙箱进程传回的 JSON）或随便什么值：一律变成 ToolOutcome，
    而且保证回填的文本不超过 RESULT_LIMIT（已经截断过的不再截）。
    dict 里多出来的键（沙箱的 stdout 等）在这里用不上，由交回它的人自己保留。"""
    if isinstance(value, ToolOutcome):
        outcome = value
    elif isinstance(value, dict) and "content" in value:
        known = {**defaults, **{k: v for k, v in value.items() if k in FIELDS}}
        known["content"] = str(known.get("content") or "")
        known.setdefault("ok", True)
        for name in ("problems", "coercions", "edited"):          # JSON 里的 null 也当作“没有”
            known[name] = list(known.get(name) or [])
        outcome = ToolOutcome(**known)
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        return success(text, **defaults)
    if outcome.clipped_from is None and len(outcome.content) > RESULT_LIMIT:
        content, clipped_from = clip(outcome.content)
        outcome = dataclasses.replace(outcome, content=content, clipped_from=clipped_from)
    return outcome


def as_envelope(outcome: ToolOutcome) -> str:
    """把结果装进一个固定形状的"信封"，交给模型的是这段 JSON 文本：

        {"status": "ok" 或 "error", "data": 结果, "error_code": null 或 LABELS 里的键, "message": 给模型的话}

    纯文本结果要模型自己读出"成没成功"；信封把它写成字段，模型（和写提示词的人）只看 status 就知道。
    成功时 data 是结果本身（是 JSON 就还原成对象），截断的说明放进 message；
    失败时 data 是 null，message 是 error_text 写的那句"❌ [标签] 结论。下一步。"。"""
    if not outcome.ok:
        return json.dumps({"status": "error", "data": None, "error_code": outcome.error_code or "tool_exception",
                           "message": outcome.content}, ensure_ascii=False)
    text, total = outcome.content, len(outcome.content)
    marked = _CLIPPED.search(text)
    if outcome.clipped_from is not None and marked:
        text, total = text[:marked.start()], outcome.clipped_from
    try:
        data = json.loads(text)
    except ValueError:
        data = text
    while True:          # 信封本身也守 RESULT_LIMIT：装不下就把 data 当文本再截短一些
        message = None if len(text) == total else f"结果过长已截断：共 {total} 个字符，只保留了前 {len(text)} 个"
        envelope = json.dumps({"status": "ok", "data": data, "error_code": None, "message": message},
                              ensure_ascii=False)
        if len(envelope) <= RESULT_LIMIT:
            return envelope
        text = data = text[:max(len(text) * RESULT_LIMIT // len(envelope) - 100, 0)]


if __name__ == "__main__":
    print(error_text("invalid_arguments", "参数 count 应为整数，收到字符串 \"abc\"", "请改为整数后重试"))
    print(success("晴，25℃", arguments={"city": "北京"}))
    print(success("很长的结果" * 2000).clipped_from)
    print(as_envelope(success('{"city": "北京", "temp": 25}')))
    print(as_envelope(failure("timeout", "get_weather 超过 2 秒没有返回", "请稍后重试")))
