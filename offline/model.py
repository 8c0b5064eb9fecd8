"""离线规则模型：不联网、不要 Key，也能把工具调用的协议完整走一遍。

先说清楚：它不是大模型。它只是一组写死的规则——
  1. 把问题切成关键词（中文取相邻两个字，英文取单词），和每个工具的名字、描述、参数说明比对；
     再看参数能不能从问题里取到（提到了枚举值、有数字、有像人名城市名的片段），
     两样加起来得分最高的工具就是"选中的工具"；
  2. 按参数的 JSON Schema 从问题里抠参数（规则在 arguments.py）；
     "北京和上海" 这样并列的几样东西，变成同一个工具的几次并行调用；
  3. 拿到工具结果后，把结果原样引用进最终回答。
同样的输入永远得到同样的输出，所以课堂演示和测试都可以依赖它。

它能说三种"方言"：原生 function calling（tools=）、ReAct 文本（Thought/Action/Final Answer）、
纯文本里的 JSON。后两种没有 tools= 参数，它从系统提示词里读出工具清单（格式见 parse_prompt_tools）。

它还能故意犯真实模型常犯的错（MISTAKES，哪种模式能出现哪些见 mistakes_for），
大多只在回答一个新问题的第一轮犯，这样循环把错误反馈回去以后，学生能看到模型"改正"；
"固执"和"停不下来"每一轮都犯，用来看循环的两道保险（连续失败就停、max_turns）。
"""
import copy
import functools
import hashlib
import json
import re

from . import agent as offline_agent
from . import plans as offline_plans
from . import workspace as offline_workspace
from .arguments import (Clues, argument_fit, arguments_and_gaps, arguments_for, find_expression, is_valid, keywords,
                        tool_words)
from accents import rough_tokens    # 和客户端同一个粗估：工具清单算进输入
from context import SUMMARY_ASK, orphan_results
from llm_clients import OFFLINE_MODEL
from loop_parts import read_edited
from skills import PASTED_HEAD

MODEL_NAME = OFFLINE_MODEL
FINGERPRINT = "rule-based-not-an-llm"
NOTICE = "（离线规则模型：以上回答由关键词规则拼出，不是真正的大模型。）"

# 每种失误对应真实模型的一种常见毛病：(适用的模式, 性质, 学生会看到什么)。
# 性质 "quirk"（容错）：解析器认得出来、照常执行，并在备注里说一声；
#      "error"（出错）：这一轮失败，错误反馈给模型（或循环停下），学生看到失败和后果。
# 模式：function_calling 原生 tools=，react 是 ReAct 文本，json 是纯文本里的 JSON。
# 有的毛病只在文本里才有（原生 tool_calls 没有 "Action:" 可写错，也没有地方编 Observation），
# 所以每种失误只列出它真能出现的模式；界面用 mistakes_for(模式) 只显示能出现的那些。
EVERY_MODE = ("function_calling", "react", "json")
TEXT_MODES = ("react", "json")
QUIRK, ERROR = "quirk", "error"
MISTAKE_TABLE = {
    "wrong_type": (EVERY_MODE, ERROR,
                   '参数类型写错（数字写成中文 "三"、文字写成对象）：工具结果是 ❌ [参数错误]，没法自动转换，下一轮模型改正'),
    "missing_argument": (EVERY_MODE, ERROR, "漏掉一个必填参数：工具结果是 ❌ [参数错误] 缺少参数，下一轮模型补上"),
    "unknown_tool": (EVERY_MODE, ERROR,
                     "调用一个不存在的工具名（原名加 _info）：结果是 ❌ [未知工具] 并列出可用的工具，下一轮模型改用正确的名字"),
    "bad_json": (EVERY_MODE, ERROR,
                 "参数 JSON 少了结尾的花括号：结果是 ❌ JSON 格式错误（纯 JSON 模式下整段解析失败），下一轮模型重写"),
    "fenced_json": (EVERY_MODE, QUIRK, "把 JSON 包在 ```json 代码块里：解析器去掉代码块照常执行，备注里写明（容错）"),
    "string_numbers": (EVERY_MODE, QUIRK,
                       '数字写成字符串（"5" 而不是 5）：注册表自动转换成 5 并记下这次转换，调用照常成功（容错）'),
    "bold_action": (("react",), QUIRK, "把 Action: 写成 markdown 粗体 **Action:**：正则照样认得，解析备注里写明（容错）"),
    "invented_observation": (TEXT_MODES, QUIRK,
                             "不等工具执行就自己编造 Observation（模拟不支持 stop 的后端）：编造的部分被忽略，备注里写明（容错）"),
    "multi_step": (TEXT_MODES, QUIRK, "一次回复里写了好几步：只执行第一个动作，备注里写明其余的等下一轮（容错）"),
    "no_action_line": (("react",), ERROR,
                       "ReAct 格式写坏：只有 Thought、没有 Action: 行，解析显示“没有匹配”（可以看为什么没有匹配），"
                       "格式错误反馈给模型，下一轮按格式重写"),
    "action_input_kv": (("react",), ERROR,
                        "ReAct 格式写坏：Action: 后只有工具名，参数另起一行写成 Action Input: city=\"北京\"（不是 JSON），"
                        "正则匹配不上，显示“没有匹配”，下一轮模型改正"),
    "paren_call": (("react",), ERROR,
                   "ReAct 格式写坏：方括号写成圆括号 Action: 工具名({...})，正则匹配不上，显示“没有匹配”，下一轮模型改正"),
    "stubborn": (EVERY_MODE, ERROR,
                 "固执：每一轮都原样重发同一个出错的调用、不看反馈，连续失败几轮后循环主动停止（too_many_failures）"),
    "endless": (EVERY_MODE, ERROR,
                "停不下来：拿到结果后还一轮接一轮地调用工具、从不给最终回答，用完 max_turns 轮后循环停止（max_turns）"),
    "repeat_call": (("function_calling",), ERROR,
                    "原地打转：一个回复里把同一个调用写了一遍又一遍，直到 max_tokens 截断，每一轮都这样；循环把它们全部执行，"
                    "结果都进了对话。这时离线模型像一个上下文只有 4096 token 的 llama-server（-c 4096）：对话很快超出上下文，"
                    "服务端拒收请求（小模型配大 max_tokens 时真会这样）"),
}
MISTAKES = {name: doc for name, (_, _, doc) in MISTAKE_TABLE.items()}          # 名字 -> 学生会看到什么
MISTAKE_KINDS = {name: kind for name, (_, kind, _) in MISTAKE_TABLE.items()}  # 名字 -> "quirk" / "error"
MISTAKES_BY_MODE = {mode: [name for name, (modes, _, _) in MISTAKE_TABLE.items() if mode in modes]
                    for mode in EVERY_MODE}
