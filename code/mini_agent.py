"""MiniAgent（8.13）：把这一章做出来的零件装到同一个骨架上，在一个工作区里做完一件事。

比 subagents.py 和前面各课多了一件事：组装。没有新的机制，每个零件都是它那一课的代码，
装在它起作用的那个位置上（骨架是 function_calling_loop.py，扩展点只有 prepare 和 run_call 两个）：
  - 工具（8.4、8.5）：注册表里的工具，默认是工作区的 read、write、edit、bash（atomic_tools.py），可以只选几个；
  - 钩子（8.7）：hooks.hooked_call 包在每次执行外面：PreToolUse 在权限规则之前（可以改参数、拦下调用），
    PostToolUse 在执行之后（脱敏、审计）。钩子和规则管干活的工具，写计划、读技能不经过它们；
  - 权限规则（8.6）：执行之前 permissions.decide，发一个 permission 事件。allow 照常执行；deny 不执行，
    告诉模型是规则不允许；ask 停下来等人：send({"allow": True}) 同意，send({"deny": "理由"}) 拒绝，
    send({"arguments": {...}}) 改了参数再执行，没人回答（send(None)、直接 for 循环）就不执行；
  - 上下文（8.8）：骨架的 prepare 扩展点（context.within_budget）：每次请求之前，历史超了预算就收拾，
    发一个 context 事件；
  - 技能（8.9）：system 提示词里列出技能目录，加一个 load_skill 工具；开始之前发一个 skills 事件；
  - 子代理（8.10）：task 工具（subagents.with_tasks）。子循环也是这个骨架，用同样的钩子和权限规则：
    交给子代理的事，一样过规则，子代理绕不过去；它的事件带着 "child"；
  - 计划（8.3）：write_todos 工具和计划板（planning.py），每次写计划之后一个 plan 事件。
顺序和课程仓库的 s13_mini_agent.py 一样：PreToolUse 钩子 → 权限门禁 → 执行 → PostToolUse 钩子。
每个零件都可以不要：Parts() 什么都不选，就是 function_calling_loop.py 在工作区上跑。

8.12 的用例集也能给它打分：for_evaluation 交给 evaluation.evaluate 当 run_once。
mini_agent_file.py 把选好的零件写成一个只要标准库和 openai 的文件，python mini_agent.py 就能跑。

    python code/mini_agent.py          # 离线模型，在一个临时工作区里修好一个失败的测试
"""
from __future__ import annotations

import dataclasses
import os
import posixpath
import sys
from typing import Any, Callable, Generator, Iterator

import atomic_tools
import events
import permissions
from context import within_budget
from function_calling_loop import run_function_calling, tool_message
from hooks import FAILED, POST, PRE, Hooks, hooked_call, mask_secrets
from loop_parts import CarryOut, Executor, Steps, ToolCall, denied, executing, run_tool, told_edited, tools_and_executor
from planning import PLAN_SYSTEM, WRITE_TODOS, WRITE_TODOS_SCHEMA, PlanBoard, with_plan
from skills import Skill, catalogue_prompt, skill_tools, skills_event
from subagents import CHILD_SECONDS, CHILD_TURNS, TASK_SCHEMA, delegate, with_tasks

WORKSPACE_TOOLS = ("read", "write", "edit", "bash")
CONTEXT_CHOICES = ("none", "fold", "forget", "window", "fold_window", "compact")   # 课程仓库那种会留孤儿的窗口不在里面
SYSTEM = ("你是一个在工作区里干活的助手：用工具读文件、改文件、运行命令，把用户交代的事做完，"
          "最后用几句话说清楚做了什么、结果怎样。做不成的事如实说。")
OWN_TOOLS = (WRITE_TODOS, "load_skill", "task")      # 代理自己的工具：“怎么做”的安排，不是“做什么”的工作
MAX_TURNS = 16                                       # 计划、读技能、改、再验证：比一问一答多用不少轮


