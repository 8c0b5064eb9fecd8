"""循环 4/5：ReAct——在 text_protocol_loop.py 上只加一份提示词和一个正则解析器。

模型每轮写：
    Thought: 我需要查北京的天气
    Action: get_weather[{"city": "北京"}]
我们执行工具，把结果作为 "Observation: ..." 发回去；直到它写出 Final Answer: ...（或 Finish[...]）。

真实模型不会老老实实守格式，解析器要扛得住这些：
  - **Action:** 这样的 markdown 粗体、`反引号`；
  - <think>...</think> 思考块（里面的 "Action:" 不能当真）；
  - 模型不等工具执行就自己编一个 Observation：从那里截断，并在 parse 事件里记一笔；
  - 一次写了好几步：只执行第一个 Action，其余记下来；
  - 参数包在 ```json 代码块里，或写成 "Action: 工具名" 换行再跟 JSON。
请求里带 stop=["Observation:"]：支持的后端会在模型想编 Observation 时就停下。

为了看清这些容错值不值得，文件里还留着一个"朴素解析"（NAIVE_ACTION / NAIVE_FINAL / parse_naive）：
大家第一次写 ReAct 时的样子。parse 事件的 naive 一项记下它读同一段回复会读出什么，和上面的解析器对照。
"""
from __future__ import annotations

import re
from typing import Any

from loop_parts import Executor, Steps, describe_tools, enveloping, tools_and_executor
from text_protocol_loop import TextProtocol, run_text_protocol

STOP = ["Observation:"]

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


def build_react_prompt(tools: list[dict] | None) -> str:
    return f"""你是一个会使用工具的助手。请一步一步解决用户的问题。

可用工具（名称: 说明，下一行是参数的 JSON Schema）：
{describe_tools(tools)}

严格按下面的格式回答：
Thought: 你对下一步的思考
Action: 工具名[JSON 格式的参数]
然后停下，等待系统给你 Observation: 工具结果。这个过程可以重复多次。
拿到足够的信息以后：
Thought: 我已经可以回答了
Final Answer: 给用户的最终回答

规则：每次只写一个 Action；不要自己编写 Observation；参数必须是合法的 JSON 对象，
例如 Action: 工具名[{{"参数名": "值"}}]。"""


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


REACT = TextProtocol("react", build_react_prompt, parse_react, stop=STOP, format_hint=(
    "请严格按格式输出：\"Thought: ...\" 加 \"Action: 工具名[JSON 参数]\"，或者 \"Final Answer: 回答\""))


def run_react(client: Any, messages: str | list[dict], tools: list[dict] | None, execute: Executor | Any | None,
              *, max_turns: int = 6, temperature: float | None = None, stream: bool = False,
              envelope: bool = False) -> Steps:
    tools, execute = tools_and_executor(tools, execute)
    if envelope:                 # Observation: 后面是 {"status", "data", "error_code", "message"} 信封
        execute = enveloping(execute)
    return run_text_protocol(REACT, client, messages, tools, execute, max_turns=max_turns, temperature=temperature,
                             stream=stream)


if __name__ == "__main__":
    from llm_clients import make_client
    weather = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    print(build_react_prompt(weather), "\n")
    for reply in ["Action: get_weather[{\"city\": \"北京\"}]", "**Action:** get_weather[{\"city\": \"北京\"}]",
                  "Action: get_weather[{\"city\": \"北京\"}]\nObservation: 晴\nFinal Answer: 晴"]:
        parsed, _ = parse_react(reply)           # 同一段回复，正式解析和朴素解析各读出什么
        print(repr(reply), "->", parsed["kind"], parsed["groups"], "|", parsed["naive"]["verdict"])
    print()
    for event in run_react(make_client("offline", mistake="bold_action"), "北京的天气怎么样？", weather,
                           lambda name, args: {"ok": True, "content": f"{args['city']}：晴，25℃"}):
        print(event["type"], {k: v for k, v in event.items() if k in ("kind", "notes", "name", "arguments", "content")})
