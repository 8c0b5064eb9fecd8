"""The one-line verdict over a finished run. It never shows ✅ over a failed tool call
that the model did not recover from: a failed call counts as recovered only when a later
call to the same tool succeeds (a text the regex could not read, when a later reply is read).

A call to a tool that does not exist counts as recovered by a successful call of any tool in a
later round (the right tool has another name); a success in the same round fixes nothing.

States, in the order they are checked:
  ❌ mcp_failed: the MCP server could not be reached, initialized or listed (mcp_client_loop's
     mcp_connect), with the server's own error text: the model was never asked
  ❌ hooks_failed: the hooks source did not load in the sandbox (runs/hooks_backend.py's
     hooks_source), with the sandbox's error text: the model was never asked
  ❌ conversation_invalid: the context lesson's conversation is not a chat history the API takes
  ❌ context_rejected: the server refused the request (400) and the shrunk context had tool
     results without their calls: the strategy's doing, named
  ❌ context_overflow: the server refused a request longer than its context (accents.py's
     context_exceeded), with what grew the conversation: repeated calls, many or long results
  ❌ provider or client error (an error event other than the two guards)
  🛑 stopped by the loop's guard (too_many_failures)
  ⏹ stopped by max_turns
  🔁 repetition: the final answer repeats one phrase many times (the accent of that name); a
     looping answer is usually cut at max_tokens too, and the loop is the news
  ✂️ truncated: the final answer ended at finish_reason "length" (cut off by max_tokens)
  ⚠️ stopped: answered, but a call failed that was not the model's mistake and was not made good
     later: the headline names who stopped it (STOPPED_BY: the tool's own business rule, a
     permission rule, you in the approval box, a hook, the sandbox, a command that ran and failed, or
     the question itself when the tool failed on arguments taken word for word from it)
  ⚠️ gave_up: answered, but after a failed call of the model's that was never recovered
  ⚠️ missed: the run has a purpose (what its question is for: runs/purposes.py) and did not
     do it: the call the question wants was not made, or not with the arguments it wants, or the
     answer lacks what it must hold; said against what ran (a hook's or a person's arguments are
     named as theirs)
  ⚠️ no_plan / plan_unfinished / plan_empty / plan_dropped / plan_unchecked / plan_missed: a
     planned run (code/planning.py) that answered short of its plan: no plan accepted, items left
     undone, an empty plan, an item dropped when a step failed, the course's fixed plan marking a
     step completed that no call achieved (_plan_problems), or a preset's wanted call that never
     succeeded (_plan_missed). A failed step the model planned around (an accepted write_todos
     that rewrote the plan) counts as made good, and the headline says it was a replan
  💬 no_tool_call: tools were offered and the model answered without calling one (a purpose that
     wants no tool makes it ✅)
  ✍️ hand_written: answered from a result written by hand in step mode (the tool did not run)
  🔁 repeated_calls: otherwise a success, but one call (same name, same arguments) was made
     REPEATED times or more; beside any other verdict it is said too
  ⚠️ doubtful: otherwise a success, but an argument the model wrote appears nowhere in the
     conversation, the context was sent over its budget, or there was no valid skill to read
  ⚠️ child_failed: otherwise a success, but a sub-agent (subagents.py) did not succeed: named
  ✅ answered after recovering from failed calls (with a note: which round, how many)
  ✅ answered
A call whose arguments a person edited before it ran (step mode, 修改参数后批准) is said in the
title of ✅ (the model was told what changed: loop_parts.told_edited), and so is a hook that failed
without stopping its call (fail open): a check that did not run is news even when the call went on.

Only answered and recovered are a success (summary()["ok"]): every named endpoint's result
carries the same verdict object the headline is drawn from. `judge(events, purpose)` is the one
check of a loop's events against what its run was for; `verdict(events)` applies it with the
purpose the run recorded.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import accents
import context
import evaluation
import events as loop_events
import hooks
from accents import string_values, unsaid_arguments
from i18n import tr

from runs.context_backend import FATES_EN


# A failed call that was not the model's mistake: error_code -> who stopped it. Every other
# failure (a wrong argument, an unknown tool, an exception the tool raised on what it was given) goes
# back to the model to correct, unless every argument was the question's own words (_from_question).
STOPPED_BY = {"forbidden": "tool_rule", "rule_denied": "permission_rule", "denied": "you",
              "hook_denied": "hook_denied", "hook_failed": "hook_failed", "hook_blocked": "hook_blocked",
              "hook_changed": "hook_changed", "question_arguments": "question",
              "busy": "sandbox", "rate_limited": "sandbox", "probation": "sandbox", "sandbox_refused": "sandbox",
              "sandbox": "sandbox",
              "timeout": "limit", "memory_limit": "limit", "output_too_large": "limit", "workspace_full": "limit",
              "exit_status": "command", "subagent_failed": "subagent", "subagent_budget": "budget",
              "demo_failure": "demo"}
REPEATED = 3        # the same call (name and arguments) this many times in a run: a loop, not a plan


def failures(events: list[dict]) -> tuple[list[dict], list[dict]]:
    """(recovered, unrecovered) failures, each {"turn", "name", "fixed_in"}: failed tool results,
    and replies a text protocol could not read (name None)."""
    recovered, unrecovered = [], []
    for index, event in enumerate(events):
        if event.get("type") == "tool_result" and not event.get("ok"):
            name = event.get("name")
            unknown = event.get("error_code") == "unknown_tool"
            fixed = next((e for e in events[index + 1:] if e.get("type") == "tool_result" and e.get("ok")
                          and (e.get("turn") or 0) > (event.get("turn") or 0)
                          and (unknown or e.get("name") == name)), None)
        elif event.get("type") == "parse" and not event.get("ok"):
            name = None
            fixed = next((e for e in events[index + 1:] if e.get("type") == "parse" and e.get("ok")), None)
        else:
            continue
        replan = None if fixed or name in (None, WRITE_TODOS) else _replanned_after(events, index)
        fixed = fixed or replan
        code = event.get("error_code")
        if event.get("changed_by") and code not in STOPPED_BY:   # it ran a hook's arguments, not the model's
            code = "hook_changed"
        elif code == "tool_exception" and _from_question(event, events):
            code = "question_arguments"
        if name == "task" and code == "timeout":      # a sub-agent's time budget: the run's setting (subagents.py)
            code = "subagent_budget"
        entry = {"turn": event.get("turn"), "name": name, "fixed_in": (fixed or {}).get("turn"), "code": code,
                 "hook": event.get("hook"), "arguments": event.get("arguments"),
                 "replanned": list((replan or {}).get("changes") or []) if replan else None}
        (recovered if fixed else unrecovered).append(entry)
    return recovered, unrecovered


WRITE_TODOS = "write_todos"     # code/planning.py's plan tool: its plan events say what the model planned


def _replanned_after(events: list[dict], index: int) -> dict | None:
    """The first plan the model wrote through write_todos after the failed call at `index` that the tool
    accepted and that changed the plan (an item rewritten, dropped or added: code/planning.py's
    plan_changes): a failed step planned around, not one left behind."""
    return next((e for e in events[index + 1:] if e.get("type") == "plan" and e.get("source") == WRITE_TODOS
                 and e.get("accepted") and e.get("replanned")), None)


def _from_question(result: dict, events: list[dict]) -> bool:
    """Every argument of a failed call is a text the question holds word for word (compared as
    accents.unsaid_arguments compares): the tool failed on what the person asked for (a service that
    does not exist, say), passed on as it was given. Numbers do not count: the model often works them
    out itself ("1.2万" → 12000), so finding one in the question says nothing about who wrote it."""
    arguments = result.get("arguments")
    values = list(_leaves(arguments)) if isinstance(arguments, dict) else []
    question = next((str(m.get("content") or "") for e in events if e.get("type") == "request"
                     for m in reversed(e.get("messages") or []) if m.get("role") == "user"), "")
    said = accents.normalized(question)
    return bool(values) and all(isinstance(v, str) and accents.normalized(v) and accents.normalized(v) in said
                                for v in values)


def _leaves(value: Any):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for inner in value:
            yield from _leaves(inner)
    else:
        yield value


def _counts(events: list[dict]) -> str:
    calls = sum(1 for e in events if e.get("type") == "tool_call")
    return tr("{turns} 轮，{calls} 次工具调用", "{turns} round(s), {calls} tool call(s)").format(
        turns=_round_count(events), calls=calls)


def _round_count(events: list[dict]) -> int:
    """The rounds the timeline shows: each request sent is a round, answered or not (a request the
    server refused is the round it failed in)."""
    return len({e.get("turn") for e in events if e.get("type") in ("request", "response")
                and isinstance(e.get("turn"), int) and e.get("turn") > 0})


def _what(entries: list[dict]) -> str:
    names = []
    for entry in entries:
        label = entry["name"] or tr("格式无法解析的回复", "a reply whose format could not be read")
        if label not in names:
            names.append(label)
    return tr("、", ", ").join(names)


def _stopped(entries: list[dict]) -> list[str]:
    """One sentence for each party that stopped a call (STOPPED_BY), naming the tools."""
    sentences = {
        "tool_rule": tr("工具 {names} 按自己的业务规则拒绝了调用（参数本身没有错）",
                        "The tool {names} refused the call by its own business rule (the arguments were valid)"),
        "permission_rule": tr("权限规则拒绝了 {names} 的调用，工具没有运行",
                              "A permission rule refused the call of {names}; the tool did not run"),
        "you": tr("你拒绝了 {names} 的调用，工具没有运行", "You refused the call of {names}; the tool did not run"),
        "hook_denied": tr("钩子拒绝了 {names} 的调用，工具没有运行", "A hook refused the call of {names}; the tool did not run"),
        "hook_failed": tr("钩子 {hooks} 自己出错了（fail closed：出错就不放行），{names} 没有执行",
                          "The hook {hooks} itself failed (it fails closed: an error lets nothing through), so {names} "
                          "did not run"),
        "hook_blocked": tr("{names} 运行了，但钩子没有把结果交给模型",
                           "{names} ran, but a hook kept its result from the model"),
        "hook_changed": tr("{names} 执行的是钩子改过的参数，失败了（不是模型写的参数）",
                           "{names} ran with arguments a hook had changed, and failed (not the arguments the model "
                           "wrote)"),
        "sandbox": tr("沙箱拒绝运行 {names}，不是模型或工具出错（原因见时间线里的结果）",
                      "The sandbox refused to run {names}, not a fault of the model or the tool (the result in the "
                      "timeline says why)"),
        "limit": tr("{names} 运行到了限额（时间、内存、输出或工作区大小）就被停下了，不是模型写错了参数",
                    "{names} was stopped at a limit (time, memory, output or workspace size), not for a wrong "
                    "argument from the model"),
        "command": tr("{names} 的命令运行了，但失败了（退出码不是 0）",
                      "The command of {names} ran but failed (its exit code was not 0)"),
        "subagent": tr("交给子代理的事（{names}）它没有做完", "The sub-agent given the job ({names}) did not finish it"),
        "question": tr("{names} 对问题里原样给出的参数报了错（报错见时间线）",
                       "{names} raised an error on arguments taken word for word from the question (the timeline "
                       "shows the error)"),
        "demo": tr("{names} 这次被设定为失败（演示：运行设置「让一个工具失败」），不是模型或参数的错",
                   "{names} was set to fail this time (a demonstration: the run's setting «Make one tool fail»), not a "
                   "fault of the model or its arguments"),
        "budget": tr("子代理「{names}」用完了给它的时间预算就被停下了，没有做完（预算是这次运行的设置「子代理的时间预算」，"
                     "不是沙箱的限额）",
                     "The sub-agent «{names}» used up the time budget it was given and was stopped before it "
                     "finished (the budget is this run's setting, «A sub-agent's time budget», not a sandbox limit)"),
    }
    said = []
    for who, sentence in sentences.items():
        mine = [e for e in entries if STOPPED_BY.get(e["code"]) == who]
        if who == "budget":       # named by the job it was given, as the timeline names it
            mine = [{**e, "name": _task_name(e.get("arguments"), e["name"])} for e in mine]
        if mine:
            hooks_named = tr("、", ", ").join(dict.fromkeys(str(e["hook"]) for e in mine if e.get("hook")))
            said.append(sentence.format(names=_what(mine), hooks=hooks_named))
    return said


def _task_name(arguments: Any, otherwise: Any) -> str:
    """A sub-agent's job as its task call describes it (subagents.py's task(description, prompt))."""
    described = arguments.get("description") if isinstance(arguments, dict) else None
    return str(described or otherwise)


def _rounds(entries: list[dict]) -> str:
    """The rounds in which the failures of `entries` were made good ("第 2 轮、第 4 轮")."""
    rounds = sorted({e["fixed_in"] for e in entries if e["fixed_in"] is not None})
    return tr("、", ", ").join(tr("第 {r} 轮", "round {r}").format(r=r) for r in rounds)


def _hooks_let_through(events: list[dict]) -> str:
    """The clause for the hooks (hooks.py) that failed without stopping anything (fail open), "" for none."""
    names = list(dict.fromkeys(str(e.get("name")) for e in events if e.get("type") == "hook" and e.get("problem")
                               and not hooks.stops(e.get("fail"))))
    if len(names) == 1:
        return tr("；钩子 {names} 出错了，它是 fail open 的，出错不拦下什么，运行照常（错误见时间线）",
                  "; the hook {names} failed; it fails open, so its error stopped nothing and the run went on (the "
                  "timeline says what failed)").format(names=names[0])
    if names:
        return tr("；钩子 {names} 出错了，它们是 fail open 的，出错不拦下什么，运行照常（错误见时间线）",
                  "; the hooks {names} failed; they fail open, so their errors stopped nothing and the run went on "
                  "(the timeline says what failed)").format(names=tr("、", ", ").join(names))
    return ""


def _context(events: list[dict]) -> dict | None:
    """The run's context event (context.py's run_within_budget), if it had one."""
    return next((e for e in events if e.get("type") == "context"), None)


def _context_clause(event: dict) -> str:
    """What the context strategy sent, and what went short of it: over the budget, a summary cut off."""
    said = tr("；上下文：{title}，{before} → {after} 个 token", "; context: {title}, {before} → {after} tokens").format(
        title=_strategy(event), before=event.get("before_tokens"), after=event.get("after_tokens"))
    if ((event.get("model_call") or {}).get("finish_reason")) == "length":
        said += tr("，摘要写到 max_tokens 被截断了", ", the summary was cut off at max_tokens")
    return said


def _strategy(event: dict) -> str:
    return tr(str(event.get("title") or event.get("strategy")), context.TITLES_EN.get(event.get("strategy"), ""))


def _by_hand(events: list[dict], key: str) -> str:
    """Where a person stepped in ("第 1 轮 write"), for tool results that carry `key`."""
    places = [tr("第 {turn} 轮 {name}", "{name} in round {turn}").format(turn=e.get("turn"), name=e.get("name"))
              for e in events if e.get("type") == "tool_result" and e.get(key)]
    return tr("、", ", ").join(dict.fromkeys(places))


def _tools_offered(events: list[dict]) -> bool:
    """Native tools in a request, or a text protocol's run (a parse event): ReAct and JSON-from-text
    always write the tool list into the system prompt."""
    return any((e.get("type") == "request" and e.get("tools")) or e.get("type") == "parse" for e in events)


def _last_response(events: list[dict]) -> dict:
    return next((e for e in reversed(events) if e.get("type") == "response"), {})


def _last_request(events: list[dict]) -> dict:
    return next((e for e in reversed(events) if e.get("type") == "request"), {})


def _grown(events: list[dict]) -> str:
    """What made the conversation long by the last request: a call repeated over and over, or the
    messages it holds (how many tool results, the longest)."""
    repeated = _repeated_calls(events)
    if repeated:
        return repeated + tr("，每一次的调用和结果都留在了对话里", ", and every one of them, call and result, stayed in the "
                                                          "conversation")
    messages = [m for m in _last_request(events).get("messages") or [] if isinstance(m, dict)]
    results = [len(str(m.get("content") or "")) for m in messages if m.get("role") == "tool"]
    said = tr("这次请求带着 {n} 条消息，其中 {results} 个工具结果", "that request held {n} messages, {results} of them tool "
                                                          "results").format(n=len(messages), results=len(results))
    if results:
        said += tr("（最长的一个 {chars} 字）", " (the longest {chars} characters)").format(chars=max(results))
    return said


RECORDED = object()     # verdict(): judged against the purpose the run recorded


def verdict(events: list[dict], purpose: Any = RECORDED) -> dict[str, Any] | None:
    """{"state", "icon", "title", "detail"} of a finished run, or None while it has no end.
    state: answered / recovered / hand_written / no_tool_call / missed / repeated_calls / doubtful / truncated /
    repetition / stopped / gave_up / guard / max_turns / mcp_failed / hooks_failed / conversation_invalid /
    context_rejected / context_overflow / child_failed / error.

    `purpose` (an evaluation.Case, or None for none) is what the run was for; by default the one
    the run recorded (its purpose event, runs/purposes.py).

    A sub-agent's events (they carry "child": the id of the parent's task call, code/subagents.py)
    are judged as a run of their own. One that did not succeed (stopped, cut off, answered without
    a tool) is named on the parent's headline: a ✅ becomes ⚠️ child_failed, any other verdict
    says it too."""
    parent = loop_events.own(events)
    found = judge(parent, recorded_purpose(parent) if purpose is RECORDED else purpose)
    if found is None:
        return None
    children: dict[Any, list[dict]] = {}
    for event in events:
        if "child" in event:      # keyed by the task call's round too: some servers restart ids every round
            children.setdefault((event.get("child_turn"), str(event["child"])), []).append(event)
    said = [_child_said(key, child, parent) for key, child in children.items()]
    said = [sentence for sentence in said if sentence]
    if not said:
        return found
    if found["state"] in SUCCESS:
        return {"state": "child_failed", "icon": "⚠️",
                "title": tr("{children}；下面的回答用了它交回的东西：{counts}",
                            "{children}; the answer below uses what it handed back: {counts}").format(
                                children=tr("；", "; ").join(said), counts=found["title"]),
                "detail": found["detail"]}
    return {**found, "title": found["title"] + tr("；", "; ") + tr("；", "; ").join(said)}


def judge(events: list[dict], purpose: evaluation.Case | None) -> dict[str, Any] | None:
    """The verdict of one loop's events (a parent's, or one sub-agent's) against what its run was
    for: how the loop ended (_one_loop), then the purpose, where it fits the run, and the checks
    every run gets (repeated calls, arguments nobody said, a context over its budget)."""
    if any(e.get("type") == "assembled" for e in events):      # 8.1's one request: no loop to judge
        return _one_request(events, purpose if purpose is not None and fits(purpose, events) else None)
    found = _one_loop(events)
    if found is None:
        return None
    return _checked(found, events, purpose if purpose is not None and fits(purpose, events) else None)


def _one_request(events: list[dict], purpose: evaluation.Case | None) -> dict[str, Any]:
    """The verdict of one request and its response (code/first_call.py, which ends with an assembled
    event). No tool runs in it, so a call asked for is 📨 requested, never ✅: the title names each call
    and, streamed, the fragment at which its arguments became complete JSON. ✂️ truncated: cut at
    max_tokens; ⚠️ unclosed: a call whose arguments never parse; ⚠️ missed: not the calls (or the text
    answer) its preset question wants; 💬 no_tool_call: a text answer; ✅ answered: a text answer where
    the question wants no tool."""
    assembled = next(e for e in reversed(events) if e.get("type") == "assembled")
    calls, finish = assembled.get("calls") or [], assembled.get("finish_reason")
    reason = f'finish_reason = "{finish}"' if finish else tr("没有 finish_reason", "no finish_reason")
    detail = ""       # what finish_reason means is drawn under the reply, in the page's language
    if finish == "length":
        return {"state": "truncated", "icon": "✂️",
                "title": tr("回复写到 max_tokens 被截断了（{reason}）：{what}",
                            "The reply was cut at max_tokens ({reason}): {what}").format(
                                reason=reason, what=tr("参数不完整的调用不能执行", "a call with incomplete arguments "
                                                       "cannot run") if calls else tr("回答没有写完", "the answer is "
                                                                                     "unfinished")),
                "detail": detail}
    unclosed = [c for c in calls if c.get("parsed") is None]
    if unclosed:
        return {"state": "unclosed", "icon": "⚠️",
                "title": tr("{names} 的参数不是完整的 JSON（{reason}），不能执行",
                            "The arguments of {names} are not complete JSON ({reason}): it cannot run").format(
                                names=", ".join(str(c.get("name")) for c in unclosed), reason=reason),
                "detail": detail}
    missed = _one_request_missed(purpose, calls)
    if missed:
        return {"state": "missed", "icon": "⚠️", "title": tr("{missed}（{reason}）", "{missed} ({reason})").format(
            missed=missed, reason=reason), "detail": detail}
    if not calls:
        if purpose is not None:
            return {"state": "answered", "icon": "✅", "title": tr("模型用文字回答了，这个问题本来就不需要工具（{reason}）",
                                                                 "The model answered in text, and this question needs "
                                                                 "no tool ({reason})").format(reason=reason),
                    "detail": detail}
        return {"state": "no_tool_call", "icon": "💬",
                "title": tr("模型用文字回答了，没有要调用工具（{reason}）",
                            "The model answered in text and asked for no tool ({reason})").format(reason=reason),
                "detail": detail}
    return {"state": "requested", "icon": "📨",
            "title": tr("模型要调用 {calls}（{reason}）：这一课只问这一次，工具没有执行",
                        "The model asks to call {calls} ({reason}): this lesson asks once, and no tool ran").format(
                            calls=tr("；", "; ").join(_closing(c) for c in calls), reason=reason),
            "detail": detail}


def _closing(call: dict) -> str:
    """A requested call, and when its arguments closed: "get_weather({"city": "北京"})，第 4 片（0.3 ms）参数才完整"."""
    shown = f'{call.get("name")}({call.get("arguments")})'
    if not call.get("fragments"):
        return shown
    return shown + tr("，第 {n} 片（{ms:.1f} ms）参数才完整", ", its arguments complete at fragment {n} ({ms:.1f} ms)").format(
        n=call.get("closed_at"), ms=float(call.get("closed_ms") or 0))


def _one_request_missed(purpose: evaluation.Case | None, calls: list[dict]) -> str:
    """"" when the requested calls are those the question wants (each wanted call asked for, with
    arguments that match), else what is missing, in a sentence."""
    if purpose is None:
        return ""
    if not purpose.calls:
        return tr("这个问题不需要工具，模型却要调用 {names}", "This question needs no tool, yet the model asks to call "
                  "{names}").format(names=", ".join(str(c.get("name")) for c in calls)) if calls else ""

    def asked(want: dict) -> bool:
        return any(c.get("name") == want["name"] and all(
            evaluation.matches(spec, (c.get("parsed") or {}).get(name, evaluation.ABSENT))
            for name, spec in (want.get("arguments") or {}).items()) for c in calls)

    if all(asked(want) for want in purpose.calls):
        return ""
    if not calls:
        return tr("这个预设问题要的是{want}，模型却用文字回答了，没有要调用工具",
                  "This preset question wants {want}; the model answered in text and asked for no tool").format(
                      want=purpose_text(purpose))
    return tr("这个预设问题要的是{want}，模型要调用的是 {got}", "This preset question wants {want}; the model asks "
              "for {got}").format(want=purpose_text(purpose), got=tr("；", "; ").join(_closing(c) for c in calls))


def _child_said(key: tuple, child: list[dict], parent: list[dict]) -> str:
    """"" for a sub-agent that succeeded, or whose end its task's result already says (its time
    budget ran out: STOPPED_BY's "budget"), else one sentence naming it by its task's description."""
    judged = judge(child, None)
    if judged is not None and judged["state"] in SUCCESS:
        return ""
    turn, call_id = key
    mine = lambda e: str(e.get("id")) == call_id and (turn is None or e.get("turn") == turn)   # noqa: E731
    call = next((e for e in parent if e.get("type") == "tool_call" and mine(e)), {})
    result = next((e for e in parent if e.get("type") == "tool_result" and mine(e)), {})
    if judged is None and result.get("error_code") == "timeout":
        return ""
    name = _task_name(call.get("arguments"), call_id)
    if judged is None:
        return tr("子代理「{name}」被停下了，没有做完", "The sub-agent «{name}» was stopped before it finished").format(
            name=name)
    return tr("子代理「{name}」：{icon} {title}", "The sub-agent «{name}»: {icon} {title}").format(
        name=name, icon=judged["icon"], title=judged["title"])


def _one_loop(events: list[dict]) -> dict[str, Any] | None:
    """verdict() of one loop's events (a parent's, or one sub-agent's)."""
    end = next((e for e in reversed(events) if e.get("type") in ("final", "error")), None)
    if end is None:
        return None
    recovered, unrecovered = failures(events)
    counts = _counts(events)
    if end.get("type") == "error":
        ended = ENDED_BY.get(end.get("code") or "")
        return (ended(end, events, counts) if ended else None) or _error(end, counts)
    answer = str(end.get("content") or "")
    last = _last_response(events)
    if any(a.get("code") == "repetition" for a in last.get("accents") or []):
        return {"state": "repetition", "icon": "🔁",
                "title": tr("回答在原地打转：同一句话重复了很多遍，这不是一个可用的回答：{counts}",
                            "The answer goes round in circles: one phrase repeated many times; this is not a usable "
                            "answer: {counts}").format(counts=counts),
                "detail": answer}
    if last.get("finish_reason") == "length":
        return {"state": "truncated", "icon": "✂️",
                "title": tr("回答被截断了（finish_reason = \"length\"：写到 max_tokens 上限就停了），后面的内容没有写完：{counts}",
                            "The answer was cut off (finish_reason = \"length\": it stopped at the max_tokens limit); "
                            "the rest was never written: {counts}").format(counts=counts),
                "detail": answer}
    if unrecovered:
        parts = _stopped(unrecovered)
        mistakes = [e for e in unrecovered if e["code"] not in STOPPED_BY]
        if mistakes:
            parts.append(tr("模型放弃了：{n} 次失败的调用没有改正（{what}）",
                            "The model gave up: {n} failed call(s) never corrected ({what})").format(
                                n=len(mistakes), what=_what(mistakes)))
        title = tr("{parts}，下面的回答不是一次成功调用的结果：{counts}",
                   "{parts}; the answer below is not the result of a successful call: {counts}").format(
                       parts=tr("；", "; ").join(parts), counts=counts)
        return {"state": "stopped" if len(mistakes) < len(unrecovered) else "gave_up", "icon": "⚠️",
                "title": title, "detail": answer}
    called = any(e.get("type") == "tool_call" for e in events)
    if not called and _tools_offered(events):
        return {"state": "no_tool_call", "icon": "💬",
                "title": tr("模型没有调用任何工具就直接回答了：下面的回答不来自工具，其中的数据可能是编的"
                            "（打招呼这类不需要工具的问题，这样答没问题，由你判断）：{counts}",
                            "The model answered without calling any tool: the answer below does not come from a tool, "
                            "and its data may be invented (for a greeting, which needs no tool, that is fine: you "
                            "judge): {counts}").format(counts=counts),
                "detail": answer}
    written = _by_hand(events, "overridden")
    if written:
        return {"state": "hand_written", "icon": "✍️",
                "title": tr("回答用的是你手写的结果（{where}：工具没有运行），不是工具给的：{counts}",
                            "The answer uses a result you wrote by hand ({where}: the tool did not run), not the "
                            "tool's: {counts}").format(where=written, counts=counts),
                "detail": answer}
    edited = _by_hand(events, "edited")
    if edited:
        counts += tr("；{where} 的参数是你改过后才执行的（模型从结果里得知了改动）",
                     "; {where} ran with arguments you edited (the model was told in the result)").format(where=edited)
    shrunk = _context(events)
    if shrunk:
        counts += _context_clause(shrunk)
    counts += _hooks_let_through(events)
    if recovered:
        replanned = [r for r in recovered if r["replanned"] is not None]
        mistakes = [r for r in recovered if r["code"] not in STOPPED_BY and r["replanned"] is None]
        stopped = [r for r in recovered if r["code"] in STOPPED_BY and r["replanned"] is None]
        notes = [tr("🔁 {what} 失败以后，模型在{where}改了计划（{changes}）",
                    "🔁 after {what} failed, the model changed its plan in {where} ({changes})").format(
                        what=_what([r]), where=_rounds([r]), changes=tr("；", "; ").join(map(change_words, r["replanned"])))
                 for r in replanned]
        if mistakes:
            notes.append(tr("模型在{where}改正了 {n} 次失败的调用", "the model corrected {n} failed call(s) in {where}"
                            ).format(where=_rounds(mistakes), n=len(mistakes)))
        if stopped:     # refused or failed, not the model's mistake: a later call went through
            notes.append(tr("{n} 次没做成的调用（{what}）在{where}再调用成功了",
                            "{n} call(s) that did not go through ({what}) succeeded when called again in {where}"
                            ).format(n=len(stopped), what=_what(stopped), where=_rounds(stopped)))
        return {"state": "recovered", "icon": "✅",
                "title": tr("{counts}（{notes}）", "{counts} ({notes})").format(
                    counts=counts, notes=tr("；", "; ").join(notes)), "detail": answer}
    return {"state": "answered", "icon": "✅", "title": counts, "detail": answer}


