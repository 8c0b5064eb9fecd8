"""8.6 Permissions' part of the timeline: a rule's decision on a call, drawn inside that call before it runs."""
from __future__ import annotations

from i18n import now, tr
from lessons.html_bits import esc
from lessons.rule_reasons import reason_in_english
from lessons.timeline import Round, register

PERMISSION_WORDS = {"allow": tr("放行", "allowed"), "ask": tr("先问人", "asks a person"), "deny": tr("拒绝", "denied")}

@register("permission")
def draw_permission(event: dict, round_: Round) -> str:
    return render_permission(event)


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
