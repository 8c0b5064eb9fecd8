"""MiniAgent 写成一个文件（8.13）：把选好的零件写成一个只要标准库和 openai 的 mini_agent.py，拿回家就能跑。

比 mini_agent.py 多了一件事：它不 import 这一章的任何模块。mini_agent.py 靠 hooks.py、permissions.py、
context.py……装起来；这里把选中的零件的源码原样抄进一个文件（source_of 按名字从那些模块里取，
规则、工具、脱敏、折叠改了，写出来的文件跟着变），再配上一段只用 openai SDK 的循环：

    python mini_agent.py "找出失败的测试并修好它"                 # 连本机的离线服务（先 python code/offline_server.py --port 8765）
    OPENAI_BASE_URL=… OPENAI_API_KEY=… MINI_AGENT_MODEL=… python mini_agent.py --workspace 某个文件夹 "…"

写出来的文件只有选中的零件：没选权限规则，就没有 decide；没选子代理，就没有 task。
提示词、工具说明、计划和技能的说明，和 mini_agent.py 在这里跑时发给模型的一字不差。
有几处比 mini_agent.py 简单，文件开头会写明：调用一个接一个地执行；钩子只认这里能选的几种回答；
子代理只有轮数上限，没有时间预算；token 按字数粗估（accents.rough_tokens 的算法）。

    python code/mini_agent_file.py                 # 把 mini_agent.DEMO 这组选择写成文件，打印出来
    python code/mini_agent_file.py 输出文件.py      # 写进一个文件
"""
from __future__ import annotations

import ast
import inspect
import json
import pprint
import sys
from types import ModuleType

import accents
import atomic_tools
import context
import hooks
import mini_agent
import permissions
import planning
import skills
import subagents
import tool_outcome
from llm_clients import OFFLINE_MODEL
from mini_agent import Choices

DEFAULT_TASK = "找出失败的测试并修好它"
LOCAL_URL = "http://127.0.0.1:8765/v1"                 # python code/offline_server.py --port 8765
LOCAL_MODEL = OFFLINE_MODEL