# ---------------------------------------------------------------- a run that ended on an error

# An error event's code -> the verdict of a run it ended: verdict(end, events, counts) -> dict, or None
# when the code says no more than any error (_error says it then).
ENDED_BY: dict[str, Callable[[dict, list[dict], str], dict[str, Any] | None]] = {}


def ended_by(code: str) -> Callable:
    """Decorator: `@ended_by("max_turns")` makes the function the verdict of a run that error ended."""
    def add(judged: Callable) -> Callable:
        ENDED_BY[code] = judged
        return judged
    return add


@ended_by("too_many_failures")
def _guard(end: dict, events: list[dict], counts: str) -> dict[str, Any]:
    return {"state": "guard", "icon": "🛑", "title": tr("循环的保险停下了运行（too_many_failures）：{counts}",
                                                    "The loop's guard stopped the run (too_many_failures): {counts}"
                                                    ).format(counts=counts),
            "detail": str(end.get("message") or "")}


@ended_by("mcp_connect")
def _mcp_failed(end: dict, events: list[dict], counts: str) -> dict[str, Any]:
    return {"state": "mcp_failed", "icon": "❌",
            "title": tr("MCP 服务器没有连上（initialize / tools/list 没有完成），模型还没被问到",
                        "The MCP server was not reached (initialize / tools/list did not finish): the model "
                        "was not asked yet"), "detail": str(end.get("message") or "")}