EVERY_TURN = {"stubborn", "endless", "repeat_call"}      # 这几种每一轮都犯；其余只在回答新问题的第一轮犯
SMALL_CONTEXT = 4096      # "原地打转"时，离线模型像 llama-server -c 4096 一样守着上下文
REPEATS_UNLIMITED = 64    # 请求没给 max_tokens 时，"原地打转"的回复里写多少遍（服务端自己的生成上限）
MODE_NAMES = {"native": "function_calling", "tools": "function_calling", "registry": "function_calling"}


def mistakes_for(mode):
    """这种模式下真能出现的失误：{名字: 学生会看到什么}。mode："function_calling"（或 "native"）、"react"、"json"。"""
    mode = MODE_NAMES.get(mode, mode)
    if mode not in MISTAKES_BY_MODE:
        raise ValueError(f"未知的模式 {mode!r}，可选：{', '.join(EVERY_MODE)}")
    return {name: MISTAKES[name] for name in MISTAKES_BY_MODE[mode]}


# ---------------------------------------------------------------- 选工具

# 英文工具名配中文问题时，靠这张小表搭桥。
SYNONYMS = {
    "天气": "weather forecast", "气温": "weather temperature", "温度": "temperature",
    "冷": "weather temperature 天气 气温", "热": "weather temperature 天气 气温", "下雨": "weather 天气",
    "明天": "forecast 预报", "后天": "forecast 预报", "未来": "forecast 预报",
    "计算": "calculate calculator calc math expression evaluate", "算": "calculate calculator calc math",
    "员工": "employee employees staff", "工资": "salary", "薪": "salary", "部门": "department",
    "搜索": "search", "查找": "search find lookup", "文件": "file", "读取": "read", "写入": "write",
    "时间": "time", "日期": "date", "汇率": "exchange rate currency", "翻译": "translate",
    "股票": "stock", "新闻": "news", "多少度": "weather temperature 天气 温度",
    "华氏": "fahrenheit temperature 温度", "摄氏": "celsius temperature 温度",
    "换算": "convert conversion unit 单位", "earn": "salary 工资 月薪",
}
# 一句话里问了几件事，在这些词处切开，每一段各自选工具。"并" 单用时要跟在逗号后面（"合并" 不算）。
CLAUSE_BREAK = re.compile(r"[，,；;。]?\s*(?:然后|再|并且|同时|另外|接着|顺便|\band then\b|\bthen\b|\balso\b)\s*"
                          r"|[，,；;。]\s*(?:并|还要|也)\s*")


def question_keywords(text):
    said = keywords(text)
    found = set(said)
    for word, related in SYNONYMS.items():
        if word in text:
            found |= keywords(related)
        if said & keywords(related):       # 英文问题配中文工具："weather" -> 天气
            found.add(word)
    if find_expression(text):
        found |= keywords("calculate calculator calc math expression 计算 表达式")
    return found


def cue_words(text, tool):
    """问题里经同义词表指向这个工具的词（"冷" -> 天气）：它们是线索，不是参数值。"""
    words = tool_words(tool)
    return [w for w in SYNONYMS if w in text and keywords(SYNONYMS[w]) & words]


def plan_calls(question, tools, tool_choice=None):
    """问题 -> [(工具名, 参数)]。一句里问了两件事（"…，再…" 或 "北京和上海"）就计划几次调用。

    模型每一轮都从头分析一遍问题（它不记对话状态）。同样的问题配同样的工具，计划也一样，
    所以记住最近的计划：一个班的学生都问预设问题时，分析只做一次。"""
    key = json.dumps([question, tools, tool_choice], ensure_ascii=False, sort_keys=True, default=str)
    return copy.deepcopy(remembered_plan(key))   # 复制一份：调用方改参数不会改到记住的那份


@functools.lru_cache(maxsize=256)
def remembered_plan(key):
    return make_plan(*json.loads(key))


def make_plan(question, tools, tool_choice=None):
    return analyse(question, tools, tool_choice)[0]


