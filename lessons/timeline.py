"""Turns the loop's event list into three views: the protocol step by step (HTML),
a chat view with collapsible tool steps, and the raw JSON.

Everything here is a pure function of the events, so a recorded session replays
through exactly the same code as a live run. Model output is untrusted: every
piece of text is escaped before it reaches the page, and long blocks are cut.
"""
from __future__ import annotations

import difflib
import json
from typing import Any, Iterable

import events as loop_events
import hooks
from accents import ANSWER_PROBLEMS, unsaid_arguments
from catalogue import LESSONS
from i18n import now, tr
from lessons import context_view, cost_view, token_count
from lessons.first_call import first_call_view
from lessons.planning import plan_view
from lessons.skills import skills_view
from lessons.rule_reasons import reason_in_english
from runs import headline
# Re-exported: the run views and the panels write with timeline.esc, timeline.pre and the rest.
from lessons.html_bits import SHOW_LIMIT, cut, esc, fold, milliseconds, pre, seconds, to_json  # noqa: F401
from planning import WRITE_TODOS
from tool_outcome import CALL_MISTAKES, RESULT_LIMIT


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
""" + context_view.CSS + first_call_view.CSS + plan_view.CSS
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

def highlight_match(text: str, event: dict) -> str:
    """The raw text with the regex match marked and each group value coloured inside it."""
    span = event.get("span") or []
    if not (isinstance(span, (list, tuple)) and len(span) == 2):
        return esc(cut(text))
    start, end = int(span[0]), int(span[1])
    inside = text[start:end]
    marks = []  # (start, end, group index) inside the match, first occurrence of each value
    for index, value in enumerate((event.get("groups") or {}).values()):
        value = "" if value is None else str(value)
        pos = inside.find(value) if value else -1
        if pos >= 0 and not any(s < pos + len(value) and pos < e for s, e, _ in marks):
            marks.append((pos, pos + len(value), index % 4))
    pieces, cursor = [], 0
    for s, e, index in sorted(marks):
        pieces.append(esc(inside[cursor:s]))
        pieces.append(f'<span class="tw-g{index}">{esc(inside[s:e])}</span>')
        cursor = e
    pieces.append(esc(inside[cursor:]))
    return esc(cut(text[:start], 4000)) + '<span class="tw-match">' + "".join(pieces) + "</span>" + esc(cut(text[end:], 4000))


def parsed_as_json(event: dict) -> bool:
    """JSON-from-text finds a JSON object (text_parsers.OPEN_BRACE, then json.JSONDecoder); ReAct uses a regex."""
    try:
        from text_parsers import OPEN_BRACE
    except ImportError:
        return False
    return event.get("pattern") == OPEN_BRACE.pattern


def render_parse(event: dict, raw_text: str) -> str:
    as_json = parsed_as_json(event)
    kinds = ({"action": tr("调用工具（tool + arguments）", "a tool call (tool + arguments)"),
              "final": tr("最终答案（answer）", "the final answer (answer)"), "none": tr("没有可用的 JSON", "no usable JSON")}
             if as_json else
             {"action": tr("调用工具 (Action)", "a tool call (Action)"), "final": tr("最终答案 (Final Answer)", "the final answer (Final Answer)"),
              "none": tr("无匹配", "no match")})
    kind = kinds.get(event.get("kind"), event.get("kind"))
    how = tr("从文本中找 JSON", "Finding JSON in the text") if as_json else tr("正则解析", "Regex parse")
    if event.get("ok"):
        found = tr("找到了", "found") if as_json else tr("匹配成功", "matched")
    else:
        found = tr("没有找到", "not found") if as_json else tr("没有匹配", "no match")
    found = f"<span class={'tw-ok' if event.get('ok') else 'tw-bad'}>{found}</span>"
    colon = tr("：", ": ")
    parts = [f'<div class="tw-label tw-parse-label">{how}{colon}{found} · {esc(kind)}</div>']
    if event.get("pattern"):
        where = (tr("找 JSON 起点用的正则（之后交给 json.JSONDecoder 解析）",
                    "the regex that finds where JSON starts (then json.JSONDecoder parses it)") if as_json
                 else tr("正则", "regex"))
        parts.append(f'<div>{where}{colon}<code>{esc(event["pattern"])}</code></div>')
    if event.get("ok"):
        parts.append(f'<div class="tw-pre">{highlight_match(raw_text, event)}</div>')
        badges = "".join(
            f'<div><span class="tw-badge tw-g{i % 4}">{esc(name)}</span>{esc(cut(str(value), 2000))}</div>'
            for i, (name, value) in enumerate((event.get("groups") or {}).items())
        )
        parts.append(badges)
    else:
        why = tr("为什么没有找到", "why nothing was found") if as_json else tr("为什么没有匹配", "why it did not match")
        reason = event.get("reason") or tr("模型输出不符合约定格式", "the model's output does not follow the agreed format")
        parts.append(f'<div class="tw-error">{why}{colon}{esc(reason)}</div>')
    for note in event.get("notes") or []:
        parts.append(f"<div class='tw-note tw-parse-note'>{tr('ℹ️ 解析备注：', 'ℹ️ Parse note: ')}{esc(note)}</div>")
    parts.append(render_naive(event.get("naive")))
    return '<div class="tw-step">' + "".join(parts) + "</div>"


def render_naive(naive: Any) -> str:
    """ReAct only: what the naive regex (text_parsers.compare_naive) reads from the same reply, beside ours;
    the verdict is the loop's own sentence (no match / the same / matched the wrong thing)."""
    if not isinstance(naive, dict):
        return ""
    pattern = naive.get("final_pattern") if naive.get("kind") == "final" else naive.get("pattern")
    differs = "" if naive.get("agrees") else " tw-naive-regex-differs"
    mark = "＝" if naive.get("agrees") else "≠"
    return (f'<div class="tw-naive-regex{differs}"><b>{tr("对照 · 朴素正则", "Compare · naive regex")}</b> <code>{esc(pattern)}</code>'
            f'<div>{mark} {esc(naive_verdict(naive))}</div></div>')


