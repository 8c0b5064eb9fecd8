"""Turns the loop's event list into three views: the protocol step by step (HTML),
a chat view with collapsible tool steps, and the raw JSON.

Everything here is a pure function of the events, so a recorded session replays
through exactly the same code as a live run. Model output is untrusted: every
piece of text is escaped before it reaches the page, and long blocks are cut.

One renderer per kind of event (the `type` code/events.py gives it), found in RENDERERS (the protocol
view), CHAT (the chat view) and SUMMARY (what a kind adds to its round's line). This file holds the kinds
every loop has (a request, a reply, a call and its result, the answer, an error) and the shape of a round:
what comes before the request, what goes inside a call, what closes the round. A kind one lesson
introduces is drawn beside that lesson, in lessons/<id>/timeline.py, which registers it (and names its styles
CSS, which css() adds to the shared ones); they are imported the first time a timeline is drawn or styled, so a
replay or a test draws every kind without building any page.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import pathlib
from types import ModuleType
from typing import Any, Callable, Iterable

import events as loop_events
from accents import ANSWER_PROBLEMS, unsaid_arguments
from catalogue import LESSONS
from i18n import now, tr
from lessons import context_view, cost_view, token_count
from runs import headline
# Re-exported: the run views and the panels write with timeline.esc, timeline.pre and the rest.
from lessons.html_bits import SHOW_LIMIT, cut, esc, fold, milliseconds, pre, seconds, to_json  # noqa: F401
from planning import WRITE_TODOS
from tool_outcome import CALL_MISTAKES, RESULT_LIMIT


# ---------------------------------------------------------------- the registry

# Event kind -> draws one event of it in the protocol view: renderer(event, round) -> HTML. Two keys are
# fields, not types: "child" draws the sub-agent run a task call started (its events carry "child"), "body"
# the request body a request carries as sent.
RENDERERS: dict[str, Callable[[dict, Round], str]] = {}
# Event kind -> its messages in the chat view: renderer(event, conversation) -> [gr.Chatbot messages].
CHAT: dict[str, Callable[[dict, Conversation], list[dict]]] = {}
# Event kind -> what a lesson's kind says on its round's summary line: renderer(round) -> Said, or None when
# the round has none of it. Read in the course's order (lesson_sayings).
SUMMARY: dict[str, Callable[[Round], Said | None]] = {}

# The kinds with no renderer of their own, and where they show instead.
SHOWN_ELSEWHERE = {
    "delta": "the reply still streaming, in its round (streamed_so_far), and 8.1's time axis",
    "purpose": "the line above the rounds (render_purpose)",
    "entry": "the sessions lesson's tree of messages (sessions_view), not the timeline",
}


def register(kind: str, view: dict | None = None) -> Callable:
    """Decorator: `@register("hook")` makes the function the protocol view's renderer of hook events;
    `@register("plan", CHAT)` the chat view's renderer of plan events, `@register("plan", SUMMARY)` what plan
    events say on their round's summary line."""
    registry = RENDERERS if view is None else view

    def add(renderer: Callable) -> Callable:
        registry[kind] = renderer
        return renderer
    return add


LESSONS_FOLDER = pathlib.Path(__file__).resolve().parent


@functools.cache
def lesson_renderers() -> tuple[ModuleType, ...]:
    """Every lesson's own renderers (lessons/<id>/timeline.py, for the lessons that have one), imported
    once: importing a module registers its kinds."""
    return tuple(importlib.import_module(f"lessons.{lesson.id}.timeline") for lesson in LESSONS.values()
                 if (LESSONS_FOLDER / lesson.id / "timeline.py").is_file())


def css() -> str:
    """The timeline's styles: the shared ones, then each lesson's own (a lesson's timeline.py CSS)."""
    return CSS + "".join(getattr(module, "CSS", "") for module in lesson_renderers())


def renderer(kind: str, view: dict | None = None) -> Callable:
    """The renderer registered for a kind, after the lessons have registered theirs."""
    lesson_renderers()
    return (RENDERERS if view is None else view)[kind]


def draw(event: dict, round_: Round) -> str:
    """One event of a round, by its kind's renderer."""
    return renderer(str(event.get("type")))(event, round_)


# Labels per lesson: the function-calling tabs name the three-step handshake.
HANDSHAKE = {
    "request": tr("① 握手第一步：把工具菜单 tools 和 messages 发给模型",
                  "① Handshake step one: the tool menu (tools) and the messages go to the model"),
    "response": tr("② 握手第二步：模型回复（原始 tool_calls）", "② Handshake step two: the model's reply (raw tool_calls)"),
    "execute": tr("③ 握手第三步：本地执行工具，结果以 role: \"tool\" 回填",
                  "③ Handshake step three: the tools run locally, results go back as role: \"tool\""),
}
MCP = {
    "request": tr("① 把 tools/list 得到的工具作为 tools，和 messages 一起发给模型",
                  "① The tools from tools/list go to the model as tools, with the messages"),
    "response": tr("② 模型回复（原始 tool_calls）", "② The model's reply (raw tool_calls)"),
    "execute": tr("③ 每个 tool_call 变成一次 tools/call，结果以 role: \"tool\" 回填",
                  "③ Each tool_call becomes a tools/call; results go back as role: \"tool\""),
    "connect": tr("MCP 连接：initialize 握手，再 tools/list 取工具清单（JSON-RPC）",
                  "MCP connection: the initialize handshake, then tools/list for the tools (JSON-RPC)"),
    "wire": tr("线上的 JSON-RPC 消息", "The JSON-RPC messages on the wire"),
}
# A request of a native loop that carried no tools (the context lesson, skills pasted in): no handshake.
WITHOUT_TOOLS = {
    "request": tr("请求：messages 发给模型（这次不带 tools）", "Request: the messages go to the model (no tools this time)"),
    "response": tr("模型的回答", "The model's answer"),
    "execute": tr("执行工具", "Run the tools"),
}
TEXT_PROTOCOL = {
    "request": tr("请求：发送给模型的 messages", "Request: the messages sent to the model"),
    "response": tr("模型原始文本", "The model's raw text"),
    "execute": tr("执行工具，并把 Observation 追加到对话", "Run the tool and append the Observation to the conversation"),
}

