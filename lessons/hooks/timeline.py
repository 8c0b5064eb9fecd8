"""8.7 Hooks' part of the timeline: one run of one hook, drawn inside the call it wrapped."""
from __future__ import annotations

import difflib

import hooks

from i18n import now, tr
from lessons.html_bits import esc, fold, milliseconds, pre
from lessons.timeline import SUMMARY, Round, Said, diff_html, register


@register("hook")
def draw_hook(event: dict, round_: Round) -> str:
    return render_hook(event)


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


@register("hook", SUMMARY)
def hooks_said(round_: Round) -> Said | None:
    """How many hooks ran (a question put to a person is no run). A round whose calls had hooks stays open,
    and so does one with a failure hooks never saw (unseen_by): they are the lesson."""
    runs = [e for e in round_.of("hook") if not e.get("asking")]
    unseen = any(r.get("unseen_by") for r in round_.results.values())
    if not runs and not unseen:
        return None
    return Said(meta=(tr("钩子 {n} 次", "hooks {n}×").format(n=len(runs)),) if runs else (), keeps_open=True)