def analyse(question, tools, tool_choice=None):
    """-> (计划的调用, 缺的参数 [(工具名, [参数名])])。
    必填的文字参数（姓名、城市……）问题里没有，就不调用这个工具：宁可问用户，也不编一个值。
    强制调用（tool_choice）时没得选，只好用占位值。"""
    if not tools or tool_choice == "none":
        return [], []
    forced = tool_choice.get("function", {}).get("name") if isinstance(tool_choice, dict) else None
    must = tool_choice == "required" or forced is not None
    calls, gaps = [], []
    for clause in [c for c in CLAUSE_BREAK.split(question) if c.strip()] or [question]:
        tool = best_tool(clause, tools, forced, must)
        if tool is None:
            continue
        found, missing = arguments_and_gaps(clause, tool, cue_words(clause, tool))
        if missing and not must:
            gaps.append((tool["function"]["name"], missing))
            continue
        for args in found:
            if (tool["function"]["name"], args) not in calls:
                calls.append((tool["function"]["name"], args))
    if not calls and must:
        tool = best_tool(question, tools, forced, must=True)
        calls.append((tool["function"]["name"], arguments_for(question, tool)[0]))
    return calls, gaps


def plan_for(question, tools, tool_choice, history):
    """这一轮的计划。模型每轮都从头分析问题，可 tool_choice 只在第一轮强制：
    第一轮被强制调用了计划外的工具（比如问"今天天气"却被指定 get_forecast），
    之后几轮就接着那个工具的计划做，最终回答说的也是它的结果——而不是换成自己本来想调用的工具再来一遍。"""
    plan = plan_calls(question, tools, tool_choice)
    if isinstance(tool_choice, dict) or tool_choice == "none":
        return plan
    started = first_called(history, tools)
    if started and started not in {name for name, _ in plan}:
        return plan_calls(question, tools, {"type": "function", "function": {"name": started}})
    return plan


def first_called(history, tools):
    """这个问题第一轮原生调用的第一个（真实存在的）工具名；没有就是 None。"""
    names = {t["function"]["name"] for t in tools}
    for message in history:
        if message.get("role") == "assistant":
            called = [(c.get("function") or {}).get("name") for c in message.get("tool_calls") or []]
            return next((name for name in called if name in names), None)
    return None


def no_tool_answer(question, tools, tool_choice):
    """不调用工具时的回答：说清楚是设置不让调用，还是问题里找不到能用的工具。"""
    names = "、".join(t["function"]["name"] for t in tools) or "（没有工具）"
    if tool_choice == "none":
        wanted = "、".join(dict.fromkeys(name for name, _ in plan_calls(question, tools, None)))
        would = f"本来会调用 {wanted}；" if wanted else ""
        return (f"这次请求设置了 tool_choice=\"none\"，不允许调用工具（可用的工具：{names}），所以我没有调用任何工具。"
                f"{would}离线规则模型不调用工具就拿不到数据，没法回答。把 tool_choice 改回 auto 再问一次即可。")
    return (f"我没有找到和问题匹配的工具（可用：{names}），所以不调用工具。"
            f"请换个说法，或者换成真实模型试试。")


def rule_summary(transcript):
    """/compact 要的摘要（context.SUMMARY_ASK），照规则摘：用户说过的话原样留下（人名、数字就在里面），
    每次调用留下名字、参数和结果的开头，最后一句助手的话算进展。它不懂哪句要紧，所以一句不删。"""
    lines = transcript.splitlines()
    said = [line.split("：", 1)[1] for line in lines if line.startswith("用户：")]
    calls = [line[len("助手调用 "):] for line in lines if line.startswith("助手调用 ")]
    results = [line.split("：", 1)[1] for line in lines if line.startswith("工具结果")]
    last = next((line.split("：", 1)[1] for line in reversed(lines) if line.startswith("助手：")), "")
    facts = [f"- 用户说：{text}" for text in said[1:]]
    facts += [f"- 调用了 {call}，结果开头：{result.split(' ⏎ ')[0][:80]}" for call, result in zip(calls, results)]
    return "\n".join(["目标：" + (said[0] if said else "（这段对话里没有用户的问题）"), "已知的事实：",
                      *(facts or ["- （没有）"]), "现在的进展：" + (last or "（助手还没有回答）")])


NAME_SAID = re.compile(r"(?:我叫|我的名字是)\s*([^\s，,。.！!？?、]{1,12})|\bmy name is ([A-Za-z][\w-]{0,20})", re.I)
ASKS_NAME = re.compile(r"我叫什么|我的名字|what(?:'s| is) my name", re.I)
ASKS_FAILURE = re.compile(r"失败|出错|报错|错误|fail|error", re.I)


def from_context(question, earlier):
    """没有工具时（只是聊天）照规则从发来的消息里找答案。它只认两样：用户说过的名字（“我叫…”），
    和消息里带 ERROR 的行。找不到就直说不知道：上下文里没有的，它不会编。"""
    texts = [text_of(m.get("content")) for m in earlier]
    if ASKS_NAME.search(question):
        # 只看用户自己说的话（摘要也是以用户消息送来的），跳过问名字的那些句子
        said = [text_of(m.get("content")) for m in earlier if m.get("role") == "user"]
        names = [found.group(1) or found.group(2) for text in said if not ASKS_NAME.search(text)
                 for found in NAME_SAID.finditer(text) if not (found.group(1) or "").startswith(("什么", "谁", "啥"))]
        if names:
            return f"你叫{names[-1]}（发给我的消息里有这句话）。"
        return "发给我的消息里没有你说过自己叫什么：我不知道你的名字。"
    if ASKS_FAILURE.search(question):
        lines = [line.strip() for text in texts for line in text.splitlines() if "ERROR" in line]
        if lines:
            return "发给我的消息里有这样的报错：" + "；".join(dict.fromkeys(lines))
        return "发给我的消息里没有带 ERROR 的行：我看不出是什么失败了。"
    return ("没有工具时，离线规则模型只会在发给它的消息里找两样东西：你说过的名字（“我叫…”）和带 ERROR 的行。"
            "这个问题它答不了，换成真实模型试试。")