@dataclasses.dataclass
class Parts:
    """选了哪些零件。默认什么都不选。"""
    tools: tuple[str, ...] | None = None     # 注册表里用哪几个工具；None：全部
    rules: dict[str, str] | None = None      # 权限规则（permissions.py 的写法）；None：不检查
    hooks: Hooks | None = None               # 钩子（hooks.py）；None：没有
    context: str = "none"                    # context.STRATEGIES 里的一个；"none"：不收拾
    budget: int = 4000                       # 上下文预算（token，估计值）
    skills: dict[str, Skill] | None = None   # 技能目录（skills.find_skills 读出来的）；None：没有
    subagents: bool = False                  # 有没有 task 工具
    plan: bool = False                       # 有没有 write_todos 工具
    child_turns: int = CHILD_TURNS
    child_seconds: float = CHILD_SECONDS


def on_workspace(folder: str) -> tuple[list[dict], Executor]:
    """一个工作区的四个原子工具：(工具清单, 执行函数)。执行用 atomic_tools.run，失败带着工具自己的标签（路径越界、没有匹配）。"""
    registry = atomic_tools.make_tools(folder)
    return registry.to_schemas(), lambda name, arguments: atomic_tools.run(registry, name, arguments)


def system_prompt(parts: Parts) -> str:
    prompt = [SYSTEM]
    if parts.plan:
        prompt.append(PLAN_SYSTEM)
    if parts.skills:
        prompt.append(catalogue_prompt(parts.skills))
    return "\n\n".join(prompt)


# ── 权限门禁：执行之前先问规则（8.6）

def permitted(rules: dict[str, str], carry_out: CarryOut) -> CarryOut:
    """在 carry_out 前面加一道门：规则说 allow 才执行；ask 等人回答；deny 不执行，告诉模型是规则不允许。"""
    def gated(call: ToolCall) -> Generator[events.Event, Any, Any]:
        decision = permissions.decide(rules, call.name, call.arguments or {})
        answer = yield events.permission(call.turn, call.id, call.name, call.arguments, decision.verdict,
                                         decision.rule, decision.reason)
        if decision.verdict == "deny":
            return denied(call, decision.reason, decision.rule)
        if decision.verdict == "ask":
            answer = answer if isinstance(answer, dict) else {}
            if "deny" in answer:                      # 人拒绝的：说是人，不说是规则
                return denied(call, str(answer["deny"] or "").strip())
            if isinstance(answer.get("arguments"), dict):
                edited = dataclasses.replace(call, arguments=answer["arguments"], problems=[])
                return told_edited((yield from carry_out(edited)), call.arguments, edited.arguments)
            if answer.get("allow") is not True:       # 没人回答：规则要先问人，就不执行
                return denied(call, f"{decision.reason}；它要先问人，没有人同意", decision.rule)
        return (yield from carry_out(call))
    return gated


# ── 一次调用怎么跑：钩子 → 权限 → 执行 → 钩子

def each_call_with(tools: list[dict], parts: Parts):
    """骨架的 run_call：有钩子就是 hooks.hooked_call，没有就是 loop_parts.run_tool；执行那一步前面是权限门禁。
    钩子和规则管的是干活的工具：写计划、读技能是代理自己的安排，不碰工作区，照常执行。"""
    def each_call(call: ToolCall, execute: Executor | None, names: list[str]):
        carry_out = executing(execute, names)
        if call.name in OWN_TOOLS:
            return run_tool(call, execute, names, wrap=tool_message(call.id), carry_out=carry_out)
        if parts.rules is not None:
            carry_out = permitted(parts.rules, carry_out)
        if parts.hooks is not None:
            return hooked_call(call, execute, tools, parts.hooks, carry_out=carry_out)
        return run_tool(call, execute, names, wrap=tool_message(call.id), carry_out=carry_out)
    if parts.hooks is not None or parts.rules is not None:
        each_call.max_parallel = 1           # 钩子按调用的顺序运行，问人也只能一次问一个
    return each_call