@ended_by("hooks_source")
def _hooks_failed(end: dict, events: list[dict], counts: str) -> dict[str, Any]:
    title = (tr("沙箱这次没有运行钩子源码（不是源码的错，原因见下），模型还没被问到",
                "The sandbox did not run the hooks source this time (not a fault of the source; see below why): "
                "the model was not asked yet")
             if STOPPED_BY.get(end.get("cause")) == "sandbox" else
             tr("钩子源码没有加载，模型还没被问到", "The hooks source did not load: the model was not asked yet"))
    return {"state": "hooks_failed", "icon": "❌", "title": title, "detail": str(end.get("message") or "")}


@ended_by("conversation")
def _conversation_invalid(end: dict, events: list[dict], counts: str) -> dict[str, Any]:
    return {"state": "conversation_invalid", "icon": "❌",
            "title": tr("对话用不了（下面说了哪里不对），模型还没被问到",
                        "The conversation cannot be used (see below what is wrong): the model was not asked yet"),
            "detail": str(end.get("message") or "")}


@ended_by("orphan_result")
def _context_rejected(end: dict, events: list[dict], counts: str) -> dict[str, Any] | None:
    """The server refused tool results without their calls: the context lesson's strategy left them, if
    the run shrank its context; otherwise it is any error."""
    shrunk = _context(events)
    if not (shrunk and shrunk.get("orphans")):
        return None
    return {"state": "context_rejected", "icon": "❌",
            "title": tr("服务端拒收了这次请求：「{title}」留下了找不到调用的工具结果，不是模型的错",
                        "The server refused this request: «{title}» left tool results whose calls are gone; "
                        "not the model's fault").format(title=_strategy(shrunk)),
            "detail": str(end.get("message") or "")}


