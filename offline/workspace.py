"""离线规则模型的“工作区模式”：给它的工具正好是 read、write、edit、bash 四个原子工具时，它这样干活。

先说清楚：它不会写代码，也看不懂代码。它只有几段写死的“剧本”，按问题里的说法挑一段来演：

    看看 notes.md / 读一下 src/calc.py              -> read
    把 src/calc.py 里的 "x" 改成 "y"                 -> edit
    新建 hello.py，内容是 print("hi")                -> write
    跑一下测试                                       -> bash: python3 -m unittest
    找出失败的测试并修好它                           -> bash → read → read → edit → bash
    运行 `ls -la`（反引号里的命令）                  -> bash，命令原样照抄

剧本是一个生成器：yield 一个调用（Call），拿回这次调用的结果文本，再决定下一步；return 最终回答。
模型不记状态，每一轮都把剧本从头演一遍，把对话里已有的工具结果按顺序喂回去，停在还没有结果的那一步——
同样的问题和结果，永远得到同样的下一步。

有一条规矩对每段剧本都成立：一次调用被用户或权限规则拒绝了（结果是 ❌ [用户拒绝] / ❌ [权限规则拒绝]），
就不再原样重试，而是说清楚是谁拒绝的、本来想做什么（要改的 diff、要跑的命令），请用户决定怎么办。
用户在执行前改过参数的（结果前面有一句说明），回答按改过的参数说，不照自己原来写的说。
"""
from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from typing import Any, Callable, Generator

from loop_parts import read_edited
from tool_outcome import LABELS

WORKSPACE_TOOLS = {"read", "write", "edit", "bash"}
TEST_COMMAND = "python3 -m unittest"


@dataclass(frozen=True)
class Call:
    name: str
    args: dict
    thought: str            # ReAct 模式写在 Thought: 后面，让学生看到“为什么做这一步”


Script = Generator[Call, str, str]         # yield 调用、收到结果文本，最后 return 回答


def handles(tools: list[dict] | None) -> bool:
    """工具里有这四个原子工具（按名字认），就用工作区的剧本。"""
    return WORKSPACE_TOOLS <= {t.get("function", {}).get("name") for t in tools or []}


def next_step(question: str, results: list[str]) -> Call | str:
    """问题 + 已经拿到的工具结果（按顺序）-> 下一个调用，或者最终回答（str）。"""
    script = choose(question)
    if isinstance(script, str):                 # 听不懂的问题：不调用工具，直接回答
        return script
    try:
        step = next(script)
        for result in results:
            if is_denied(result):
                return after_denial(step, result)
            step = script.send(result)
    except StopIteration as done:
        return done.value
    return step


def results_of(history: list[dict], mode: str) -> list[str]:
    """当前问题之后的工具结果：原生模式是 role "tool" 的消息，文本协议是 "Observation: ..." 的用户消息。"""
    if mode == "native":
        return [text_of(m) for m in history if m.get("role") == "tool"]
    said = [text_of(m).lstrip() for m in history if m.get("role") == "user"]
    return [s.removeprefix("Observation:").lstrip() for s in said if s.startswith("Observation")]


def text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def failed(result: str) -> bool:
    """这一步没做成。命令运行了、只是退出码不是 0 的（❌ [命令失败]）不算：它的输出照样要读（比如没通过的测试）。"""
    text = read_edited(result)[1].lstrip()
    return text.startswith("❌") and not text.startswith(f"❌ [{LABELS['exit_status']}]")


def is_denied(result: str) -> bool:
    refusals = tuple(f"❌ [{LABELS[code]}]" for code in ("denied", "rule_denied", "hook_denied"))
    return read_edited(result)[1].lstrip().startswith(refusals)


# ── 听懂问题：几条正则，按顺序试

PATH = r"[A-Za-z0-9_\-./]*[A-Za-z0-9_\-]\.[A-Za-z][A-Za-z0-9]*"   # 带扩展名的相对路径：notes.md、src/calc.py
PAIRS = [('"', '"'), ("“", "”"), ("「", "」"), ("'", "'"), ("`", "`")]