SKILL_LINE = re.compile(r"^- ([a-z0-9-]+): (.+)$", re.M)     # code/skills.py 的 catalogue_prompt 一行一个技能


def skill_for(question, system):
    """技能目录（system 提示词）里描述和问题重合的词最多的技能；一个词都不重合就是 None。
    它只看描述：描述写得含糊或写错，它就挑错，真模型也会。"""
    asked = question_keywords(question)
    scored = [(len(asked & keywords(description)), name) for name, description in SKILL_LINE.findall(system)]
    best = max(scored, default=(0, None))
    return best[1] if best[0] else None


PASTED_SECTION = re.compile(r"^## ([a-z0-9-]+)\n(.*?)(?=^## |\Z)", re.M | re.S)


def from_pasted(question, system):
    """技能正文全贴在 system 提示词里（没有描述，也没有 load_skill）：挑正文和问题重合的词最多的那段，照着念。"""
    asked = question_keywords(question)
    scored = [(len(asked & keywords(body)), name, body.strip()) for name, body in PASTED_SECTION.findall(system)]
    if not scored:
        return "提示词里一个技能也没有贴（没有一个合格的技能），所以没有哪段可以照着做。先把技能改好，再问一次。"
    best = max(scored, default=(0, None, ""))
    if not best[0]:
        return "提示词里贴着的技能，没有哪段和这个问题对得上，所以我没有照哪段来做。"
    return f"提示词里贴着技能 {best[1]} 的说明，照它来做：\n{best[2]}"


def is_task_tool(tool):
    """subagents.py 的 task：名字和两个参数都对上才算，学生自己写的同名工具不算。"""
    function = tool.get("function") or {}
    return function.get("name") == "task" and set((function.get("parameters") or {}).get("properties") or {}) == {
        "description", "prompt"}


def is_skill_tool(tool):
    """skills.py 的 load_skill(name)。"""
    function = tool.get("function") or {}
    return function.get("name") == "load_skill" and set(
        (function.get("parameters") or {}).get("properties") or {}) == {"name"}


DELEGATE = re.compile(r"(?:派|让|交给|请)(?:一个|个)?子代理(?:去)?|\b(?:use|ask) a sub-?agent to\b", re.I)


def delegated(question):
    """问题里明说了要子代理去做的事（去掉“派一个子代理去”这类话），每说一次“派一个子代理”是一件；
    没明说就是 []。规则模型只在被明确要求时才派子代理：什么时候值得派，是真模型要判断的事。"""
    found = list(DELEGATE.finditer(question))
    if not found:
        return []
    if len(found) == 1:      # 只派一个：这句话的其余部分都是交给它的事（“……，告诉我结论”也在里面）
        rest = (question[:found[0].start()] + question[found[0].end():]).strip(" ，,。：:")
        return [rest] if rest else []
    ends = [match.start() for match in found[1:]] + [len(question)]
    jobs = [CLAUSE_TAIL.sub("", question[match.end():end]).strip(" ，,。：:；;") for match, end in zip(found, ends)]
    return [job for job in jobs if job]


CLAUSE_TAIL = re.compile(r"[，,；;。]?\s*(?:再|并且|同时|另外|然后)\s*$")


def ask_for(gaps, tools):
    """缺参数时的回答：说清楚想用哪个工具、缺什么（参数说明原样给出），请用户补上。"""
    described = {t["function"]["name"]: (t["function"].get("parameters") or {}).get("properties") or {} for t in tools}
    wanted = []
    for name, params in gaps:
        said = [f"{p}（{described.get(name, {}).get(p, {}).get('description', '')}）".replace("（）", "") for p in params]
        wanted.append(f"调用 {name} 需要 {'、'.join(said)}")
    return f"问题里没有找到这些信息：{'；'.join(wanted)}。我不替你编造，请在问题里写明后再问。"


def best_tool(text, tools, forced=None, must=False):
    """关键词重合得分 + 参数吻合得分最高的工具。没有一点证据（关键词或提到的枚举值）就不选。"""
    if forced:
        return next((t for t in tools if t["function"]["name"] == forced), tools[0])
    wanted = question_keywords(text)
    scored = []
    for i, tool in enumerate(tools):
        overlap = len(wanted & tool_words(tool))
        cues = cue_words(text, tool)
        evidence = overlap + len(Clues(text, tool, cues).mentions)
        scored.append((evidence > 0, overlap + argument_fit(text, tool, cues), -i, tool))
    has_evidence, _, _, tool = max(scored, key=lambda s: s[:3])
    return tool if has_evidence or must else None


# ---------------------------------------------------------------- 读对话

def text_of(content):
    if isinstance(content, list):   # 多段内容：[{"type": "text", "text": ...}]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def is_observation(message):
    return message.get("role") == "user" and text_of(message.get("content")).lstrip().startswith("Observation")


def is_error(text):
    text = read_edited(text.lstrip().removeprefix("Observation:").lstrip())[1]
    return text.startswith("❌") or envelope_of(text).get("status") == "error"


def envelope_of(text):
    """结果装在信封里（tool_outcome.as_envelope）时，读出信封：{"status", "data", "error_code", "message"}；否则 {}。"""
    if not text.startswith('{"status"'):
        return {}
    try:
        found = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) and found.get("status") in ("ok", "error") else {}


def readable(text):
    """引用进回答的结果：信封拆开，成功取 data，失败取 message。"""
    found = envelope_of(text.strip())
    if not found:
        return text
    value = found.get("data") if found["status"] == "ok" else found.get("message")
    value = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"{value}\n…（{found['message']}）" if found["status"] == "ok" and found.get("message") else value