@ended_by("context_exceeded")
def _context_overflow(end: dict, events: list[dict], counts: str) -> dict[str, Any]:
    return {"state": "context_overflow", "icon": "❌",
            "title": tr("对话超出了服务端的上下文长度，第 {turn} 轮的请求被拒收了（服务端的原话见下）：{grew}：{counts}",
                        "The conversation outgrew the server's context: the request of round {turn} was refused "
                        "(the server's words below): {grew}: {counts}").format(
                            turn=_last_request(events).get("turn"), grew=_grown(events), counts=counts),
            "detail": str(end.get("message") or "")}


@ended_by("max_turns")
def _max_turns(end: dict, events: list[dict], counts: str) -> dict[str, Any]:
    return {"state": "max_turns", "icon": "⏹",
            "title": tr("用完 max_turns 仍没有最终回答：{counts}",
                        "max_turns used up without a final answer: {counts}").format(counts=counts),
            "detail": str(end.get("message") or "")}


def _error(end: dict, counts: str) -> dict[str, Any]:
    """Any other error: the model's end or the client's, by its code."""
    code = end.get("code") or ""
    return {"state": "error", "icon": "❌",
            "title": tr("模型端或客户端出错（{code}）：{counts}", "Error at the model's end or in the client ({code}): {counts}"
                        ).format(code=code or tr("未知", "unknown"), counts=counts),
            "detail": str(end.get("message") or "")}