def quoted(name: str) -> str:
    """"…"、“…”、「…」、'…'、`…` 任选一种引号；组名加序号，因为每种引号各是一个组。"""
    return "(?:" + "|".join(f"{re.escape(a)}(?P<{name}{i}>.*?){re.escape(b)}" for i, (a, b) in enumerate(PAIRS)) + ")"


def group(match: re.Match, name: str) -> str:
    return next(v for k, v in match.groupdict().items() if k.startswith(name) and v is not None)


EDIT = re.compile(rf"(?:把|在)\s*(?P<path>{PATH})\s*(?:文件)?(?:里|中)?的?\s*把?\s*{quoted('old')}\s*"
                  rf"(?:修改成|修改为|改成|改为|换成|替换成|替换为)\s*{quoted('new')}\s*[。.!！]?\s*$", re.S)
CREATE = re.compile(rf"(?:新建|创建|新增|写)(?:一个)?(?:文件)?\s*(?P<path>{PATH})\s*[，,：:]?\s*"
                    rf"(?:内容是|内容为|内容|写入|写上)\s*[：:]?\s*(?P<content>.+)$", re.S)
BACKTICKS = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# 看得出想改、想新建，却没按上面的说法写（比如原文没加引号）：说清楚没听懂哪里，不去做别的事
WANTS_EDIT = re.compile(r"修改成|修改为|改成|改为|换成|替换成|替换为")
WANTS_CREATE = re.compile(rf"(?:新建|创建|新增)(?:一个)?(?:文件)?\s*{PATH}")
FIX = re.compile(r"修|\bfix", re.I)
TESTS = re.compile(r"测试|unittest|\btests?\b", re.I)


def choose(question: str) -> Script | str:
    """挑一段剧本。顺序有讲究：新建、修改的内容里可能有反引号，所以先认它们；反引号里的命令再优先于关键词。"""
    if m := CREATE.search(question):
        return create_file(m["path"], unwrap(m["content"]))
    if m := EDIT.search(question):
        return edit_text(m["path"], group(m, "old"), group(m, "new"))
    if WANTS_EDIT.search(question):
        return not_understood("要改一段原文", "把 src/calc.py 里的 \"x\" 改成 \"y\"",
                              "原文和新文本都要放在引号里（\"…\"、“…”、「…」或 `…`），我才分得清哪几个字是要换的")
    if WANTS_CREATE.search(question):
        return not_understood("要新建文件", "新建 hello.py，内容是 print(\"hi\")", "要写明“内容是 …”")
    if commands := BACKTICKS.findall(question):
        return run_commands(commands)
    if FIX.search(question) and (TESTS.search(question) or re.search(r"bug|错误|失败", question, re.I)):
        return fix_failing_test()
    if TESTS.search(question):
        return run_tests()
    if paths := re.findall(PATH, question):
        return read_files(paths)
    return explain()


def unwrap(content: str) -> str:
    """内容可能写在 ```代码块``` 或一对引号里：去掉外壳；文件以换行结尾。"""
    content = content.strip()
    fenced = re.fullmatch(r"```[\w+-]*\n?(.*?)\n?```", content, re.S)
    if fenced:
        content = fenced.group(1)
    else:
        for a, b in PAIRS:
            if len(content) >= 2 and content.startswith(a) and content.endswith(b) and a not in content[1:-1]:
                content = content[1:-1]
                break
    return content if content.endswith("\n") else content + "\n"


# ── 简单的剧本：一步就完

def read_files(paths: list[str]) -> Script:
    shown = []
    for path in dict.fromkeys(paths):                       # 去重，保持顺序
        result = yield Call("read", {"path": path}, f"用户想看 {path}，用 read 把它读出来。")
        shown.append(f"没能读取 {path}：{result}" if failed(result) else f"{path} 的内容（行号是 read 加的）：\n{result}")
    return "\n\n".join(shown)


def edit_text(path: str, old: str, new: str) -> Script:
    result = yield Call("edit", {"path": path, "old": old, "new": new},
                        f"把 {path} 里指定的原文换成新文本；edit 要求原文一字不差、只出现一次。")
    if failed(result):
        return f"没有改成：{result}\n可以先说“看看 {path}”确认原文，再告诉我要改哪一段。"
    return f"改好了。{result}"


