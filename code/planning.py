"""计划与执行（8.3）：计划是一个工具，模型自己写、自己改。对照课程仓库“先定好计划，再一步步执行”的写法。

比 function_calling_loop.py 多了这些（循环本身不变，多了一个工具和一块计划板）：
  - write_todos(todos)：模型每次交整张清单（替换旧的）。每一项有 content（做什么）、
    status（pending 没开始 / in_progress 正在做 / completed 做完了）和 done_when（怎样算做完）。
    learn-claude-code 的 TodoWrite、deepagents 的 write_todos 都是这个形状；这里多了 done_when，
    和标成 completed 时要交的 evidence；
  - 工具守三条规则。不合规则就不动计划板，回一个写明哪里不对、怎么改的错误（❌ [计划不合规则]），模型下一轮改：
      1. 同一时间最多一项 in_progress；
      2. 一项要标成 completed，evidence 得是原样摘自这次运行里某个成功的工具结果的一句话（至少 4 个字），
         证明 done_when 满足了。没做的事、失败了的事，都拿不出这样一句话；
      3. 完成了的项不能从清单里消失，也不能改回去：做完的事不会被悄悄抹掉；
  - 每次 write_todos 之后发一个 plan 事件：改之前和之后的计划板、变了什么、是不是改了计划（replanned）；
  - 一步失败了，模型改计划：换一种做法，或者删掉做不成的那一项，回答里说明。
课程仓库的写法在 plan_then_execute：先让模型一次写好全部步骤（JSON），再按顺序每一步问一次模型；
状态由循环来改，模型交回一段话就标 completed，不管这一步的工具成没成，后面的步骤照旧。
同一个任务两种写法各跑一遍，tally 数出请求了几轮、用了多少 token（服务端报的；离线模型的是估算，会标明）、
几次调用失败、失败以后发生了什么。

    python code/planning.py
"""
from typing import Annotated, Any, Iterator, Literal

# 这个文件不写 from __future__ import annotations：TypedDict 要在运行时读到 NotRequired
from typing_extensions import NotRequired, TypedDict

import events
from function_calling_loop import run_function_calling
from llm_clients import usage_is_estimate
from loop_parts import Executor, ask_model, describe_tools, tools_and_executor
from text_parsers import find_json_objects
from tool_outcome import ToolOutcome, failure, success
from tool_registry import ToolRegistry

WRITE_TODOS = "write_todos"
MAX_ITEMS = 20
MIN_EVIDENCE = 4             # 字：太短的摘录（“晴”“成功”）哪儿都找得到，证明不了什么
MAX_TURNS = 12               # 写计划、每步一次调用加一次更新，比普通的问答多用几轮

TASK = "出差前准备：查北京今天的天气，再查上海未来3天的天气预报，然后算一下 1200/3"
# 在题目里明说要犯哪个错（真模型也会照做），看工具怎么退回、模型怎么改
MISTAKE_ASKS = {
    "two_in_progress": "（演示：第一次写计划时，故意把前两项同时标成 in_progress）",
    "unchecked": "（演示：第一次写计划时，故意不做第一项就把它标成 completed）",
}

PLAN_SYSTEM = """你是一个先做计划再动手的助手。
多步骤的任务：先调用 write_todos 写下计划，每一项写清楚 done_when（怎样算做完，要能检查），再一项一项地做。
开始做一项之前把它标成 in_progress（同一时间只能有一项）；用工具做完以后把它标成 completed，
并在 evidence 里从那次工具结果中原样摘一句话作为证据。
某一步失败了，不要假装做完：改计划（换一种做法，或者删掉做不成的那一项），再接着做。
全部完成以后再回答用户，说清楚哪些做成了、哪些没做成。"""


class Todo(TypedDict):
    """计划里的一项。"""
    content: Annotated[str, "要做的一件事，一句话，如 查北京今天的天气"]
    status: Annotated[Literal["pending", "in_progress", "completed"], "pending 没开始，in_progress 正在做，completed 做完了"]
    done_when: Annotated[str, "怎样算做完，要能检查，如 get_weather 返回了北京的天气"]
    evidence: NotRequired[Annotated[str, "只在 completed 时写：从这次运行里某个成功的工具结果中原样摘一句话（至少 4 个字）"]]