def source_of(module: ModuleType, *names: str) -> str:
    """module 里这几个顶层定义（函数、类、常量）的源码，连同紧挨在上面的注释，按它们在文件里的顺序。"""
    text = inspect.getsource(module)
    lines = text.splitlines()
    pieces, found = [], set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined = {node.name}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined = {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
        else:
            continue
        if not defined & set(names):
            continue
        found |= defined
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        pieces.append("\n".join(lines[start:node.end_lineno]))
    missing = set(names) - found
    if missing:
        raise LookupError(f"{module.__name__} 里没有 {', '.join(sorted(missing))}")
    return "\n\n\n".join(pieces)


def text_block(text: str) -> str:
    """一段多行的文字写成三引号字符串，读起来和提示词本身一样；写不成（里面有三引号、反斜杠）就用 repr。"""
    if '"""' in text or "\\" in text or text.endswith('"'):
        return repr(text)
    return '"""' + text + '"""'


def literal(value: object) -> str:
    """一个值写成 Python 源码（中文原样，不转义）；一个汉字占两格，行宽按英文算得窄一些。"""
    return pprint.pformat(value, width=96, sort_dicts=False)


# ═══════════════════════════════════════════════════════════════ 写出来的文件：一段一段

HEAD = '''#!/usr/bin/env python3
"""MiniAgent：一个文件里的个人 Agent（由工具调用教学工坊的 mini_agent_file.py 按你选的零件写成）。

这个文件里有：{parts}。
只用标准库和 openai 包（pip install openai）。先在另一个终端里启动本机的离线模型（不联网、不要 Key），再运行：

    python code/offline_server.py --port 8765
    python mini_agent.py "{task}"          # 在当前文件夹里干活；--workspace 换一个文件夹

换成任意 OpenAI 兼容的接口：Base URL、Key、模型名从环境变量（或命令行）来，文件里不写 Key：

    export OPENAI_BASE_URL=https://open.bigmodel.cn/api/paas/v4 OPENAI_API_KEY=你的Key MINI_AGENT_MODEL=glm-4.6
    python mini_agent.py --workspace ./我的项目 "{task}"

bash 在你的电脑上直接运行，没有沙箱{rules_note}。
比工坊里的 MiniAgent 简单的地方：{simpler}。
"""
from __future__ import annotations

{imports}

from openai import APIError, OpenAI

DEFAULT_TASK = {task_literal}
MAX_TURNS = {max_turns}
SYSTEM = {system}
WORKSPACE = "."                  # main() 按 --workspace 换成那个文件夹的绝对路径
'''

MODEL = '''# ═══ 模型：openai SDK 发请求，回答读成 dict（messages 里放的都是 dict，能原样 json.dumps）

class Reply:
    def __init__(self, response: Any):
        choice = response.choices[0]
        self.message = {"role": "assistant", "content": choice.message.content}
        if choice.message.tool_calls:    # 放回历史的调用：id、名字、参数原文，别的不要
            self.message["tool_calls"] = [{"id": call.id, "type": "function", "function": {
                "name": call.function.name, "arguments": call.function.arguments}} for call in choice.message.tool_calls]
        self.text = choice.message.content or ""
        self.finish_reason = choice.finish_reason
        self.usage = response.usage.model_dump() if response.usage else None
        self.model = response.model


class Model:
    """client.complete(messages, tools=…) -> Reply。"""

    def __init__(self, base_url: str, model: str, api_key: str):
        self.sdk, self.model = OpenAI(base_url=base_url, api_key=api_key), model

    def complete(self, messages: list[dict], tools: list[dict] | None = None, **params: Any) -> Reply:
        if tools:
            params["tools"] = tools
        return Reply(self.sdk.chat.completions.create(model=self.model, messages=messages, **params))
'''

OUTCOME = '''# ═══ 失败的写法（tool_outcome.py）：❌ [标签] 结论。下一步。

LABELS = {labels}


{source}
'''

TOOLS = '''# ═══ 工具：{names}（atomic_tools.py 的同一份代码），只在 WORKSPACE 里干活

{source}


TOOLS = {schemas}


def run_work(name: str, arguments: dict) -> tuple[bool, str]:
    """执行一个干活的工具：(成功没有, 交给模型的文字)。工具自己发现的失败带着它的标签（路径越界、没有匹配……）。"""
    functions = {functions}
    if name not in functions:
        return False, error_text("unknown_tool", f"没有叫 {{name}} 的工具", f"可用的工具：{{'、'.join(functions)}}")
    parameters = next(t["function"]["parameters"]["properties"] for t in TOOLS if t["function"]["name"] == name)
    unknown = [key for key in arguments if key not in parameters]
    if unknown:
        return False, error_text("invalid_arguments", f"{{name}} 没有参数 {{'、'.join(unknown)}}",
                                 f"它的参数是 {{'、'.join(parameters)}}")
    try:
        return True, clip(functions[name](WORKSPACE, **arguments))[0]
    except ToolFailure as problem:
        text = error_text(problem.code, problem.conclusion, problem.hint)
        return False, clip(f"{{text}}\\n{{problem.detail}}" if problem.detail else text)[0]
    except TypeError as error:            # 少了参数、多了不认识的参数
        return False, error_text("invalid_arguments", f"{{name}} 的参数不对：{{error}}", "请按工具说明里的参数重写")
    except Exception as error:            # 兜底：磁盘错误、权限……也变成给模型看的文字
        return False, error_text("tool_exception", f"{{name}} 执行出错：{{type(error).__name__}}: {{error}}",
                                 "请检查参数后重试")
'''

ASK = '''def ask_person(question: str) -> bool | None:
    """在终端里问你：y 同意，别的拒绝。没有终端（被别的程序调用）就没人回答：None。"""
    if not sys.stdin.isatty():
        print(f"      ⏸ 要先问人（{question}），没有终端可以问：不执行")
        return None
    return input(f"      ⏸ {question}\\n      同意执行吗？[y/N] ").strip().lower() in ("y", "yes")
'''

RULES = '''# ═══ 权限规则（permissions.py 的同一份代码）：每次执行之前问一句“这一步可以直接做吗？”

RULES = {rules}


{source}


def permitted(name: str, arguments: dict) -> str | None:
    """规则说能执行就是 None；不能执行时，是交给模型的那段文字（谁不让、为什么）。"""
    decision = decide(RULES, name, arguments)
    print(f"      🛡️ {{decision.verdict}}：{{decision.reason}}")
    if decision.verdict == "allow":
        return None
    if decision.verdict == "ask":
        agreed = ask_person(decision.reason)
        if agreed:
            return None
        if agreed is False:               # 人拒绝的：说是人，不说是规则
            return error_text("denied", "用户拒绝了这次调用：在终端里拒绝了",
                              f"不要重复同样的 {{name}} 调用；请先问用户想怎么做，或者换一种做法")
        reason = f"{{decision.reason}}；它要先问人，没有人同意"
    else:
        reason = decision.reason
    return error_text("rule_denied", f"权限规则不允许这次调用（{{reason}}）",
                      f"不要重复同样的 {{name}} 调用；请换一种规则允许的做法，或者请用户修改规则")
'''

HOOKS = '''# ═══ 钩子（hooks.py）：调用执行之前、之后运行的几个函数

{source}


HOOKS = {registered}


def run_hooks(event: str, payload: dict) -> dict:
    """按登记的顺序运行 event 上的钩子，合起来的回答。PreToolUse：deny > ask > allow，最严的算；
    PostToolUse / PostToolUseFailure：updatedToolOutput 换掉文字（后面的钩子看到换过的），block 拦下结果。
    钩子自己抛了异常，就当它拦下了（fail closed：一道没运行成功的检查不算通过）。"""
    merged: dict = {{}}
    for hook in HOOKS[event]:
        try:
            answer = hook(dict(payload)) or {{}}
        except Exception as error:
            print(f"      🪝 {{event}} {{hook.__name__}} 出错：{{type(error).__name__}}: {{error}}")
            return {{"broken": hook.__name__, "reason": f"{{type(error).__name__}}: {{error}}"}}
        print(f"      🪝 {{event}} {{hook.__name__}}：{{answer or '没意见'}}")
        if answer.get("permissionDecision") in ("deny", "ask") and merged.get("permissionDecision") != "deny":
            merged.update(permissionDecision=answer["permissionDecision"], by=hook.__name__,
                          reason=answer.get("permissionDecisionReason") or "没有说明理由")
        if "updatedToolOutput" in answer:
            merged["updatedToolOutput"] = answer["updatedToolOutput"]
            payload["tool_response" if event == POST else "error"] = answer["updatedToolOutput"]
        if answer.get("decision") == "block":
            return {{"block": hook.__name__, "reason": answer.get("reason") or "没有说明理由"}}
        if answer.get("additionalContext"):
            merged.setdefault("context", []).append(str(answer["additionalContext"]))
    return merged
'''

CONTEXT = '''# ═══ 上下文预算（context.py 的同一份代码）：每次请求之前，超了预算就收拾

BUDGET = {budget}                   # token（估计值）


{rough}


def text_tokens(text: str) -> int:
    return rough_tokens(text)


{source}


def prepare(history: list[dict], client: Any) -> list[dict]:
    """超过 BUDGET 就用选好的做法收拾（{title}），收拾过的就是之后的历史。"""
    if sum(tokens(history)) <= BUDGET:
        return history
    shrunk = {shrink}
    for note in shrunk.notes:
        print(f"🗜️ {{note}}")
    return shrunk.messages
'''

SKILLS = '''# ═══ 技能（skills.py）：system 提示词里只列名字和描述，要用时 load_skill 读正文

SKILLS = {bodies}
LOAD_SKILL = {schema}


def load_skill(arguments: dict) -> tuple[bool, str]:
    name = arguments.get("name")
    if name not in SKILLS:
        return False, error_text("tool_exception", f"没有叫 {{name!r}} 的技能。可用的技能：{{', '.join(SKILLS)}}",
                                 "请用技能列表里的名字")
    return True, SKILLS[name]
'''

PLAN = '''# ═══ 计划（planning.py）：write_todos 每次交整张清单，计划板守三条规则

WRITE_TODOS = {schema}
MIN_EVIDENCE = {min_evidence}
board: list[dict] = []           # 现在的计划
results: list[tuple[str, bool]] = []   # 这次运行里工具的结果（文字, 成功没有）：证据要在里面找


{source}


def write_todos(arguments: dict) -> tuple[bool, str]:
    """规则：同一时间最多一项 in_progress；标成 completed 要交 evidence，原样摘自某个成功的工具结果
    （至少 MIN_EVIDENCE 个字）；完成了的项不能消失，也不能改回去。不合规则就不动计划板，说清楚哪里不对。"""
    todos = arguments.get("todos")
    if not isinstance(todos, list) or not all(isinstance(item, dict) for item in todos):
        return False, error_text("invalid_arguments", "todos 应是一个清单，每项是 {{content, status, done_when}}", "请重写")
    problems = []
    doing = [str(n) for n, item in enumerate(todos, 1) if item.get("status") == "in_progress"]
    if len(doing) > 1:
        problems.append(f"第 {{'、'.join(doing)}} 项都是 in_progress：同一时间只能做一件事")
    done_before = {{item["content"] for item in board if item["status"] == "completed"}}
    for number, item in enumerate(todos, 1):
        if item.get("status") == "completed" and item.get("content") not in done_before:
            evidence = squeeze(item.get("evidence") or "")
            quoted = [ok for text, ok in results if evidence and evidence in squeeze(text)]
            if len(evidence) < MIN_EVIDENCE or not any(quoted):
                problems.append(f"第 {{number}} 项标成了 completed，evidence “{{evidence[:40]}}”不是摘自一个成功的工具结果"
                                f"（至少 {{MIN_EVIDENCE}} 个字）：先用工具把这一步做成，再从结果里原样摘一句")
    kept = {{item.get("content"): item.get("status") for item in todos}}
    problems += [f"已经完成的“{{content}}”不见了或被改回去了：做完的事留在清单里，状态写 completed"
                 for content in done_before if kept.get(content) != "completed"]
    if problems:
        print(f"📋 计划被退回：{{'；'.join(problems)}}")
        return False, error_text("plan_rule", "计划没有改：" + "；".join(problems), "改好以后把整张清单再交一次")
    board[:] = [{{"content": str(item.get("content", "")).strip(), "status": item.get("status", "pending"),
                 "done_when": str(item.get("done_when", "")).strip(), "evidence": squeeze(item.get("evidence") or "")}}
                for item in todos]
    print(f"📋 计划 {{sum(item['status'] == 'completed' for item in board)}}/{{len(board)}} 项完成")
    return True, render(board)
'''

TASK = '''# ═══ 子代理（subagents.py）：task 把一件事交给一个从零开始的子循环，只拿回它的结论

TASK = {schema}
CHILD_SYSTEM = {child_system}
CHILD_TURNS = {child_turns}


def run_task(client: Any, arguments: dict) -> tuple[bool, str]:
    """子循环：messages 全新（只有 CHILD_SYSTEM 和 prompt），只有干活的工具（不能再派子代理），
    同样的钩子和权限规则。没做完（用完轮数、出了错），交回的是一条失败，不是一段像答案的话。"""
    missing = [key for key in ("description", "prompt") if not str(arguments.get(key) or "").strip()]
    if missing:
        return False, error_text("invalid_arguments", f"task 需要不空的文字参数 {{', '.join(missing)}}",
                                 "prompt 是交给子代理的完整说明：它只看得到这一段")
    print(f"   👥 子代理开始：{{arguments['description']}}")
    messages = [{{"role": "system", "content": CHILD_SYSTEM}}, {{"role": "user", "content": str(arguments["prompt"])}}]
    answer, finished = agent_loop(client, messages, TOOLS, CHILD_TURNS, who="   子代理 ")
    if not finished or not answer.strip():
        return False, error_text("subagent_failed", f"子代理没有做完：{{answer or '回答是空的'}}",
                                 "不要把它当成答案；可以换个说法再交给它一次，或者自己来做")
    return True, answer
'''

LOOP = '''# ═══ 循环（function_calling_loop.py 的样子）：问模型 → 执行它要的每个调用 → 结果放回对话 → 再问

def one_call(client: Any, name: str, raw: str) -> tuple[bool, str]:
    """执行一次调用，永远返回一段交给模型的文字。顺序：{order}。"""
    try:
        arguments = json.loads(raw or "{{}}")
    except json.JSONDecodeError as error:
        return False, error_text("invalid_json", f"参数不是合法的 JSON（{{error.msg}}）", "请重新输出一个 JSON 对象")
    if not isinstance(arguments, dict):
        return False, error_text("invalid_arguments", "参数应是一个 JSON 对象", "请写成 {{\\"参数名\\": 值}}")
{own}{gate}    ok, text = run_work(name, arguments)
{after}    return ok, text


def agent_loop(client: Any, messages: list[dict], tools: list[dict], max_turns: int,
               who: str = "") -> tuple[str, bool]:
    """-> (最终回答, 是不是正常答完的)。"""
    for _ in range(max_turns):
{prepare}        reply = client.complete(messages, tools=tools)
        messages.append(reply.message)
        calls = reply.message.get("tool_calls") or []
        if not calls:
            return reply.text, True
        for call in calls:
            name, raw = call["function"]["name"], call["function"]["arguments"]
            print(f"{{who}}🛠️ {{name}}({{raw}})")
            ok, text = one_call(client, name, raw)
{record}            print(f"{{who}}   {{'✅' if ok else '❌'}} {{text.splitlines()[0][:100] if text else ''}}")
            messages.append({{"role": "tool", "tool_call_id": call["id"], "content": text}})
    return f"已经用完 {{max_turns}} 轮，还没有得到最终回答", False
'''

MAIN = '''# ═══ 命令行

def main() -> int:
    parser = argparse.ArgumentParser(description="MiniAgent：在一个文件夹里，用模型和工具做完一件事")
    parser.add_argument("task", nargs="?", default=DEFAULT_TASK, help="要做的事")
    parser.add_argument("--workspace", default=".", help="在哪个文件夹里干活（默认当前文件夹）")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "{local_url}"),
                        help="OpenAI 兼容接口的地址（也可以用环境变量 OPENAI_BASE_URL）")
    parser.add_argument("--model", default=os.environ.get("MINI_AGENT_MODEL", "{local_model}"),
                        help="模型名（也可以用环境变量 MINI_AGENT_MODEL）")
    parser.add_argument("--max-turns", type=int, default=MAX_TURNS)
    args = parser.parse_args()
    global WORKSPACE
    WORKSPACE = os.path.abspath(args.workspace)
    if not os.path.isdir(WORKSPACE):
        print(f"❌ 没有这个文件夹：{{WORKSPACE}}")
        return 2
    key = os.environ.get("OPENAI_API_KEY", "")
    local = args.base_url.startswith(("http://127.0.0.1", "http://localhost"))
    if not key and not local:
        print(f"❌ 连 {{args.base_url}} 要一个 Key：先 export OPENAI_API_KEY=你的Key（Key 不写进这个文件）")
        return 2
    client = Model(args.base_url, args.model, key or "not-needed-offline")   # 本机的离线服务不看 Key
    messages = [{{"role": "system", "content": SYSTEM}}, {{"role": "user", "content": args.task}}]
    try:
        answer, finished = agent_loop(client, messages, {tools}, args.max_turns)
    except APIError as error:
        print(f"\\n❌ 模型那边出错了：{{error}}")
        return 2
    print(f"\\n🤖 {{answer}}")
    return 0 if finished else 1


if __name__ == "__main__":
    sys.exit(main())
'''

# 每种上下文做法要抄哪些函数，收拾的那一行怎么写
CONTEXT_PARTS = {
    "fold": (("message_text", "tokens", "Shrunk", "FOLD_LINES", "KEEP_LINES", "fold", "fold_results"),
             "fold_results(history)"),
    "forget": (("message_text", "tokens", "Shrunk", "calls_by_id", "forget_old_results"),
               "forget_old_results(history)"),
    "window": (("message_text", "tokens", "Shrunk", "MIN_KEEP", "groups", "window"), "window(history, BUDGET)"),
    "fold_window": (("message_text", "tokens", "Shrunk", "FOLD_LINES", "KEEP_LINES", "MIN_KEEP", "fold",
                     "fold_results", "groups", "window", "then"),
                    "then(fold_results(history), window(fold_results(history).messages, BUDGET))"),
    "compact": (("message_text", "tokens", "Shrunk", "MIN_KEEP", "groups", "SUMMARY_ASK", "SUMMARY_HEAD",
                 "SUMMARY_TEMPERATURE", "TRANSCRIPT_LIMIT", "transcript", "compact"), "compact(client, history)"),
}
FUNCTIONS = {"read": "read_file", "write": "write_file", "edit": "edit_file", "bash": "run_bash"}
HELPERS = {"read": ["read_text"], "write": ["read_text", "_write_text", "usage"],
           "edit": ["read_text", "_write_text", "usage", "_occurrences", "_closest"],
           "bash": ["_format_output", "run_locally"]}


def labels(choices: Choices) -> dict[str, str]:
    """写出来的文件会用到的失败标签，取自 tool_outcome.LABELS（全项目只有这一张表）。"""
    codes = ["unknown_tool", "invalid_json", "invalid_arguments", "tool_exception", "path_outside", "not_found",
             "no_match", "ambiguous_match", "workspace_full", "timeout", "exit_status"]
    codes += ["denied", "rule_denied"] if choices.rules is not None else []
    codes += ["hook_denied", "hook_failed", "hook_blocked"] if choices.hooks else []
    codes += ["plan_rule"] if choices.plan else []
    codes += ["subagent_failed"] if choices.subagents else []
    return {code: tool_outcome.LABELS[code] for code in codes}


def described(choices: Choices) -> str:
    """文件开头那句“这个文件里有：……”。"""
    said = [f"工具 {'、'.join(choices.tools)}"]
    if choices.rules is not None:
        said.append(f"权限规则（{len(choices.rules)} 条）")
    if choices.hooks:
        said.append(f"钩子 {'、'.join(choices.hooks)}")
    if choices.context != "none":
        said.append(f"上下文预算 {choices.budget} token（{context.STRATEGIES[choices.context]}）")
    if choices.skills:
        said.append(f"技能 {'、'.join(choices.skills)}")
    if choices.subagents:
        said.append("子代理（task）")
    if choices.plan:
        said.append("计划（write_todos）")
    return "；".join(said)


def write_file(choices: Choices, task: str = DEFAULT_TASK, max_turns: int = mini_agent.MAX_TURNS) -> str:
    """按 choices 写出一个独立的 mini_agent.py（文字）。选得不对就抛 ValueError，每处问题一句话。"""
    problems = choices.problems()
    if problems:
        raise ValueError("；".join(problems))
    tools = [name for name in mini_agent.WORKSPACE_TOOLS if name in choices.tools]
    simpler = ["调用一个接一个地执行"] + (["钩子只认这里用到的几种回答"] if choices.hooks else [])
    simpler += ["子代理只有轮数上限，没有时间预算"] if choices.subagents else []
    simpler += ["token 按字数粗估"] if choices.context != "none" else []
    rules_note = ("：权限规则只决定什么时候先问你，不是围墙" if choices.rules is not None
                  else "，也没有权限规则：每个调用都直接执行")
    sections = [HEAD.format(parts=described(choices), task=task, task_literal=json.dumps(task, ensure_ascii=False),
                            max_turns=max_turns, system=text_block(mini_agent.system_prompt(choices.parts())),
                            imports="{imports}", rules_note=rules_note, simpler="；".join(simpler))]
    sections.append(MODEL)
    sections.append(OUTCOME.format(labels=literal(labels(choices)),
                                   source=source_of(tool_outcome, "SENTENCE_END", "error_text", "RESULT_LIMIT",
                                                    "CLIPPED", "_CLIPPED", "clip")))
    helpers = dict.fromkeys(h for name in tools for h in HELPERS[name])
    names = ["MAX_FILE_BYTES", "MAX_WORKSPACE_BYTES", "MAX_FILES", "MAX_TIMEOUT", "ToolFailure", "inside",
             "_link_that_leaves", "_open", *helpers, *(FUNCTIONS[name] for name in tools)]
    schemas = [tool for tool in atomic_tools.make_tools(".").to_schemas() if tool["function"]["name"] in tools]
    sections.append(TOOLS.format(names="、".join(tools), source=source_of(atomic_tools, *names),
                                 schemas=literal(schemas),
                                 functions="{" + ", ".join(f'"{n}": {FUNCTIONS[n]}' for n in tools) + "}"))
    if choices.rules is not None or choices.hooks:
        sections.append(ASK)
    if choices.rules is not None:
        sections.append(RULES.format(rules=literal(dict(choices.rules)), source=source_of(
            permissions, "Verdict", "VERDICTS", "NAMES", "PATTERN_ARGUMENT", "CONTROL", "PIECES", "Decision", "decide",
            "strictest", "matches", "has_control", "described")))
    if choices.hooks:
        sections.append(hooks_section(choices))
    if choices.context != "none":
        wanted, shrink = CONTEXT_PARTS[choices.context]
        sections.append(CONTEXT.format(budget=choices.budget, rough=source_of(accents, "WIDE", "rough_tokens"),
                                       source=source_of(context, "PER_MESSAGE", *wanted),
                                       title=context.STRATEGIES[choices.context], shrink=shrink))
    if choices.skills:
        sections.append(SKILLS.format(bodies=literal({name: skill.body for name, skill in choices.skills.items()}),
                                      schema=literal(skills.skill_tools({}).to_schemas()[0])))
    if choices.plan:
        sections.append(PLAN.format(schema=literal(planning.WRITE_TODOS_SCHEMA), min_evidence=planning.MIN_EVIDENCE,
                                    source=source_of(planning, "squeeze", "MARKS", "render")))
    if choices.subagents:
        sections.append(TASK.format(schema=literal(subagents.TASK_SCHEMA),
                                    child_system=json.dumps(subagents.CHILD_SYSTEM, ensure_ascii=False),
                                    child_turns=subagents.CHILD_TURNS))
    sections.append(loop_section(choices))
    offered = " + ".join(["TOOLS"] + [f"[{name}]" for name, chosen in (("LOAD_SKILL", choices.skills),
                                                                      ("WRITE_TODOS", choices.plan),
                                                                      ("TASK", choices.subagents)) if chosen])
    sections.append(MAIN.format(local_url=LOCAL_URL, local_model=LOCAL_MODEL, tools=offered))
    text = "\n\n\n".join(section.strip("\n") for section in sections) + "\n"
    return text.replace("{imports}", imports_for(text), 1)


# 写出来的文件可能用到的模块和名字：用到哪个才 import 哪个
MODULES = ("argparse", "dataclasses", "difflib", "json", "os", "posixpath", "re", "signal", "stat", "subprocess", "sys",
           "time")
NAMES = {"PurePosixPath": "pathlib", "dataclass": "dataclasses", "fnmatchcase": "fnmatch",
         "Any": "typing", "Callable": "typing", "Literal": "typing", "Mapping": "typing"}


def imports_for(text: str) -> str:
    """按文件里实际用到的名字写 import：标准库的模块一行一个，再是 from … import …。"""
    used = {node.id for node in ast.walk(ast.parse(text.replace("{imports}", ""))) if isinstance(node, ast.Name)}
    lines = [f"import {module}" for module in MODULES if module in used]
    sources: dict[str, list[str]] = {}
    for name, module in NAMES.items():
        if name in used:
            sources.setdefault(module, []).append(name)
    lines += [f"from {module} import {', '.join(names)}" for module, names in sorted(sources.items())]
    return "\n".join(lines)


def hooks_section(choices: Choices) -> str:
    """选中的钩子（mini_agent.HOOK_PRESETS）的源码，和按事件登记的清单。"""
    functions = dict.fromkeys(hook.__name__ for name in choices.hooks for _, hook in mini_agent.HOOK_PRESETS[name])
    source = [source_of(hooks, "PRE", "SECRETS", "mask", "mask_secrets") if "mask_secrets" in functions
              else 'PRE, POST, FAILED = "PreToolUse", "PostToolUse", "PostToolUseFailure"']
    source += [source_of(mini_agent, name) for name in functions if name != "mask_secrets"]
    registered = {event: [] for event in (hooks.PRE, hooks.POST, hooks.FAILED)}
    for name in choices.hooks:
        for event, hook in mini_agent.HOOK_PRESETS[name]:
            registered[event].append(hook.__name__)
    table = "{" + ", ".join(f"{key}: [{', '.join(value)}]" for key, value in
                            (("PRE", registered[hooks.PRE]), ("POST", registered[hooks.POST]),
                             ("FAILED", registered[hooks.FAILED]))) + "}"
    return HOOKS.format(source="\n\n\n".join(source), registered=table)


def loop_section(choices: Choices) -> str:
    """one_call 和 agent_loop：选了哪些零件，就在它们起作用的地方多几行。"""
    steps = (["PreToolUse 钩子"] if choices.hooks else []) + (["权限规则"] if choices.rules is not None else [])
    steps += ["执行"] + (["PostToolUse 钩子"] if choices.hooks else [])
    order = " → ".join(steps)
    own_tools = [name for name, chosen in (("写计划", choices.plan), ("读技能", choices.skills),
                                           ("派子代理", choices.subagents)) if chosen]
    if own_tools:
        order = f"{'、'.join(own_tools)}是代理自己的事，直接执行；干活的工具：{order}"
    own = ""
    for name, handler in (("write_todos", "write_todos(arguments)"), ("load_skill", "load_skill(arguments)"),
                          ("task", "run_task(client, arguments)")):
        chosen = {"write_todos": choices.plan, "load_skill": bool(choices.skills), "task": choices.subagents}[name]
        if chosen:
            own += f'    if name == "{name}":\n        return {handler}\n'
    gate = ""
    if choices.hooks:
        gate += ('    payload = {"hook_event_name": PRE, "tool_name": name, "tool_input": arguments}\n'
                 '    said = run_hooks(PRE, payload)\n'
                 '    if "broken" in said:\n'
                 '        return False, error_text("hook_failed", f"执行之前，钩子 {said[\'broken\']} 自己出错了"\n'
                 '                                 f"（{said[\'reason\']}），它是 fail closed 的，{name} 没有执行",\n'
                 '                                 "这是钩子的问题，不是你写的参数的问题：不要改参数重试，请告诉用户")\n'
                 '    if said.get("permissionDecision") == "ask" and ask_person(said["reason"]):\n'
                 '        said["permissionDecision"] = "allow"\n'
                 '    if said.get("permissionDecision") in ("deny", "ask"):\n'
                 '        return False, error_text("hook_denied", f"钩子 {said[\'by\']} 不允许这次调用：{said[\'reason\']}",\n'
                 '                                 f"不要重复同样的 {name} 调用；请按理由换一种做法")\n')
    if choices.rules is not None:
        gate += ('    refused = permitted(name, arguments)\n'
                 '    if refused is not None:\n'
                 '        return False, refused\n')
    after = ""
    if choices.hooks:
        after = ('    event = POST if ok else FAILED\n'
                 '    said = run_hooks(event, {"hook_event_name": event, "tool_name": name, "tool_input": arguments,\n'
                 '                              ("tool_response" if ok else "error"): text})\n'
                 '    if "broken" in said or "block" in said:\n'
                 '        who = said.get("broken") or said["block"]\n'
                 '        return False, error_text("hook_blocked", f"钩子 {who} 拦下了结果：{said[\'reason\']}", "请不要重复这次调用")\n'
                 '    text = said.get("updatedToolOutput", text)\n'
                 '    if said.get("context"):\n'
                 '        text += "\\n" + "\\n".join(said["context"])\n')
    prepare = "        messages[:] = prepare(messages, client)\n" if choices.context != "none" else ""
    record = ('            if name not in ("write_todos", "load_skill", "task"):\n'
              '                results.append((text, ok))         # 计划的证据从这些结果里找\n') if choices.plan else ""
    return LOOP.format(order=order, own=own, gate=gate, after=after, prepare=prepare, record=record)


if __name__ == "__main__":
    text = write_file(mini_agent.DEMO)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as file:
            file.write(text)
        print(f"写好了 {sys.argv[1]}（{len(text.splitlines())} 行）：{described(mini_agent.DEMO)}")
    else:
        print(text)