def create_file(path: str, content: str) -> Script:
    result = yield Call("write", {"path": path, "content": content}, f"新建 {path}，内容照问题里写的。")
    executed, said = read_edited(result)
    if failed(result):
        return f"没能写入 {path}：{result}"
    if executed is not None:       # 用户在执行前改了参数：文件里是改过的内容，不是问题里的
        return (f"{said}。你在执行前修改了参数，写入的是你改过的内容：\n{executed.get('content')}"
                f"\n（我原来要写的是：{content.rstrip()}）")
    return f"{result}。内容是：\n{content}"


def run_commands(commands: list[str]) -> Script:
    outputs = []
    for command in commands:
        result = yield Call("bash", {"command": command}, "问题里用反引号写了一条命令，原样交给 bash 运行。")
        executed, said = read_edited(result)
        if executed is not None:   # 用户在执行前改了命令：说运行的是哪一条
            outputs.append(f"$ {executed.get('command')}（你把命令从 {command} 改成了这一条）\n{said}")
        else:
            outputs.append(f"$ {command}\n{result}")
    return "命令的运行结果：\n\n" + "\n\n".join(outputs)


def run_tests() -> Script:
    result = yield Call("bash", {"command": TEST_COMMAND}, f"运行测试：{TEST_COMMAND} 会自动找到 tests/ 下的测试。")
    if failed(result):
        return f"测试没能运行：{result}"
    run = TestRun.read(result)
    if run.passed:
        return f"测试全部通过（{run.summary}）。"
    return (f"测试没有全部通过（{run.summary}）：\n{run.listing()}\n\n完整输出：\n{result}\n\n"
            f"想让我试着修，可以说“找出失败的测试并修好它”。")


def not_understood(wanted: str, example: str, why: str) -> str:
    """看出了意图、读不出细节：照实说，不调用任何工具。"""
    return (f"我看出你{wanted}，但没能从这句话里读出具体怎么做：{why}。\n"
            f"可以这样写：{example}\n什么都没有改动。我是离线规则模型，只认几种固定说法；真实模型能听懂更随意的话。")


def explain() -> str:
    return ("我是离线规则模型，只听得懂这几种说法：\n"
            "- 看看 notes.md（读文件）\n"
            "- 把 src/calc.py 里的 \"x\" 改成 \"y\"（改一段原文）\n"
            "- 新建 hello.py，内容是 print(\"hi\")（写文件）\n"
            "- 跑一下测试（运行 python3 -m unittest）\n"
            "- 找出失败的测试并修好它（运行测试 → 读代码 → 修改 → 再运行）\n"
            "- 运行 `ls -la`（反引号里的命令原样交给 bash）\n"
            "想让模型真正理解你的要求，请换成真实模型。")


# ── 读测试输出

@dataclass
class Failure:
    kind: str               # FAIL（断言没通过）或 ERROR（抛了异常）
    test: str               # test_average (tests.test_calc.CalcTest.test_average)
    dotted: str             # tests.test_calc.CalcTest.test_average
    frames: list[tuple[str, int, str, str]]       # traceback 的每一帧：(文件, 行号, 函数, 那一行代码)
    message: str            # 最后一行：AssertionError: 3.33 != 2.5