CSS = """
.tw-empty { color: var(--body-text-color-subdued); padding: 1em; }
.tw-round { border: 1px solid var(--border-color-primary); border-radius: 8px; margin: 0 0 10px 0; padding: 4px 10px; background: var(--block-background-fill); }
.tw-round > summary { cursor: pointer; font-weight: 600; padding: 6px 0; }
.tw-meta { font-weight: 400; color: var(--body-text-color-subdued); font-size: 0.9em; }
.tw-step { margin: 8px 0; }
.tw-label { font-weight: 600; font-size: 0.92em; margin-bottom: 3px; }
.tw-step pre, .tw-pre { font-family: var(--font-mono); font-size: 0.82em; white-space: pre-wrap; word-break: break-word; background: var(--background-fill-secondary); border-radius: 6px; padding: 8px; margin: 2px 0; max-height: 420px; overflow: auto; }
.tw-step details > summary { cursor: pointer; font-size: 0.9em; }
.tw-ok { color: #15803d; } .tw-bad { color: #b91c1c; } .tw-note { color: var(--body-text-color-subdued); }
.tw-error { border-left: 4px solid #dc2626; padding: 6px 10px; background: rgba(220,38,38,0.08); border-radius: 4px; }
.tw-final { border-left: 4px solid #16a34a; padding: 6px 10px; background: rgba(22,163,74,0.08); border-radius: 4px; white-space: pre-wrap; }
.tw-pause { border-left: 4px solid #d97706; padding: 6px 10px; background: rgba(217,119,6,0.10); border-radius: 4px; }
.tw-edited { color: #b45309; }
.tw-purpose { color: var(--body-text-color-subdued); font-size: 0.9em; margin: 2px 0 6px; }
.tw-match { background: rgba(250, 204, 21, 0.35); border-radius: 3px; }
.tw-g0 { background: rgba(59,130,246,0.30); } .tw-g1 { background: rgba(16,185,129,0.30); }
.tw-g2 { background: rgba(236,72,153,0.28); } .tw-g3 { background: rgba(168,85,247,0.28); }
.tw-badge { display: inline-block; font-family: var(--font-mono); font-size: 0.8em; padding: 0 6px; border-radius: 4px; margin-right: 4px; }
.tw-diff .tw-add { color: #15803d; background: rgba(22,163,74,0.10); display: block; }
.tw-diff .tw-del { color: #b91c1c; background: rgba(220,38,38,0.10); display: block; }
.tw-diff .tw-hunk { color: var(--body-text-color-subdued); display: block; }
.tw-call { border: 1px dashed var(--border-color-primary); border-radius: 6px; padding: 4px 8px; margin: 6px 0; }
.tw-accent { border-left: 4px solid #2563eb; padding: 6px 10px; margin: 4px 0; background: rgba(37,99,235,0.08); border-radius: 4px; font-size: 0.92em; }
.tw-reasoning { margin: 4px 0; } .tw-reasoning > summary { cursor: pointer; color: var(--body-text-color-subdued); }
.tw-naive-regex { border-left: 4px solid #7c3aed; padding: 4px 10px; margin: 4px 0; background: rgba(124,58,237,0.07); border-radius: 4px; font-size: 0.92em; }
.tw-naive-regex.tw-naive-regex-differs { border-left-color: #b91c1c; }
.tw-timing { font-size: 0.85em; color: var(--body-text-color-subdued); margin: 2px 0; }
.tw-lane { position: relative; height: 10px; background: var(--background-fill-secondary); border-radius: 3px; margin: 2px 0 4px 0; }
.tw-bar { position: absolute; top: 0; bottom: 0; min-width: 2px; background: #2563eb; border-radius: 3px; opacity: 0.75; }
.tw-clipped { color: #b45309; font-size: 0.9em; }
.tw-rpc { border-left: 4px solid #0891b2; padding: 2px 8px; margin: 4px 0; background: rgba(8,145,178,0.06); border-radius: 4px; font-size: 0.9em; }
.tw-rpc.tw-rpc-failed { border-left-color: #dc2626; background: rgba(220,38,38,0.08); }
.tw-rpc-head { font-family: var(--font-mono); }
.tw-hook { border-left: 4px solid #7c3aed; padding: 2px 8px; margin: 4px 0; background: rgba(124,58,237,0.06); border-radius: 4px; font-size: 0.92em; }
.tw-gate { border-left: 4px solid #2563eb; padding: 2px 8px; margin: 4px 0; background: rgba(37,99,235,0.06); border-radius: 4px; font-size: 0.92em; }
.tw-gate.tw-gate-deny { border-left-color: #dc2626; background: rgba(220,38,38,0.08); }
.tw-gate.tw-gate-ask { border-left-color: #d97706; background: rgba(217,119,6,0.08); }
.tw-hook.tw-hook-failed { border-left-color: #dc2626; background: rgba(220,38,38,0.08); }
.tw-child { border-left: 4px solid #0d9488; padding: 2px 8px; margin: 6px 0; background: rgba(13,148,136,0.05); border-radius: 4px; }
.tw-child > summary { cursor: pointer; font-weight: 600; }
.tw-unsaid, .tw-hook-unseen { border-left: 4px solid #d97706; padding: 4px 10px; margin: 4px 0; background: rgba(217,119,6,0.08); border-radius: 4px; font-size: 0.92em; }
""" + context_view.CSS
REASONING_TITLE = tr("模型的思考过程（不放回历史）", "The model's reasoning (not put back into the history)")
ANSWER_PROBLEM = tr("⚠️ 回答有问题", "⚠️ A problem with the answer")
ACCENT = tr("ℹ️ 端点的口音", "ℹ️ The endpoint's accent")