def naive_verdict(naive: dict) -> str:
    """The loop's own sentence (text_parsers.compare_naive, Chinese like the course's code), or the same
    facts in English for an English page."""
    kind, agrees = naive.get("kind"), naive.get("agrees")
    if kind == "none":
        english = ("the naive regex does not match either" if agrees else
                   'the naive regex does not match: it only reads a line that starts with exactly "Action: " and a '
                   "tool name followed right away by [...]")
    elif agrees:
        english = "the naive regex reads the same"
    elif kind == "final":
        english = (f'the naive regex matched the wrong thing: it looks for Final Answer first and takes '
                   f'"{str(naive.get("answer") or "")[:40]}" for the final answer')
    else:
        shown = str(naive.get("args") or "").replace("\n", "⏎")
        english = f"the naive regex matched the wrong thing: tool {naive.get('tool')}, read the arguments as «{shown[:80]}»"
    return tr(str(naive.get("verdict") or ""), english)


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


def render_call(call: dict, result: dict | None, labels: dict, wire: list[dict] = (), unsaid: list[str] = (),
                hooks: list[dict] = (), child: list[dict] = (), gates: list[dict] = ()) -> str:
    """One tool call: the model's arguments, its hooks (code/hooks.py) before it ran, the permission rule
    that judged it (a loop's own gate, code/mini_agent.py), the sub-agent it started (code/subagents.py),
    what ran and with what result, the hooks after it, and the message the model then gets."""
    head = f'<b>{esc(call.get("name"))}</b> <span class="tw-meta">id={esc(call.get("id"))}</span>'
    body = [f"<div>{tr('模型给出的参数（原文）：', 'Arguments as the model wrote them:')}</div>{pre(str(call.get('raw_arguments', '')))}"]
    if call.get("problems"):
        body.append(call_notes(call))
    body += [f'<div class="tw-unsaid">🔎 {esc(note)}</div>' for note in unsaid]
    if wire:
        body.append(f"<div>{esc(now(labels.get('wire', 'JSON-RPC')))}{tr('：', ': ')}</div>" + "".join(render_rpc(e) for e in wire))
    before = [e for e in hooks if e.get("event") == "PreToolUse"]
    after = [e for e in hooks if e.get("event") != "PreToolUse"]
    if before:
        body.append(f"<div>{tr('执行之前的钩子：', 'Hooks before it runs:')}</div>" + "".join(render_hook(e) for e in before))
    body += [render_permission(e) for e in gates]
    if child:
        body.append(render_child(child, result))
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
        body.append(f"<div>{said}</div>" + "".join(render_hook(e) for e in after))
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