SUCCESS = ("answered", "recovered")
# One request (8.1) did what it could: the model asked for calls whose arguments are complete JSON.
ONE_REQUEST_DONE = ("requested",)


# ---------------------------------------------------------------- what the run was for, and doubts

def _checked(found: dict, events: list[dict], purpose: evaluation.Case | None) -> dict:
    """`found` (how the loop ended) against the run's purpose and the checks every run gets. A run that
    already failed keeps its verdict, with a repeated call said beside it; a success that missed its
    purpose becomes ⚠️ missed, one that repeated a call 🔁, one with a doubt ⚠️ doubtful."""
    repeated = _repeated_calls(events)
    missed = _missed(purpose, events) if purpose is not None and found["state"] in ANSWERED else ""
    planned = _plan_problems(events) + _plan_missed(purpose, events)
    said_of_plan = [sentence for _, sentence in planned]
    if found["state"] not in SUCCESS + ("no_tool_call",):     # a failure already: said beside it (an overflow
        beside = [*said_of_plan, missed, repeated if found["state"] != "context_overflow" else ""]   # names its repeats)
        return _beside(found, tr("；", "; ").join(s for s in beside if s))
    doubts = _unsaid(events) + _echoed(events) + _over_budget(events) + _no_skills(events)
    if planned and found["state"] != "no_tool_call":
        return _before(found, planned[0][0], "⚠️", [*said_of_plan, missed, repeated, *doubts])
    if missed:
        return _before(found, "missed", "⚠️", [missed, repeated, *doubts])
    if found["state"] == "no_tool_call" and purpose is not None:      # the question wants no tool: that is right
        return {**found, "state": "answered", "icon": "✅", "title": tr(
            "这个问题不需要工具，模型直接回答了：{counts}", "This question needs no tool, and the model answered it "
                                                 "directly: {counts}").format(counts=_counts(events))}
    if repeated:
        return _before(found, "repeated_calls", "🔁", [repeated, *doubts])
    return _before(found, "doubtful", "⚠️", doubts) if doubts else found


