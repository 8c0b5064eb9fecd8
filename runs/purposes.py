"""What a run of a preset question is for: its purpose, written in the one shape the evaluation
lesson has for "what should happen" (code/evaluation.py's Case: the calls with their argument
matchers, their order, a matcher for the answer). runs/headline.py checks a run against it, so a
✅ means the run did what the question asked, not merely that the loop ended.

Where a purpose is written, beside its question:
  - the evaluation lesson's case sets (code/evaluation_cases.py) already say what most preset
    questions of the example tool sets want: those are the purposes of those questions;
  - OWN below: the presets the case sets do not cover, and the lessons' own presets (context
    budget, skills and memory);
  - the sub-agent lesson's rule (and MiniAgent's): a question that asks for a sub-agent wants `task`;
  - MINI_AGENT below: MiniAgent's task on the workspace, fixed when the tests pass after an edit.
A question typed freely has no purpose (None) and is judged on its events alone.

The run records its purpose as its first event (events.purpose: turn 0, the case), so an
export, a replay and a kept run are judged as the run was. A purpose is only used where it fits the
run (runs/headline.py's `fits`): every tool it names was offered, every exact value it expects was
said to the model. A source edited into other tools, a skill renamed, the memory tools switched
off: the purpose no longer applies, and nothing is judged against it.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping

import events as loop_events
from evaluation import Case, read_cases
from evaluation_cases import CASE_SETS

from runs import context_backend, planning_backend


def ask(question: str, *calls: dict, order: str = "any", answer: Any = None) -> Case:
    """A question and what its run is for. Several calls: in any order unless said."""
    return Case(question, question, tuple(calls), order, answer)


def call(tool: str, /, **arguments: Any) -> dict:
    """A call the question wants: the tool, and a matcher for each argument it checks."""
    return {"name": tool, "arguments": arguments} if arguments else {"name": tool}


CITY = {"广州": {"one_of": ["广州", "广州市"]}, "北京": {"one_of": ["北京", "北京市"]}}
LOAD_SKILL = "load_skill"

OWN = {case.question: case for case in (
    # The example tool sets' presets (lessons/presets.py) that no evaluation case asks.
    ask("北京明天会下雨吗？", call("get_forecast", city=CITY["北京"])),
    ask("算一下 2**10 + 24", call("calculate"), answer={"contains": "1048"}),
    ask("员工 103 的档案给我看看；另外基本工资 1.2万，奖金 3000，税率 10%，税后能拿多少？",
        call("get_employee", employee_id=103),
        call("calculate_salary", base={"near": 12000}, bonus={"near": 3000}, tax_rate={"near": 0.1, "tolerance": 0.001})),
    ask("给王五转账 100 元", call("transfer_money", payee="王五", amount={"near": 100})),
    ask("删除用户 1", call("delete_user", user_id={"one_of": ["1", 1]})),
    ask("上海和北京的路况", call("get_traffic", city="上海"), call("get_traffic", city="北京")),
    ask("读一下 Payments 服务的配置", call("fetch_config", service={"one_of": ["Payments", "payments"]})),
    ask("读一下 billing 服务的配置", call("fetch_config", service="billing")),
    ask("执行 SQL `DROP TABLE orders`", call("run_sql", query="DROP TABLE orders")),
    ask("执行 SQL `UPDATE orders SET paid = 1`", call("run_sql", query="UPDATE orders SET paid = 1")),
    ask("运行 `rm notes.md`", call("bash", command="rm notes.md")),
    # 8.9 技能: each question reads the skill whose description fits it; the memory ones keep or find a fact.
    ask("帮我把这几个提交写成发布说明", call(LOAD_SKILL, name="release-notes")),
    ask("帮我 review 这段代码", call(LOAD_SKILL, name="code-review")),
    ask("这个查询怎么写", call(LOAD_SKILL, name="sql-style")),
    ask("帮我写一份发布说明的格式", call(LOAD_SKILL, name="release-notes")),
    ask("请记住我喜欢用 Python", call("remember", fact={"contains": "Python"})),
    ask("你记得我的偏好吗", call("recall")),
)}

# 8.3 计划与执行: each preset is the same task; whatever the plan became, Shanghai's 3-day forecast is the step
# no other tool can stand in for (get_weather tells today only).
PLANNING = {question: ask(question, call("get_forecast", city="上海", days=3))
            for question in planning_backend.QUESTIONS}

# 8.8 上下文预算: over the example conversation, each question has its answer in an early message.
CONTEXT = {case.question: case for case in (
    ask("我叫什么名字？", answer={"contains": "小林"}),
    ask("构建为什么失败？", answer={"contains": "test_calc"}),
)}

# 8.1 第一次调用: a greeting wants no tool (the weather presets are the evaluation's cases).
FIRST_CALL = {case.question: case for case in (ask("你好"),)}
# 8.13 MiniAgent: fixing the workspace's failing test means an edit of the code under test (src/), then a test
# run after it; headline.py holds a failed test run that nothing made good against the run, so a ✅ means the
# tests passed after the edit, not that the loop ended.
MINI_AGENT = {case.question: case for case in (
    ask("找出失败的测试并修好它", call("edit", path={"contains": "src/"}), call("bash", command={"contains": "unittest"}),
        order="sequence"),
)}

ASKS_FOR_A_SUBAGENT = re.compile(r"子代理|sub-?agent", re.I)
DECLINES_A_SUBAGENT = re.compile(r"(?:不|别|无需|不要|不用)[^，。,.]{0,3}子代理|\b(?:without|no|don't use) a sub-?agent", re.I)
DELEGATION = call("task")


def purpose_for(lesson: str, question: str, options: Mapping | None = None) -> Case | None:
    """What a run of `question` on the lesson `lesson` (a catalogue id) is for, or None."""
    question = (question or "").strip()
    if lesson == "context":
        conversation = (options or {}).get("conversation")
        return CONTEXT.get(question) if context_backend.is_example(conversation) else None
    if lesson == "first_call":      # one request has no answer to check, only the calls it asks for
        case = FIRST_CALL.get(question) or OWN.get(question) or EVALUATED.get(question)
        return dataclasses.replace(case, answer=None) if case is not None else None
    if lesson == "planning" and question in PLANNING:
        return PLANNING[question]
    if lesson == "mini_agent" and question in MINI_AGENT:
        return MINI_AGENT[question]
    if lesson in ("subagents", "mini_agent") and ASKS_FOR_A_SUBAGENT.search(question) and not DECLINES_A_SUBAGENT.search(question):
        return ask(question, DELEGATION)
    return OWN.get(question) or EVALUATED.get(question)


def evaluated() -> dict[str, Case]:
    """The evaluation lesson's cases by their question (the first set that asks it)."""
    found: dict[str, Case] = {}
    for cases in CASE_SETS.values():
        for case in read_cases(cases):
            found.setdefault(case.question, case)
    return found


EVALUATED = evaluated()


def event(case: Case | None) -> dict | None:
    """The run's purpose as its first event."""
    return None if case is None else loop_events.purpose(case.to_json())

