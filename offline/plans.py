"""How the offline rule model plays the two kinds of plan in code/planning.py (lesson 8.3).

- With a `write_todos` tool: it first writes the plan alone (one item per call model.plan_calls
  finds in the task, with what "done" means), then works through it. Each round after a result
  it sends the updated board (the finished item completed, with a line quoted from its result as
  evidence; the next one in progress) together with the next item's call. When a call fails it
  replans: the item is rewritten to the tool whose required parameters the failed call already
  has and whose words are closest to the failed tool's; if that fails too, or there is none, the
  item is dropped and the answer says why. When the board matches what it last sent and nothing
  is left, it answers.
- With planning.PLANNER in the system prompt (the fixed plan): it answers {"steps": [...]} with
  the same items, written so that its own rules read each step back as the same call.
- When the task asks for a simulated mistake in so many words (planning.MISTAKE_ASKS), its first
  board makes that mistake (two items in progress, or the first item completed with invented
  evidence); the tool sends it back and the next round corrects it.

Like model.py it keeps no state: every round the progress is read again from the history. The
client's `mistake` switch does not apply here (the mistakes are asked for in the task).
"""
import json
import re

import planning

from .arguments import tool_words

DEMO = re.compile(r"[（(]演示[:：][^）)]*[）)]")
INVENTED = "这一步已经做过了"            # the evidence of the "unchecked" mistake: quoted from nothing
QUOTE_LIMIT = 40


def respond(messages, tools, tool_choice, parallel_tool_calls):
    """(assistant message, finish_reason) for a planning request; None for any other request."""
    from . import model     # model.py imports this module: its helpers are taken when a request comes
    system = "\n".join(model.text_of(m.get("content")) for m in messages if m.get("role") == "system")
    asked = [i for i, m in enumerate(messages) if m.get("role") == "user" and not model.is_observation(m)]
    if not asked or tool_choice == "none":
        return None
    question = model.text_of(messages[asked[-1]].get("content"))
    if planning.PLANNER in system and not tools:
        return answer(fixed_steps(question, model.parse_prompt_tools(system))), "stop"
    work = [t for t in tools or [] if t["function"]["name"] != planning.WRITE_TODOS]
    if len(work) == len(tools or []):
        return None
    history = messages[asked[-1] + 1:]
    return play(question, history, work, parallel_tool_calls is not False)


def answer(text):
    from .model import NOTICE
    return {"role": "assistant", "content": f"{text}\n{NOTICE}"}


def step_text(name, args, tools):
    """An item's content: the head of the tool's description and the argument values
    ("查询指定城市今天的天气：北京"); the keyword rules read it back as the same call."""
    tool = next((t for t in tools if t["function"]["name"] == name), None)
    description = (tool or {}).get("function", {}).get("description") or name
    head = re.split(r"[（(。，,；;]", description, maxsplit=1)[0].strip() or name
    values = "，".join(str(value) for value in args.values())
    return f"{head}：{values}" if values else head


def done_text(name, args):
    shown = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items())
    return f"{name}({shown}) 返回了成功的结果"


def fixed_steps(question, tools):
    from .model import plan_calls
    steps = [{"content": step_text(name, args, tools), "done_when": done_text(name, args)}
             for name, args in plan_calls(DEMO.sub("", question), tools)]
    return json.dumps({"steps": steps}, ensure_ascii=False)


