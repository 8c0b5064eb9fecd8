"""How the offline rule model plays the MiniAgent (code/mini_agent.py): the four workspace tools
together with any of the agent's own tools, load_skill (8.9), write_todos (8.3) and task (8.10).

It is the workspace's scripts (workspace.py) with three things in front of them or beside them:
- task: when the task says so in so many words ("派一个子代理去…"), it delegates and answers with
  what the sub-agent handed back (model._task_step, as in lesson 8.10);
- load_skill: when the system prompt lists skills and one's description shares words with the
  task, it reads that skill first (model.skill_for, as in lesson 8.9), then goes on with the work
  and says which skill it read;
- write_todos: for a script of several steps (workspace.plan_for: finding and fixing a failing
  test) it first runs the tests to see what is wrong, then writes the plan. Each round after a
  result it sends the updated board (an item whose calls succeeded completed, with the first line
  of its last successful result as evidence; the item of the next call in progress) together with
  that call, or alone when parallel calls are off. Items the script never finished stay on the
  board as they are when it answers.
Like the rest of the model it keeps no state: every round is read again from the history.
"""
import json

from loop_parts import read_edited

from . import plans as offline_plans
from . import workspace as offline_workspace

OWN = {"write_todos", "load_skill", "task"}


def respond(messages, tools, tool_choice, parallel_tool_calls):
    """(assistant message, finish_reason) for a MiniAgent request; None for any other request."""
    from . import model     # model.py imports this module: its helpers are taken when a request comes
    names = {t.get("function", {}).get("name") for t in tools or []}
    if not offline_workspace.WORKSPACE_TOOLS <= names or not names & OWN or tool_choice not in (None, "auto"):
        return None
    system = "\n".join(model.text_of(m.get("content")) for m in messages if m.get("role") == "system")
    asked = [i for i, m in enumerate(messages) if m.get("role") == "user" and not model.is_observation(m)]
    if not asked:
        return None
    question = model.text_of(messages[asked[-1]].get("content"))
    history = messages[asked[-1] + 1:]
    rounds = sum(1 for m in history if m.get("role") == "assistant")
    done = offline_plans.written(history)        # (name, arguments text, result or None, succeeded)
    if "task" in names:
        delegated = model.OfflineModel()._task_step(question, history, tools)
        if delegated is not None:
            return delegated
    skill = model.skill_for(question, system) if "load_skill" in names and model.SKILL_LINE.search(system) else None
    read_skill = next((json.loads(args or "{}").get("name") for name, args, _, _ in done if name == "load_skill"), None)
    if skill and read_skill is None:              # the skill comes first, on its own
        return model.native_message([("load_skill", {"name": skill})], None, {}, rounds), "tool_calls"
    work = [(name, text, ok) for name, _, text, ok in done
            if name in offline_workspace.WORKSPACE_TOOLS and text is not None]
    step = offline_workspace.next_step(question, [model.readable(text) for _, text, _ in work])
    outgoing = []
    stages = offline_workspace.plan_for(question) if "write_todos" in names else None
    writes = [(offline_plans.todos_in(args), ok) for name, args, _, ok in done if name == "write_todos"]
    if stages and work and (writes or isinstance(step, offline_workspace.Call)):
        board = board_of(stages, work[1:], step)
        accepted = next((todos for todos, ok in reversed(writes) if ok), None)
        if not writes or not writes[-1][1] or offline_plans.shape(accepted) != offline_plans.shape(board):
            outgoing.append(("write_todos", {"todos": board}))
    if isinstance(step, offline_workspace.Call) and (parallel_tool_calls is not False or not outgoing):
        outgoing.append((step.name, step.args))
    if outgoing:
        return model.native_message(outgoing, None, {}, rounds), "tool_calls"
    said = f"我先读了技能 {read_skill} 的说明（load_skill），再动手。\n" if read_skill else ""
    return model.OfflineModel()._final(said + step, "native"), "stop"


def board_of(stages, calls, step):
    """The board after `calls` (the work after the first test run, in order): an item is completed once
    its calls have succeeded and the script has gone past it, in progress while the next call is its."""
    current = next((index for index, stage in enumerate(stages) if stage[2] == step.name), None) \
        if isinstance(step, offline_workspace.Call) else len(stages)
    board = []
    for index, (content, done_when, tool) in enumerate(stages):
        item = {"content": content, "status": "pending", "done_when": done_when}
        own = [(text, ok) for name, text, ok in calls if name == tool]
        if index == current:
            item["status"] = "in_progress"
        elif current is not None and index < current and own and own[-1][1]:
            item.update(status="completed", evidence=offline_plans.quote(read_edited(own[-1][0])[1]))
        elif own:                                  # tried and not done: the script stopped here
            item["status"] = "in_progress"
        board.append(item)
    if sum(item["status"] == "in_progress" for item in board) > 1:     # at most one: the latest tried
        first = next(item for item in board if item["status"] == "in_progress")
        first["status"] = "pending"
    return board