PERMISSION_WORDS = {"allow": tr("放行", "allowed"), "ask": tr("先问人", "asks a person"), "deny": tr("拒绝", "denied")}


def render_permission(event: dict) -> str:
    """A permission rule's decision on one call (code/permissions.py), before it runs: which rule, what it
    said and why (the course's own sentence). An ask's answer is the call's result below."""
    verdict, reason = str(event.get("verdict") or ""), str(event.get("reason") or "")
    rule = event.get("rule")
    head = (tr("🛡️ 权限规则 {rule}：{verdict}", "🛡️ Permission rule {rule}: {verdict}").format(
                rule=f"<code>{esc(rule)}</code>", verdict=esc(now(PERMISSION_WORDS.get(verdict, verdict))))
            if rule else tr("🛡️ 没有规则管它：{verdict}", "🛡️ No rule covers it: {verdict}").format(
                verdict=esc(now(PERMISSION_WORDS.get(verdict, verdict)))))
    asked = tr("（人怎样回答，见下面这次调用的结果）", " (how the person answered: the call's result below)") \
        if verdict == "ask" else ""
    return (f'<div class="tw-gate tw-gate-{esc(verdict)}"><div>{head}</div>'
            f'<div class="tw-meta">{esc(now(tr(reason, reason_in_english(reason))))}{asked}</div></div>')


def child_of(children: dict | None, call: dict) -> list[dict]:
    """The events of the sub-agent a task call started (keyed by the call's round and id)."""
    return (children or {}).get((call.get("turn"), str(call.get("id"))), [])


def render_child(events: list[dict], result: dict | None) -> str:
    """A sub-agent's whole run, folded under the task call that started it: its own timeline, and what
    it cost against what it handed back (the parent's context was spared the difference). Only the
    requests the model answered are counted: a request the budget stopped first cost nothing."""
    events = [{k: v for k, v in e.items() if k not in ("child", "child_turn")} for e in events]   # a run of its own
    answered = {e.get("turn") for e in events if e.get("type") == "response"}
    rows = [row for row in token_count.per_turn(events) if row["turn"] in answered]
    used = None if any(row["input"] is None for row in rows) else sum(row["input"] for row in rows)
    calls = sum(1 for e in events if e.get("type") == "tool_call")
    title = tr("🧒 子代理的运行：模型答了 {rounds} 轮，{calls} 次工具调用",
               "🧒 The sub-agent's run: the model answered {rounds} round(s), {calls} tool call(s)").format(
                   rounds=len(answered), calls=calls)
    if used is not None:
        title += tr("，它的请求共 {used} 个 token（分词器计数）", ", {used} tokens in its requests (tokenizer count)"
                    ).format(used=used)
    if result is None:
        title += tr("；⏳ 还在做", "; ⏳ still at it")
    elif not result.get("ok"):
        title += tr("；主代理收到的是一条失败结果", "; the parent got a failed result")
    else:
        back = token_count.count(str(result.get("content") or ""))
        if back is not None:
            title += tr("；交回给主代理的只有 {back} 个 token", "; only {back} tokens went back to the parent").format(
                back=back)
    return (f'<details class="tw-child"><summary>{esc(title)}</summary>'
            f'{render_protocol(events, "function_calling")}</details>')


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


def on_error(fail: str) -> tr:
    """What a hook's error does, in a few words (code/hooks.py's stops)."""
    if hooks.stops(fail):
        return tr("出错就拦下", "an error stops it")
    return tr("出错照常", "an error lets it through")