@dataclass
class TestRun:
    passed: bool
    summary: str
    failures: list[Failure]

    @classmethod
    def read(cls, output: str) -> TestRun:
        """unittest 的输出 -> 通过没有、跑了几条、每条失败的 traceback。"""
        ran = re.search(r"^Ran (\d+) tests? in", output, re.M)
        status = re.search(r"^(OK|FAILED)\b.*$", output, re.M)
        passed = bool(status and status.group(1) == "OK" and "退出码：0" in output)
        said = [f"运行了 {ran.group(1)} 条测试" if ran else "", status.group(0) if status else ""]
        summary = "，".join(x for x in said if x) or "没有找到 unittest 的结果"
        failures = []
        for block in re.split(r"^={20,}$", output, flags=re.M)[1:]:
            head = re.match(r"\s*(FAIL|ERROR): (.+?) \(([\w.]+)\)", block)
            if not head:
                continue
            body = block.split("\n" + "-" * 70 + "\nRan ")[0]
            frames = [(path, int(line), function, code.strip()) for path, line, function, code in
                      re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n[ \t]+(.+)', body)]
            lines = [x for x in body.strip().splitlines() if x.strip() and not set(x.strip()) <= {"-"}]
            failures.append(Failure(head[1], f"{head[2]} ({head[3]})", head[3], frames, lines[-1].strip()))
        return cls(passed, summary, failures)

    def listing(self) -> str:
        return "\n".join(f"- {f.kind}: {f.test}：{f.message}" for f in self.failures)


def locate(failure: Failure) -> tuple[str | None, str | None, str | None]:
    """(测试文件, 出错的源码文件, 出错的函数)，路径相对于工作区；源码不在 traceback 里时后两个是 None。
    traceback 里是绝对路径，工作区在哪我们不知道：拿测试的点号名 tests.test_calc.CalcTest.test_average
    去对 traceback 里的文件，对上了就知道工作区的根在哪，根下面、又不是测试文件的帧就是源码。"""
    parts = failure.dotted.split(".")
    for size in range(len(parts), 0, -1):
        candidate = "/".join(parts[:size]) + ".py"
        for path, *_ in failure.frames:
            if path == candidate or path.endswith("/" + candidate):
                root = path[: len(path) - len(candidate)]
                inside = [(p[len(root):], function) for p, _, function, _ in failure.frames
                          if p.startswith(root) and p != path]
                return (candidate, *inside[-1]) if inside else (candidate, None, None)   # 最里面那帧离出错最近
    return None, None, None


# ── 读 read 的结果和源码

def numbered(read_result: str) -> dict[int, str]:
    """read 的结果 -> {行号: 那一行}（去掉 read 加的行号）。"""
    return {int(n): line for n, line in re.findall(r"^\s*(\d+)\t(.*)$", read_result, re.M)}


def imported_source(test_lines: dict[int, str], failing_code: str) -> tuple[str | None, str | None]:
    """失败的那行测试代码调用了谁、它从哪个模块 import 进来 -> (模块文件的路径, 函数名)。"""
    try:
        tree = ast.parse("\n".join(test_lines[n] for n in sorted(test_lines)))
    except SyntaxError:
        return None, None
    used = set(re.findall(r"[A-Za-z_]\w*", failing_code))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) in used:
                    return node.module.replace(".", "/") + ".py", alias.name
        if isinstance(node, ast.Import):
            for alias in node.names:
                called = re.search(rf"\b{re.escape(alias.asname or alias.name)}\.(\w+)\(", failing_code)
                if called:
                    return alias.name.replace(".", "/") + ".py", called.group(1)
    return None, None


@dataclass(frozen=True)
class Rule:
    """一类常见 bug：在哪种函数里、长什么样（正则）、改成什么、为什么。"""
    name: str
    why: str
    pattern: re.Pattern
    replacement: str
    applies: Callable[[str], bool] = lambda function: True


RULES = [
    Rule("除数差一", "差一错误（off-by-one）：平均数要除以元素个数 len(…)，多减或多加的 1 让结果不对",
         re.compile(r"/\s*\(\s*len\((?P<seq>[^()]+)\)\s*[-+]\s*1\s*\)"), r"/ len(\g<seq>)"),
    Rule("循环差一", "差一错误（off-by-one）：range(len(…) - 1) 漏掉了最后一个元素，遍历全部要用 range(len(…))",
         re.compile(r"range\(\s*len\((?P<seq>[^()]+)\)\s*-\s*1\s*\)"), r"range(len(\g<seq>))"),
    Rule("加法写成减法", "运算符写反：函数名说的是相加，代码却在相减",
         re.compile(r"return (?P<a>\w+) - (?P<b>\w+)\s*$"), r"return \g<a> + \g<b>",
         lambda function: function.lower() in ("add", "plus", "sum_two")),
]


