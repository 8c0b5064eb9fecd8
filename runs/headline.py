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
  💬 no_tool_call: tools were offered and the model answered without calling one
  ✍️ hand_written: answered from a result written by hand in step mode (the tool did not run)
  ⚠️ child_failed: otherwise a success, but a sub-agent (subagents.py) did not succeed: named
  ✅ answered after recovering from failed calls (with a note: which round, how many)
  ✅ answered
A call whose arguments a person edited before it ran (step mode, 修改参数后批准) is said in the
title of ✅ (the model was told what changed: loop_parts.told_edited), and so is a hook that failed
without stopping its call (fail open): a check that did not run is news even when the call went on.

Only answered and recovered are a success (summary()["ok"]): every named endpoint's result
carries the same verdict object the headline is drawn from.
"""
from __future__ import annotations

from typing import Any

import accents
import events as loop_events
import hooks
from i18n import tr

from runs.context_backend import TITLES_EN


# A failed call that was not the model's mistake: error_code -> who stopped it. Every other
# failure (a wrong argument, an unknown tool, an exception the tool raised on what it was given) goes
# back to the model to correct, unless every argument was the question's own words (_from_question).
STOPPED_BY = {"forbidden": "tool_rule", "rule_denied": "permission_rule", "denied": "you",
              "hook_denied": "hook_denied", "hook_failed": "hook_failed", "hook_blocked": "hook_blocked",
              "hook_changed": "hook_changed", "question_arguments": "question",
              "busy": "sandbox", "rate_limited": "sandbox", "probation": "sandbox", "sandbox_refused": "sandbox",
              "sandbox": "sandbox",
              "timeout": "limit", "memory_limit": "limit", "output_too_large": "limit", "workspace_full": "limit",
              "exit_status": "command", "subagent_failed": "subagent"}


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
        code = event.get("error_code")
        if event.get("changed_by") and code not in STOPPED_BY:   # it ran a hook's arguments, not the model's
            code = "hook_changed"
        elif code == "tool_exception" and _from_question(event, events):
            code = "question_arguments"
        entry = {"turn": event.get("turn"), "name": name, "fixed_in": (fixed or {}).get("turn"), "code": code,
                 "hook": event.get("hook")}
        (recovered if fixed else unrecovered).append(entry)
    return recovered, unrecovered


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
    turns = len({e.get("turn") for e in events if e.get("type") == "response"})
    return tr("{turns} 轮，{calls} 次工具调用", "{turns} round(s), {calls} tool call(s)").format(turns=turns, calls=calls)


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
    }
    said = []
    for who, sentence in sentences.items():
        mine = [e for e in entries if STOPPED_BY.get(e["code"]) == who]
        if mine:
            hooks_named = tr("、", ", ").join(dict.fromkeys(str(e["hook"]) for e in mine if e.get("hook")))
            said.append(sentence.format(names=_what(mine), hooks=hooks_named))
    return said


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
    after, budget = event.get("after_tokens"), event.get("budget")
    if isinstance(after, int) and isinstance(budget, int) and after > budget:
        said += tr("，超出预算 {budget}", ", over the budget of {budget}").format(budget=budget)
    if ((event.get("model_call") or {}).get("finish_reason")) == "length":
        said += tr("，摘要写到 max_tokens 被截断了", ", the summary was cut off at max_tokens")
    return said


def _strategy(event: dict) -> str:
    return tr(str(event.get("title") or event.get("strategy")), TITLES_EN.get(event.get("strategy"), ""))


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


def verdict(events: list[dict]) -> dict[str, Any] | None:
    """{"state", "icon", "title", "detail"} of a finished run, or None while it has no end.
    state: answered / recovered / hand_written / no_tool_call / truncated / repetition / stopped / gave_up / guard /
    max_turns / mcp_failed / hooks_failed / conversation_invalid / context_rejected / child_failed / error.

    A sub-agent's events (they carry "child": the id of the parent's task call, code/subagents.py)
    are judged as a run of their own. One that did not succeed (stopped, cut off, answered without
    a tool) is named on the parent's headline: a ✅ becomes ⚠️ child_failed, any other verdict
    says it too."""
    parent = loop_events.own(events)
    found = _one_loop(parent)
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


def _child_said(key: tuple, child: list[dict], parent: list[dict]) -> str:
    """"" for a sub-agent that succeeded, else one sentence naming it by its task's description."""
    judged = _one_loop(child)
    if judged is not None and judged["state"] in SUCCESS:
        return ""
    turn, call_id = key
    call = next((e for e in parent if e.get("type") == "tool_call" and str(e.get("id")) == call_id
                 and (turn is None or e.get("turn") == turn)), {})
    arguments = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    name = str(arguments.get("description") or call_id)
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
        code = end.get("code") or ""
        message = str(end.get("message") or "")
        if code == "too_many_failures":
            return {"state": "guard", "icon": "🛑", "title": tr("循环的保险停下了运行（too_many_failures）：{counts}",
                                                            "The loop's guard stopped the run (too_many_failures): {counts}"
                                                            ).format(counts=counts),
                    "detail": message}
        if code == "mcp_connect":
            return {"state": "mcp_failed", "icon": "❌",
                    "title": tr("MCP 服务器没有连上（initialize / tools/list 没有完成），模型还没被问到",
                               "The MCP server was not reached (initialize / tools/list did not finish): the model "
                               "was not asked yet"), "detail": message}
        if code == "hooks_source":
            title = (tr("沙箱这次没有运行钩子源码（不是源码的错，原因见下），模型还没被问到",
                        "The sandbox did not run the hooks source this time (not a fault of the source; see below why): "
                        "the model was not asked yet")
                     if STOPPED_BY.get(end.get("cause")) == "sandbox" else
                     tr("钩子源码没有加载，模型还没被问到", "The hooks source did not load: the model was not asked yet"))
            return {"state": "hooks_failed", "icon": "❌", "title": title, "detail": message}
        if code == "conversation":
            return {"state": "conversation_invalid", "icon": "❌",
                    "title": tr("对话用不了（下面说了哪里不对），模型还没被问到",
                                "The conversation cannot be used (see below what is wrong): the model was not asked yet"),
                    "detail": message}
        shrunk = _context(events)
        if code == "orphan_result" and shrunk and shrunk.get("orphans"):
            return {"state": "context_rejected", "icon": "❌",
                    "title": tr("服务端拒收了这次请求：「{title}」留下了找不到调用的工具结果，不是模型的错",
                                "The server refused this request: «{title}» left tool results whose calls are gone; "
                                "not the model's fault").format(title=_strategy(shrunk)),
                    "detail": message}
        if code == "max_turns":
            return {"state": "max_turns", "icon": "⏹",
                    "title": tr("用完 max_turns 仍没有最终回答：{counts}",
                                "max_turns used up without a final answer: {counts}").format(counts=counts),
                    "detail": message}
        return {"state": "error", "icon": "❌",
                "title": tr("模型端或客户端出错（{code}）：{counts}", "Error at the model's end or in the client ({code}): {counts}"
                            ).format(code=code or tr("未知", "unknown"), counts=counts),
                "detail": message}
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
        mistakes = [r for r in recovered if r["code"] not in STOPPED_BY]
        stopped = [r for r in recovered if r["code"] in STOPPED_BY]
        notes = []
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


SUCCESS = ("answered", "recovered")


def summary(events: list[dict]) -> dict[str, Any]:
    """A named endpoint's judgement of a run: {"ok", "final", "error", "verdict"}.
    ok only when the verdict is a success: a truncated or invented answer is not ok."""
    found = verdict(events)
    mine = loop_events.own(events)        # a sub-agent's answer is not the run's
    final = next((e for e in reversed(mine) if e.get("type") == "final"), None)
    error = next((e for e in reversed(mine) if e.get("type") == "error"), None)
    return {"ok": bool(found) and found["state"] in SUCCESS, "final": (final or {}).get("content") or "",
            "error": None if final else error, "verdict": found}


def headline(events: list[dict], escape=lambda s: s) -> str:
    """Markdown status line of a finished run ("" while running)."""
    found = verdict(events)
    if found is None:
        return ""
    return f"**{found['icon']} {escape(found['title'])}{tr('。', '.')}** {escape(found['detail'][:300])}"
