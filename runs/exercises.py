"""检查 an exercise: run the lesson's loop from the student's state, and say in the student's terms
what a run did not do.

The state is the exercise's starting state with the student's changes (only what differs is
needed). Each probe of the exercise is one run of the lesson's loop through the same backend as the
page's 运行 (tools in the sandbox, the same client rules): on the offline model, once (it is a rule
model: the same input gives the same run), and, when the student picked another model, on that one
too, OWN_TRIALS times (a real model varies, as the evaluation lesson's trials show). The offline
model decides pass or fail: it is what every student has, and a check that a lucky draw of a real
model passes would not say the fix is right; the student's own model is reported beside it, n of N.

The matchers are those of catalogue/exercises.py, on the run's events; the argument and answer
matchers are the evaluation lesson's (code/evaluation.py). Each failure is one sentence, Chinese
and English, naming the tool, the argument, the hook or the budget as the page shows them.
"""
from __future__ import annotations

import dataclasses
import json
import re
import secrets
from typing import Any, Mapping

import context
import events as loop_events
import permissions
import workspace
from evaluation import ABSENT, describe, matches
from i18n import tr

from access.clients import Settings
from catalogue import LESSONS
from catalogue.exercises import BY_ID, Exercise
from runs import backend, starters, workspace_backend

OWN_TRIALS = 3
PAGE_FIELDS = ("source", "question")     # the rest of a state are the run's options


class ExerciseProblem(ValueError):
    """The request names no exercise, or a state the exercise does not have."""


def find(lesson_id: str, exercise_id: str) -> Exercise:
    exercise = BY_ID.get(exercise_id or "")
    if exercise is None or exercise.lesson != lesson_id:
        known = ", ".join(e.id for e in LESSONS[lesson_id].exercises) if lesson_id in LESSONS else ""
        raise ExerciseProblem(tr("课程 {lesson} 没有练习 {id}（有：{known}）", "Lesson {lesson} has no exercise {id} "
                                 "(it has: {known})").format(lesson=lesson_id, id=exercise_id, known=known or "—"))
    return exercise


def state_of(exercise: Exercise, changes: Any) -> dict:
    """The starting state with the student's changes; a change the exercise has no field for is refused."""
    if changes is None:
        changes = {}
    if isinstance(changes, str):
        try:
            changes = json.loads(changes) if changes.strip() else {}
        except json.JSONDecodeError as exc:
            raise ExerciseProblem(tr("state 不是合法的 JSON：{why}", "state is not valid JSON: {why}").format(
                why=exc.msg)) from None
    if not isinstance(changes, Mapping):
        raise ExerciseProblem(tr("state 应是对象 {\"字段\": 值}", "state must be an object {\"field\": value}"))
    unknown = [name for name in changes if name not in exercise.start]
    if unknown:
        raise ExerciseProblem(tr("练习 {id} 没有字段 {name}（有：{fields}）", "Exercise {id} has no field {name} "
                                 "(it has: {fields})").format(id=exercise.id, name=unknown[0],
                                                              fields=", ".join(exercise.start)))
    return exercise.state(changes)


# ─────────────────────────────────────────────────────────── the matchers

def said(zh: str, en: str) -> dict:
    return {"zh": zh, "en": en}


def shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:120]


def calls_and_results(run_events: list[dict], child: bool = False) -> list[tuple[dict, dict | None]]:
    """(call, its result) of the run's own loop, or of its sub-agents' (`child`)."""
    own = [e for e in run_events if "child" in e] if child else loop_events.own(run_events)
    results = {(e.get("turn"), e.get("id")): e for e in own if e["type"] == "tool_result"}
    return [(e, results.get((e.get("turn"), e.get("id")))) for e in own if e["type"] == "tool_call"]


def final_answer(run_events: list[dict]) -> str | None:
    return next((e["content"] for e in loop_events.own(run_events) if e["type"] == "final"), None)