def _plan_problems(events: list[dict]) -> list[tuple[str, str]]:
    """(state, sentence) for each way a planned run (code/planning.py) fell short of its plan; [] for a run
    without a plan, or one whose every item was completed with evidence from a successful call.
      - write_todos was offered and no plan of the model's was accepted: no_plan;
      - the last accepted plan still has items not completed: plan_unfinished; or none at all: plan_empty;
      - a replan after a failed step dropped an item: plan_dropped (the task was done in part);
      - the course's fixed plan marked a step completed although none of its calls succeeded:
        plan_unchecked (its loop marks a step done when the step returns)."""
    said: list[tuple[str, str]] = []
    first = next((e for e in events if e.get("type") == "request"), {})
    offered = any((t.get("function") or {}).get("name") == WRITE_TODOS for t in first.get("tools") or []
                  if isinstance(t, dict))
    plans = [e for e in events if e.get("type") == "plan"]
    own = [e for e in plans if e.get("source") == WRITE_TODOS and e.get("accepted")]
    if offered and not own:
        said.append(("no_plan", tr("工具里有 write_todos，模型却没有写下一份被接受的计划",
                                   "write_todos was offered, yet the model wrote no plan the tool accepted")))
    if own:
        left = [item for item in own[-1].get("after") or [] if isinstance(item, dict)
                and item.get("status") != "completed"]
        if left:
            said.append(("plan_unfinished", tr("计划没做完：还有 {n} 项没有完成（{items}）",
                                               "the plan is not done: {n} item(s) not completed ({items})").format(
                n=len(left), items=tr("、", ", ").join(str(item.get("content")) for item in left))))
        dropped = [change for e in own if e.get("replanned") for change in e.get("changes") or []
                   if str(change).startswith(DROPPED)]
        if not own[-1].get("after") and not dropped:
            said.append(("plan_empty", tr("最后被接受的计划是空的：没有一项做完的事", "the last plan accepted is empty: "
                                                                 "not one item was done")))
        if dropped:
            said.append(("plan_dropped", tr("改计划时删掉了做不成的：{items}；任务只做成了一部分",
                                            "replanning dropped what could not be done: {items}; the task was done "
                                            "in part").format(
                items=tr("、", ", ").join(str(change)[len(DROPPED):] for change in dropped))))
    fixed = [e for e in plans if e.get("source") == "fixed"]
    if fixed:
        board = fixed[-1].get("after") or []
        for number, item in enumerate(board, 1):
            results = [e for e in events if e.get("type") == "tool_result" and e.get("step") == number]
            if item.get("status") == "completed" and not any(e.get("ok") for e in results):
                said.append(("plan_unchecked", tr(
                    "先定好的计划照样把第 {n} 步「{item}」标成了 completed，可这一步没有一次成功的工具调用，计划也没有改",
                    "the fixed plan marked step {n} «{item}» completed all the same, though it had no successful "
                    "tool call, and the plan never changed").format(n=number, item=item.get("content"))))
    return said


def _plan_missed(purpose: evaluation.Case | None, events: list[dict]) -> list[tuple[str, str]]:
    """A planned run whose question wants a call that never succeeded: a replan may finish every item of
    a plan that no longer does what was asked (a 3-day forecast became today's weather)."""
    if purpose is None or not any(e.get("type") == "plan" for e in events):
        return []
    done = [call for call, result in _ran(events) if result.get("ok")]
    unmet = [want for want in purpose.calls if all(evaluation.call_problem(want, call) for call in done)]
    if not unmet:
        return []
    return [("plan_missed", tr("这个问题要的 {want} 一次也没有做成：完成的计划没有做到问的事",
                               "this question wants {want}, which never succeeded: the plan was finished without "
                               "doing what was asked").format(want=_calls_text(unmet, wanted=True)))]


DROPPED = "删掉："     # code/planning.py's plan_changes: how it says an item left the plan
# plan_changes writes each change as one Chinese line (the course's words); the page says it in its own
# language, the items' contents as the model wrote them.
CHANGE_WORDS = ((re.compile(r"^改写：(.*) → (.*)$", re.S), ("改写：{0} → {1}", "rewritten: {0} → {1}")),
                (re.compile(r"^删掉：(.*)$", re.S), ("删掉：{0}", "removed: {0}")),
                (re.compile(r"^新增：(.*)（(\w+)）$", re.S), ("新增：{0}（{1}）", "added: {0} ({1})")),
                (re.compile(r"^(.*)：(\w+) → (\w+)$", re.S), ("{0}：{1} → {2}", "{0}: {1} → {2}")))


def change_words(change: object) -> str:
    """One of plan_changes' lines in the page's language."""
    for pattern, words in CHANGE_WORDS:
        found = pattern.match(str(change))
        if found:
            return tr(*words).format(*found.groups())
    return str(change)


# The verdicts of a run that ended with an answer, whether or not a call went through: the purpose is asked of them.
ANSWERED = ("answered", "recovered", "no_tool_call", "gave_up", "stopped")


def _before(found: dict, state: str, icon: str, sentences: list[str]) -> dict:
    """`found` demoted to `state`, its sentences first, its own title after them."""
    said = tr("；", "; ").join(s for s in sentences if s)
    return {**found, "state": state, "icon": icon,
            "title": tr("{said}：{rest}", "{said}: {rest}").format(said=said, rest=found["title"])}


def _beside(found: dict, sentence: str) -> dict:
    return {**found, "title": found["title"] + tr("；", "; ") + sentence} if sentence else found


def recorded_purpose(events: list[dict]) -> evaluation.Case | None:
    """The purpose the run recorded as an event (runs/purposes.py), checked as any case is: the
    events may come from anyone's file."""
    event = next((e for e in events if e.get("type") == "purpose"), None)
    if event is None:
        return None
    try:
        return evaluation.read_cases([{k: v for k, v in event.items() if k not in ("type", "turn")}])[0]
    except evaluation.CaseProblem:
        return None


def purpose_text(purpose: evaluation.Case | None) -> str:
    """What a purpose wants, in a line: its calls (with their matchers) and what the answer must hold."""
    if purpose is None:
        return ""
    said = []
    if purpose.calls:
        said.append(tr("调用 {calls}", "a call of {calls}").format(calls=_calls_text(list(purpose.calls), wanted=True)))
    else:
        said.append(tr("不调用工具", "no tool call"))
    if purpose.answer is not None:
        said.append(tr("回答里有{want}", "an answer that holds {want}").format(want=_matcher_text(purpose.answer)))
    return tr("；", "; ").join(said)


def fits(purpose: evaluation.Case, events: list[dict]) -> bool:
    """Whether the purpose can be asked of this run: every tool it names was offered (in the request's
    tools, or a text protocol's prompt), with every argument it checks, and every exact text it expects
    in an argument was said to the model. An edited source, a renamed skill, memory switched off:
    the purpose is not this run's, and nothing is judged against it."""
    first = next((e for e in events if e.get("type") == "request"), None)
    if first is None:
        return not purpose.calls
    offered = {((t.get("function") or {}).get("name")): ((t.get("function") or {}).get("parameters") or {})
               for t in first.get("tools") or [] if isinstance(t, dict)}
    said = json.dumps([first.get("messages"), first.get("tools")], ensure_ascii=False)
    for call in purpose.calls:
        schema = offered.get(call["name"])
        if schema is None and call["name"] not in said:
            return False
        for name, spec in (call.get("arguments") or {}).items():
            known = name in (schema.get("properties") or {}) if schema is not None else name in said
            texts = [spec] if isinstance(spec, str) else (spec.get("one_of") if isinstance(spec, dict) else None)
            if not known or (texts and not any(isinstance(t, str) and t in said for t in texts)):
                return False
    return True