class PlanBoard:
    """计划板：现在的计划（items），和这次运行里别的工具的结果（results：证据要在里面找）。
    items 的每一项：content、status、done_when；完成的项还有 evidence 和 found_in（证据出自哪个调用）。"""

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.results: list[dict] = []     # id、name、content、ok
        self.last: dict | None = None     # 最近一次 write 的经过：watch 据此发 plan 事件

    def write(self, todos: list[dict]) -> ToolOutcome:
        """write_todos 的本体：守规则。过了，换上新清单；没过，计划板不动，说清楚哪里不对。"""
        proposed = [dict(item) for item in todos]
        problems, proofs = self.check(proposed)
        before = self.items
        after = before if problems else [self.settled(item, proofs.get(n)) for n, item in enumerate(proposed)]
        changes, replanned = plan_changes(before, proposed if problems else after)
        self.last = {"before": before, "after": after, "proposed": proposed, "accepted": not problems,
                     "problems": problems, "changes": changes, "replanned": replanned and not problems}
        if problems:
            return failure("plan_rule", "计划没有改：" + "；".join(problems),
                           "改好以后把整张清单再交一次（计划板还是上一版）", arguments={"todos": proposed})
        self.items = after
        return success(render(after), arguments={"todos": proposed})

    def check(self, proposed: list[dict]) -> tuple[list[str], dict[int, dict]]:
        """-> (违反的规则，每条一句；{新完成的项的位置: 证据出自的那个结果})。"""
        problems: list[str] = []
        proofs: dict[int, dict] = {}
        if len(proposed) > MAX_ITEMS:
            problems.append(f"清单有 {len(proposed)} 项，最多 {MAX_ITEMS} 项：把小步骤合并起来")
        contents = [item["content"].strip() for item in proposed]
        for number, item in enumerate(proposed, 1):
            problems += [f"第 {number} 项的 {field} 是空的" for field in ("content", "done_when") if not item[field].strip()]
            if contents[number - 1] and contents.index(contents[number - 1]) < number - 1:
                problems.append(f"第 {number} 项和前面一项一样（“{contents[number - 1]}”）：一件事只写一项")
        doing = [str(number) for number, item in enumerate(proposed, 1) if item["status"] == "in_progress"]
        if len(doing) > 1:
            problems.append(f"第 {'、'.join(doing)} 项都是 in_progress：同一时间只能做一件事，把还没开始做的改回 pending")
        finished = {item["content"]: item for item in self.items if item["status"] == "completed"}
        for number, item in enumerate(proposed, 1):
            if item["status"] == "completed" and item["content"].strip() not in finished:
                problem, proof = self.prove(number, item)
                if problem:
                    problems.append(problem)
                else:
                    proofs[number - 1] = proof
        kept = {item["content"].strip(): item["status"] for item in proposed}
        for content in finished:
            if content not in kept:
                problems.append(f"已经完成的“{content}”在新清单里不见了：做完的事留在清单里，状态写 completed")
            elif kept[content] != "completed":
                problems.append(f"已经完成的“{content}”被改成了 {kept[content]}：做完的事不能改回去")
        return problems, proofs

    def prove(self, number: int, item: dict) -> tuple[str | None, dict | None]:
        """新标成 completed 的一项：evidence 要原样出现在某个成功的工具结果里。-> (问题, 出处)。"""
        evidence = squeeze(item.get("evidence") or "")
        which = f"第 {number} 项“{item['content'].strip()}”标成了 completed"
        if not evidence:
            return (f"{which}，却没有 evidence：从证明“{item['done_when'].strip()}”的那个工具结果里原样摘一句话写进去，"
                    "还没做成就先留在 in_progress"), None
        if len(evidence) < MIN_EVIDENCE:
            return f"{which}，evidence “{evidence}”太短（至少 {MIN_EVIDENCE} 个字），证明不了什么", None
        found = [result for result in self.results if evidence in squeeze(result["content"])]
        good = next((result for result in found if result["ok"]), None)
        if good is not None:
            return None, {"id": good["id"], "name": good["name"]}
        if found:
            return (f"{which}，evidence 出自 {found[0]['name']} 失败的结果：失败证明不了做完，"
                    "换一种做法把它做成，或者把这一项从计划里删掉"), None
        return (f"{which}，evidence “{evidence[:40]}”不在这次运行的任何工具结果里：先用工具把这一步做成，"
                "再从结果里原样摘一句"), None

    def settled(self, item: dict, proof: dict | None) -> dict:
        """过了规则的一项放上计划板的样子。早就完成了的项，证据还是原来那一条。"""
        content = item["content"].strip()
        kept = {"content": content, "status": item["status"], "done_when": item["done_when"].strip()}
        if item["status"] != "completed":
            return kept
        earlier = next((old for old in self.items if old["content"] == content and old["status"] == "completed"), None)
        if earlier is not None:
            return {**kept, "evidence": earlier["evidence"], "found_in": earlier["found_in"]}
        return {**kept, "evidence": squeeze(item.get("evidence") or ""), "found_in": proof}

    def watch(self, steps: Iterator) -> Iterator[events.Event]:
        """转发一次运行的事件（send 进来的干预照样传进去）。别的工具的结果记下来，是以后的证据；
        每个 write_todos 的结果后面跟一个 plan 事件。调用一个接一个执行（with_plan），所以
        write_todos 运行时，排在它前面的结果都已经记下了。"""
        sent = None
        while True:
            try:
                event = steps.send(sent)
            except StopIteration as stop:
                return stop.value
            sent = yield event
            if event["type"] != "tool_result":
                continue
            if event["name"] != WRITE_TODOS:
                self.results.append({"id": event["id"], "name": event["name"], "content": event["content"],
                                     "ok": event["ok"]})
                continue
            last, self.last = self.last, None
            if last is None:           # 参数读不出来、被人拒绝了……：write 没有运行，计划板没动
                last = {"before": self.items, "after": self.items, "proposed": None, "accepted": False,
                        "problems": [event["content"]], "changes": [], "replanned": False}
            yield events.plan(event["turn"], event["id"], "write_todos", last["accepted"], last["before"],
                              last["after"], last["proposed"], last["changes"], last["replanned"], last["problems"])