# ── 组装

def run_mini_agent(client: Any, task: str | list[dict], tools: list[dict] | None, execute: Any, parts: Parts, *,
                   max_turns: int = MAX_TURNS, **options: Any) -> Steps:
    """在 tools / execute（比如 on_workspace(文件夹)）上，用 parts 选的零件做 task。
    options 原样交给骨架（tool_choice、temperature、stream、parallel_tool_calls……）。"""
    tools, execute = tools_and_executor(tools, execute)
    work = [t for t in tools if parts.tools is None or t["function"]["name"] in parts.tools]
    allowed = {t["function"]["name"] for t in work}
    messages = [{"role": "system", "content": system_prompt(parts)}]
    messages += [{"role": "user", "content": task}] if isinstance(task, str) else [dict(m) for m in task]

    def run_work(name: str, arguments: Any) -> Any:
        if name not in allowed:         # 没选的工具：模型就算点了它也不执行，循环会告诉它这是未知工具
            raise LookupError(name)
        return execute(name, arguments)

    offered, run = list(work), run_work
    if parts.skills:
        yield skills_event(parts.skills, [], "catalogue")
        own = skill_tools(parts.skills)
        offered += own.to_schemas()
        run = with_own_tools(own, run_work)
    board = PlanBoard() if parts.plan else None
    if board is not None:
        offered.append(WRITE_TODOS_SCHEMA)
        run = with_plan(board, run)
    each_call = each_call_with(offered, parts)
    if parts.subagents:
        offered.append(TASK_SCHEMA)
        child_options = {key: options[key] for key in ("temperature", "stream") if key in options}

        def start_child(call: ToolCall):        # 子代理：只有干活的工具，同样的钩子和规则
            return delegate(client, call, work, run_work, child_turns=parts.child_turns,
                            child_seconds=parts.child_seconds, run_call=each_call_with(work, parts), **child_options)
        each_call = with_tasks(each_call, start_child)
    prepare = within_budget(parts.context, parts.budget, client) if parts.context != "none" else None
    steps = run_function_calling(client, messages, offered, run, max_turns=max_turns, run_call=each_call,
                                 prepare=prepare, **options)
    if board is not None:
        steps = board.watch(steps)
    return (yield from steps)


def with_own_tools(own: Any, execute: Executor) -> Executor:
    """执行函数多认几个工具（own 是一个注册表，比如 load_skill）：它们的调用交给 own，别的交给 execute。"""
    def run(name: str, arguments: Any) -> Any:
        return own.call(name, arguments) if name in own.tools else execute(name, arguments)
    return run


# ── 给 8.12 的用例打分

def work_only(steps: Iterator[dict]) -> Iterator[dict]:
    """用例只写“该做什么工作”：调哪个工具、什么参数。写计划、读技能、派子代理是代理自己的安排，
    这些调用不算；子代理做的工作算在父循环的账上（去掉 child，轮次记成那次 task 的轮次）。"""
    task_turns: dict[str, int] = {}
    for event in steps:
        kind = event["type"]
        if "child" in event:
            if kind in ("tool_call", "tool_result"):
                lifted = {key: value for key, value in event.items() if key != "child"}
                yield {**lifted, "turn": task_turns.get(event["child"], event["turn"])}
            continue
        if kind in ("tool_call", "tool_result") and event["name"] in OWN_TOOLS:
            if kind == "tool_call" and event["name"] == "task":
                task_turns[event["id"]] = event["turn"]
            continue
        yield event


def for_evaluation(client: Any, tools: list[dict] | None, execute: Any, parts: Parts,
                   **options: Any) -> Callable[[list[dict]], Iterator[dict]]:
    """evaluation.evaluate 要的 run_once(messages)：跑一次 MiniAgent，交出去打分的是 work_only 之后的事件。
    问人的调用没人回答，按不执行算（和无人值守的接口一样）。"""
    return lambda messages: work_only(run_mini_agent(client, messages, tools, execute, parts, **options))