def _ran(events: list[dict]) -> list[tuple[dict, dict]]:
    """(call, result) of each call that went through (evaluation.taken: not returned as the model's
    mistake); the call's "arguments" are those that ran, a person's edit or a hook's change included
    (with the tool's defaults filled in), "written" those the model wrote, "shown" those to name."""
    tried = [e for e in events if e.get("type") == "tool_call"]
    results = [e for e in events if e.get("type") == "tool_result"]
    paired = evaluation.pairs(tried, results)
    done = evaluation.taken(paired)
    ran = []
    for call, result in paired:
        if result is not None and any(call is kept for kept in done):
            arguments = result.get("arguments") if isinstance(result.get("arguments"), dict) else call.get("arguments")
            changed = result.get("edited") or result.get("changed_by")     # shown as they ran; else as written
            ran.append(({**call, "arguments": arguments, "written": call.get("arguments"),
                         "shown": arguments if changed else call.get("arguments")}, result))
    return ran


def _missed(purpose: evaluation.Case, events: list[dict]) -> str:
    """"" when the run did what `purpose` wants, else what it did not do, in one sentence. Judged on
    the calls that went through (a mistake the model corrected is not held against it) and on the
    final answer; several calls in any order, except a sequence, in order ("parallel" is checked as
    any: whether calls share a reply is the page's setting, not the question's)."""
    ran = _ran(events)
    made = [call for call, _ in ran]
    if not purpose.calls and made:
        return tr("这个问题不需要工具，模型却调用了 {made}", "This question needs no tool, yet the model called {made}").format(
            made=_calls_text(made))
    wanted = list(purpose.calls)
    if wanted and not any(e.get("type") == "tool_call" for e in events):
        return tr("这个问题要调用 {want}，模型一个工具也没有调用就回答了：下面的回答不来自工具",
                  "This question wants {want}; the model answered without calling any tool: the answer below does "
                  "not come from a tool").format(want=_calls_text(wanted, wanted=True))
    matched = [[not evaluation.call_problem(want, call) for call in made] for want in wanted]
    lonely = next((i for i in range(len(wanted)) if evaluation.pairing(matched[:i + 1]) is None), None)
    if lonely is not None:
        return _wrong_call(wanted[lonely], ran)
    if purpose.order == "sequence" and len(wanted) > 1:
        partner = evaluation.pairing(matched) or []
        placed = [partner[j] for j in range(len(made)) if partner[j] >= 0]      # wanted index, in the order made
        if placed != sorted(placed):
            return tr("这几个调用应按这个顺序：{want}", "These calls should come in this order: {want}").format(
                want=_calls_text(wanted, wanted=True))
    final = next((e for e in reversed(events) if e.get("type") == "final"), {})
    if purpose.answer is not None and not evaluation.matches(purpose.answer, str(final.get("content") or "")):
        return tr("这个问题的回答里应有{want}，实际没有", "This question's answer should hold {want}; it does not").format(
            want=_matcher_text(purpose.answer)) + _why_not_said(purpose.answer, events)
    return ""


def _wrong_call(want: dict, ran: list[tuple[dict, dict]]) -> str:
    """A wanted call no call that went through matches: the calls of its tool, with whose arguments ran,
    or the calls made instead."""
    same = [(call, result) for call, result in ran if call.get("name") == want["name"]]
    if same:
        call, result = same[0]
        return tr("这个问题要的是 {want}，实际执行的是 {made}{whose}",
                  "This question wants {want}; what ran was {made}{whose}").format(
                      want=_call_text(want, wanted=True), made=_call_text(call), whose=_whose(result))
    if ran:
        return tr("这个问题要调用 {want}，调用的却是 {made}", "This question wants {want}, but what was called is {made}").format(
            want=_call_text(want, wanted=True), made=_calls_text([call for call, _ in ran]))
    return tr("这个问题要调用 {want}，这次没有一个调用做成", "This question wants {want}; no call went through this time").format(
        want=_call_text(want, wanted=True))


def _whose(result: dict) -> str:
    """Who wrote the arguments that ran, when it was not the model alone."""
    if result.get("changed_by"):
        return tr("（钩子 {names} 改过参数）", " (the hook {names} changed the arguments)").format(
            names=tr("、", ", ").join(map(str, result["changed_by"])))
    if result.get("edited"):
        return tr("（参数是你改过的）", " (you edited the arguments)")
    return ""


def _why_not_said(spec: Any, events: list[dict]) -> str:
    """For a text the answer should hold: whether the model was sent it at all, and, where a context
    strategy shrank the conversation (context.py), what it did to the message that held it."""
    wanted = spec.get("contains") if isinstance(spec, dict) else spec if isinstance(spec, str) else None
    request = _last_request(events)
    if not wanted or not request:
        return ""
    sent = json.dumps(request.get("messages") or [], ensure_ascii=False)
    if wanted in sent:
        return tr("（发给模型的消息里有它，回答没有用上）", " (the messages sent to the model hold it; the answer did not use "
                                                "it)")
    shrunk = _context(events)
    if shrunk is None:
        return tr("（发给模型的消息里没有它）", " (the messages sent to the model do not hold it)")
    rows = [(number, row) for number, row in enumerate(shrunk.get("rows") or [], 1)
            if isinstance(row, dict) and wanted in str(row.get("preview") or "")]
    where = tr("、", ", ").join(tr("第 {n} 条{fate}", "message {n}: {fate}").format(
        n=number, fate=tr(str(row.get("fate") or ""), FATES_EN.get(row.get("fate"), str(row.get("fate") or ""))))
        for number, row in rows)
    return tr("：「{title}」之后，发给模型的消息里已经没有它了{where}",
              ": after «{title}», the messages sent to the model no longer hold it{where}").format(
                  title=_strategy(shrunk), where=tr("（{w}）", " ({w})").format(w=where) if where else "")


def _matcher_text(spec: Any) -> str:
    """An argument or answer matcher (evaluation.matches) as a few symbols a page in either language reads."""
    shown = lambda value: json.dumps(value, ensure_ascii=False)     # noqa: E731
    if not isinstance(spec, dict):
        return shown(spec)
    if "equals" in spec:
        return shown(spec["equals"])
    if "one_of" in spec:
        return " / ".join(map(shown, spec["one_of"]))
    if "near" in spec:
        return f"≈{spec['near']}" + (f"±{spec['tolerance']}" if spec.get("tolerance") else "")
    if "contains" in spec:
        return tr("「{text}」", "«{text}»").format(text=spec["contains"])
    if "matches" in spec:
        return f"/{spec['matches']}/"
    return tr("（不传）", "(absent)")


def _call_text(call: dict, wanted: bool = False) -> str:
    """get_weather(city="广州"): a made call with its arguments, or a `wanted` one with its matchers."""
    arguments = call.get("shown", call.get("arguments"))
    if not isinstance(arguments, dict):
        return f"{call.get('name')}(…)" if not wanted else f"{call.get('name')}"
    shown = ", ".join(f"{name}={_matcher_text(value) if wanted else json.dumps(value, ensure_ascii=False)}"
                      for name, value in arguments.items())
    text = f"{call.get('name')}({shown})"
    return text if len(text) <= 80 else text[:79] + "…"


def _calls_text(calls: list[dict], wanted: bool = False) -> str:
    return tr("、", ", ").join(dict.fromkeys(_call_text(call, wanted) for call in calls))