@dataclass(frozen=True)
class Fix:
    line: int
    old: str
    new: str
    rule: Rule


def find_fix(lines: dict[int, str], function: str | None) -> Fix | None:
    """在出问题的函数里（找不到函数就在整个文件里）逐行套规则，第一处套得上的就是要改的地方。"""
    span = function_span(lines, function) or (min(lines, default=1), max(lines, default=0))
    for number in range(span[0], span[1] + 1):
        text = lines.get(number, "")
        for rule in RULES:
            if rule.applies(function or "") and rule.pattern.search(text):
                old, new = unique_context(lines, number, rule.pattern.sub(rule.replacement, text, count=1))
                return Fix(number, old, new, rule)
    return None


def function_span(lines: dict[int, str], function: str | None) -> tuple[int, int] | None:
    try:
        tree = ast.parse("\n".join(lines.get(n, "") for n in range(1, max(lines, default=0) + 1)))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            return node.lineno, node.end_lineno or node.lineno
    return None


def unique_context(lines: dict[int, str], number: int, changed: str) -> tuple[str, str]:
    """edit 要求原文只出现一次：这一行在文件里不止一处，就带上前面几行，直到唯一。"""
    text = "\n".join(lines[n] for n in sorted(lines))
    start = number
    while start > min(lines) and text.count("\n".join(lines[n] for n in range(start, number + 1))) > 1:
        start -= 1
    before = [lines[n] for n in range(start, number)]
    return "\n".join(before + [lines[number]]), "\n".join(before + [changed])


# ── 剧本：找出失败的测试并修好

def fix_failing_test() -> Script:
    result = yield Call("bash", {"command": TEST_COMMAND}, "先运行测试，看哪一条失败、失败在哪里。")
    if failed(result):
        return f"测试没能运行：{result}"
    run = TestRun.read(result)
    if run.passed:
        return f"测试全部通过（{run.summary}），没有需要修的。"
    if not run.failures:
        return f"测试没有通过，但输出里找不到失败的测试（FAIL / ERROR）：\n{result}"
    failure = run.failures[0]
    test_path, source_path, function = locate(failure)
    if test_path is None:
        return f"看不出失败的测试 {failure.test} 在哪个文件里：\n{result}"
    steps = [f"运行 {TEST_COMMAND}：{failure.test} 没有通过（{failure.message}）。"]
    if source_path is None:     # 断言没通过：traceback 里只有测试文件，被测的函数要看测试文件从哪里 import
        line, code = next((f[1], f[3]) for f in failure.frames if f[0].endswith(test_path))
        test = yield Call("read", {"path": test_path},
                          f"traceback 指向 {test_path} 第 {line} 行：{code}。读这个测试文件，看被测的函数从哪里来。")
        if failed(test):
            return f"没能读取测试文件：{test}"
        source_path, function = imported_source(numbered(test), code)
        if source_path is None:
            return f"读了 {test_path}，但看不出第 {line} 行（{code}）调用的函数来自哪个文件。"
        steps.append(f"读 {test_path}：第 {line} 行测的是 {function}，它从 {source_path} 导入。")
    source = yield Call("read", {"path": source_path}, f"被测的 {function} 在 {source_path} 里，读它的代码。")
    if failed(source):
        return "\n".join(steps) + f"\n没能读取 {source_path}：{source}"
    fix = find_fix(numbered(source), function)
    if fix is None:
        known = "、".join(rule.name for rule in RULES)
        return ("\n".join(steps) + f"\n读了 {source_path}，但我的规则认不出这是哪一类 bug（我只认识：{known}）。"
                f"\n失败信息：{failure.message}\n请换成真实模型试试，或者自己动手改。")
    steps.append(f"读 {source_path}：第 {fix.line} 行 {fix.old.splitlines()[-1].strip()}，"
                 f"套上规则“{fix.rule.name}”——{fix.rule.why}。")
    edited = yield Call("edit", {"path": source_path, "old": fix.old, "new": fix.new},
                        f"{fix.rule.why}。把第 {fix.line} 行改掉。")
    if failed(edited):
        return "\n".join(steps) + f"\n修改没有成功：{edited}"
    steps.append(f"用 edit 改成：{fix.new.splitlines()[-1].strip()}")
    again = yield Call("bash", {"command": TEST_COMMAND}, "改完再运行一遍测试，确认修好了、也没弄坏别的。")
    rerun = TestRun.read(again)
    steps.append(f"再运行测试：{rerun.summary}。")
    verdict = "修好了，测试全部通过。" if rerun.passed else f"测试仍然没有全部通过：\n{rerun.listing() or again}"
    return ("\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + f"\n\n{verdict}\n\n"
            f"说明：找到 bug 的不是理解，而是一条写死的规则（“{fix.rule.name}”）；"
            f"它只认得几种常见的写法。真正的大模型会读懂测试和代码再决定怎么改。")