# ---------------------------------------------------------------- small helpers

def without_deltas(events: Iterable[dict]) -> list[dict]:
    """Raw view: stream fragments are folded into one summary per round."""
    out: list[dict] = []
    for event in events:
        if event.get("type") != "delta":
            out.append(event)
            continue
        if out and out[-1].get("type") == "delta_summary" and out[-1]["turn"] == event.get("turn"):
            out[-1]["fragments"] += 1
        else:
            out.append({"type": "delta_summary", "turn": event.get("turn"), "fragments": 1})
    return out


def rounds(events: Iterable[dict]) -> list[tuple[Any, list[dict]]]:
    """Groups events by their `turn`, keeping the order in which turns appear."""
    grouped: list[tuple[Any, list[dict]]] = []
    for event in events:
        turn = event.get("turn")
        if grouped and grouped[-1][0] == turn:
            grouped[-1][1].append(event)
        else:
            grouped.append((turn, [event]))
    return grouped


def streamed_so_far(events: list[dict]) -> str:
    """The text and tool-call fragments received so far in a round still streaming."""
    text, calls = [], {}
    for event in events:
        if event.get("type") != "delta":
            continue
        if event.get("content"):
            text.append(str(event["content"]))
        if event.get("index") is not None or event.get("name") or event.get("arguments"):
            call = calls.setdefault(event.get("index", 0), {"name": "", "arguments": ""})
            call["name"] += str(event.get("name") or "")
            call["arguments"] += str(event.get("arguments") or "")
    shown = "".join(text)
    for index, call in sorted(calls.items(), key=lambda item: str(item[0])):
        shown += f"\n[tool_calls[{index}]] {call['name']}({call['arguments']}"
    return shown


def diff_html(diff: str) -> str:
    """A unified diff (a workspace step's changes) with added and removed lines coloured."""
    lines = []
    text = cut(diff or "").splitlines()
    # A file's header is a "---" line and the "+++" line after it; a removed line may start with "--" too.
    headers = {i for i, line in enumerate(text) if line.startswith("--- ") and i + 1 < len(text)
               and text[i + 1].startswith("+++ ")}
    headers |= {i + 1 for i in headers}
    for index, line in enumerate(text):
        kind = ("tw-hunk" if line.startswith("@@") or index in headers else "tw-add" if line.startswith("+")
                else "tw-del" if line.startswith("-") else "")
        lines.append(f'<span class="{kind}">{esc(line)}</span>' if kind else esc(line) + "\n")
    return f'<pre class="tw-diff">{"".join(lines)}</pre>'


# ---------------------------------------------------------------- the protocol view


def render_timing(result: dict) -> str:
    """Calls of one response that ran together: when each started and finished within the batch,
    as text and as a bar on a shared time axis (round_ms wide), so overlapping calls look overlapped."""
    try:
        start, finish, whole = (float(result[k]) for k in ("started_ms", "finished_ms", "round_ms"))
    except (KeyError, TypeError, ValueError):
        return ""
    whole = max(whole, finish, 0.001)
    left, width = 100 * start / whole, max(100 * (finish - start) / whole, 0.5)
    timing = tr("⏱ 同时执行（这一批最多 {n} 个并行）：第 {start} ms 开始，第 {finish} ms 结束，用时 {took}；整批 {whole} ms",
                "⏱ Ran together (up to {n} at once in this batch): started at {start} ms, finished at {finish} ms, "
                "took {took}; the whole batch {whole} ms").format(
                    n=esc(result.get("concurrent")), start=f"{start:.0f}", finish=f"{finish:.0f}",
                    took=milliseconds(result.get("duration_ms")), whole=f"{whole:.0f}")
    return (f'<div class="tw-timing">{timing}</div>'
            f'<div class="tw-lane"><div class="tw-bar" style="left:{left:.1f}%;width:{width:.1f}%"></div></div>')


def clipped_note(result: dict) -> str:
    """Says whether the model got the whole result or a clipped one (tool_result's clipped_from)."""
    total = result.get("clipped_from")
    if isinstance(total, int):
        return ('<div class="tw-clipped">' + tr(
            "✂️ 结果过长已截断：原来 {total} 个字符，回填给模型的只有前 {limit} 个，末尾写明了截断（不是原样回填）",
            "✂️ Result too long, cut: {total} characters, only the first {limit} went back to the model, and the end "
            "says it was cut (not sent back as it was)").format(total=total, limit=RESULT_LIMIT) + "</div>")
    return ""


def call_notes(call: dict) -> str:
    """What reading the arguments said. Arguments that could not be read are a problem (red);
    when they were read, the lines are notes on what the parser tolerated (a quirk: neutral)."""
    text = tr("；", "; ").join(esc(p) for p in call["problems"])
    if call.get("arguments") is None:
        return f"<div class='tw-bad tw-call-problem'>{tr('解析问题：', 'Parse problem: ')}{text}</div>"
    return (f"<div class='tw-note tw-call-note'>"
            f"{tr('ℹ️ 解析备注（已容错，照常执行）：', 'ℹ️ Parse note (tolerated, ran as usual): ')}{text}</div>")


