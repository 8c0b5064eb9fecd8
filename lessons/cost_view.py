"""The 「模型收到什么 · tokens」 view of a run: the exact text the model gets as its tools
(the `tools` JSON of Function Calling, or the system prompt of ReAct / JSON-from-text),
what each request costs by a real tokenizer, the tools' share of it, and the provider's own
`usage` next to it. Counting lives in token_count.py; this only draws."""
from __future__ import annotations

import html

from i18n import now, tr
from lessons import token_count

KINDS = {
    "tools": tr("请求里的 tools 参数（JSON，按 SDK 发送的紧凑格式）",
                "the request's tools parameter (JSON, compact as the SDK sends it)"),
    "system": tr("系统提示词（ReAct / JSON 模式不发送 tools：工具写在这段文字里）",
                 "the system prompt (ReAct / JSON mode send no tools: the tools are written in this text)"),
    "none": tr("这次请求没有带任何工具说明", "this request carried no description of any tool"),
}
ESTIMATE = tr("（离线模型按字数粗估）", " (the offline model's rough estimate from the length)")
CSS = """
.tw-costs table { border-collapse: collapse; margin: 6px 0; font-size: 0.9em; }
.tw-costs th, .tw-costs td { border: 1px solid var(--border-color-primary); padding: 3px 8px; text-align: right; }
.tw-costs th:first-child, .tw-costs td:first-child { text-align: left; }
.tw-costs .tw-cost-note { color: var(--body-text-color-subdued); font-size: 0.88em; margin: 4px 0; }
.tw-costs pre { font-family: var(--font-mono); font-size: 0.8em; white-space: pre-wrap; word-break: break-word;
  background: var(--background-fill-secondary); border-radius: 6px; padding: 8px; max-height: 360px; overflow: auto; }
"""


def esc(value) -> str:
    return html.escape("" if value is None else str(value))


def _num(value) -> str:
    return "—" if value is None else str(value)


def tokenizer_note(provider: str | None) -> str:
    if not token_count.available():
        return tr("没有可用的分词器（tiktoken 未安装），只能显示服务端报告的 usage。",
                  "No tokenizer available (tiktoken is not installed): only the usage the server reports is shown.")
    if (provider or "") == "openai":
        return tr("计数用 {t}：与 gpt-4 / gpt-3.5 系列一致，更新的模型用的分词器略有不同。",
                  "Counted with {t}: as the gpt-4 / gpt-3.5 series count; newer models' tokenizers differ a little."
                  ).format(t=now(token_count.TOKENIZER_LABEL))
    return tr("计数用 {t}，是 OpenAI 分词器的计数；当前提供方（{p}）用自己的分词器，数字只用来比较大小，以服务端 usage 为准。",
              "Counted with {t}, OpenAI's tokenizer; the current provider ({p}) uses its own, so the numbers are for "
              "comparing sizes only: the server's usage is what counts.").format(
                  t=now(token_count.TOKENIZER_LABEL), p=provider or tr("未知", "unknown"))


def usage_cell(usage: dict | None) -> str:
    if usage is None:
        return tr("未报告", "not reported")
    text = f"{_num(usage['prompt'])} / {_num(usage['completion'])}"
    return text + now(ESTIMATE) if usage["estimate"] else text


def row_name(row: dict, turn: str) -> str:
    """A row's first cell: its round, or the context summary's model call (token_count.per_turn)."""
    if row["turn"] == "summary":
        return esc(tr("写摘要（多出的一次模型调用）", "Writing the summary (one more model call)"))
    return turn.format(n=esc(row["turn"]))