def hook_error_effect(event: dict) -> str:
    """What a hook's error did (code/hooks.py's stops), by its event and its fail."""
    if not hooks.stops(event.get("fail")):
        if event.get("event") == hooks.FAILED:
            return tr("它是 fail open 的：记下这个错，失败的文本照原样交给模型。",
                      "It fails open: the error is noted and the failure's text goes to the model as it was.")
        return tr("它是 fail open 的：记下这个错，调用照常。", "It fails open: the error is noted and the call goes on.")
    if event.get("event") == hooks.PRE:
        return tr("它是 fail closed 的：这次调用被拦下，工具没有运行。",
                  "It fails closed: the call is stopped and the tool does not run.")
    if event.get("event") == hooks.FAILED:
        return tr("它是 fail closed 的：工具运行了但失败了，失败的文本不交给模型。",
                  "It fails closed: the tool ran and failed, and the failure's text is kept from the model.")
    return tr("它是 fail closed 的：工具已经运行了，结果不交给模型。",
              "It fails closed: the tool has run, but its result is kept from the model.")


def render_hook(event: dict) -> str:
    """One run of one hook: what it got, what it returned (the result's changes as a diff), its error
    and what the error did, and what it printed (a hook keeps no state: its log is its print)."""
    answer, problem = event.get("answer"), event.get("problem")
    if event.get("asking"):        # not a run: the loop stops here until a person answers
        answered = tr("（回答见下面这次调用的结果）", " (the result of the call below says the answer)")
        return (f'<div class="tw-hook"><div class="tw-hook-head">⏸ {esc(event.get("event"))} · '
                f'<b>{esc(event.get("name"))}</b></div><div>{tr("要先问人：", "Asks a person first: ")}'
                f'{esc(event["asking"])}{answered}</div></div>')
    ms = milliseconds(event.get("duration_ms"))
    fail = f'fail {event.get("fail")}{tr("：", ": ")}{now(on_error(str(event.get("fail"))))}'
    head = (f'<div class="tw-hook-head">🪝 {esc(event.get("event"))} · <b>{esc(event.get("name"))}</b> '
            f'<span class="tw-meta">{esc(fail)} · {ms}</span></div>')
    body = fold(tr("钩子拿到的输入", "What the hook got"), pre(event.get("payload")))
    if problem:
        body += (f'<div class="tw-bad">{tr("出错：", "Error: ")}{esc(problem)}</div>'
                 f'<div>{esc(now(hook_error_effect(event)))}</div>')
    elif answer is None:
        body += f"<div>{tr('没意见（返回 None 或空 dict）：什么都不改。', 'No opinion (returned None or an empty dict): nothing changes.')}</div>"
    else:
        body += f"<div>{tr('返回：', 'Returned:')}</div>{pre(answer)}"
        got = "error" if event.get("event") == hooks.FAILED else "tool_response"     # a failure's text, or a result
        before = (event.get("payload") or {}).get(got)
        after = answer.get("updatedToolOutput") if isinstance(answer, dict) else None
        if isinstance(before, str) and isinstance(after, str):
            lines = difflib.unified_diff(before.splitlines(), after.splitlines(), got, "updatedToolOutput", lineterm="")
            said = (tr("它换掉的失败文本（diff）：", "The failure's text it replaced (diff):") if got == "error"
                    else tr("它换掉的结果（diff）：", "The result it replaced (diff):"))
            body += f"<div>{said}</div>{diff_html(chr(10).join(lines))}"
    if event.get("printed"):
        body += f"<div>{tr('它打印的：', 'What it printed:')}</div>{pre(event['printed'])}"
    return f'<div class="tw-hook{" tw-hook-failed" if problem else ""}">{head}{body}</div>'


ARROWS = {"send": tr("→ 客户端发给服务器", "→ client to server"), "receive": tr("← 服务器发给客户端", "← server to client")}
KINDS = {"request": tr("请求", "request"), "notification": tr("通知", "notification"), "result": tr("响应", "response"),
         "error": tr("JSON-RPC 错误", "JSON-RPC error")}


