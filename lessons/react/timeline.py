"""8.2 ReAct's part of the timeline: what the parser read from a reply (the regex or the JSON it found,
each group coloured where it sits in the raw text), and what a naive regex reads from the same reply."""
from __future__ import annotations

from typing import Any

from i18n import tr
from lessons.timeline import Round, register
from lessons.html_bits import cut, esc


@register("parse")
def draw_parse(event: dict, round_: Round) -> str:
    """A parse event under the reply it read (the round's response)."""
    response = round_.response or {}
    raw_text = response.get("text") or (response.get("message") or {}).get("content") or ""
    return render_parse(event, str(raw_text))


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