def unsaid_notes(call: dict, request: dict | None, response: dict | None = None) -> list[str]:
    """One sentence per string argument nobody said (accents.unsaid_arguments over what the round's request
    sent), with the question beside it. "Not in the conversation": a server may add text of its own (a chat
    template's worked example), and where the round's answer says the value came from there
    (accents.template_examples), the note says so."""
    if not request or not isinstance(call.get("arguments"), dict) or call.get("name") == WRITE_TODOS:
        return []       # a plan is the model's own words (what to do, when it is done): nobody said them first
    question = question_of([request]) or ""
    said = tr("问题是「{q}」", "the question was «{q}»").format(q=cut(question, 200))
    copied = [value for accent in (response or {}).get("accents") or [] if isinstance(accent, dict)
              and accent.get("code") == "template_example" for value in accent.get("values") or []]
    notes = []
    for name, value in unsaid_arguments(call["arguments"], request.get("messages") or [], request.get("tools")):
        shown = json.dumps(value, ensure_ascii=False)
        if value in copied:
            notes.append(tr("{name}={value} 在对话里没有出现过，却在服务端的聊天模板里：模型照抄了模板里示范调用的例子"
                            "（对照{said}看一看）",
                            "{name}={value} appears nowhere in the conversation, but it is in the server's chat "
                            "template: the model copied the template's worked example (check it against {said})").format(
                                name=name, value=shown, said=said))
        else:
            notes.append(tr("{name}={value} 在对话里没有出现过（问题、系统提示、之前的消息、工具结果和工具清单里都没有）："
                            "可能是模型编的，或从服务端加进提示词的文字（比如聊天模板里的例子）里抄来的；翻译也会这样，"
                            "对照{said}看一看",
                            "{name}={value} appears nowhere in the conversation (not in the question, the system "
                            "prompt, earlier messages, tool results or the tool list): the model may have made it up, "
                            "or copied it from text the server adds to the prompt (such as its chat template's "
                            "example); a translation looks the same, so check it against {said}").format(
                                name=name, value=shown, said=said))
    return notes


# Calls the tool never ran (code/tool_outcome.py LABELS): a person, a permission rule or a hook said no, a hook
# that fails closed failed first, or the call itself was wrong (CALL_MISTAKES: the registry sent it back).
NOT_RUN = ("denied", "rule_denied", "hook_denied", "hook_failed", *CALL_MISTAKES)


@register("tool_call")
def render_call(call: dict, round_: Round) -> str:
    """One tool call: the model's arguments, its hooks (code/hooks.py) before it ran, the permission rule
    that judged it (a loop's own gate, code/mini_agent.py), the sub-agent it started (code/subagents.py),
    what ran and with what result, the hooks after it, and the message the model then gets. The kinds
    drawn inside it are drawn by their own renderers."""
    key = (call.get("turn"), call.get("id"))
    result = round_.results.get(call.get("id"))
    hooks = round_.by_call("hook").get(key, [])
    before = [e for e in hooks if e.get("event") == "PreToolUse"]
    after = [e for e in hooks if e.get("event") != "PreToolUse"]
    child = child_of(round_.children, call)
    head = f'<b>{esc(call.get("name"))}</b> <span class="tw-meta">id={esc(call.get("id"))}</span>'
    body = [f"<div>{tr('模型给出的参数（原文）：', 'Arguments as the model wrote them:')}</div>{pre(str(call.get('raw_arguments', '')))}"]
    if call.get("problems"):
        body.append(call_notes(call))
    body += [f'<div class="tw-unsaid">🔎 {esc(note)}</div>' for note in round_.unsaid(call)]
    wire = round_.wire.get(key, [])
    if wire:
        body.append(f"<div>{esc(now(round_.labels.get('wire', 'JSON-RPC')))}{tr('：', ': ')}</div>"
                    + "".join(draw(e, round_) for e in wire))
    if before:
        body.append(f"<div>{tr('执行之前的钩子：', 'Hooks before it runs:')}</div>" + "".join(draw(e, round_) for e in before))
    body += [draw(e, round_) for e in round_.by_call("permission").get(key, [])]
    if child:
        body.append(renderer("child")(call, round_))
    if result is None:
        waiting = tr("⏳ 子代理在做这件事", "⏳ The sub-agent is at it") if child else tr("⏸ 尚未执行", "⏸ Not run yet")
        body.append(f'<div class="tw-pause">{waiting}</div>')
        return f'<div class="tw-call">{head}{"".join(body)}</div>'
    status = (f"<span class=tw-ok>{tr('成功', 'succeeded')}</span>" if result.get("ok")
              else f"<span class=tw-bad>{tr('失败', 'failed')} {esc(result.get('error_code') or '')}</span>")
    ran = result.get("error_code") not in NOT_RUN
    arguments = result.get("arguments") if ran or result.get("arguments") is not None else call.get("arguments")
    if ran:
        body.append(f"<div>{tr('实际执行的参数（转换后）：', 'Arguments the tool ran with (converted):')}</div>{pre(arguments)}")
    elif arguments is not None:
        body.append(f"<div>{tr('这次调用没有执行；它的参数：', 'This call did not run; its arguments:')}</div>{pre(arguments)}")
    else:       # the model's arguments could not be read: their text is above
        body.append(f"<div>{tr('这次调用没有执行。', 'This call did not run.')}</div>")
    for note in result.get("coercions") or []:
        body.append(f"<div>{tr('类型转换：', 'Type conversion: ')}<code>{esc(note)}</code></div>")
    if result.get("overridden"):
        body.append(f"<div class='tw-meta'>（{esc(result['overridden'])}）</div>")
    for change in result.get("edited") or []:     # a person changed the model's arguments before the call ran
        body.append(f"<div class='tw-edited'>{tr('✏️ 执行前，人改过这个参数：', '✏️ A person edited this argument before it ran: ')}"
                    f"<code>{esc(change)}</code></div>")
    body.append(render_timing(result))
    if after:
        said = (tr("调用失败了，之后运行的钩子（PostToolUseFailure）：", "The call failed; the hooks run after it (PostToolUseFailure):")
                if any(e.get("event") == "PostToolUseFailure" for e in after) else tr("执行之后的钩子：", "Hooks after it ran:"))
        body.append(f"<div>{said}</div>" + "".join(draw(e, round_) for e in after))
    if result.get("unseen_by"):
        body.append(unseen_note(result["unseen_by"], bool(after)))
    said = tr("钩子之后的结果", "The result after the hooks") if after else tr("结果", "Result")
    body.append(f"<div>{said} {status} · {milliseconds(result.get('duration_ms'))}</div>{pre(str(result.get('content', '')))}")
    body.append(clipped_note(result))
    if result.get("diff"):
        body.append(f"<div>{tr('工作区的改动（diff）：', 'Changes to the workspace (diff):')}</div>{diff_html(result['diff'])}")
    if result.get("message") is not None:
        body.append(f"<div>{tr('回填给模型的消息：', 'The message sent back to the model:')}</div>{pre(result.get('message'))}")
    return f'<div class="tw-call">{head}{"".join(body)}</div>'