# ── 页面上的选择：能选的钩子（名字 -> [(挂在哪种事件上, 钩子)]），和一组选择

def protect_tests(call: dict) -> dict | None:
    """PreToolUse：不许改 tests/ 里的文件。要让测试通过，该改的是被测的代码，不是测试。"""
    path = posixpath.normpath(str((call["tool_input"] or {}).get("path", "")))
    if call["tool_name"] in ("write", "edit") and (path == "tests" or path.startswith("tests/")):
        return {"permissionDecision": "deny", "permissionDecisionReason": "tests/ 里的测试不能改：要让测试通过，请改被测的代码"}
    return None


HOOK_PRESETS = {"mask_secrets": [(POST, mask_secrets), (FAILED, mask_secrets)],
                "protect_tests": [(PRE, protect_tests)]}


def preset_hooks(names: tuple[str, ...] | list[str]) -> Hooks | None:
    """按名字挑几个钩子（HOOK_PRESETS），按给的顺序登记；一个都没挑是 None。"""
    if not names:
        return None
    hooks = Hooks()
    for name in names:
        for event, hook in HOOK_PRESETS[name]:
            hooks.add(event, hook)
    return hooks


@dataclasses.dataclass
class Choices:
    """学生在页面上选的零件，写成能存、能传的样子（名字、规则、文字）：parts() 拿它在这里跑，
    mini_agent_file.write_file 拿它写出一个独立的文件。两边是同样的零件、同样的提示词和工具说明。"""
    tools: tuple[str, ...] = WORKSPACE_TOOLS
    rules: dict[str, str] | None = None
    hooks: tuple[str, ...] = ()                  # HOOK_PRESETS 里的名字
    context: str = "none"                        # none、fold、forget、window、fold_window、compact
    budget: int = 4000
    skills: dict[str, Skill] = dataclasses.field(default_factory=dict)
    subagents: bool = False
    plan: bool = False

    def problems(self) -> list[str]:
        """选得不对的地方，每处一句中文；没有问题是 []。"""
        said = [f"没有叫 {name} 的工具，可选：{'、'.join(WORKSPACE_TOOLS)}" for name in self.tools
                if name not in WORKSPACE_TOOLS]
        said += permissions.validate_rules(self.rules) if self.rules is not None else []
        said += [f"没有叫 {name} 的钩子，可选：{'、'.join(HOOK_PRESETS)}" for name in self.hooks if name not in HOOK_PRESETS]
        if self.context not in CONTEXT_CHOICES:
            said.append(f"上下文的做法 {self.context!r} 不认识，可选：{'、'.join(CONTEXT_CHOICES)}")
        if not isinstance(self.budget, int) or self.budget < 200:
            said.append(f"上下文预算应是不小于 200 的整数（token），收到 {self.budget!r}")
        return said

    def parts(self) -> Parts:
        return Parts(tools=tuple(self.tools), rules=self.rules, hooks=preset_hooks(self.hooks), context=self.context,
                     budget=self.budget, skills=dict(self.skills) or None, subagents=self.subagents, plan=self.plan)


# ── 在终端里跑

def drive(steps: Steps, answer: Callable[[dict], Any]) -> Iterator[dict]:
    """把一次运行跑完，逐个交出事件；停下来问人的地方（钩子或权限规则的 asking）send(answer(事件))。"""
    reply = None
    while True:
        try:
            event = steps.send(reply)
        except StopIteration:
            return
        yield event
        reply = answer(event) if event.get("asking") else None


def ask_in_terminal(event: dict) -> dict | None:
    """在终端里问人：y 同意，别的拒绝。没有终端（比如被别的程序调用）就没人回答：不执行。"""
    if not sys.stdin.isatty():
        print(f"   ⏸ 要先问人（{event['asking']}），没有终端可以问：不执行")
        return None
    said = input(f"   ⏸ {event['asking']}\n   同意执行 {event['name']}({event.get('arguments')})？[y/N] ")
    return {"allow": True} if said.strip().lower() in ("y", "yes") else {"deny": "在终端里拒绝了"}