def render_rpc(event: dict) -> str:
    """One JSON-RPC message between the MCP client and server: direction, kind, method, id,
    the moment (ms since the connection opened) and its params / result / error. A tool that
    failed (result.isError) and a protocol error are marked as failures."""
    result = event.get("result") if isinstance(event.get("result"), dict) else None
    failed = event.get("kind") == "error" or bool(result and result.get("isError"))
    mark = ""
    if event.get("kind") == "error":
        mark = f" <span class=tw-bad>{tr('✗ 协议层出错', '✗ protocol error')}</span>"
    elif failed:
        mark = (" <span class=tw-bad>" + tr("✗ isError: true（工具失败，结果照样回给模型）",
                                            "✗ isError: true (the tool failed; the result still goes back to the model)") + "</span>")
    at = event.get("at_ms")
    when = f"{float(at):.0f} ms" if isinstance(at, (int, float)) else "?"
    ident = "" if event.get("id") is None else f" id={esc(event.get('id'))}"
    head = (f'<div class="tw-rpc-head">{esc(now(ARROWS.get(event.get("direction"), event.get("direction"))))} · '
            f'{esc(now(KINDS.get(event.get("kind"), event.get("kind"))))} <b>{esc(event.get("method") or "?")}</b>'
            f'{ident} <span class="tw-meta">@ {when}</span>{mark}</div>')
    body = {"request": "params", "notification": "params", "result": "result", "error": "error"}.get(event.get("kind"))
    shown = fold(body, pre(event.get(body))) if body and event.get(body) is not None else ""
    return f'<div class="tw-rpc{" tw-rpc-failed" if failed else ""}">{head}{shown}</div>'


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