def child_of(children: dict | None, call: dict) -> list[dict]:
    """The events of the sub-agent a task call started (keyed by the call's round and id)."""
    return (children or {}).get((call.get("turn"), str(call.get("id"))), [])


def unseen_note(names: list[str], others_ran: bool) -> str:
    """A failed call that PostToolUse hooks (a masking one, say) never saw: they run only after a success."""
    said = tr("⚠️ 这次调用失败了。PostToolUse 钩子只在成功之后运行：{names} 没有看到失败的文本。",
              "⚠️ This call failed. PostToolUse hooks run only after a success: {names} never saw the failure's "
              "text. ").format(names=tr("、", ", ").join(names))
    said += (tr("看过它的只有上面的 PostToolUseFailure 钩子。", "Only the PostToolUseFailure hooks above saw it.")
             if others_ran else
             tr("也没有登记 PostToolUseFailure 钩子：失败的文本没有经过任何钩子，原样交给了模型。",
                "And no PostToolUseFailure hook is registered: the failure's text went to the model as it was, "
                "through no hook."))
    return f'<div class="tw-hook-unseen">{esc(said)}</div>'


def rpc_by_call(calls: list[dict], rpcs: list[dict]) -> tuple[dict, list[dict]]:
    """Which tools/call messages belong to which tool call ((turn, id) -> [rpc events]): each
    tools/call request goes to the call of that name and those arguments not given one yet (the calls
    of one reply run at once, so their requests may go out in any order), else to the first call of
    that name not given one (arguments edited in step mode); a response goes to its request's call
    (same JSON-RPC id). Everything else comes back as the rest, in order."""
    owner: dict = {}          # JSON-RPC id -> (turn, call id)
    taken: set = set()
    found: dict = {}
    rest = []
    for event in rpcs:
        key = None
        if event.get("kind") == "request" and event.get("method") == "tools/call":
            params = event.get("params") or {}
            free = [c for c in calls if c.get("name") == params.get("name") and (c.get("turn"), c.get("id")) not in taken]
            call = next((c for c in free if c.get("arguments") == params.get("arguments")), free[0] if free else None)
            if call is not None:
                key = (call.get("turn"), call.get("id"))
                taken.add(key)
                owner[event.get("id")] = key
        elif event.get("kind") in ("result", "error"):
            key = owner.get(event.get("id"))
        if key is None:
            rest.append(event)
        else:
            found.setdefault(key, []).append(event)
    return found, rest


def render_accents(response: dict) -> str:
    """The endpoint's accents (code/accents.py) of one response, as info notes: what the
    endpoint did, why it matters and what to change are in each message."""
    notes = [a for a in response.get("accents") or [] if isinstance(a, dict)]
    return "".join(f'<div class="tw-accent">{accent_title(a.get("code"))} <code>{esc(a.get("code"))}</code>{tr("：", ": ")}'
                   f'{esc(cut(str(a.get("message") or ""), 2000))}</div>' for a in notes)


def accent_title(code: Any) -> str:
    """A quirk the client repaired is the endpoint's accent; a failure of the answer itself is not."""
    icon, _, words = str(now(ANSWER_PROBLEM if code in ANSWER_PROBLEMS else ACCENT)).partition(" ")
    return f"{icon} <b>{words}</b>"


def render_reasoning(response: dict) -> str:
    """The model's thinking (reasoning_content / reasoning / <think>), folded: shown, never sent back."""
    reasoning = response.get("reasoning")
    if not reasoning:
        return ""
    size = tr("（{n} 字）", " ({n} characters)").format(n=len(str(reasoning)))
    return f'<details class="tw-reasoning"><summary>🧠 {esc(now(REASONING_TITLE))}{size}</summary>{pre(str(reasoning))}</details>'


