"""从模型写的文字里读出动作：ReAct 的正则解析器和纯文本 JSON 的解析器。

两个文本协议循环（react_loop.py、json_loop.py）用它们读模型的回复；accents.py 也用它们：
请求带了 tools、模型却把调用写成了文字时，照同样的读法把调用读出来。
两个解析器都交回 parse 事件的内容：{"ok", "kind": "action" / "final" / "none", "pattern", "groups",
"span", "notes", "reason"}——用了什么规则、匹配到哪、容忍了哪些不规范的写法、读不出来时为什么。

ReAct（parse_react）。模型每轮写：
    Thought: 我需要查北京的天气
    Action: get_weather[{"city": "北京"}]
真实模型不会老老实实守格式，解析器要扛得住这些：
  - **Action:** 这样的 markdown 粗体、`反引号`；
  - <think>...</think> 思考块（里面的 "Action:" 不能当真）；
  - 模型不等工具执行就自己编一个 Observation：从那里截断，并在 parse 事件里记一笔；
  - 一次写了好几步：只执行第一个 Action，其余记下来；
  - 参数包在 ```json 代码块里，或写成 "Action: 工具名" 换行再跟 JSON。
为了看清这些容错值不值得，这里还留着一个"朴素解析"（NAIVE_ACTION / NAIVE_FINAL / parse_naive）：
大家第一次写 ReAct 时的样子。parse 事件的 naive 一项记下它读同一段回复会读出什么，和上面的解析器对照。

纯文本里的 JSON（parse_json_reply）。约定是 {"tool": "工具名", "arguments": {...}} 或 {"answer": "..."}，
可模型往往不会只输出 JSON：前面来一句"好的"、包在 ```json 里、一次写好几个……
所以不能直接 json.loads 整段文字，而是从每个 "{" 开始试着解析（json.JSONDecoder.raw_decode），
找出文字里所有完整的 JSON 对象，取第一个有 tool 或 answer 的。一个都解析不出来时，带上解析器的报错原话。

只用标准库，不导入任何循环：谁都可以导入它。

    python code/text_parsers.py      # 几段回复，各自读出什么
"""
from __future__ import annotations

import json
import re

# ═══════════════════════════════════════════════════════════════ ReAct

ACTION = re.compile(r"""
    \**Action\**\s*[:：]\s*\**\s*`*\s*           # Action: （也接受 **Action:** 和反引号）
    (?P<tool>[A-Za-z_][\w.\-]*)                  # 工具名
    (?: \s*\[(?P<args>.*?)\]\s*`*[ \t]*(?=\n|$)  # 写法一：工具名[参数]
      | `*[ \t]*\n\s*(?:\**Action\s*Input\**\s*[:：]\s*)?   # 写法二：换行后跟 JSON
        (?P<input>```[a-zA-Z]*\s*\{.*?\}\s*```|\{.*?\}(?=\s*(?:\n|$)))
    )""", re.S | re.X)
FINAL = re.compile(r"\**Final\s*Answer\**\s*[:：]\s*\**\s*(?P<answer>.*)", re.S | re.I)
FINISH = re.compile(r"Finish\s*\[(?P<answer>.*)\]", re.S)
THOUGHT = re.compile(r"\**Thought\**\s*[:：]\s*\**\s*(?P<thought>.*?)\s*(?=\n\s*\**(?:Action|Final)|$)", re.S)
OBSERVATION = re.compile(r"^[ \t]*\**Observation\**\s*[:：]", re.M)
THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S)

# 朴素解析：第一版通常这样写——先看有没有 Final Answer，没有再找 Action；参数可能换行，就加了 re.S。
# 它在标准格式上完全正确，一遇到真实模型的小毛病就出错：
#   **Action:** 粗体、```json 代码块 -> 没有匹配；模型编了 Observation 和 Final Answer -> 把编的答案当成最终回答；
#   一次写了两个 Action -> 贪婪的 (.*) 一直吞到最后一个 "]"，参数里混进了第二步。
NAIVE_ACTION = re.compile(r"^Action: (\w+)\[(.*)\]$", re.M | re.S)
NAIVE_FINAL = re.compile(r"Final Answer: (.*)", re.S)


def mask_think(text: str) -> tuple[str, list[str]]:
    """把 <think> 块换成等长空格：里面的内容不参与匹配，而 span 仍然对得上原文。"""
    notes = []
    if "</think>" in text and "<think>" not in text:       # 有的模型只输出结尾标签
        end = text.index("</think>") + len("</think>")
        text, notes = " " * end + text[end:], ["回复开头的思考内容（到 </think> 为止）已忽略"]
    masked = THINK.sub(lambda m: " " * len(m.group()), text)
    if masked != text:
        notes.append("<think> 思考块里的内容已忽略")
    return masked, notes