def render_round(turn: Any, events: list[dict], labels: dict, last: bool, check_arguments: bool = True,
                 text_protocol: bool = True, children: dict | None = None, parsed: bool = False) -> str:
    """One round. `parsed`: the run reads replies as text (it has parse events): a request without
    tools is then a text protocol's, not a native loop's that offered none."""
    request = next((e for e in events if e.get("type") == "request"), None)
    response = next((e for e in events if e.get("type") == "response"), None)
    if labels is HANDSHAKE and request is not None and not request.get("tools") and not parsed:
        labels = WITHOUT_TOOLS
    calls = [e for e in events if e.get("type") == "tool_call"]
    results = {e.get("id"): e for e in events if e.get("type") == "tool_result"}
    meta = []
    if response:
        meta.append(tr("模型 ", "model ") + seconds(response.get("duration_ms")))
    tokens = cost_view.round_meta(request, response, text_protocol)
    if tokens:
        meta.append(tokens)
    if calls:
        meta.append(tr("调用 ", "calls ") + ", ".join(str(c.get("name")) for c in calls))
    plans = [e for e in events if e.get("type") == "plan"]
    if any(not e.get("accepted") for e in plans):
        meta.append(tr("计划被退回", "plan refused"))
    if any(e.get("replanned") for e in plans):
        meta.append(tr("🔁 改了计划", "🔁 replanned"))
    hook_runs = [e for e in events if e.get("type") == "hook" and not e.get("asking")]
    if hook_runs:
        meta.append(tr("钩子 {n} 次", "hooks {n}×").format(n=len(hook_runs)))
    shrunk = [e for e in events if e.get("type") == "context"]
    if shrunk:
        meta.append(tr("{before} → {after} 个 token", "{before} → {after} tokens").format(
            before=shrunk[0].get("before_tokens"), after=shrunk[0].get("after_tokens")))
    mounted = [e for e in events if e.get("type") == "skills"]
    title = (tr("发出之前：收拾上下文", "Before sending: the context shrunk") if shrunk else
             tr("发出之前：技能", "Before sending: the skills") if mounted else
             tr("开始前", "Before the start") if turn is None else tr("第 {n} 轮", "Round {n}").format(n=turn))
    parts = [f'<summary>{esc(title)} <span class="tw-meta">{esc(" · ".join(meta))}</span></summary>']
    parts += [f'<div class="tw-step">{context_view.render(e)}</div>' for e in shrunk]
    parts += [f'<div class="tw-step">{skills_view.render(e)}</div>' for e in mounted]
    # MCP: the messages before this round's request (initialize, tools/list) open it; tools/call
    # messages go inside their call; any other message is listed after the calls.
    at = events.index(request) if request in events else len(events)
    connect = [e for e in events[:at] if e.get("type") == "rpc"]
    wire, rest = rpc_by_call(calls, [e for e in events[at:] if e.get("type") == "rpc"])
    if connect:
        parts.append(f'<div class="tw-step"><div class="tw-label">{esc(now(labels.get("connect", "JSON-RPC")))}</div>'
                     + "".join(render_rpc(e) for e in connect) + "</div>")

    if request:
        messages = request.get("messages") or []
        tools = request.get("tools")
        body = fold(tr("messages（{n} 条）", "messages ({n})").format(n=len(messages)), pre(messages), open_=last)
        if tools:
            body += fold(tr("tools（{n} 个）", "tools ({n})").format(n=len(tools)), pre(tools))
        body += fold(tr("参数", "request parameters"), pre(request.get("params") or {}))
        parts.append(f'<div class="tw-step"><div class="tw-label">{esc(now(labels["request"]))}</div>{body}</div>')
        parts.append(first_call_view.render_request(request))     # 8.1: the body raw, and as SDK code

    if response:
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
        parts.append(f'<div class="tw-step"><div class="tw-label">{esc(now(labels["response"]))}</div>{body}</div>')
    elif any(e.get("type") == "delta" for e in events):
        parts.append(f'<div class="tw-step"><div class="tw-label">{tr("流式接收中…", "Streaming in…")}</div>'
                     f'{pre(streamed_so_far(events))}</div>')

    parts.append(first_call_view.render_arrival(events))      # 8.1: the stream's time axis, finish_reason
    for event in events:
        if event.get("type") == "parse":
            raw_text = (response or {}).get("text") or ((response or {}).get("message") or {}).get("content") or ""
            parts.append(render_parse(event, str(raw_text)))

    hooked: dict = {}
    gated: dict = {}
    for event in events:
        if event.get("type") == "hook":
            hooked.setdefault((event.get("turn"), event.get("id")), []).append(event)
        elif event.get("type") == "permission":
            gated.setdefault((event.get("turn"), event.get("id")), []).append(event)
    if calls:
        body = "".join(render_call(c, results.get(c.get("id")), labels, wire.get((c.get("turn"), c.get("id")), []),
                                   unsaid_notes(c, request, response) if check_arguments else [],
                                   hooked.get((c.get("turn"), c.get("id")), []), child_of(children, c),
                                   gated.get((c.get("turn"), c.get("id")), []))
                       for c in calls)
        parts.append(f'<div class="tw-step"><div class="tw-label">{esc(now(labels["execute"]))}</div>{body}</div>')
    plans = [e for e in events if e.get("type") == "plan"]
    if plans:
        parts.append('<div class="tw-step">' + "".join(plan_view.render(e) for e in plans) + "</div>")
    if rest:
        parts.append(f'<div class="tw-step"><div class="tw-label">{esc(now(labels.get("wire", "JSON-RPC")))}</div>'
                     + "".join(render_rpc(e) for e in rest) + "</div>")
    # Results without a matching call (e.g. a text protocol that feeds back a notice).
    called = {c.get("id") for c in calls}
    for event in events:
        if event.get("type") == "tool_result" and event.get("id") not in called:
            parts.append(f'<div class="tw-step"><div class="tw-label">{tr("回填", "Sent back")}</div>'
                         f'{pre(event.get("message") or event.get("content"))}</div>')

    for event in events:
        if event.get("type") == "final":
            parts.append(f'<div class="tw-step"><div class="tw-label">{tr("最终回答", "Final answer")}</div>'
                         f'<div class="tw-final">{esc(cut(str(event.get("content") or "")))}</div></div>')
        elif event.get("type") == "error":
            failed = esc(error_title(event))
            parts.append(f'<div class="tw-step"><div class="tw-error"><b>{failed}</b>{tr("：", ": ")}'
                         f'{esc(event.get("message"))}</div></div>')
    # A round whose calls had hooks stays open (or whose failure hooks never saw: unseen_by), and so do the
    # shrunk context and a round that started a sub-agent: they are the lesson.
    opened = (last or bool(hook_runs) or bool(shrunk) or any(child_of(children, c) for c in calls)
              or any(r.get("unseen_by") for r in results.values()))
    return f'<details class="tw-round"{" open" if opened else ""}>' + "".join(parts) + "</details>"


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


