"""The skills lesson's picture of a run's start: the skills read, the malformed ones and what is
wrong with each, and what the system prompt costs either way. The page's panel shows it while the
student edits; the timeline shows it as the step before round 1."""
from __future__ import annotations

from typing import Any

from i18n import now, tr
from lessons.html_bits import esc

WAYS = {"catalogue": tr("只列目录，用 load_skill 读正文", "the catalogue only; load_skill reads a body"),
        "pasted": tr("正文全贴进 system 提示词（课程仓库的写法）", "every body pasted into the system prompt (the course's way)")}


# The memory table's columns: given to the gr.Dataframe as built (an English page gets them in English,
# serving/page_language.py) and with every update, in the tab's language (an update carries its headers).
MEMORY_HEADERS = (tr("第几条", "No."), tr("事实", "fact"), tr("来源", "source"), tr("记下的时间", "saved at"))


def memory_table(rows: list[list]) -> dict:
    """The memory table's value: its rows under the headers of the tab's language."""
    return {"headers": [str(now(header)) for header in MEMORY_HEADERS], "data": rows}


def _items(value: Any) -> list:
    return value if isinstance(value, list) else []


def render(event: dict) -> str:
    """The whole picture of one skills event (HTML); every text in it came from a student."""
    cost = event.get("system_tokens") if isinstance(event.get("system_tokens"), dict) else {}
    way = event.get("way") if event.get("way") in WAYS else "catalogue"
    parts = [f'<div class="tw-context-head">{esc(tr("这次的写法：{way}", "This run: {way}").format(way=WAYS[way]))}</div>',
             '<div class="tw-skills-cost">' + esc(tr(
                 "system 提示词：只列目录 {catalogue} 个 token · 全贴进来 {pasted} 个 token（context.tokens 数的估计）",
                 "System prompt: the catalogue {catalogue} tokens · every body {pasted} tokens (estimated with "
                 "context.tokens)").format(catalogue=cost.get("catalogue", "?"), pasted=cost.get("pasted", "?")))
             + "</div>"]
    found = [s for s in _items(event.get("skills")) if isinstance(s, dict)]
    rows = "".join(f"<tr><td><code>{esc(s.get('name'))}</code></td><td>{esc(s.get('description'))}</td></tr>"
                   for s in found)
    parts.append(f'<table class="tw-context-table"><thead><tr><th>name</th><th>description</th></tr></thead>'
                 f"<tbody>{rows}</tbody></table>" if found else
                 f'<div class="tw-error">{esc(tr("一个能用的技能也没有。", "Not one usable skill."))}</div>')
    parts += [f'<div class="tw-error">⚠️ {esc(problem)}</div>' for problem in _items(event.get("problems"))]
    return '<div class="tw-context tw-skills">' + "".join(parts) + "</div>"
