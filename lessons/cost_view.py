"""The 「模型收到什么 · tokens」 view of a run: the exact text the model gets as its tools
(the `tools` JSON of Function Calling, or the system prompt of ReAct / JSON-from-text),
what each request costs by a real tokenizer, the tools' share of it, and the provider's own
`usage` next to it. Counting lives in token_count.py; this only draws."""
from __future__ import annotations

import html

from lessons import token_count

KINDS = {
    "tools": "请求里的 tools 参数（JSON，按 SDK 发送的紧凑格式）",
    "system": "系统提示词（ReAct / JSON 模式不发送 tools：工具写在这段文字里）",
    "none": "这次请求没有带任何工具说明",
}
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
        return "没有可用的分词器（tiktoken 未安装），只能显示服务端报告的 usage。"
    if (provider or "") == "openai":
        return f"计数用 {token_count.TOKENIZER_LABEL}：与 gpt-4 / gpt-3.5 系列一致，更新的模型用的分词器略有不同。"
    return (f"计数用 {token_count.TOKENIZER_LABEL}，是 OpenAI 分词器的计数；当前提供方"
            f"（{provider or '未知'}）用自己的分词器，数字只用来比较大小，以服务端 usage 为准。")


def usage_cell(usage: dict | None) -> str:
    if usage is None:
        return "未报告"
    text = f"{_num(usage['prompt'])} / {_num(usage['completion'])}"
    return text + "（离线模型按字数粗估）" if usage["estimate"] else text


def render(events: list[dict], provider: str | None = None) -> str:
    rows = token_count.per_turn(events)
    if not rows:
        return '<div class="tw-costs"><div class="tw-cost-note">还没有运行。运行后这里显示模型实际收到的工具说明和 token 数。</div></div>'
    last = rows[-1]
    share = "—" if last["share"] is None else f"{last['share'] * 100:.0f}%"
    head = (f"<div><b>模型实际收到的工具说明</b>：{esc(KINDS[last['tools_kind']])}</div>"
            f"<table class='tw-cost-summary'><tr><th>第 {esc(last['turn'])} 轮请求</th><th>tokens</th></tr>"
            f"<tr><td>工具说明</td><td class='tw-cost-tools'>{_num(last['tools'])}</td></tr>"
            f"<tr><td>对话 messages（含每条消息的格式开销）</td><td>{_num(last['conversation'])}</td></tr>"
            f"<tr><td>输入合计</td><td class='tw-cost-input'>{_num(last['input'])}</td></tr>"
            f"<tr><td>工具说明占输入</td><td class='tw-cost-share'>{share}</td></tr></table>")
    table = ["<table class='tw-cost-turns'><tr><th>轮</th><th>输入（分词器计数）</th><th>其中工具说明</th>"
             "<th>服务端 usage 输入 / 输出</th></tr>"]
    for row in rows:
        table.append(f"<tr><td>第 {esc(row['turn'])} 轮</td><td>{_num(row['input'])}</td><td>{_num(row['tools'])}</td>"
                     f"<td>{esc(usage_cell(row['usage']))}</td></tr>")
    table.append("</table>")
    notes = [tokenizer_note(provider),
             "工具说明每一轮都要重新发送：轮数越多，它占的总成本越多。",
             "Function Calling 的 tools 在服务端会被转写进提示词，实际计费与 JSON 的计数接近但不完全相同。"]
    body = "".join(f"<div class='tw-cost-note'>{esc(n)}</div>" for n in notes)
    text = f"<details open><summary>原文（{len(last['tools_text'])} 个字符）</summary><pre class='tw-cost-text'>{esc(last['tools_text'])}</pre></details>"
    return f'<div class="tw-costs">{head}{"".join(table)}{body}{text}</div>'


def round_meta(request: dict | None, response: dict | None) -> str:
    """The token part of a round's title in the protocol view: the provider's usage (marked
    when it is only the offline model's estimate) and the tokenizer's count of the request."""
    parts = []
    usage = token_count.reported_usage(response)
    if usage is not None:
        parts.append(f"usage 输入 {_num(usage['prompt'])} / 输出 {_num(usage['completion'])}"
                     + ("（离线模型按字数粗估）" if usage["estimate"] else ""))
    if request is not None:
        cost = token_count.request_cost(request)
        if cost["input"] is not None:
            parts.append(f"分词器计数 输入 {cost['input']}（工具说明 {cost['tools']}）")
    return " · ".join(parts)