def chat_notes(event: dict) -> list[dict]:
    """The chat view's collapsible steps for one response's reasoning and accents."""
    notes = []
    if event.get("reasoning"):
        notes.append({"role": "assistant", "content": cut(str(event["reasoning"]), 4000),
                      "metadata": {"title": f"🧠 {now(REASONING_TITLE)}", "status": "done"}})
    for accent in event.get("accents") or []:
        if isinstance(accent, dict):
            notes.append({"role": "assistant", "content": cut(str(accent.get("message") or ""), 2000),
                          "metadata": {"title": f"{now(ANSWER_PROBLEM if accent.get('code') in ANSWER_PROBLEMS else ACCENT)}"
                                                f"{tr('：', ': ')}{accent.get('code')}", "status": "done"}})
    return notes


# Errors a run reports before the model is asked: said in words, not by their code.
SETUP_ERRORS = {"hooks_source": tr("钩子源码用不了", "The hooks source cannot be used"),
                "conversation": tr("对话用不了", "The conversation cannot be used"),
                "mcp_connect": tr("MCP 服务器没有连上", "The MCP server was not reached")}


def error_title(event: dict) -> str:
    code = event.get("code")
    return now(SETUP_ERRORS[code]) if code in SETUP_ERRORS else tr("出错（{code}）", "Error ({code})").format(code=code)


@dataclasses.dataclass
class Round:
    """One round as its renderers read it: its events and, found once, the request, the reply, the calls
    and their results, the MCP messages by the call they carried, and the sub-agents' events by the call
    that started them. `parsed`: the run reads replies as text (it has parse events): a request without
    tools is then a text protocol's, not a native loop's that offered none."""
    turn: Any
    events: list[dict]
    labels: dict
    last: bool
    check_arguments: bool = True
    text_protocol: bool = True
    children: dict | None = None
    parsed: bool = False

    def __post_init__(self) -> None:
        self.request = next((e for e in self.events if e.get("type") == "request"), None)
        self.response = next((e for e in self.events if e.get("type") == "response"), None)
        if self.labels is HANDSHAKE and self.request is not None and not self.request.get("tools") and not self.parsed:
            self.labels = WITHOUT_TOOLS
        self.calls = self.of("tool_call")
        self.results = {e.get("id"): e for e in self.of("tool_result")}
        # MCP: the messages before this round's request (initialize, tools/list) open it; tools/call
        # messages go inside their call; any other message is listed after the calls.
        at = self.events.index(self.request) if self.request in self.events else len(self.events)
        self.connect = [e for e in self.events[:at] if e.get("type") == "rpc"]
        self.wire, self.rest = rpc_by_call(self.calls, [e for e in self.events[at:] if e.get("type") == "rpc"])

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e.get("type") == kind]

    def by_call(self, kind: str) -> dict:
        """This round's events of a kind that belong to a call (hooks, permission decisions), by (turn, id)."""
        found: dict = {}
        for event in self.of(kind):
            found.setdefault((event.get("turn"), event.get("id")), []).append(event)
        return found

    def unsaid(self, call: dict) -> list[str]:
        return unsaid_notes(call, self.request, self.response) if self.check_arguments else []


@dataclasses.dataclass(frozen=True)
class Said:
    """What a lesson's kind adds to its round's summary: words on its line, the round's title when the round
    is about that kind, and whether the round stays open because that kind is the lesson."""
    meta: tuple = ()
    title: Any = None
    keeps_open: bool = False


def lesson_sayings(round_: Round) -> list[Said]:
    """What the lessons' kinds say about a round, in the course's order (the first title wins)."""
    lesson_renderers()
    course = {f"lessons.{lesson}.timeline": index for index, lesson in enumerate(LESSONS)}
    in_order = sorted(SUMMARY.values(), key=lambda says: course.get(says.__module__, -1))
    return [said for says in in_order if (said := says(round_)) is not None]


def step(label: Any, body: str) -> str:
    return f'<div class="tw-step"><div class="tw-label">{label}</div>{body}</div>'


# The kinds drawn ahead of a round's request (each its own step), and the kinds that close it, in their order.
AHEAD = ("context", "skills")
CLOSING = ("final", "error")


def render_round(turn: Any, events: list[dict], labels: dict, last: bool, check_arguments: bool = True,
                 text_protocol: bool = True, children: dict | None = None, parsed: bool = False) -> str:
    """One round: its summary line, what came before the request, the request and the reply, the calls,
    and what closed it; each event by its kind's renderer."""
    round_ = Round(turn, events, labels, last, check_arguments, text_protocol, children, parsed)
    labels, request, response, calls = round_.labels, round_.request, round_.response, round_.calls
    sayings = lesson_sayings(round_)
    parts = [render_summary(round_, sayings)]
    parts += [draw(e, round_) for kind in AHEAD for e in round_.of(kind)]
    if round_.connect:
        parts.append(step(esc(now(labels.get("connect", "JSON-RPC"))), "".join(draw(e, round_) for e in round_.connect)))
    if request:
        parts.append(draw(request, round_))
    if response:
        parts.append(draw(response, round_))
    elif any(e.get("type") == "delta" for e in events):
        parts.append(step(tr("流式接收中…", "Streaming in…"), pre(streamed_so_far(events))))
    # How a timed reply arrived (8.1), drawn once a round by the assembled kind's renderer: from the first
    # timed fragment on while it streams, then with the assembled calls.
    timed = [e for e in events if e.get("type") == "assembled" or e.get("type") == "delta" and "at_ms" in e]
    if timed:
        parts.append(renderer("assembled")(timed[-1], round_))
    parts += [draw(e, round_) for e in round_.of("parse")]
    if calls:
        parts.append(step(esc(now(labels["execute"])), "".join(draw(c, round_) for c in calls)))
    plans = round_.of("plan")
    if plans:
        parts.append('<div class="tw-step">' + "".join(draw(e, round_) for e in plans) + "</div>")
    if round_.rest:
        parts.append(step(esc(now(labels.get("wire", "JSON-RPC"))), "".join(draw(e, round_) for e in round_.rest)))
    # Results without a matching call (e.g. a text protocol that feeds back a notice).
    called = {c.get("id") for c in calls}
    parts += [draw(e, round_) for e in round_.of("tool_result") if e.get("id") not in called]
    parts += [draw(e, round_) for e in events if e.get("type") in CLOSING]
    opened = last or any(said.keeps_open for said in sayings)
    return f'<details class="tw-round"{" open" if opened else ""}>' + "".join(parts) + "</details>"