def shown(event: dict) -> str | None:
    """一个事件在终端里的一行：看得出每个零件在哪里起作用。"""
    who = "    子代理 " if "child" in event else ""
    kind = event["type"]
    if kind == "skills":
        return f"🎒 技能目录：{'、'.join(s['name'] for s in event['skills'])}"
    if kind == "context":
        return f"🗜️ 第 {event['turn']} 轮之前，上下文 {event['before_tokens']} → {event['after_tokens']} token：{'；'.join(event['notes'])}"
    if kind == "tool_call":
        return f"{who}🛠️ {event['name']}({event['raw_arguments']})"
    if kind == "hook":
        return f"{who}   🪝 {event['event']} {event['name']}：{event['problem'] or event['answer'] or '没意见'}"
    if kind == "permission":
        return f"{who}   🛡️ {event['verdict']}：{event['reason']}"
    if kind == "tool_result":
        return f"{who}   {'✅' if event['ok'] else '❌'} {event['content'].splitlines()[0][:100] if event['content'] else ''}"
    if kind == "plan":
        done = sum(item["status"] == "completed" for item in event["after"])
        said = "" if event["accepted"] else f"（退回：{'；'.join(event['problems'])[:80]}）"
        return f"📋 计划 {done}/{len(event['after'])} 项完成{said}"
    if kind in ("final", "error") and "child" not in event:
        return f"\n{'🤖' if kind == 'final' else '⚠️'} {event.get('content') or event.get('message')}"
    return None


DEMO_FILES = {
    "src/__init__.py": "",
    "src/calc.py": "def average(numbers):\n    \"\"\"平均数；空列表返回 0。\"\"\"\n    if not numbers:\n"
                   "        return 0\n    return sum(numbers) / (len(numbers) - 1)\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": "import unittest\n\nfrom src.calc import average\n\n\nclass CalcTest(unittest.TestCase):\n"
                          "    def test_average(self):\n        self.assertEqual(average([1, 2, 3, 4]), 2.5)\n",
}
DEMO_SKILL = Skill("fix-tests", "修好失败的测试：先运行测试看哪一条失败，读测试和被测的代码，改最小的一处，再运行测试确认。"
                                "用户要你修测试、修 bug 时用。",
                   "1. 运行 python3 -m unittest，记下失败的测试。\n2. 读失败的测试和它测的函数。\n"
                   "3. 只改出错的那一行，不顺手改别的。\n4. 再运行一次测试，全部通过才算做完。", "fix-tests/SKILL.md")
DEMO_RULES = {"read": "allow", "edit:src/*": "allow", "write": "ask", "bash": "ask",
              "bash:python3 -m unittest*": "allow", "bash:rm *": "deny"}


DEMO = Choices(rules=DEMO_RULES, hooks=("protect_tests", "mask_secrets"), context="fold", budget=3000,
               skills={DEMO_SKILL.name: DEMO_SKILL}, subagents=True, plan=True)


if __name__ == "__main__":
    import tempfile

    from llm_clients import make_client

    parts = DEMO.parts()
    with tempfile.TemporaryDirectory() as folder:
        for path, text in DEMO_FILES.items():
            os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
            with open(os.path.join(folder, path), "w", encoding="utf-8") as file:
                file.write(text)
        tools, execute = on_workspace(folder)
        run = run_mini_agent(make_client("offline"), "找出失败的测试并修好它", tools, execute, parts)
        for event in drive(run, ask_in_terminal):
            line = shown(event)
            if line:
                print(line)
        with open(os.path.join(folder, "src/calc.py"), encoding="utf-8") as file:
            print("\n改过以后的 src/calc.py：\n" + file.read())