def squeeze(text: str) -> str:
    """连续的空白算一个空格：模型摘录时常把换行写成空格。"""
    return " ".join(str(text).split())


def plan_changes(before: list[dict], after: list[dict]) -> tuple[list[str], bool]:
    """两版计划之间变了什么，每处一句；同一个位置上旧的一项没了、新的一项来了，算改写。
    -> (变化, 是不是改了计划：已经有计划以后，又加了、删了或改写了计划项)。"""
    old = {item["content"].strip(): item for item in before}
    new = {item["content"].strip(): item for item in after}
    old_order, new_order = list(old), list(new)
    removed = [content for content in old_order if content not in new]
    added = [content for content in new_order if content not in old]
    rewritten: dict[str, str] = {}
    for content in removed:
        place = old_order.index(content)
        if place < len(new_order) and new_order[place] in added and new_order[place] not in rewritten.values():
            rewritten[content] = new_order[place]
    changes = [f"改写：{content} → {rewritten[content]}" if content in rewritten else f"删掉：{content}"
               for content in removed]
    changes += [f"新增：{content}（{new[content]['status']}）" for content in added if content not in rewritten.values()]
    changes += [f"{content}：{old[content]['status']} → {new[content]['status']}" for content in new_order
                if content in old and old[content]["status"] != new[content]["status"]]
    return changes, bool(before) and bool(removed or added)


MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


def render(items: list[dict]) -> str:
    """计划板写成给模型看的文字（write_todos 成功时的结果）。"""
    if not items:
        return "计划现在是空的。"
    lines = []
    for number, item in enumerate(items, 1):
        line = f"{MARKS[item['status']]} {number}. {item['content']}"
        if item["status"] == "completed":
            line += f" —— 证据：“{item['evidence']}”"
        else:
            line += f"（做完的标准：{item['done_when']}）"
        lines.append(line)
    done = sum(item["status"] == "completed" for item in items)
    return "\n".join([*lines, f"已完成 {done}/{len(items)} 项。"])