def render_summary(round_: Round, sayings: list[Said]) -> str:
    """The round's title and its one line: the model's time, tokens, the calls, and what the lessons' own
    kinds add (a refused plan, the hooks that ran, the context shrunk)."""
    request, response, calls = round_.request, round_.response, round_.calls
    meta = []
    if response:
        meta.append(tr("模型 ", "model ") + seconds(response.get("duration_ms")))
    tokens = cost_view.round_meta(request, response, round_.text_protocol)
    if tokens:
        meta.append(tokens)
    if calls:
        meta.append(tr("调用 ", "calls ") + ", ".join(str(c.get("name")) for c in calls))
    meta += [words for said in sayings for words in said.meta]
    title = next((said.title for said in sayings if said.title is not None), None)
    if title is None:
        title = tr("开始前", "Before the start") if round_.turn is None else tr("第 {n} 轮", "Round {n}").format(n=round_.turn)
    return f'<summary>{esc(title)} <span class="tw-meta">{esc(" · ".join(meta))}</span></summary>'


@register("request")
def render_request(request: dict, round_: Round) -> str:
    """What went to the model: the messages (open in the last round), the tools, the parameters."""
    messages = request.get("messages") or []
    tools = request.get("tools")
    body = fold(tr("messages（{n} 条）", "messages ({n})").format(n=len(messages)), pre(messages), open_=round_.last)
    if tools:
        body += fold(tr("tools（{n} 个）", "tools ({n})").format(n=len(tools)), pre(tools))
    body += fold(tr("参数", "request parameters"), pre(request.get("params") or {}))
    sent = renderer("body")(request, round_) if "body" in request else ""       # the body as sent (8.1)
    return step(esc(now(round_.labels["request"])), body) + sent


@register("response")
def render_response(response: dict, round_: Round) -> str:
    """The model's reply: its tool_calls, its text, finish_reason, reasoning and accents, the raw body."""
    message = response.get("message") or {}
    text = response.get("text") if response.get("text") is not None else message.get("content")
    body = ""
    if message.get("tool_calls"):
        count = tr("tool_calls（{n} 个）：", "tool_calls ({n}):").format(n=len(message["tool_calls"]))
        body += f"<div>{count}</div>{pre(message['tool_calls'])}"
    if text:
        body += f"<div>{tr('文本：', 'Text:')}</div>{pre(str(text))}"
    if not body:
        body = f"<div class='tw-meta'>{tr('（空回复）', '(empty reply)')}</div>"
    finish = response.get("finish_reason")
    body += f"<div class='tw-meta'>finish_reason = {esc(finish)}</div>" if finish else ""
    body = render_reasoning(response) + body + render_accents(response)
    body += fold(tr("原始响应体 raw", "raw response body"), pre(response.get("raw")))
    return step(esc(now(round_.labels["response"])), body)


@register("tool_result")
def render_sent_back(result: dict, round_: Round) -> str:
    """A result no call of the round asked for (a text protocol's notice); a call's own result is drawn in it."""
    return step(tr("回填", "Sent back"), pre(result.get("message") or result.get("content")))


@register("final")
def render_final(event: dict, round_: Round) -> str:
    return step(tr("最终回答", "Final answer"), f'<div class="tw-final">{esc(cut(str(event.get("content") or "")))}</div>')


@register("error")
def render_error(event: dict, round_: Round) -> str:
    return (f'<div class="tw-step"><div class="tw-error"><b>{esc(error_title(event))}</b>{tr("：", ": ")}'
            f'{esc(event.get("message"))}</div></div>')


def render_protocol(events: list[dict], lesson: str = "function_calling", note: str = "",
                    check_arguments: bool = True, replaying: bool = False) -> str:
    """The step-by-step protocol view. `note` is shown on top (pause, replay position...);
    `replaying`: the events are an imported run's, shown step by step.
    check_arguments: say on a call which string arguments nobody said (unsaid_notes). The workspace
    lessons turn it off: their tools take text the model writes itself (a fix, a command), so it
    would fire on good runs there."""
    labels = {"react": TEXT_PROTOCOL, "mcp": MCP}.get(lesson, HANDSHAKE)
    if not events and replaying:
        body = ('<div class="tw-empty">' + tr(
            "已导入一次录制的运行，还没有显示任何一步：点「下一步 ⏭」逐步回放，或点「全部显示」。",
            "A recorded run is imported and no step is shown yet: click «Next ⏭» to replay it step by step, or "
            "«Show all».") + "</div>")
    elif not events:
        # Concatenated, not formatted: the page's first (empty) view keeps its English (i18n.Text).
        stepped = LESSONS[lesson].step if lesson in LESSONS else True
        body = ('<div class="tw-empty">' + (tr("还没有运行。选一个预设问题，点「运行」或「单步」。",
                                               "Nothing has run yet. Pick a preset question and click «Run» or «Step».")
                                            if stepped else
                                            tr("还没有运行。选一个预设问题，点「运行」。",
                                               "Nothing has run yet. Pick a preset question and click «Run»."))
                + "</div>")
    else:
        # A sub-agent's events (code/subagents.py) are drawn inside the task call that started them.
        children: dict = {}
        for event in events:
            if "child" in event:
                children.setdefault((event.get("child_turn"), str(event["child"])), []).append(event)
        grouped = rounds(e for e in loop_events.own(events) if e.get("type") != "purpose")
        text_protocol = token_count.is_text_protocol(events, lesson)
        parsed = any(e.get("type") == "parse" for e in events)
        body = render_purpose(events) + "".join(
            render_round(turn, evs, labels, i == len(grouped) - 1, check_arguments, text_protocol, children, parsed)
            for i, (turn, evs) in enumerate(grouped))
    top = f'<div class="tw-pause">{esc(note)}</div>' if note else ""
    return '<div class="tw-protocol">' + top + body + "</div>"