def parse_react(text: str) -> tuple[dict, int | None]:
    """-> (parse 事件的内容, 历史里保留到哪个位置)。kind: action / final / none。
    内容里的 naive 是朴素解析读同一段文字的结果（见 compare_naive），只给人看，循环不用它。"""
    parsed, cut = parse_robust(text)
    return {**parsed, "naive": compare_naive(parse_naive(text or ""), parsed)}, cut


def parse_robust(text: str) -> tuple[dict, int | None]:
    masked, notes = mask_think(text or "")
    action, final = ACTION.search(masked), FINAL.search(masked) or FINISH.search(masked)
    if action and (not final or action.start() < final.start()):
        cut = None
        invented = OBSERVATION.search(masked, action.end())
        if invented:
            cut = invented.start()
            notes.append(f"模型在第 {cut} 个字符处自己编造了 Observation，已从那里截断：真正的结果要等工具执行后才有")
        more = len(ACTION.findall(masked[action.end():cut]))
        if more:
            notes.append(f"这次回复里还有 {more} 个 Action，只执行第一个，其余的等拿到结果再说")
        if final and cut is None:
            notes.append("Action 之后还写了 Final Answer：先执行工具，那个回答忽略")
        head = masked[action.start():action.end("tool")]
        if "**" in head or "`" in head:
            notes.append("Action 带了 markdown 粗体或反引号，已照常识别")
        thought = THOUGHT.search(masked[:action.start()])
        args = action.group("args") if action.group("args") is not None else action.group("input")
        return {"ok": True, "kind": "action", "pattern": ACTION.pattern,
                "groups": {"thought": thought.group("thought") if thought else "", "tool": action.group("tool"),
                           "args": args.strip()},
                "span": [action.start(), action.end()], "notes": notes, "reason": None}, cut
    if final:
        pattern = FINAL.pattern if final.re is FINAL else FINISH.pattern
        answer = final.group("answer")
        invented = OBSERVATION.search(answer)
        answer = answer[:invented.start()] if invented else answer
        return {"ok": True, "kind": "final", "pattern": pattern, "groups": {"answer": answer.strip()},
                "span": [final.start(), final.end()], "notes": notes, "reason": None}, None
    return {"ok": False, "kind": "none", "pattern": ACTION.pattern, "groups": {}, "span": None, "notes": notes,
            "reason": why_no_match(masked)}, None


def why_no_match(masked: str) -> str:
    """解析失败的原因，尽量具体：这句话会作为格式错误发回给模型，它照着改。"""
    written = re.search(r"\**Action\**\s*[:：]\s*\**\s*`*\s*([A-Za-z_][\w.\-]*)(.{0,1})", masked)
    expected = "应该写成 \"Action: 工具名[JSON 参数]\"，或者 \"Final Answer: 回答\""
    if written is None:
        return f"回复里没有 \"Action:\" 行，也没有 \"Final Answer:\"：只说了想法，没说要调用哪个工具；{expected}"
    tool, after = written.group(1), written.group(2)
    if after == "(":
        return f"Action: {tool} 后面用的是圆括号 {tool}(...)，不是方括号 {tool}[...]；{expected}"
    if re.search(r"Action\s*Input\s*[:：]", masked):
        return f"Action: {tool} 后面没有 [参数]，下一行的 Action Input 也不是 JSON 对象；{expected}"
    return f"找到了 Action: {tool}，但后面没有 [参数]，也没有紧跟一个 JSON 对象；{expected}"


def parse_naive(text: str) -> dict:
    """朴素解析：-> {"kind": "final" / "action" / "none", "tool", "args", "answer"}。"""
    final = NAIVE_FINAL.search(text)
    if final:
        return {"kind": "final", "tool": None, "args": None, "answer": final.group(1).strip()}
    action = NAIVE_ACTION.search(text)
    if action:
        return {"kind": "action", "tool": action.group(1), "args": action.group(2).strip(), "answer": None}
    return {"kind": "none", "tool": None, "args": None, "answer": None}