def parse_prompt_tools(prompt):
    """从系统提示词里读工具：每个工具两行，'- 名字: 描述' 和 '  参数 JSON Schema: {...}'。"""
    tools = []
    pattern = r"^- (?P<name>[\w.\-]+): (?P<desc>.*)\n\s+参数 JSON Schema: (?P<schema>\{.*\})\s*$"
    for m in re.finditer(pattern, prompt or "", re.M):
        try:
            schema = json.loads(m.group("schema"))
        except json.JSONDecodeError:
            continue
        tools.append({"type": "function", "function": {
            "name": m.group("name"), "description": m.group("desc"), "parameters": schema}})
    return tools


# ---------------------------------------------------------------- 模型本体

class Refused(Exception):
    """一个真服务端会整个拒收的请求：HTTP 状态码和它的错误体（照 OpenAI 的原话写）。"""

    def __init__(self, status, body):
        super().__init__(body["error"]["message"])
        self.status, self.body = status, body


def refusal(messages):
    """OpenAI 拒收的历史：一条 tool 消息，前面没有哪条 assistant 消息的 tool_calls 里有它的 id。
    裁剪历史时把调用丢了、结果留下了，就是这样（code/context.py 的 naive_window）。"""
    lost = orphan_results(messages)
    if not lost:
        return None
    return Refused(400, {"error": {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                   "message with 'tool_calls'.",
        "type": "invalid_request_error", "param": f"messages.[{lost[0]}].role", "code": None}})