def render_purpose(events: list[dict]) -> str:
    """What the run's preset question wants (runs/purposes.py), which the headline checks it against."""
    wanted = headline.purpose_text(headline.recorded_purpose(events))
    if not wanted:
        return ""
    return (f'<div class="tw-purpose">🎯 {esc(tr("这个预设问题要的是：", "What this preset question wants: "))}'
            f"{esc(wanted)}</div>")


# ---------------------------------------------------------------- the chat view

def question_of(events: list[dict]) -> str | None:
    for event in events:
        if event.get("type") == "request":
            for message in reversed(event.get("messages") or []):
                if message.get("role") == "user":
                    return str(message.get("content") or "")
    return None


@dataclasses.dataclass
class Conversation:
    """What the chat view's renderers read besides their event: the lesson, the results by (turn, id) (some
    backends reuse call ids from one round to the next), and the last request and reply seen so far."""
    lesson: str
    check_arguments: bool
    results: dict
    request: dict | None = None
    answered: dict | None = None


def render_chat(events: list[dict], lesson: str = "function_calling", check_arguments: bool = True) -> list[dict]:
    """Messages for gr.Chatbot: the question, each model step and tool call as a
    collapsible step (metadata title), tool results nested under their call, the answer; each event by
    its kind's chat renderer (a kind without one says nothing in the chat).
    A call's step says which arguments nobody said, as the protocol view does (check_arguments)."""
    chat: list[dict] = []
    events = loop_events.own(events)    # a sub-agent's steps are in the protocol view, under its call
    question = question_of(events)
    if question is not None:
        chat.append({"role": "user", "content": question})
    results = {(e.get("turn"), e.get("id")): e for e in events if e.get("type") == "tool_result"}
    conversation = Conversation(lesson, check_arguments, results)
    lesson_renderers()
    for event in events:
        said = CHAT.get(str(event.get("type")))
        if said is not None:
            chat.extend(said(event, conversation))
    return chat


@register("request", CHAT)
def chat_request(event: dict, conversation: Conversation) -> list[dict]:
    conversation.request = event      # the question is said once, on top; the request is what calls are checked against
    return []


@register("response", CHAT)
def chat_response(event: dict, conversation: Conversation) -> list[dict]:
    """The reply's reasoning and accents; its text when it is a step, not the answer (a text protocol's
    every reply, a native reply with calls)."""
    conversation.answered = event
    said = chat_notes(event)
    text = event.get("text") if event.get("text") is not None else (event.get("message") or {}).get("content")
    if text and (conversation.lesson == "react" or (event.get("message") or {}).get("tool_calls")):
        said.append({"role": "assistant", "content": cut(str(text), 4000),
                     "metadata": {"title": tr("💭 第 {n} 轮模型输出", "💭 The model's output in round {n}").format(
                                      n=event.get("turn")), "status": "done",
                                  "duration": round(float(event.get("duration_ms") or 0) / 1000, 2)}})
    return said


@register("tool_call", CHAT)
def chat_call(event: dict, conversation: Conversation) -> list[dict]:
    """A call as a step, and its result nested under it."""
    call_id = f"call-{event.get('turn')}-{event.get('id')}"
    result = conversation.results.get((event.get("turn"), event.get("id")))
    shown_args = result.get("arguments") if result else event.get("arguments")
    unsaid = "".join(f"\n\n🔎 {note}" for note in (unsaid_notes(event, conversation.request, conversation.answered)
                                                    if conversation.check_arguments else []))
    said = [{"role": "assistant",
             "content": tr("参数：", "Arguments:") + "\n```json\n" + cut(to_json(shown_args if shown_args is not None else event.get("raw_arguments")), 3000) + "\n```" + unsaid,
             "metadata": {"title": tr("🛠️ 调用 {name}", "🛠️ Call {name}").format(name=event.get("name")),
                          "id": call_id,
                          "status": "done" if result else "pending"}}]
    if result:
        said.append({"role": "assistant", "content": cut(str(result.get("content", "")), 3000),
                     "metadata": {"title": tr("✅ 工具结果", "✅ Tool result") if result.get("ok") else
                                  tr("❌ 工具出错 ", "❌ Tool error ") + str(result.get("error_code") or ""),
                                  "parent_id": call_id, "status": "done",
                                  "duration": round(float(result.get("duration_ms") or 0) / 1000, 3)}})
    return said


@register("final", CHAT)
def chat_final(event: dict, conversation: Conversation) -> list[dict]:
    return [{"role": "assistant", "content": cut(str(event.get("content") or ""))}]


@register("error", CHAT)
def chat_error(event: dict, conversation: Conversation) -> list[dict]:
    return [{"role": "assistant", "content": str(event.get("message") or ""),
             "metadata": {"title": "⚠️ " + error_title(event)}}]