def compare_naive(naive: dict, parsed: dict) -> dict:
    """朴素解析和正式解析读出的是不是同一件事，用一句话说出来（界面上并排显示）。"""
    groups = parsed["groups"]
    if naive["kind"] == "final":
        agrees = parsed["kind"] == "final" and naive["answer"] == groups.get("answer")
    else:
        agrees = naive["kind"] == parsed["kind"] and (naive["kind"] == "none" or (
            naive["tool"] == groups.get("tool") and naive["args"] == groups.get("args")))
    if naive["kind"] == "none":
        verdict = "朴素正则也没有匹配" if agrees else "朴素正则没有匹配：它只认行首正好是 \"Action: \"、工具名后紧跟 [...] 的写法"
    elif agrees:
        verdict = "朴素正则读出的结果相同"
    elif naive["kind"] == "final":
        verdict = f"朴素正则匹配到了错误的内容：它先找 Final Answer，把 \"{naive['answer'][:40]}\" 当成了最终回答"
    else:
        shown = naive["args"].replace("\n", "⏎")
        verdict = f"朴素正则匹配到了错误的内容：工具 {naive['tool']}，参数读成了「{shown[:80]}」"
    return {"pattern": NAIVE_ACTION.pattern, "final_pattern": NAIVE_FINAL.pattern, "matched": naive["kind"] != "none",
            **naive, "agrees": agrees, "verdict": verdict}


# ═══════════════════════════════════════════════════════════════ 纯文本里的 JSON

OPEN_BRACE = re.compile(r"\{")
FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)


def find_json_objects(text: str) -> tuple[list[tuple[dict, int, int]], json.JSONDecodeError | None]:
    """-> ([(对象, 起点, 终点)], 第一个解析错误或 None)。只收 JSON 对象，嵌套在别的对象里的不重复收。"""
    decoder, found, first_error, position = json.JSONDecoder(), [], None, 0
    while True:
        match = OPEN_BRACE.search(text, position)
        if not match:
            return found, first_error
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as error:
            first_error = first_error or error
            position = match.start() + 1
            continue
        if isinstance(value, dict):
            found.append((value, match.start(), end))
        position = end


def parse_json_reply(text: str) -> dict:
    """-> parse 事件的内容。kind: action（groups 里有 tool/args）/ final / none。"""
    text = text or ""
    objects, error = find_json_objects(text)
    useful = [(obj, start, end) for obj, start, end in objects if "tool" in obj or "name" in obj or "answer" in obj]
    notes = []
    if not useful:
        if "{" not in text:
            return {"ok": True, "kind": "final", "pattern": OPEN_BRACE.pattern, "groups": {"answer": text.strip()},
                    "span": [0, len(text)], "notes": ["回复里没有 JSON，按最终回答处理"], "reason": None}
        reason = (f"JSON 解析失败：{error.msg}（第 {error.lineno} 行第 {error.colno} 列）" if error and not objects
                  else "找到了 JSON，但里面没有 \"tool\" 或 \"answer\" 字段")
        if error and objects:
            reason = f"最外层的 JSON 不完整（{error.msg}，第 {error.colno} 列），只解析出了里面的片段"
        return {"ok": False, "kind": "none", "pattern": OPEN_BRACE.pattern, "groups": {}, "span": None,
                "notes": notes, "reason": reason}
    obj, start, end = useful[0]
    if len(useful) > 1:
        notes.append(f"回复里有 {len(useful)} 个 JSON 对象，只采用第一个")
    if any(m.start() < start < m.end() for m in FENCE.finditer(text)):
        notes.append("JSON 被包在 markdown 代码块（```）里，已照常取出")
    elif text[:start].strip() or text[end:].strip():
        notes.append("JSON 前后有多余的文字，已忽略")
    if "answer" in obj and "tool" not in obj:
        return {"ok": True, "kind": "final", "pattern": OPEN_BRACE.pattern, "groups": {"answer": str(obj["answer"])},
                "span": [start, end], "notes": notes, "reason": None}
    arguments = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
    args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"ok": True, "kind": "action", "pattern": OPEN_BRACE.pattern,
            "groups": {"tool": str(obj.get("tool") or obj.get("name")), "args": args_text},
            "span": [start, end], "notes": notes, "reason": None}


if __name__ == "__main__":
    for reply in ["Thought: 查一下\nAction: get_weather[{\"city\": \"北京\"}]",
                  "**Action:** get_weather[{\"city\": \"北京\"}]",
                  "Action: get_weather[{\"city\": \"北京\"}]\nObservation: 晴\nFinal Answer: 晴"]:
        parsed, _ = parse_react(reply)           # 同一段回复，正式解析和朴素解析各读出什么
        print(repr(reply), "->", parsed["kind"], parsed["groups"], "|", parsed["naive"]["verdict"])
    for reply in ['好的，我来查：\n```json\n{"tool": "get_weather", "arguments": {"city": "北京"}}\n```',
                  '{"answer": "北京晴"}', '{"tool": "get_weather", "arguments": {"city": "北京"}']:
        parsed = parse_json_reply(reply)
        print(repr(reply), "->", parsed["kind"], parsed["groups"], parsed["notes"], parsed["reason"] or "")