WRITE_TODOS_DESCRIPTION = (
    "写下或更新这个任务的计划（待办清单）。每次都交整张清单，它会替换掉旧的。多步骤的任务先写计划再动手；"
    "开始做一项前把它标成 in_progress（同一时间只能有一项）；做完一项就标成 completed，并在 evidence 里"
    "从工具结果中原样摘一句话，证明 done_when 满足了。某一步失败了，就改计划。")


def plan_tool(board: PlanBoard, registry: ToolRegistry | None = None) -> ToolRegistry:
    """write_todos 登记在注册表里：参数的形状（每项的字段、status 只能是三个值之一）由注册表按 schema 检查，
    规则由计划板检查。两样的错误都是同一个形状（tool_outcome）。"""
    registry = registry or ToolRegistry()

    @registry.tool(WRITE_TODOS_DESCRIPTION)
    def write_todos(todos: list[Todo]) -> ToolOutcome:
        """写计划。

        Args:
            todos: 整张清单（替换掉旧的），按要做的顺序排
        """
        return board.write(todos)

    return registry


WRITE_TODOS_SCHEMA = plan_tool(PlanBoard()).to_schemas()[0]


def with_plan(board: PlanBoard, execute: Executor) -> Executor:
    """执行函数多认一个 write_todos。调用一个接一个执行（max_parallel = 1）：同一轮里排在前面的调用的结果，
    排在后面的 write_todos 已经能拿来当证据。"""
    plan = plan_tool(board)

    def run(name: str, arguments: Any) -> Any:
        return plan.call(name, arguments) if name == WRITE_TODOS else execute(name, arguments)
    run.max_parallel = 1
    return run


def breaking(execute: Executor, broken: Any = ()) -> Executor:
    """演示“一步失败了”：broken 里的工具这次一律失败，失败的原因写明是演示设定的。两种写法用同一个设定，才好对照。"""
    broken = set(broken or ())
    if not broken:
        return execute

    def run(name: str, arguments: Any) -> Any:
        if name in broken:
            return failure("demo_failure", f"{name} 这次没有成功：它背后的接口暂时不可用（演示：这个工具被设定为失败）",
                           "换一个能查到同样信息的工具，或者如实告诉用户这一步做不成",
                           arguments=arguments if isinstance(arguments, dict) else None)
        return execute(name, arguments)
    return run


def run_with_plan(client: Any, task: str, tools: list[dict] | None, execute: Any, *, broken: Any = (),
                  max_turns: int = MAX_TURNS, stream: bool = False, temperature: float | None = None):
    """Function Calling 循环，system 提示词是 PLAN_SYSTEM，工具里多一个 write_todos；
    每个 write_todos 的结果后面多一个 plan 事件。broken：这次一律失败的工具名（演示一步失败）。"""
    tools, execute = tools_and_executor(tools, execute)
    board = PlanBoard()
    tools = [t for t in tools if t["function"]["name"] != WRITE_TODOS] + [WRITE_TODOS_SCHEMA]
    messages = [{"role": "system", "content": PLAN_SYSTEM}, {"role": "user", "content": task}]
    steps = run_function_calling(client, messages, tools, with_plan(board, breaking(execute, broken)),
                                 max_turns=max_turns, stream=stream, temperature=temperature)
    return (yield from board.watch(steps))


# ── 对照：课程仓库的写法，先一次定好计划，再按顺序执行

PLANNER = "你是任务规划器：把用户的目标拆成几个按顺序执行的步骤"
PLANNER_SYSTEM = PLANNER + """，每一步是一件能用下面的工具做完的事。
只输出一个 JSON 对象，不要别的文字：{{"steps": [{{"content": "这一步做什么", "done_when": "怎样算做完"}}]}}

可用的工具（名字: 说明，下一行是参数的 JSON Schema）：
{tools}"""
STEP_SYSTEM = "你在按计划一步一步完成一个任务。总目标：{task}\n前面几步的产出：\n{context}\n现在只做用户说的这一步，做完用一两句话说出结果。"
STEP_TURNS = 3
LOOP_STOPS = ("max_turns", "too_many_failures")    # 这一步的循环自己停下了：课程的写法照样往下走