def _repeated_calls(events: list[dict]) -> str:
    """One sentence for each call made REPEATED times or more with the same name and arguments, and
    in which rounds; "" when none was."""
    seen: dict[str, list[dict]] = {}
    for event in events:
        if event.get("type") == "tool_call":
            arguments = event.get("arguments")
            key = json.dumps([event.get("name"), arguments if arguments is not None else event.get("raw_arguments")],
                             ensure_ascii=False, sort_keys=True, default=str)
            seen.setdefault(key, []).append(event)
    said = []
    for calls in seen.values():
        if len(calls) >= REPEATED:
            rounds = sorted({c.get("turn") for c in calls if isinstance(c.get("turn"), int)})
            where = (tr("都在第 {r} 轮", "all in round {r}").format(r=rounds[0]) if len(rounds) == 1 else
                     tr("在第 {rounds} 轮", "in rounds {rounds}").format(rounds=tr("、", ", ").join(map(str, rounds))))
            said.append(tr("🔁 同一个调用 {call} 重复了 {n} 次（{where}）：模型在原地打转",
                           "🔁 one call, {call}, was made {n} times ({where}): the model is going round in circles").format(
                               call=_call_text(calls[0]), n=len(calls), where=where))
    return tr("；", "; ").join(said)


def _unsaid(events: list[dict]) -> list[str]:
    """The string arguments the model made up (never said to it in the round it first wrote them:
    accents.unsaid_arguments, judged once, as evaluation's Trial.tool_failures judges them, since a value
    repeated later is in the history only because the model wrote it) that ran as written and succeeded:
    one sentence each, naming where a value came from when the server said so (its chat template's
    example, accents.template_examples)."""
    requests = {e.get("turn"): e for e in events if e.get("type") == "request"}
    question = next((m.get("content") for m in reversed((requests.get(1) or {}).get("messages") or [])
                     if isinstance(m, dict) and m.get("role") == "user"), "")
    made_up: dict[str, Any] = {}          # value -> the round it was first written in
    seen: set = set()
    for call in (e for e in events if e.get("type") == "tool_call"):
        request = requests.get(call.get("turn"))
        if request is None or not isinstance(call.get("arguments"), dict):
            continue
        new = {value for _, value in string_values(call["arguments"]) if value not in seen}
        for _, value in unsaid_arguments(call["arguments"], request.get("messages") or [], request.get("tools")):
            if value in new and _stranger(value, request):
                made_up.setdefault(value, call.get("turn"))
        seen |= new
    said, named = [], set()
    for call, result in _ran(events):
        written = call.get("written")
        if not result.get("ok") or not isinstance(written, dict) or written != call["arguments"]:
            continue
        for name, value in string_values(written):
            if value in made_up and value not in named:
                named.add(value)
                said.append(tr("{tool} 的参数 {name}={value} 在对话里没有出现过{whence}（问题是「{question}」）：下面的回答用的是它，"
                               "核对一下",
                               "{tool}'s argument {name}={value} appears nowhere in the conversation{whence} (the question "
                               "was «{question}»): the answer below uses it, so check it").format(
                                   tool=call.get("name"), name=name, value=json.dumps(value, ensure_ascii=False),
                                   whence=_whence(value, events, made_up[value]), question=str(question or "")[:60]))
    return said


HAN = re.compile(r"[\u4e00-\u9fff]{2}")
STRANGER_CHARS = 40      # longer values are text the model composed (a prompt, a fact, a command), not a name
WORDS = re.compile(r"[A-Za-z]{2,}|\d+")


def _stranger(value: str, request: dict) -> bool:
    """A value worth a doubt on the headline: short, and not one of its words (Latin words, numbers, pairs
    of Chinese characters) is in what the model was sent. "Tokyo" for a question about 北京 is; "广州市"
    for 广州, or a sub-agent's description "查天气" for a question about the weather, are not: the model
    wrote them from what it was told. The timeline's note lists them all."""
    if len(value) > STRANGER_CHARS:
        return False
    said = json.dumps([request.get("messages"), request.get("tools")], ensure_ascii=False).casefold()
    words = {w.casefold() for w in WORDS.findall(value)} | {value[i:i + 2] for i in range(len(value) - 1)
                                                            if HAN.fullmatch(value[i:i + 2])}
    return not any(word in said for word in words)


def _whence(value: str, events: list[dict], turn: Any) -> str:
    """Where an unsaid value came from, when the answer of its round says (llm_clients read the
    server's chat template and found the value in its worked example)."""
    response = next((e for e in events if e.get("type") == "response" and e.get("turn") == turn), {})
    for accent in response.get("accents") or []:
        if isinstance(accent, dict) and accent.get("code") == "template_example" and value in (accent.get("values") or []):
            return tr("，它在服务端聊天模板的示例里：模型照抄了模板的例子", ", but it is in the worked example of the server's chat "
                                                        "template: the model copied the template's example")
    return ""


def _echoed(events: list[dict]) -> list[str]:
    """An answer that names the worked example of the server's chat template (a city nobody asked about),
    as the answer's own accent says (accents.template_examples)."""
    final = _last_response(events)
    echoed = [value for accent in final.get("accents") or [] if isinstance(accent, dict)
              and accent.get("code") == "template_example" for value in accent.get("answer_values") or []]
    if not echoed:
        return []
    return [tr("回答里的 {values} 在对话里没有出现过，却是服务端聊天模板里示范调用的参数：模型照抄了模板的例子",
               "The answer names {values}, which appears nowhere in the conversation but is the argument of the "
               "server's chat template's worked example: the model copied the template's example").format(
                   values=tr("、", ", ").join(json.dumps(v, ensure_ascii=False) for v in echoed))]


def _over_budget(events: list[dict]) -> list[str]:
    """The context lesson's run: the context sent still over its token budget (context.py)."""
    shrunk = _context(events)
    after, budget = (shrunk or {}).get("after_tokens"), (shrunk or {}).get("budget")
    if not (isinstance(after, int) and isinstance(budget, int) and after > budget):
        return []
    return [tr("「{title}」之后，发出去的上下文仍有 {after} 个 token，超出预算 {budget}",
               "after «{title}» the context sent still holds {after} tokens, over the budget of {budget}").format(
                   title=_strategy(shrunk), after=after, budget=budget)]


def _no_skills(events: list[dict]) -> list[str]:
    """The skills lesson's run with no valid skill at all (skills.py's skills event): nothing to read."""
    mounted = next((e for e in events if e.get("type") == "skills"), None)
    if mounted is None or mounted.get("skills"):
        return []
    return [tr("没有一个合格的技能，模型没有技能可读（{n} 个问题见技能列表）",
               "There is no valid skill, so the model had none to read ({n} problem(s): see the skills list)").format(
                   n=len(mounted.get("problems") or []))]

def summary(events: list[dict]) -> dict[str, Any]:
    """A named endpoint's judgement of a run: {"ok", "final", "error", "verdict"}.
    ok only when the verdict is a success: a truncated or invented answer is not ok."""
    found = verdict(events)
    mine = loop_events.own(events)        # a sub-agent's answer is not the run's
    final = next((e for e in reversed(mine) if e.get("type") == "final"), None)
    error = next((e for e in reversed(mine) if e.get("type") == "error"), None)
    return {"ok": bool(found) and found["state"] in SUCCESS + ONE_REQUEST_DONE, "final": (final or {}).get("content") or "",
            "error": None if final else error, "verdict": found}


def headline(events: list[dict], escape=lambda s: s) -> str:
    """Markdown status line of a finished run ("" while running)."""
    found = verdict(events)
    if found is None:
        return ""
    return f"**{found['icon']} {escape(found['title'])}{tr('。', '.')}** {escape(found['detail'][:300])}"