class OfflineModel:
    """respond(messages, tools=...) -> (assistant 消息, finish_reason)；完全确定、不联网。"""

    def __init__(self, mistake=None):
        if mistake and mistake not in MISTAKES:
            raise ValueError(f"未知的错误类型 {mistake!r}，可选：{', '.join(MISTAKES)}")
        self.mistake = mistake

    def respond(self, messages, tools=None, tool_choice=None, parallel_tool_calls=None, stop=None, max_tokens=None):
        composed = offline_agent.respond(messages, tools, tool_choice, parallel_tool_calls)   # 8.13：MiniAgent（agent.py）
        if composed is not None:
            return composed
        planned = offline_plans.respond(messages, tools, tool_choice, parallel_tool_calls)   # 8.3：计划（plans.py）
        if planned is not None:
            return planned
        system = "\n".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
        tools = tools or None
        mode = "native" if tools else ("react" if "Action:" in system else "json")
        tools = tools or parse_prompt_tools(system)
        if not tools and mode != "react":
            mode = "chat"      # 没有任何工具：就是普通聊天，用纯文字回答
        asked = [i for i, m in enumerate(messages) if m.get("role") == "user" and not is_observation(m)]
        if not asked:
            return self._final("我是离线规则模型，没有看到用户的问题。", mode), "stop"
        question = text_of(messages[asked[-1]].get("content"))
        if mode == "chat" and SUMMARY_ASK in system:          # /compact（code/context.py）：照规则摘，不是理解后写的
            return self._final(rule_summary(question), mode), "stop"
        if mode == "chat" and (PASTED_SECTION.search(system) or system.startswith(PASTED_HEAD)):   # skills.py 的 pasted_prompt
            return self._final(from_pasted(question, system), mode), "stop"
        if mode == "chat":
            return self._final(from_context(question, messages[:asked[-1]]), mode), "stop"
        history = messages[asked[-1] + 1:]
        task = next((t for t in tools or [] if is_task_tool(t)), None) if mode == "native" else None
        if task is not None and tool_choice != "none":
            step = self._task_step(question, history, tools)
            if step is not None:
                return step
            tools = [t for t in tools if t is not task]
        skill = next((t for t in tools or [] if is_skill_tool(t)), None) if mode == "native" else None
        if skill is not None and tool_choice != "none":
            listed = SKILL_LINE.search(system)
            skilled = self._skill_step(question, system, history, tools) if listed else None
            if skilled is not None:
                return skilled
            tools = [t for t in tools if t is not skill] or None
            if tools is None and not listed:
                return self._final("技能目录是空的（没有一个合格的技能），所以我没有读任何技能。"
                                   "先把技能改好，再问一次。", mode), "stop"
            if tools is None:
                return self._final("技能目录里没有哪个技能的描述和这个问题对得上，所以我没有读任何技能。"
                                   "把问题说得具体些，或者改一改技能的描述。", mode), "stop"
        if offline_workspace.handles(tools) and tool_choice != "none":
            return self._workspace_step(question, history, mode)
        rounds = sum(1 for m in history if m.get("role") == "assistant")     # 这个问题已经答了几轮
        first_turn = rounds == 0
        plan = plan_for(question, tools, tool_choice, history)
        gaps = [] if plan else analyse(question, tools, tool_choice)[1]
        if gaps:
            return self._final(ask_for(gaps, tools), mode), "stop"
        if not plan:
            return self._final(no_tool_answer(question, tools, tool_choice), mode), "stop"
        remaining, results, failures = replay(plan, history, mode)
        mistake = self.mistake if (first_turn or self.mistake in EVERY_TURN) else None
        parallel = mode == "native" and parallel_tool_calls is not False
        if mistake == "stubborn":            # 不看反馈：永远是计划里第一个调用，永远是同一种写错
            calls = plan[:1]
        elif mistake == "endless":           # 不看进度：计划做完了也从头再来，从不作答
            calls = plan if parallel else [plan[rounds % len(plan)]]
        elif mistake == "repeat_call" and mode == "native":     # 同一个调用一遍又一遍，直到写满 max_tokens
            one = native_message(plan[:1], None, {}, rounds)
            copies = max(1, max_tokens // rough_tokens(json.dumps(one["tool_calls"][0], ensure_ascii=False))
                         if max_tokens else REPEATS_UNLIMITED)
            return native_message(plan[:1] * copies, None, {}, rounds), "length"
        elif not remaining or failures >= 2:
            return self._final(summarise(results), mode), "stop"
        else:
            calls = [plan[i] for i in (remaining if parallel else remaining[:1])]
        schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
        if mode == "native":
            return native_message(calls, mistake, schemas, rounds), "tool_calls"
        write = react_text if mode == "react" else json_text
        text = write(calls[0], remaining, plan, mistake, schemas.get(calls[0][0], {}))
        if stop and mistake != "invented_observation":   # 编造 Observation 模拟的正是不支持 stop 的后端
            for marker in stop:
                text = text.split(marker)[0] if marker in text else text
        return {"role": "assistant", "content": text}, "stop"

    def too_long(self, request):
        """"原地打转"时守着一个小上下文（SMALL_CONTEXT）：整个请求（消息、调用、工具清单）放不下就拒收，
        错误体照 llama-server 的原话写。别的时候不设上限。"""
        if self.mistake != "repeat_call":
            return None
        size = rough_tokens(json.dumps([request.get("messages"), request.get("tools")], ensure_ascii=False))
        if size <= SMALL_CONTEXT:
            return None
        return Refused(400, {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                                               "increasing it", "type": "exceed_context_size_error",
                                       "n_prompt_tokens": size, "n_ctx": SMALL_CONTEXT}})

    def _task_step(self, question, history, tools):
        """被明确要求派子代理时：第一轮调用 task，子代理的结论回来后照它回答；没被要求就是 None。"""
        calls = [c.get("function") or {} for m in history for c in m.get("tool_calls") or []]
        if calls and calls[0].get("name") == "task":
            # 子代理也是离线模型：它的结论末尾已有一句声明，照引时去掉，整段回答只在最后说一次
            results = [text_of(m.get("content")).replace(NOTICE, "").strip() for m in history if m.get("role") == "tool"]
            said = results[-1] if len(results) == 1 else "\n".join(f"{n}. {text}" for n, text in enumerate(results, 1))
            return self._final(f"子代理交回的结论：\n{said}", "native"), "stop"
        jobs = [] if calls else delegated(question)
        if not jobs:
            return None
        schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
        return native_message([("task", {"description": job[:12], "prompt": job}) for job in jobs],
                              self.mistake, schemas), "tool_calls"

    def _skill_step(self, question, system, history, tools):
        """先按描述挑一个技能去读（load_skill），读到正文就照着它回答；挑不出来就是 None。"""
        calls = [c.get("function") or {} for m in history for c in m.get("tool_calls") or []]
        if calls:                       # 这个问题已经调用过工具：读的是技能就照它回答，别的工具走平常的路
            if calls[0].get("name") != "load_skill":
                return None
            called = json.loads(calls[0].get("arguments") or "{}").get("name")
            results = [m for m in history if m.get("role") == "tool"]
            return self._final(f"我读了技能 {called} 的说明，照它来做：\n{text_of(results[-1].get('content'))}",
                               "native"), "stop"
        name = skill_for(question, system)
        if name is None:
            return None
        schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
        return native_message([("load_skill", {"name": name})], self.mistake, schemas), "tool_calls"

    def _final(self, answer, mode):
        answer = f"{answer}\n{NOTICE}"
        if mode == "react":
            answer = f"Thought: 工具结果已经齐了，可以作答。\nFinal Answer: {answer}"
        elif mode == "json":
            answer = json.dumps({"answer": answer}, ensure_ascii=False)
        return {"role": "assistant", "content": answer}

    def _workspace_step(self, question, history, mode):
        """工具是 read、write、edit、bash 四个原子工具：下一步由 workspace.py 的剧本决定，
        这里只把它写成三种方言之一。（故意犯错的开关在这里不起作用。）"""
        results = [readable(r) for r in offline_workspace.results_of(history, mode)]     # 结果信封也拆开读
        step = offline_workspace.next_step(question, results)
        if isinstance(step, str):
            return self._final(step, mode), "stop"
        call = (step.name, step.args)
        if mode == "native":
            rounds = sum(1 for m in history if m.get("role") == "assistant")
            return native_message([call], None, {}, rounds), "tool_calls"
        if mode == "react":
            action = json.dumps(step.args, ensure_ascii=False)
            return {"role": "assistant", "content": f"Thought: {step.thought}\nAction: {step.name}[{action}]"}, "stop"
        return {"role": "assistant", "content": json_text(call, [0], [call], None, {})}, "stop"

    # ---- HTTP 形状：和 OpenAI 的 /chat/completions 一样
    def completion_body(self, request):
        refused = refusal(request.get("messages") or []) or self.too_long(request)
        if refused is not None:
            raise refused
        message, finish = self.respond(request.get("messages") or [], request.get("tools"),
                                       request.get("tool_choice"), request.get("parallel_tool_calls"),
                                       as_list(request.get("stop")), request.get("max_tokens"))
        message, finish = cut_to(request.get("max_tokens"), message, finish)
        # 没有真正的分词器：按 accents.rough_tokens 粗估。和真服务端一样，工具清单也算在输入里。
        sent = [text_of(m.get("content")) for m in request.get("messages") or []]
        prompt = rough_tokens("\n".join(sent) + json.dumps(request.get("tools") or "", ensure_ascii=False))
        calls = message.get("tool_calls")
        answer = rough_tokens((message.get("content") or "") + (json.dumps(calls, ensure_ascii=False) if calls else ""))
        return {
            "id": "offline-" + digest(request.get("messages"))[:12],
            "object": "chat.completion",
            "created": 0,    # 固定值：同样的请求得到逐字节相同的响应
            "model": MODEL_NAME,
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer},
        }

    def completion_chunks(self, request, piece=6):
        """同一个回答切成流式分片：文字每片几个字，工具参数按 index 分片送出。"""
        body = self.completion_body(request)
        choice = body["choices"][0]
        message = choice["message"]
        head = {"id": body["id"], "object": "chat.completion.chunk", "created": 0,
                "model": MODEL_NAME, "system_fingerprint": FINGERPRINT}
        deltas = [{"role": "assistant", "content": ""}]
        content = message.get("content") or ""
        deltas += [{"content": content[i:i + piece]} for i in range(0, len(content), piece)]
        for index, call in enumerate(message.get("tool_calls", [])):
            deltas.append({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                           "function": {"name": call["function"]["name"], "arguments": ""}}]})
            args = call["function"].get("arguments") or ""
            deltas += [{"tool_calls": [{"index": index, "function": {"arguments": args[i:i + piece]}}]}
                       for i in range(0, len(args), piece)]
        chunks = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
                       "usage": body.get("usage")})
        return chunks