def read_steps(text: str) -> list[dict] | str:
    """规划器的回答 -> 步骤列表；读不出来时是一句说明。"""
    found, error = find_json_objects(text)
    plan = next((value for value, _, _ in found if isinstance(value.get("steps"), list)), None)
    if plan is None:
        why = f"（json.loads：{error.msg}）" if error else ""
        return f"规划器的回答里没有 {{\"steps\": [...]}} 这样的 JSON{why}，没法往下执行。可以再试一次，或者换一个模型。"
    steps = [{"content": str(step.get("content") or "").strip(), "done_when": str(step.get("done_when") or "").strip()}
             for step in plan["steps"] if isinstance(step, dict)]
    steps = [step for step in steps if step["content"]]
    return steps or "规划器给出的步骤是空的，没有可执行的事。"


def plan_then_execute(client: Any, task: str, tools: list[dict] | None, execute: Any, *, broken: Any = (),
                      step_turns: int = STEP_TURNS, stream: bool = False, temperature: float | None = None):
    """课程仓库的两段式：1. 一次请求写好全部步骤；2. 每一步用 Function Calling 循环做（最多 step_turns 轮），
    前面几步的产出放进 system 提示词。状态由这里改：开始做标 in_progress，这一步交回一段话就标 completed
    ——工具失败了也一样，后面的步骤照旧执行，计划从不改。每一步的事件带上 "step"（第几步），turn 接着往下数。"""
    tools, execute = tools_and_executor(tools, execute)
    execute = breaking(execute, broken)
    history = [{"role": "system", "content": PLANNER_SYSTEM.format(tools=describe_tools(tools))},
               {"role": "user", "content": task}]
    completion = yield from ask_model(client, history, 1, stream, temperature=temperature)
    if completion is None:
        return
    history.append(completion.message)
    steps = read_steps(completion.text)
    if isinstance(steps, str):
        yield events.error(1, "bad_plan", steps)
        return
    board = [{"content": step["content"], "status": "pending", "done_when": step["done_when"]} for step in steps]
    yield events.plan(1, None, "fixed", True, [], board, None, *plan_changes([], board), [])
    turn, outputs = 1, []
    for number, item in enumerate(board, 1):
        before = [dict(i) for i in board]
        item["status"] = "in_progress"
        yield events.plan(turn, None, "fixed", True, before, board, None, *plan_changes(before, board), [])
        context = "\n".join(outputs) or "（还没有）"
        messages = [{"role": "system", "content": STEP_SYSTEM.format(task=task, context=context)},
                    {"role": "user", "content": item["content"]}]
        run = run_function_calling(client, messages, tools, execute, max_turns=step_turns, stream=stream,
                                   temperature=temperature)
        offset, result, failed, succeeded, sent = turn, "", 0, 0, None
        while True:
            try:
                event = run.send(sent)          # send 进来的干预（单步时改过的参数）照样传给这一步的循环
            except StopIteration:
                break
            sent = None
            turn = offset + event["turn"]
            if event["type"] == "final" or (event["type"] == "error" and event["code"] in LOOP_STOPS):
                result = event.get("content") or event.get("message") or ""
                continue
            if event["type"] == "tool_result":
                failed, succeeded = failed + (not event["ok"]), succeeded + bool(event["ok"])
            sent = yield {**event, "turn": turn, "step": number}
            if event["type"] == "error":            # 模型那边出了错（Key、网络……）：整个流程停下
                return
        before = [dict(i) for i in board]
        item.update(status="completed", result=result, failed_calls=failed,    # 课程的写法：交回一段话就算完成
                    ok_calls=succeeded)
        yield events.plan(turn, None, "fixed", True, before, board, None, *plan_changes(before, board), [])
        outputs.append(f"步骤 {number}（{item['content']}）：{result}")
    yield events.final(turn, "\n\n".join(outputs), history)


# ── 两种写法对照