def argument_problem(call: dict, wanted: Mapping) -> dict | None:
    arguments = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    for name, spec in wanted.items():
        value = arguments.get(name, ABSENT)
        if not matches(spec, value):
            got_zh = "没有传" if value is ABSENT else f"收到 {shown(value)}"
            got_en = "not given" if value is ABSENT else f"got {shown(value)}"
            return said(f"{call['name']} 的参数 {name} {describe(spec)}，{got_zh}",
                        f"{call['name']}'s argument {name} should match {shown(spec)}; {got_en}")
    return None


def check_called(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    name, wanted = matcher["called"], matcher.get("arguments") or {}
    pairs = calls_and_results(run_events, bool(matcher.get("child")))
    mine = [(call, result) for call, result in pairs if call["name"] == name]
    if not mine:
        others = sorted({call["name"] for call, _ in pairs})
        return said(f"没有调用 {name}（" + (f"调用的是 {'、'.join(others)}）" if others else "没有调用任何工具）"),
                    f"{name} was not called (" + (f"it called {', '.join(others)})" if others else "no tool was called)"))
    problems = []
    for call, result in mine:
        problem = argument_problem(call, wanted)
        if problem is None and result is not None and result.get("ok"):
            return None
        if problem is None:
            content = (result or {}).get("content") or ""
            problem = said(f"{name} 被调用了，但没有成功：{content[:150]}", f"{name} was called but did not succeed: "
                           f"{content[:150]}")
        problems.append(problem)
    return problems[0]


def check_never(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    name = matcher["never"]
    times = sum(call["name"] == name for call, _ in calls_and_results(run_events, bool(matcher.get("child"))))
    return said(f"不该调用 {name}，模型调用了它 {times} 次", f"{name} should not be called; the model called it "
                f"{times} time(s)") if times else None


def check_order(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    ran = [call["name"] for call, result in calls_and_results(run_events) if result is not None and result.get("ok")]
    wanted, position = matcher["order"], 0
    for name in ran:
        if position < len(wanted) and name == wanted[position]:
            position += 1
    if position == len(wanted):
        return None
    return said(f"应按 {' → '.join(wanted)} 的顺序调用，实际是 {' → '.join(ran) or '没有成功的调用'}",
                f"should call {' → '.join(wanted)} in this order; the run did {' → '.join(ran) or 'no successful call'}")


def asked_for(run_events: list[dict]) -> list[dict]:
    """The calls a response asked for, run or not: the loop's tool_call events, or the first call's
    assembled calls (8.1 asks once and runs nothing): each {"name", "arguments"}."""
    own = loop_events.own(run_events)
    asked = [{"name": e["name"], "arguments": e.get("arguments")} for e in own if e["type"] == "tool_call"]
    return asked or [{"name": c.get("name"), "arguments": c.get("parsed")} for e in own if e["type"] == "assembled"
                     for c in e.get("calls") or []]


def check_asked(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    name, wanted = matcher["asked"], matcher.get("arguments") or {}
    mine = [call for call in asked_for(run_events) if call["name"] == name]
    if not mine:
        others = sorted({call["name"] for call in asked_for(run_events)})
        return said(f"模型没有要求调用 {name}（" + (f"要的是 {'、'.join(others)}）" if others else "它直接回答了）"),
                    f"the model did not ask for {name} (" + (f"it asked for {', '.join(others)})" if others
                                                             else "it answered directly)"))
    problems = [argument_problem(call, wanted) for call in mine]
    return None if any(p is None for p in problems) else problems[0]


def check_streamed(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    assembled = [e for e in loop_events.own(run_events) if e["type"] == "assembled"]
    if assembled and all(e.get("streamed") for e in assembled):
        return None
    return said("回答不是流式到达的（请求里 stream 不是 true）", "the answer did not arrive streamed (the request's stream "
                "was not true)")


def check_no_tool(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    used = sorted({call["name"] for call in asked_for(run_events)})
    return said(f"不该调用工具，模型调用了 {'、'.join(used)}", f"no tool should be called; the model called "
                f"{', '.join(used)}") if used else None


def no_answer() -> dict:
    return said("运行没有给出最终回答", "the run gave no final answer")


def check_answer(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    answer = final_answer(run_events)
    if answer is None:
        return no_answer()
    if matches(matcher["answer"], answer):
        return None
    return said(f"最终回答{describe(matcher['answer'])}；回答是：{answer[:100]}",
                f"the final answer should match {shown(matcher['answer'])}; it was: {answer[:100]}")


def check_answer_lacks(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    answer, text = final_answer(run_events), matcher["answer_lacks"]
    if answer is None:
        return no_answer()
    return said(f"最终回答里不该出现 {shown(text)}，它出现了", f"the final answer must not contain {shown(text)}; it "
                "does") if text in answer else None


# A fact in a tool's result: a number (25, 30%), a host or an identifier, or a run of Chinese characters.
FACT = re.compile(r"\d+(?:\.\d+)?|[A-Za-z][\w.-]{2,}")


def check_answer_names_result(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    name = matcher["answer_names_result"]
    results = [result["content"] for call, result in calls_and_results(run_events)
               if call["name"] == name and result is not None and result.get("ok")]
    if not results:
        return said(f"{name} 没有成功返回结果，回答无从引用它", f"{name} returned no result for the answer to use")
    answer = final_answer(run_events)
    if answer is None:
        return no_answer()
    facts = {fact for content in results for fact in FACT.findall(content)}
    if any(fact in answer for fact in facts):
        return None
    return said(f"最终回答没有说出 {name} 结果里的任何一个事实（如 {'、'.join(sorted(facts)[:3])}）",
                f"the final answer names no fact from {name}'s result (such as {', '.join(sorted(facts)[:3])})")


def check_hook(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    decision, tool = matcher["hook"], matcher["tool"]
    hooks = [e for e in loop_events.own(run_events) if e["type"] == "hook" and e.get("event") == "PreToolUse"
             and (e.get("payload") or {}).get("tool_name") == tool]
    if any((e.get("answer") or {}).get("permissionDecision") == decision for e in hooks
           if isinstance(e.get("answer"), dict)):
        return None
    if not any(call["name"] == tool for call, _ in calls_and_results(run_events)):
        return said(f"模型没有调用 {tool}，钩子无从决定", f"the model did not call {tool}: no hook could decide")
    if not hooks:
        return said(f"{tool} 的调用前没有运行任何 PreToolUse 钩子", f"no PreToolUse hook ran before {tool}")
    answers = [e.get("problem") or shown(e.get("answer")) for e in hooks]
    return said(f"{tool} 调用前的钩子应回答 {decision}，它回答的是 {answers[-1]}",
                f"the hook before {tool} should answer {decision}; it answered {answers[-1]}")


REFUSALS = ("rule_denied", "hook_denied")


def check_denied(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    tool = matcher["denied"]
    mine = [(call, result) for call, result in calls_and_results(run_events) if call["name"] == tool]
    if any(result is not None and result.get("error_code") in REFUSALS for _, result in mine):
        return None
    if not mine:
        return said(f"模型没有调用 {tool}，规则无从拒绝", f"the model did not call {tool}: no rule could refuse it")
    ran = next((result for _, result in mine if result is not None and result.get("ok")), None)
    if ran is not None:
        return said(f"{tool} 的调用应被拒绝，它却运行了：{ran['content'][:100]}",
                    f"the call of {tool} should have been refused, yet it ran: {ran['content'][:100]}")
    return said(f"{tool} 的调用没有被规则拒绝", f"the call of {tool} was not refused by a rule")


def check_budget_kept(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    shrunk = next((e for e in run_events if e["type"] == "context"), None)
    if shrunk is None:
        return said("这次运行没有收拾上下文（对话用不了？）", "the run shrank no context (is the conversation usable?)")
    if shrunk["after_tokens"] <= shrunk["budget"]:
        return None
    return said(f"发出的上下文有 {shrunk['after_tokens']} 个 token，超过预算 {shrunk['budget']}",
                f"the context sent has {shrunk['after_tokens']} tokens, over the budget of {shrunk['budget']}")


def check_schema(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    tool, parameter = matcher["schema"], matcher["parameter"]
    schema = next((t["function"] for t in tools if t.get("function", {}).get("name") == tool), None)
    if schema is None:
        return said(f"schema 里没有工具 {tool}", f"the schema has no tool {tool}")
    prop = ((schema.get("parameters") or {}).get("properties") or {}).get(parameter)
    if prop is None:
        return said(f"{tool} 的 schema 里没有参数 {parameter}", f"{tool}'s schema has no parameter {parameter}")
    if "enum" in matcher and sorted(map(str, prop.get("enum") or [])) != sorted(map(str, matcher["enum"])):
        return said(f"{tool} 的参数 {parameter} 应有 enum {shown(matcher['enum'])}，schema 里是 {shown(prop)}",
                    f"{tool}'s parameter {parameter} should have the enum {shown(matcher['enum'])}; the schema has "
                    f"{shown(prop)}")
    if "type" in matcher and prop.get("type") != matcher["type"]:
        return said(f"{tool} 的参数 {parameter} 的 type 应为 {matcher['type']}，schema 里是 {shown(prop.get('type'))}",
                    f"{tool}'s parameter {parameter} should be of type {matcher['type']}; the schema says "
                    f"{shown(prop.get('type'))}")
    return None


def check_plan_done(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    plans = [e for e in loop_events.own(run_events) if e["type"] == "plan" and e.get("accepted")]
    text = matcher["plan_done"]
    items = plans[-1]["after"] if plans else []
    if any(text in str(item.get("content")) and item.get("status") == "completed" for item in items):
        return None
    return said(f"计划里“{text}”这一项没有标成做完（completed）", f"the plan's item \"{text}\" was not marked completed")


ROLE_NAMES = {"user": ("问题", "question"), "tool": ("工具结果", "tool result"), "system": ("system 提示词", "system prompt")}


def check_forked(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    """The run went on from an edited message of this role: a new branch beside the old one (code/sessions.py's
    fork writes the edited copy with "edited_from"), not more messages on the end of the same branch."""
    role = matcher["forked"]
    zh, en = ROLE_NAMES.get(role, (role, role))
    edited = [e["entry"] for e in run_events if e["type"] == "entry" and isinstance(e.get("entry"), dict)
              and e["entry"].get("edited_from")]
    if any((entry.get("message") or {}).get("role") == role for entry in edited):
        return None
    if edited:
        other = (edited[0].get("message") or {}).get("role")
        return said(f"应从一条{zh}分叉，这次改的是 {other} 消息", f"the fork should edit a {en}; it edited a {other} message")
    return said(f"这次运行没有分叉：它接在原来那条分支的后面，没有改{zh}分出新分支",
                f"the run did not fork: it went on at the end of the same branch instead of editing the {en} into a new one")


def check_requests_within(matcher: dict, run_events: list[dict], tools: list) -> dict | None:
    """Every request the run's own loop sent holds at most this many tokens, estimated as the context lesson
    estimates them (code/context.py): the budget a strategy aims at, whatever the budget box says."""
    budget = matcher["requests_within"]
    sent = [(e.get("turn"), sum(context.tokens(e["messages"]))) for e in loop_events.own(run_events)
            if e["type"] == "request" and isinstance(e.get("messages"), list)]
    if not sent:
        return said("这次运行没有发出请求", "the run sent no request")
    turn, most = max(sent, key=lambda pair: pair[1])
    if most <= budget:
        return None
    return said(f"第 {turn} 轮的请求约有 {most} 个 token（估计值），超过了 {budget}",
                f"round {turn}'s request holds about {most} tokens (an estimate), over {budget}")


MATCHERS = {"called": check_called, "asked": check_asked, "streamed": check_streamed, "never": check_never, "order": check_order, "no_tool": check_no_tool,
            "answer": check_answer, "answer_lacks": check_answer_lacks,
            "answer_names_result": check_answer_names_result, "hook": check_hook, "denied": check_denied, "budget_kept": check_budget_kept,
            "schema": check_schema, "plan_done": check_plan_done, "forked": check_forked,
            "requests_within": check_requests_within}


def kind(matcher: Mapping) -> str:
    found = [name for name in MATCHERS if name in matcher]
    if len(found) != 1:
        raise ValueError(f"练习的匹配器应正好有 {' / '.join(MATCHERS)} 之一：{matcher!r}")
    return found[0]


def failures(expect: list[dict], run: backend.Run) -> list[dict]:
    """What the run did not do, one sentence per unmet matcher; [] when it did all of it."""
    if run.error is not None:
        where = tr("工具源码", "the tool source") if run.source_error else tr("模型", "the model")
        message = run.error.get("message") or ""
        return [said(f"运行没有开始（{where.zh}）：{message}", f"the run did not start ({where.en}): {message}")]
    stopped = next((e for e in run.events if e["type"] == "error"), None)
    found = [problem for matcher in expect
             if (problem := MATCHERS[kind(matcher)](matcher, run.events, run.tools)) is not None]
    if found and stopped is not None:
        found.append(said(f"运行中出了错：{stopped.get('message')}", f"the run stopped on an error: {stopped.get('message')}"))
    skills_event = next((e for e in run.events if e["type"] == "skills"), None)
    if found and skills_event and skills_event.get("problems"):
        found.append(said("有技能没有读进来：" + "；".join(skills_event["problems"])[:300],
                          "a skill was not read: " + "; ".join(skills_event["problems"])[:300]))
    return found


# ─────────────────────────────────────────────────────────── one check

@dataclasses.dataclass
class Trial:
    model: str                 # "offline" or the student's model, as the settings name it
    probe: int                 # which probe (from 0)
    number: int                # which trial of it (from 1)
    question: str
    failures: list
    events: list

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        return {"model": self.model, "probe": self.probe, "trial": self.number, "question": self.question,
                "passed": self.passed, "failures": self.failures,
                "events": [e for e in self.events if e.get("type") != "delta"]}


def rules_of(state: dict) -> dict | None:
    """The permission lesson's rules box (JSON text) -> rules; the atomic-tools lesson has no gate (None)."""
    if "rules" not in state:
        return None
    try:
        rules = json.loads(state["rules"]) if isinstance(state["rules"], str) else state["rules"]
    except json.JSONDecodeError as exc:
        raise ExerciseProblem(tr("规则不是合法 JSON（第 {line} 行第 {col} 列：{msg}）", "The rules are not valid JSON "
                                 "(line {line}, column {col}: {msg})").format(line=exc.lineno, col=exc.colno,
                                                                              msg=exc.msg)) from None
    problems = permissions.validate_rules(rules)
    if problems:
        raise ExerciseProblem(tr("规则有问题：{problems}", "The rules have problems: {problems}").format(
            problems="；".join(problems)))
    return rules


def workspace_probe(state: dict, question: str, settings: Settings, session_id: str | None = None,
                    start: backend.Starter | None = None, **client) -> backend.Run:
    """A workspace lesson's run on a fresh copy of the practice project (never the student's own
    workspace: a check must not change their files), with nobody to ask: a rule's "ask" is a refusal.
    With the lesson's own loop (`start`: MiniAgent) the state's rules are its options, which it applies itself."""
    own = "exercise-" + secrets.token_hex(12)
    try:
        workspace.charge_to(own, session_id or "exercise-anonymous")
        if start is not None:
            options = {name: value for name, value in state.items() if name not in PAGE_FIELDS}
            return workspace_backend.run_unattended(own, question, settings, None, start=start, options=options,
                                                    **client)
        return workspace_backend.run_unattended(own, question, settings, rules_of(state),
                                                state.get("approach") or "function_calling", **client)
    finally:
        workspace.forget(own)


# The sessions lesson's fork, as the page holds it: which message (an entry's id) and what it becomes.
# The page's ✂️ button hands the loop {"fork": {"entry", "content"}}; a check does the same from the state.
FORK_FIELDS = ("fork_entry", "fork_content")


def run_options(state: dict) -> dict:
    options = {name: value for name, value in state.items() if name not in PAGE_FIELDS + FORK_FIELDS}
    if state.get("fork_entry"):
        options["fork"] = {"entry": state["fork_entry"], "content": state.get("fork_content") or ""}
    return options


def run_probe(exercise: Exercise, state: dict, question: str, settings: Settings, **client) -> backend.Run:
    lesson = LESSONS[exercise.lesson]
    if lesson.workspace:    # the atomic-tools and permission lessons, and MiniAgent with its own loop
        client.pop("session_key", None)
        return workspace_probe(state, question, settings, start=starters.of(lesson) if lesson.start else None,
                               **client)
    options = run_options(state)
    return backend.run_to_end(backend.start_run(starters.of(lesson), state.get("source") or "", question, settings,
                                                 options, served=lesson.served, tools=lesson.tools, **client))


def model_name(settings: Settings) -> str:
    public = settings.public()
    return "offline" if settings.provider == "offline" else f"{public['provider']} · {public['model']}"


def check(exercise: Exercise, changes: Any = None, settings: Settings | None = None, *, session_key: str = "",
          secrets: Mapping[str, str] | None = None, session_id: str | None = None, request: Any = None,
          class_code: str = "") -> dict:
    """The verdict of one 检查: {"exercise", "lesson", "passed", "failures" (the first failing run's, each
    {"zh", "en"}), "summary", "own" (the student's model: passed / trials, or None), "trials" (every run
    with its events, for its timeline)}. The hint and the solution are not in it (hint() and solution())."""
    state = state_of(exercise, changes)
    settings = settings or Settings()
    models = [(Settings(), 1)]
    if settings.provider != "offline":
        models.append((settings, OWN_TRIALS))
    client = {"session_key": session_key, "secrets": secrets or {}, "session_id": session_id, "request": request,
              "class_code": class_code}
    trials = []
    for model_settings, count in models:
        for index, probe in enumerate(exercise.probes):
            question = probe.get("question") or state.get("question") or ""
            for number in range(1, count + 1):
                run = run_probe(exercise, state, question, model_settings,
                                **(client if model_settings is settings else {"session_id": session_id}))
                trials.append(Trial(model_name(model_settings), index, number, question,
                                    failures(list(probe["expect"]), run), run.events))
    offline = [t for t in trials if t.model == "offline"]
    passed = all(t.passed for t in offline)
    first_failed = next((t for t in offline if not t.passed), None)
    own = [t for t in trials if t.model != "offline"]
    own_runs = {}
    for trial in own:   # a run of the student's model passes when every probe of that trial number passed
        own_runs[trial.number] = own_runs.get(trial.number, True) and trial.passed
    summary = (tr("✓ 通过：离线模型的 {n} 次运行都做到了", "✓ Passed: all {n} runs on the offline model did it")
               if passed else tr("✗ 还没通过：离线模型问“{question}”时没有做到", "✗ Not yet: on the offline model, asked "
                                 "\"{question}\", the run did not do it")).format(
        n=len(offline), question=first_failed.question if first_failed else "")
    return {"exercise": exercise.id, "lesson": exercise.lesson, "passed": passed,
            "failures": first_failed.failures if first_failed else [],
            "summary": said(summary.zh, summary.en),
            "own": {"model": own[0].model, "passed": sum(own_runs.values()), "trials": len(own_runs)} if own else None,
            "trials": [t.to_json() for t in trials]}


def hint(exercise: Exercise) -> dict:
    return said(exercise.hint.zh, exercise.hint.en)


def solution(exercise: Exercise) -> dict:
    """The reference solution: only what differs from the starting state."""
    return dict(exercise.solution)