def play(question, history, tools, together):
    from .model import call_id, plan_calls
    plan = plan_calls(DEMO.sub("", question), tools)
    rounds = sum(1 for m in history if m.get("role") == "assistant")
    if not plan:
        return answer("这个任务里没有找到能用工具做的步骤，所以没有写计划。请把要做的几件事写清楚。"), "stop"
    done = results_of(history)
    steps = [progress(call, done, tools) for call in plan]
    board = board_of(steps, tools)
    writes = [(todos_in(arguments), ok) for name, arguments, _, ok in written(history) if name == planning.WRITE_TODOS]
    outgoing = []
    if not writes:                        # the plan comes first, on its own
        outgoing.append((planning.WRITE_TODOS, {"todos": mistaken(board, question)}))
    else:
        accepted = next((todos for todos, ok in reversed(writes) if ok), None)
        if not writes[-1][1] or shape(accepted) != shape(board):
            outgoing.append((planning.WRITE_TODOS, {"todos": board}))
        current = next((step for step in steps if step["state"] == "todo"), None)
        if current is not None and (together or not outgoing):
            outgoing.append(current["call"])
    if not outgoing:
        return answer(summary(steps, tools)), "stop"
    calls = [{"id": call_id(name, args, index, rounds), "type": "function",
              "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
             for index, (name, args) in enumerate(outgoing)]
    return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"


def todos_in(arguments):
    """The list a write_todos call sent (None when its arguments are not a readable list)."""
    try:
        todos = json.loads(arguments).get("todos")
    except (json.JSONDecodeError, AttributeError):
        return None
    return todos if isinstance(todos, list) else None


def written(history):
    """Every call in the history: (name, arguments text, result text or None, succeeded)."""
    from .model import is_error, text_of
    outputs = {m.get("tool_call_id"): text_of(m.get("content")) for m in history if m.get("role") == "tool"}
    found = []
    for message in history:
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            function = call.get("function") or {}
            text = outputs.get(call.get("id"))
            found.append((function.get("name"), function.get("arguments") or "{}", text,
                          text is not None and not is_error(text)))
    return found


def results_of(history):
    """[(name, arguments, result text, succeeded)] of the work calls that got a result."""
    found = []
    for name, arguments, text, ok in written(history):
        if name == planning.WRITE_TODOS or text is None:
            continue
        try:
            found.append((name, json.loads(arguments), text, ok))
        except json.JSONDecodeError:
            continue
    return found


def alternative(call, tools):
    """After (name, args) failed: the other tool whose required parameters args already has and
    whose words overlap the failed tool's most, with those arguments; None when there is none."""
    name, args = call
    failed = next((t for t in tools if t["function"]["name"] == name), None)
    if failed is None:
        return None
    options = []
    for position, tool in enumerate(tools):
        parameters = tool["function"].get("parameters") or {}
        required = set(parameters.get("required") or [])
        shared = len(tool_words(tool) & tool_words(failed))
        if tool is failed or not required or not required <= set(args) or not shared:
            continue
        kept = {key: value for key, value in args.items() if key in (parameters.get("properties") or {})}
        options.append((shared, -position, tool["function"]["name"], kept))
    if not options:
        return None
    _, _, other, kept = max(options, key=lambda option: option[:2])
    return other, kept


def progress(call, done, tools):
    """Where one planned step stands: done (with the call that did it and a quote of its result),
    todo (the call to make next), or dropped (every way tried failed). tried: the failures."""
    from .model import read_edited
    tried = []
    for option in [call, alternative(call, tools)]:
        if option is None:
            break
        result = next(((text, ok) for name, args, text, ok in done if (name, args) == option), None)
        if result is None:
            return {"state": "todo", "call": option, "tried": tried}
        if result[1]:
            return {"state": "done", "call": option, "tried": tried, "evidence": quote(read_edited(result[0])[1]),
                    "result": result[0]}
        tried.append((option, result[0]))
    return {"state": "dropped", "call": None, "tried": tried}


def quote(text):
    """The evidence: the result's first line, cut after a closing mark when it is long."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) <= QUOTE_LIMIT:
        return first
    ends = [place for place, mark in enumerate(first[:QUOTE_LIMIT]) if mark in "}）)。；"]
    return first[:ends[-1] + 1] if ends and ends[-1] >= 8 else first[:QUOTE_LIMIT]


def board_of(steps, tools):
    board, started = [], False
    for step in steps:
        if step["state"] == "dropped":
            continue
        name, args = step["call"]
        item = {"content": step_text(name, args, tools), "status": "pending", "done_when": done_text(name, args)}
        if step["state"] == "done":
            item.update(status="completed", evidence=step["evidence"])
        elif not started:
            item["status"], started = "in_progress", True
        board.append(item)
    return board


def shape(board):
    if board is None:
        return None
    return [(item.get("content"), item.get("status")) for item in board if isinstance(item, dict)]


def mistaken(board, question):
    """The first board, with the mistake the task asked for (if it asked for one)."""
    asked = " ".join(DEMO.findall(question))
    board = [dict(item) for item in board]
    if len(board) >= 2 and "in_progress" in asked and "同时" in asked:
        board[1]["status"] = "in_progress"
    elif board and "completed" in asked and ("不做" in asked or "没做" in asked):
        board[0].update(status="completed", evidence=INVENTED)
        if len(board) >= 2:
            board[1]["status"] = "in_progress"
    return board


def summary(steps, tools):
    from .model import readable
    lines = ["计划里的事做完了："]
    for step in steps:
        if step["state"] == "done":
            name, args = step["call"]
            instead = f"（{step_text(*step['tried'][0][0], tools)} 没有成功，改用了这个）" if step["tried"] else ""
            lines.append(f"- {step_text(name, args, tools)}{instead}：{readable(step['result'])[:200]}")
    failed = [step for step in steps if step["state"] == "dropped"]
    if failed:
        lines.append("没做成、从计划里删掉的：")
        for step in failed:
            (name, args), text = step["tried"][0]
            lines.append(f"- {step_text(name, args, tools)}：{text.strip().splitlines()[0][:120]}")
    return "\n".join(lines)