def tally(run: list[dict]) -> dict:
    """一次运行的账：请求了几轮、token（服务端报的 usage 相加；离线模型的是估算，estimated 为 True；
    没报 usage 的请求数在 unreported，不估也不补）、工具调用几次、失败几次，计划写了几次、被退回几次、改了几次，
    最后的计划板，和失败之后发生了什么。"""
    responses = [e for e in run if e["type"] == "response"]
    usages = [e["usage"] for e in responses if e.get("usage")]
    results = [e for e in run if e["type"] == "tool_result"]
    work = [e for e in results if e["name"] != WRITE_TODOS]
    plans = [e for e in run if e["type"] == "plan"]
    first_failure = next((run.index(e) for e in work if not e["ok"]), None)
    board = next((e["after"] for e in reversed(plans) if e["accepted"]), [])
    return {
        "rounds": sum(e["type"] == "request" for e in run),
        "prompt_tokens": sum(u.get("prompt_tokens") or 0 for u in usages),
        "completion_tokens": sum(u.get("completion_tokens") or 0 for u in usages),
        "unreported": len(responses) - len(usages),
        "estimated": any(usage_is_estimate(e["raw"]) for e in responses),
        "tool_calls": len(work),
        "failed_calls": sum(not e["ok"] for e in work),
        "plan_writes": len(results) - len(work),
        "rejected": sum(not e["accepted"] for e in plans),
        "replans": sum(e["replanned"] for e in plans),
        "replanned_after_failure": first_failure is not None and any(
            e["replanned"] for e in run[first_failure:] if e["type"] == "plan"),
        "completed_despite_failure": [item["content"] for item in board
                                      if item["status"] == "completed" and item.get("failed_calls")
                                      and not item.get("ok_calls")],
        "board": board,
        "finished": any(e["type"] == "final" for e in run),
    }


def example_tools() -> ToolRegistry:
    """示例任务用的工具：天气（examples_weather.py）和计算器（examples_calculator.py）放进一个注册表。"""
    from examples_calculator import registry as calculator
    from examples_weather import registry as weather
    registry = ToolRegistry()
    registry.tools.update({**weather.tools, **calculator.tools})
    return registry


if __name__ == "__main__":
    from llm_clients import make_client

    client, tools = make_client("offline"), example_tools()
    print(f"任务：{TASK}\n这次让 get_weather 失败（演示），看两种写法怎么应对。")
    runs = {"计划是工具（write_todos）": list(run_with_plan(client, TASK, None, tools, broken={"get_weather"})),
            "先定计划再执行（课程仓库）": list(plan_then_execute(client, TASK, None, tools, broken={"get_weather"}))}
    for title, run in runs.items():
        print(f"\n── {title}")
        for event in run:
            if event["type"] == "plan":
                print(f"  计划板（第 {event['turn']} 轮）{'' if event['accepted'] else '❌ 退回：' + '；'.join(event['problems'])}")
                for change in event["changes"]:
                    print(f"     {'🔁 ' if event['replanned'] else ''}{change}")
            elif event["type"] == "tool_result" and event["name"] != WRITE_TODOS:
                print(f"  {event['name']}：{event['content'][:60]}")
            elif event["type"] in ("final", "error"):
                lines = [line[:100] for line in (event.get("content") or event.get("message")).splitlines() if line]
                print(f"  {event['type']}：" + "\n    ".join(lines[:5]))
    print()
    for title, run in runs.items():
        count = tally(run)
        tokens = f"{count['prompt_tokens']} + {count['completion_tokens']}"
        tokens += "（离线模型的估算）" if count["estimated"] else ""
        print(f"{title}：{count['rounds']} 轮请求，token {tokens}，工具调用 {count['tool_calls']} 次（失败 "
              f"{count['failed_calls']} 次），失败后改了计划：{'是' if count['replanned_after_failure'] else '否'}，"
              f"工具失败了却标成完成的步骤：{count['completed_despite_failure'] or '没有'}")

    print(f"\n── 让模型故意犯错：{MISTAKE_ASKS['unchecked']}")
    for event in run_with_plan(client, TASK + MISTAKE_ASKS["unchecked"], None, tools):
        if event["type"] == "plan" and event["turn"] <= 2:
            print(f"  第 {event['turn']} 轮：{'通过' if event['accepted'] else '退回：' + '；'.join(event['problems'])}")
