"""MiniAgent (8.13) on the server: what the page (or the named API) chose, as plain values, made into
code/mini_agent.py's Choices; the one file code/mini_agent_file.py writes from them; and the score
8.12's case set gives those parts (mini_agent.for_evaluation), beside the plain loop's on the same cases.

The options, by name (the page's controls and the API's parameters say the same):
  tools      the workspace tools the model is offered (a subset of read, write, edit, bash)
  rules_on   whether calls pass the permission rules at all (False: every call runs)
  rules      the rules, as JSON text or an object (code/permissions.py's shape)
  hooks      names from mini_agent.HOOK_PRESETS
  context    a strategy of mini_agent.CONTEXT_CHOICES, with `budget` (tokens, estimated)
  skills     skill names: the course's fix-tests (mini_agent.DEMO_SKILL) or one of the session's
             workspace skills (skills/<name>/SKILL.md, the files of the skills lesson)
  subagents  whether the model has the task tool; plan: whether it has write_todos
A missing option is the course's DEMO choice, so a bare question runs the agent the chapter built.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

import evaluation
import mini_agent
import mini_agent_file
import workspace
from evaluation_cases import CASE_SETS
from examples_weather import registry as weather
from function_calling_loop import run_function_calling
from mini_agent import DEMO, Choices
from skills import Skill

from runs import skills_backend

SKILL_EXAMPLE = mini_agent.DEMO_SKILL


def default_options() -> dict[str, Any]:
    """The options of mini_agent.DEMO, as the page's controls hold them."""
    return {"tools": list(DEMO.tools), "rules_on": DEMO.rules is not None,
            "rules": json.dumps(DEMO.rules or {}, ensure_ascii=False, indent=2), "hooks": list(DEMO.hooks),
            "context": DEMO.context, "budget": DEMO.budget, "skills": list(DEMO.skills),
            "subagents": DEMO.subagents, "plan": DEMO.plan}


def rules_from(value: Any) -> tuple[dict | None, list[str]]:
    """The rules as text (JSON) or an object -> (rules, problems)."""
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except json.JSONDecodeError as exc:
            return None, [f"权限规则不是合法 JSON（第 {exc.lineno} 行第 {exc.colno} 列：{exc.msg}）"]
    if not isinstance(value, dict):
        return None, [f"权限规则应是一个 JSON 对象（键：工具名或 工具:模式，值：allow / ask / deny），收到 {type(value).__name__}"]
    return value, []


def skill_pool(session_id: str | None) -> tuple[dict[str, Skill], list[str]]:
    """The skills one may choose: fix-tests, then the workspace's (a workspace skill of the same name wins)."""
    pool = {SKILL_EXAMPLE.name: SKILL_EXAMPLE}
    if not session_id:
        return pool, []
    try:
        shown, _ = skills_backend.shown_files(workspace.export_files(session_id))
    except workspace.WorkspaceError as exc:
        return pool, [f"读不到工作区里的技能：{exc}"]
    found, problems = skills_backend.skills_from(shown)
    return {**pool, **found}, problems


def names(value: Any, what: str) -> tuple[tuple[str, ...], list[str]]:
    """A list of names (the page's checkboxes, the API's list) -> (names, problems)."""
    if value is None:
        return (), []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(name, str) for name in value):
        return (), [f"{what} 应是名字的列表，收到 {value!r}"]
    return tuple(dict.fromkeys(value)), []


def choices_from(options: Mapping[str, Any], session_id: str | None = None) -> Choices:
    """The options (missing ones are DEMO's) -> Choices. Raises ValueError naming every problem, in Chinese."""
    given = {**default_options(), **{key: value for key, value in options.items() if value is not None}}
    problems: list[str] = []
    tools, said = names(given["tools"], "tools")
    problems += said + (["至少要选一个工具：read、write、edit、bash"] if not tools and not said else [])
    rules = None
    if given["rules_on"] is not False:
        rules, said = rules_from(given["rules"])
        problems += said
    hooks, said = names(given["hooks"], "hooks")
    problems += said
    wanted, said = names(given["skills"], "skills")
    problems += said
    chosen: dict[str, Skill] = {}
    if wanted:
        pool, said = skill_pool(session_id)
        problems += said
        for name in wanted:
            if name in pool:
                chosen[name] = pool[name]
            else:
                problems.append(f"没有叫 {name} 的技能，可选：{'、'.join(pool)}")
    budget = given["budget"]
    if isinstance(budget, float) and budget.is_integer():       # a slider's 3000.0
        budget = int(budget)
    choices = Choices(tools=tools, rules=rules, hooks=hooks, context=str(given["context"]), budget=budget,
                      skills=chosen, subagents=bool(given["subagents"]), plan=bool(given["plan"]))
    problems += choices.problems()
    if problems:
        raise ValueError("；".join(problems))
    return choices


def file_for(options: Mapping[str, Any], session_id: str | None, task: str) -> str:
    """The standalone mini_agent.py (code/mini_agent_file.py) of these choices, its default task `task`.
    Raises ValueError as choices_from does."""
    return mini_agent_file.write_file(choices_from(options, session_id), (task or "").strip()
                                      or mini_agent_file.DEFAULT_TASK)


# 8.12's cases for the weather tools: the parts act on these tools as they do on the workspace's.
SCORED_SET = "examples_weather.py"


@dataclasses.dataclass
class Scores:
    """The composed agent and the plain loop (function_calling_loop.py) on the same cases, one trial each."""
    composed: list[evaluation.Trial]
    plain: list[evaluation.Trial]

    def totals(self) -> tuple[evaluation.Totals, evaluation.Totals]:
        return evaluation.totals(self.composed), evaluation.totals(self.plain)


def score(options: Mapping[str, Any], session_id: str | None, client: Any, temperature: float | None = None) -> Scores:
    """8.12's weather cases scored on the parts chosen (mini_agent.for_evaluation: the plan, skills and
    sub-agents are the agent's own arrangements, not scored as work). The tools are the weather
    example's, so the workspace tools chosen and the rules (written for the workspace's tools: every
    weather call would wait for a person nobody is there to be) are left out; the page says so.
    Raises ValueError as choices_from does."""
    choices = dataclasses.replace(choices_from(options, session_id), rules=None)
    parts = dataclasses.replace(choices.parts(), tools=None)
    cases = evaluation.read_cases(CASE_SETS[SCORED_SET])
    composed = list(evaluation.evaluate(mini_agent.for_evaluation(client, None, weather, parts,
                                                                  temperature=temperature), cases, trials=1))
    plain = list(evaluation.evaluate(lambda messages: run_function_calling(
        client, messages, weather.to_schemas(), weather, temperature=temperature), cases, trials=1))
    return Scores(composed, plain)