def render(events: list[dict], provider: str | None = None, lesson: str | None = None) -> str:
    """The view of a run of `lesson` (its loops tell what its system prompt is, token_count.is_text_protocol)."""
    rows = token_count.per_turn(events, lesson)
    if not rows:
        return ('<div class="tw-costs"><div class="tw-cost-note">'
                + tr("还没有运行。运行后这里显示模型实际收到的工具说明和 token 数。",
                     "Nothing has run yet. After a run, here are the tool descriptions the model really received, and "
                     "their tokens.") + "</div></div>")
    last = next((row for row in reversed(rows) if row["turn"] != "summary"), rows[-1])
    share = "—" if last["share"] is None else f"{last['share'] * 100:.0f}%"
    turn = tr("第 {n} 轮", "Round {n}")
    head = (f"<div><b>{tr('模型实际收到的工具说明', 'The tool descriptions the model really received')}</b>"
            f"{tr('：', ': ')}{esc(now(KINDS[last['tools_kind']]))}</div>"
            f"<table class='tw-cost-summary'><tr><th>{row_name(last, tr('第 {n} 轮请求', 'Request of round {n}'))}"
            f"</th><th>tokens</th></tr>"
            f"<tr><td>{tr('工具说明', 'Tool descriptions')}</td><td class='tw-cost-tools'>{_num(last['tools'])}</td></tr>"
            f"<tr><td>{tr('对话 messages（含每条消息的格式开销）', 'Conversation messages (with each message’s format overhead)')}"
            f"</td><td>{_num(last['conversation'])}</td></tr>"
            f"<tr><td>{tr('输入合计', 'Input in all')}</td><td class='tw-cost-input'>{_num(last['input'])}</td></tr>"
            f"<tr><td>{tr('工具说明占输入', 'Tool descriptions’ share of the input')}</td>"
            f"<td class='tw-cost-share'>{share}</td></tr></table>")
    table = [f"<table class='tw-cost-turns'><tr><th>{tr('轮', 'Round')}</th><th>{tr('输入（分词器计数）', 'Input (tokenizer count)')}"
             f"</th><th>{tr('其中工具说明', 'of which tool descriptions')}</th>"
             f"<th>{tr('服务端 usage 输入 / 输出', 'Server usage input / output')}</th></tr>"]
    for row in rows:
        table.append(f"<tr><td>{row_name(row, turn)}</td><td>{_num(row['input'])}</td><td>{_num(row['tools'])}</td>"
                     f"<td>{esc(usage_cell(row['usage']))}</td></tr>")
    table.append("</table>")
    notes = [tokenizer_note(provider)]
    if last["tools_kind"] != "none":     # a run that sends no tools (the context lesson's) has none to repeat
        notes.append(tr("工具说明每一轮都要重新发送：轮数越多，它占的总成本越多。",
                        "The tool descriptions are sent again in every round: the more rounds, the more of the total "
                        "cost."))
    if last["tools_kind"] == "tools":
        notes.append(tr("Function Calling 的 tools 在服务端会被转写进提示词，实际计费与 JSON 的计数接近但不完全相同。",
                        "Function Calling's tools are rewritten into the prompt on the server: what is billed is close "
                        "to the JSON's count, not the same."))
    body = "".join(f"<div class='tw-cost-note'>{esc(n)}</div>" for n in notes)
    text = ""
    if last["tools_kind"] != "none":
        size = tr("原文（{n} 个字符）", "The text ({n} characters)").format(n=len(last["tools_text"]))
        text = f"<details open><summary>{size}</summary><pre class='tw-cost-text'>{esc(last['tools_text'])}</pre></details>"
    return f'<div class="tw-costs">{head}{"".join(table)}{body}{text}</div>'


def round_meta(request: dict | None, response: dict | None, text_protocol: bool = True) -> str:
    """The token part of a round's title in the protocol view: the provider's usage (marked
    when it is only the offline model's estimate) and the tokenizer's count of the request."""
    parts = []
    usage = token_count.reported_usage(response)
    if usage is not None:
        parts.append(tr("usage 输入 {i} / 输出 {o}", "usage input {i} / output {o}").format(
            i=_num(usage["prompt"]), o=_num(usage["completion"])) + (now(ESTIMATE) if usage["estimate"] else ""))
    if request is not None:
        cost = token_count.request_cost(request, text_protocol)
        if cost["input"] is not None:
            parts.append(tr("分词器计数 输入 {i}（工具说明 {t}）", "tokenizer count input {i} (tools {t})").format(
                i=cost["input"], t=cost["tools"]))
    return " · ".join(parts)