def cut_to(max_tokens, message, finish):
    """像真服务端一样守 max_tokens：文字回答写到上限就停，finish_reason 变成 "length"。"""
    content = message.get("content")
    if not max_tokens or not content or rough_tokens(content) <= max_tokens:
        return message, finish
    # 前缀越长 token 越多：二分找出放得下的最长前缀（估算用的是同一个 rough_tokens）
    low, high = 0, len(content)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if rough_tokens(content[:middle]) <= max_tokens else (low, middle - 1)
    return {**message, "content": content[:low]}, "length"


def as_list(stop):
    return [stop] if isinstance(stop, str) else list(stop or [])


def digest(value):
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()


def replay(plan, history, mode):
    """重放历史：哪些计划中的调用已经有了结果、是什么结果、末尾连续失败了几轮。
    结果是 [(工具名, 参数, 文本, 成功与否)]。一次调用要是原样照计划发出（没有故意写错）却失败了，
    再发一遍也是同样的失败：记下失败、不再重试，最后如实告诉用户。写错了的调用才值得改了重发。"""
    remaining, results, failures = list(range(len(plan))), [], 0
    for i, message in enumerate(history):
        if message.get("role") != "assistant":
            continue
        after = history[i + 1:]
        if mode == "native":
            calls = message.get("tool_calls") or []
            outputs = {m.get("tool_call_id"): text_of(m.get("content")) for m in after if m.get("role") == "tool"}
            answers = [outputs.get(c.get("id")) for c in calls]
        else:
            nxt = after[0] if after and is_observation(after[0]) else None
            answers = [text_of(nxt["content"]).strip().removeprefix("Observation:").strip()] if nxt else []
        covered = remaining[:len(answers)]
        done = []
        for position, (p, text) in enumerate(zip(covered, answers)):
            if text is None:
                continue
            ok = not is_error(text)
            if ok or sent_as_planned(message, position, plan[p], mode):
                results.append((*plan[p], text, ok))
                done.append(p)
        remaining = [p for p in remaining if p not in done]
        succeeded = any(text is not None and not is_error(text) for text in answers)
        failures = failures + 1 if answers and not succeeded else 0
    return remaining, results, failures


def sent_as_planned(message, position, call, mode):
    """这条 assistant 消息里第 position 个调用，是不是原样照计划发出的（没有故意写错）。"""
    name, args = call
    if mode == "native":
        calls = message.get("tool_calls") or []
        if position >= len(calls):
            return False
        function = calls[position].get("function") or {}
        try:
            return function.get("name") == name and json.loads(function.get("arguments") or "{}") == args
        except (json.JSONDecodeError, TypeError):
            return False
    write = react_text if mode == "react" else json_text
    return text_of(message.get("content")).strip() == write(call, [0], [call], None, {}).strip()


def summarise(results):
    results = [(name, *as_executed(args, text), ok) for name, args, text, ok in results]
    good = [(name, args, text) for name, args, text, ok in results if ok]
    if not good:
        last = results[-1][2] if results else "没有结果"
        return f"工具调用没有成功，最后一次的反馈是：{last[:300]}"
    lines = []
    for name, args, text, ok in results:
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        lines.append(f"- {name}({shown})：{text[:300] if ok else '没有成功，' + text[:300]}")
        clipped = CLIPPED_NOTE.search(text)
        if ok and clipped:              # 没看到全部，就要说出来，而不是当成完整的结果来回答
            lines.append(f"  （这个结果过长被截断了：{clipped.group(1)}。我只看到了前面一部分，可以缩小范围再查。）")
    return "根据工具返回的结果：\n" + "\n".join(lines)


def as_executed(args, text):
    """(参数, 结果) 按真实发生的事：用户在执行前改过参数的，是改过的参数和去掉那句说明的结果，再注明一句。"""
    executed, rest = read_edited(text)
    if executed is None:
        return args, readable(text)
    return executed, f"{readable(rest)}（这次调用的参数是用户改过的，结果按改过的参数得出）"


CLIPPED_NOTE = re.compile(r"…（结果过长已截断：(.*?)）\s*$")


# ---------------------------------------------------------------- 三种写法 + 故意犯错