def render_chat(events: list[dict], lesson: str = "function_calling", check_arguments: bool = True) -> list[dict]:
    """Messages for gr.Chatbot: the question, each model step and tool call as a
    collapsible step (metadata title), tool results nested under their call, the answer.
    A call's step says which arguments nobody said, as the protocol view does (check_arguments)."""
    chat: list[dict] = []
    events = loop_events.own(events)    # a sub-agent's steps are in the protocol view, under its call
    question = question_of(events)
    if question is not None:
        chat.append({"role": "user", "content": question})
    # Keyed by (turn, id): some backends reuse call ids from one round to the next.
    results = {(e.get("turn"), e.get("id")): e for e in events if e.get("type") == "tool_result"}
    request = answered = None
    for event in events:
        kind = event.get("type")
        if kind == "request":
            request = event
        elif kind == "response":
            answered = event
            chat.extend(chat_notes(event))
            text = event.get("text") if event.get("text") is not None else (event.get("message") or {}).get("content")
            if text and (lesson == "react" or (event.get("message") or {}).get("tool_calls")):
                chat.append({"role": "assistant", "content": cut(str(text), 4000),
                             "metadata": {"title": tr("💭 第 {n} 轮模型输出", "💭 The model's output in round {n}").format(
                                              n=event.get("turn")), "status": "done",
                                          "duration": round(float(event.get("duration_ms") or 0) / 1000, 2)}})
        elif kind == "tool_call":
            call_id = f"call-{event.get('turn')}-{event.get('id')}"
            result = results.get((event.get("turn"), event.get("id")))
            shown_args = result.get("arguments") if result else event.get("arguments")
            unsaid = "".join(f"\n\n🔎 {note}" for note in (unsaid_notes(event, request, answered)
                                                            if check_arguments else []))
            chat.append({"role": "assistant",
                         "content": tr("参数：", "Arguments:") + "\n```json\n" + cut(to_json(shown_args if shown_args is not None else event.get("raw_arguments")), 3000) + "\n```" + unsaid,
                         "metadata": {"title": tr("🛠️ 调用 {name}", "🛠️ Call {name}").format(name=event.get("name")),
                                      "id": call_id,
                                      "status": "done" if result else "pending"}})
            if result:
                chat.append({"role": "assistant", "content": cut(str(result.get("content", "")), 3000),
                             "metadata": {"title": tr("✅ 工具结果", "✅ Tool result") if result.get("ok") else
                                      tr("❌ 工具出错 ", "❌ Tool error ") + str(result.get("error_code") or ""),
                                          "parent_id": call_id, "status": "done",
                                          "duration": round(float(result.get("duration_ms") or 0) / 1000, 3)}})
        elif kind == "plan":
            chat.append({"role": "assistant", "content": cut(plan_view.text(event), 3000),
                         "metadata": {"title": plan_view.headline_of(event), "status": "done"}})
        elif kind == "context":
            chat.append({"role": "assistant", "content": "\n".join(event.get("notes") or []) or context_view.line(event),
                         "metadata": {"title": "📦 " + context_view.line(event), "status": "done"}})
        elif kind == "final":
            chat.append({"role": "assistant", "content": cut(str(event.get("content") or ""))})
        elif kind == "error":
            chat.append({"role": "assistant", "content": str(event.get("message") or ""),
                         "metadata": {"title": "⚠️ " + error_title(event)}})
    return chat