# 找出失败的测试并修好它，写成计划的样子（MiniAgent 带着 write_todos 时，offline/agent.py 用）：
# 每一项 (做什么, 怎样算做完, 哪个工具的调用属于这一项)。第一次运行测试是在写计划之前看清楚情况，不是计划的一项。
FIX_PLAN = [("读失败的测试和它测的代码", "read 读到了测试文件和被测的源码", "read"),
            ("改好出错的那一行", "edit 改好了源码，交回了修改的 diff", "edit"),
            ("再运行一次测试，确认全部通过", "python3 -m unittest 的退出码是 0", "bash")]


def plan_for(question: str) -> list[tuple[str, str, str]] | None:
    """这个问题的剧本要分几步做、值得写计划时，计划的各项；一步就能做完的是 None。"""
    return FIX_PLAN if getattr(choose(question), "__name__", "") == "fix_failing_test" else None


# ── 被拒绝以后

def after_denial(call: Call, result: str) -> str:
    """不原样重试：说清楚是谁拒绝的、本来想做什么，把决定交还给用户。"""
    by_rule = re.search(r"权限规则不允许这次调用（(.+)）。不要", result)
    if by_rule:
        head = f"权限规则不允许这次 {call.name} 调用（{by_rule.group(1)}），我不会原样再试一次。"
    else:
        reason = re.search(r"用户拒绝了这次调用：(.+?)。(?:不要|$)", result)
        said = f"（理由：{reason.group(1)}）" if reason else ""
        head = f"你拒绝了这次 {call.name} 调用{said}，我不会原样再试一次。"
    args: dict[str, Any] = call.args
    if call.name == "edit":
        diff = "\n".join(difflib.unified_diff(args["old"].splitlines(), args["new"].splitlines(),
                                              f"a/{args['path']}", f"b/{args['path']}", lineterm=""))
        wanted = f"我本来想做的修改是：\n```diff\n{diff}\n```\n你可以自己改，或者告诉我换一种改法。"
    elif call.name == "write":
        wanted = (f"我本来要写入 {args['path']} 的内容是：\n```\n{args['content'].rstrip()}\n```\n"
                  f"你可以自己创建这个文件，或者告诉我写到别的地方。")
    elif call.name == "bash":
        wanted = f"我本来要运行的命令是：{args['command']}\n你可以自己运行它、把结果告诉我，或者告诉我换一种做法。"
    else:
        wanted = f"我本来要读 {args.get('path')}。如果不该看这个文件，请告诉我该看哪个。"
    rules = "如果这件事确实该做，可以修改左边的权限规则。" if by_rule else ""
    return f"{head}\n{wanted}\n接下来怎么做，请你决定。{rules}"


if __name__ == "__main__":
    import os
    import shutil
    import tempfile

    from atomic_tools import make_tools, run

    starter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workspace", "starter")
    with tempfile.TemporaryDirectory() as folder:
        shutil.copytree(starter, folder, dirs_exist_ok=True)
        tools, results = make_tools(folder), []
        while isinstance(step := next_step("找出失败的测试并修好它", results), Call):
            print(f"── {step.thought}\n   {step.name}({step.args})")
            results.append(run(tools, step.name, step.args).content)
        print(f"── 最终回答：\n{step}")