def spoil(name, args, mistake, parameters):
    """按 mistake 把一次正确的调用改坏，返回 (工具名, 参数文本)。"""
    args = dict(args)
    if mistake == "stubborn":            # 固执地重复的那个错：能写错类型就写错类型，否则写错工具名
        mistake = "wrong_type" if wrong_type(args, parameters) != args else "unknown_tool"
    if mistake == "wrong_type":
        args = wrong_type(args, parameters)
    elif mistake == "missing_argument" and args:
        required = [key for key in args if key in (parameters.get("required") or [])]
        args.pop((required or list(args))[0])
    elif mistake == "unknown_tool":
        name = f"{name}_info"
    elif mistake == "string_numbers":    # 5 -> "5"：类型不对，但注册表能无损地转回来
        args = {key: json.dumps(value) if is_number(value) else value for key, value in args.items()}
    text = json.dumps(args, ensure_ascii=False)
    if mistake == "bad_json":
        text = text[:-1]
    elif mistake == "fenced_json":
        text = f"```json\n{text}\n```"
    return name, text


def wrong_type(args, parameters):
    """把一个参数换成类型不对、而且没法自动转换的值：数字写成中文 "三"，字符串写成对象。
    像 "3" 这样的字符串数字会被注册表悄悄转换掉，课堂上就看不到错误怎么回到模型、模型怎么改。"""
    numbers_first = sorted(args, key=lambda k: not isinstance(args[k], (int, float)) or isinstance(args[k], bool))
    for key in numbers_first:
        value = args[key]
        if isinstance(value, bool):
            bad = "也许"
        elif isinstance(value, (int, float)):
            bad = spelled(value)
        elif isinstance(value, str):
            bad = {"value": value}
        else:
            bad = "三"
        if not is_valid({**args, key: bad}, parameters, parameters):
            return {**args, key: bad}
    return args


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def spelled(number):
    """3 -> "三"，25 -> "二十五"；别的数写成 "大约 120"。都不是 JSON 数字。"""
    digits = "零一二三四五六七八九"
    if number != int(number) or not 0 <= number < 100:
        return f"大约 {number:g}"
    tens, ones = divmod(int(number), 10)
    if not tens:
        return digits[ones]
    return (digits[tens] if tens > 1 else "") + "十" + (digits[ones] if ones else "")


def call_id(name, args, index, round_number=0):
    """确定的调用 id；把第几轮也算进去，同一个调用在不同轮里重发（固执、停不下来）时 id 也不重复。"""
    return f"call_{digest([name, args, index] + ([round_number] if round_number else []))[:16]}"


def native_message(calls, mistake, schemas, round_number=0):
    tool_calls = []
    for index, (name, args) in enumerate(calls):
        shown_name, text = spoil(name, args, mistake if index == 0 else None, schemas.get(name, {}))
        tool_calls.append({"id": call_id(name, args, index, round_number), "type": "function",
                           "function": {"name": shown_name, "arguments": text}})
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def react_text(call, remaining, plan, mistake, parameters):
    name, args = call
    shown_name, text = spoil(name, args, mistake, parameters)
    thought = f"Thought: 问题需要用 {name} 工具，参数从问题里取。"
    if mistake == "endless":
        thought = f"Thought: 结果也许变了，我再用 {name} 查一遍。"
    if mistake == "fenced_json":
        action = f"Action: {shown_name}\n{text}"
    elif mistake == "bold_action":
        action = f"**Action:** {shown_name}[{text}]"
    elif mistake == "no_action_line":     # 说了要做什么，却没写 Action: 行
        action = f"我现在就调用 {shown_name}，参数是 {text}。"
    elif mistake == "action_input_kv":    # 参数另起一行，写成 key=value 而不是 JSON
        pairs = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items())
        action = f"Action: {shown_name}\nAction Input: {pairs or '无'}"
    elif mistake == "paren_call":         # 像写 Python 函数调用一样用了圆括号
        action = f"Action: {shown_name}({text})"
    else:
        action = f"Action: {shown_name}[{text}]"
    reply = f"{thought}\n{action}"
    if mistake == "invented_observation":
        reply += "\nObservation: （这是我编的结果）一切正常\nThought: 我猜到答案了\nFinal Answer: 一切正常"
    if mistake == "multi_step":
        other = plan[remaining[1]] if len(remaining) > 1 else call
        reply += f"\nThought: 接着再查一步。\nAction: {other[0]}[{json.dumps(other[1], ensure_ascii=False)}]"
    return reply


def json_text(call, remaining, plan, mistake, parameters):
    name, args = call
    shown_name, text = spoil(name, args, mistake, parameters)
    if mistake == "bad_json":
        body = f'{{"tool": "{shown_name}", "arguments": {text}'
    else:
        arguments = text if mistake != "fenced_json" else json.dumps(args, ensure_ascii=False)
        body = f'{{"tool": "{shown_name}", "arguments": {arguments}}}'
    if mistake == "fenced_json":
        return f"好的，我来调用工具：\n```json\n{body}\n```\n稍等结果。"
    if mistake == "multi_step":
        other = plan[remaining[1]] if len(remaining) > 1 else call
        return body + "\n" + json.dumps({"tool": other[0], "arguments": other[1]}, ensure_ascii=False)
    if mistake == "invented_observation":
        return body + "\n工具返回：（这是我编的）一切正常。所以答案是一切正常。"
    return body


if __name__ == "__main__":
    demo_tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "查询指定城市的当前天气",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "城市名"}},
                       "required": ["city"]}}}]
    model = OfflineModel()
    print(model.respond([{"role": "user", "content": "北京和上海的天气怎么样？"}], demo_tools))
