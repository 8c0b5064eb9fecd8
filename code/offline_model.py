"""离线规则模型：不联网、不要 Key，也能把工具调用的协议完整走一遍。

先说清楚：它不是大模型。它只是一组写死的规则——
  1. 把问题切成关键词（中文取相邻两个字，英文取单词），和每个工具的名字、描述、参数说明比对，
     重合最多的工具就是"选中的工具"；
  2. 按参数的 JSON Schema 从问题里抠参数：整数/小数取问题里的数字，枚举取问题里提到的值，
     字符串取引号里的内容、算式，或"去掉停用词和工具关键词后剩下的那段"（城市名、人名）；
  3. 拿到工具结果后，把结果原样引用进最终回答。
同样的输入永远得到同样的输出，所以课堂演示和测试都可以依赖它。

它能说三种"方言"：原生 function calling（tools=）、ReAct 文本（Thought/Action/Final Answer）、
纯文本里的 JSON。后两种没有 tools= 参数，它从系统提示词里读出工具清单（格式见 parse_prompt_tools）。

它还能故意犯真实模型常犯的错（MISTAKES），只在回答一个新问题的第一轮犯，
这样循环把错误反馈回去以后，学生能看到模型"改正"。
"""
import hashlib
import json
import re

import jsonschema

MODEL_NAME = "offline-rule-model"
FINGERPRINT = "rule-based-not-an-llm"
NOTICE = "（离线规则模型：以上回答由关键词规则拼出，不是真正的大模型。）"

# 每种错误对应真实模型的一种常见毛病；循环应该把它们变成模型看得懂的反馈。
MISTAKES = {
    "wrong_type": '参数类型写错：整数参数写成字符串 "3"',
    "missing_argument": "漏掉一个必填参数",
    "unknown_tool": "调用一个不存在的工具名",
    "bad_json": "参数 JSON 不完整（少了结尾的花括号）",
    "fenced_json": "把 JSON 包在 ```json 代码块里",
    "bold_action": "把 Action: 写成 markdown 粗体 **Action:**（ReAct 文本模式）",
    "invented_observation": "不等工具执行就自己编造 Observation（模拟不支持 stop 的后端）",
    "multi_step": "一次回复里写了好几步",
}

# ---------------------------------------------------------------- 关键词

ZH_STOP = sorted(
    "请 帮我 帮忙 麻烦 一下 查询 查一下 查查 查 告诉我 现在 今天 当前 目前 怎么样 如何 是多少 多少 什么 "
    "哪些 哪个 的 了 吗 呢 吧 是 有 给我 我 你 想知道 知道 看看 一个 算一下 等于 几 还有 以及 情况 结果 "
    "然后 再 并且 同时 另外 接着 需要 能否 可以 一共 用 把 未来 最近 这几天 明天 后天".split(),
    key=len, reverse=True)
EN_STOP = set("""a an the is are was what whats how much many please tell me show find get give of in on at
for to and or with about current now today can you i my me do does this that it be by from as into
using use value""".split())
# 英文工具名配中文问题时，靠这张小表搭桥。
SYNONYMS = {
    "天气": "weather forecast", "气温": "weather temperature", "温度": "temperature",
    "计算": "calculate calculator calc math expression evaluate", "算": "calculate calculator calc math",
    "员工": "employee employees staff", "工资": "salary", "部门": "department",
    "搜索": "search", "查找": "search find lookup", "文件": "file", "读取": "read", "写入": "write",
    "时间": "time", "日期": "date", "汇率": "exchange rate currency", "翻译": "translate",
    "股票": "stock", "新闻": "news", "多少度": "weather temperature 天气 温度",
    "华氏": "fahrenheit temperature 温度", "摄氏": "celsius temperature 温度",
}
# 枚举值常是英文缩写，问题里却写中文：这张表让 "华氏" 也能选中 "f"。
ENUM_HINTS = {"f": "华氏 fahrenheit", "fahrenheit": "华氏", "c": "摄氏 celsius", "celsius": "摄氏"}
CONJUNCTIONS = re.compile(r"\s*(?:和|与|及|跟|、|,|，|\band\b|&)\s*")
CLAUSE_BREAK = re.compile(r"[，,；;。]?\s*(?:然后|再|并且|同时|另外|接着|\band then\b|\bthen\b|\balso\b)\s*")
QUOTED = re.compile(r"[\"“「『《`]([^\"”」』》`]+)[\"”」』》`]")
EXPRESSION = re.compile(r"[\d\s.+\-*/×÷()（）^%]*\d[\d\s.+\-*/×÷()（）^%]*")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_NUMBER = re.compile(r"[一二两三四五六七八九十]+(?=[天个条次位名岁年月日周本件页号])")


def keywords(text):
    """问题或工具说明 -> 关键词集合：中文相邻两字，英文单词（小写，去掉复数 s）。"""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text or "").replace("_", " ")
    words = {w.lower() for w in re.findall(r"[A-Za-z]{2,}", text)} - EN_STOP
    words = {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}
    han = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        han |= {run[i:i + 2] for i in range(len(run) - 1)} or {run}
    return words | {h for h in han if h not in ZH_STOP}


def question_keywords(text):
    found = keywords(text)
    for zh, en in SYNONYMS.items():
        if zh in text:
            found |= keywords(en)
        if any(w in found for w in keywords(en)):
            found.add(zh)
    if find_expression(text):
        found |= keywords("calculate calculator calc math expression 计算 表达式")
    return found


def tool_keywords(tool):
    fn = tool["function"]
    parts = [fn["name"], strip_examples(fn.get("description") or "")]
    for name, prop in ((fn.get("parameters") or {}).get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        parts += [name, strip_examples(str(prop.get("description", "")))] + [str(v) for v in prop.get("enum", [])]
    return keywords(" ".join(parts))


def strip_examples(text):
    """说明里的举例（"城市名，如 北京、上海"）不算工具的关键词：否则问题里的 "北京" 会被当成工具词删掉。"""
    return re.sub(r"(?:例如|比如|e\.g\.|such as|(?<![\u4e00-\u9fff])如)\s*[^，,；;。）)\n]*", " ", text)


def find_expression(text):
    """最长的一段"数字 + 运算符"，例如 (3+4)*5；没有运算符的纯数字不算。"""
    spans = [m.group().strip() for m in EXPRESSION.finditer(text)]
    spans = [s for s in spans if re.search(r"\d\s*[+\-*/×÷^%]\s*[\d(（]", s)]
    if not spans:
        return None
    best = max(spans, key=len)
    return best.translate(str.maketrans("×÷（）", "*/()")).strip()


def chinese_number(text):
    if "十" in text:
        tens, _, ones = text.partition("十")
        return CN_DIGITS.get(tens, 1) * 10 + CN_DIGITS.get(ones, 0)
    return int("".join(str(CN_DIGITS[c]) for c in text))


# ---------------------------------------------------------------- 从问题里抠参数

class Clues:
    """一句话里能当参数的线索：引号内容、算式、数字、剩下的词段；用掉一个少一个。"""

    def __init__(self, clause, tool_words):
        self.text = clause
        self.quoted = QUOTED.findall(clause)
        rest = QUOTED.sub(" ", clause)
        self.expression = find_expression(rest)
        if self.expression:
            rest = rest.replace(self.expression, " ")
        self.numbers = [float(n) for n in NUMBER.findall(rest)]
        self.numbers += [chinese_number(m.group()) for m in CN_NUMBER.finditer(rest)]
        self.runs = remaining_runs(rest, tool_words)
        self.used = []

    def take_string(self, name, prop):
        label = f"{name} {prop.get('description', '')}".lower()
        if self.expression and re.search(r"expr|formula|math|calc|表达式|算式|公式|计算", label):
            value, self.expression = self.expression, None
            return value
        if re.search(r"date|日期", label):
            found = re.search(r"\d{4}-\d{1,2}-\d{1,2}", self.text)
            if found:
                return found.group()
        if self.quoted:
            return self.quoted.pop(0)
        if self.runs:
            return self.runs.pop(0)
        return None

    def take_enum(self, values):
        """问题里提到的枚举值，按出现的先后取（"把 km 换算成 mi"：先 km 后 mi）。"""
        spots = sorted((position(v, self.text), i) for i, v in enumerate(values) if v not in self.used)
        for spot, i in spots:
            if spot >= 0:
                self.used.append(values[i])
                return values[i]
        return None

    def take_number(self):
        return self.numbers.pop(0) if self.numbers else None


def remaining_runs(text, tool_words):
    """去掉停用词、工具关键词、数字和标点以后剩下的连续片段，例如 "北京和上海的天气" -> ["北京和上海"]。"""
    keep = [True] * len(text)
    for i in range(len(text) - 1):
        if text[i:i + 2] in tool_words:
            keep[i] = keep[i + 1] = False
    for word in ZH_STOP:
        for m in re.finditer(re.escape(word), text):
            keep[m.start():m.end()] = [False] * len(word)
    for m in re.finditer(r"[A-Za-z]+", text):
        if m.group().lower() in EN_STOP - {"and"} or m.group().lower().rstrip("s") in tool_words:
            keep[m.start():m.end()] = [False] * (m.end() - m.start())
    cleaned = "".join(c if k and not re.match(r"[\d?？!！。.,，:：;；()（）\[\]]", c) else "|"
                      for c, k in zip(text, keep))
    cleaned = re.sub(r"'s\b|'", "|", cleaned)
    runs = [r.strip(" 和与及跟、&") for r in cleaned.split("|")]
    runs = [r for r in runs if r.strip() and not re.fullmatch(r"[\u4e00-\u9fff]", r.strip())]
    return [re.sub(r"^(?:and\s+)+|(?:\s+and)+$", "", r).strip() for r in runs]


def entity_list(run):
    parts = [p for p in CONJUNCTIONS.split(run or "") if p.strip()]
    return parts if len(parts) >= 2 else []


# ---------------------------------------------------------------- 按 Schema 填值（保证合法）

def resolve(schema, root):
    """展开本地 $ref（#/$defs/X），以及 anyOf/oneOf 和类型列表里的第一个非 null 分支。"""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema, seen = node, seen + 1
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key, []) if resolve(b, root).get("type") != "null"]
        if branches:
            merged = {k: v for k, v in schema.items() if k != key}
            return {**merged, **resolve(branches[0], root)}
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "null")
        schema = {**schema, "type": kind}
    return schema


def clamp(value, schema, integer):
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    step = 1 if integer else 0.5
    if low is not None and (value < low or ("exclusiveMinimum" in schema and value <= low)):
        value = low + (step if "exclusiveMinimum" in schema else 0)
    if high is not None and (value > high or ("exclusiveMaximum" in schema and value >= high)):
        value = high - (step if "exclusiveMaximum" in schema else 0)
    multiple = schema.get("multipleOf")
    if multiple and integer and value % multiple:
        value = value - value % multiple + (multiple if low is not None and value - value % multiple < low else 0)
    return int(value) if integer else float(value)


def minimal(schema, root):
    """最朴素的合法值：有默认用默认，有枚举用第一个，否则按类型取最小。"""
    schema = resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema and is_valid(schema["default"], schema, root):
        return schema["default"]
    kind = schema.get("type", "string")
    if kind in ("integer", "number"):
        return clamp(0, schema, kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if kind == "array":
        return [minimal(schema.get("items", {}), root) for _ in range(schema.get("minItems", 0))]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal(props.get(k, {}), root) for k in schema.get("required", [])}
    # 至少一个字符（空串常被工具拒绝），但不超过 maxLength。
    return "x" * max(schema.get("minLength", 0), min(1, schema.get("maxLength", 1)))


def is_valid(value, schema, root):
    return jsonschema.Draft202012Validator({**schema, "$defs": root.get("$defs", {}),
                                            "definitions": root.get("definitions", {})}).is_valid(value)


def fill(schema, clues, root, required=True, name=""):
    """按一个属性的 schema 从线索里取值；取不到且非必填就返回 None（留给默认值）。"""
    schema = resolve(schema, root)
    kind = schema.get("type")
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        value = clues.take_enum(schema["enum"])
        if value is not None:
            return value
        return minimal(schema, root) if required else None
    if kind in ("integer", "number"):
        number = clues.take_number()
        if number is None:
            return minimal(schema, root) if required else None
        return clamp(number, schema, kind == "integer")
    if kind == "boolean":
        return minimal(schema, root) if required else None
    if kind == "array":
        return fill_array(schema, clues, root, required)
    if kind == "object":
        return fill_object(schema, clues, root)
    if kind in (None, "string"):
        text = clues.take_string(name, schema)
        if text is None:
            return minimal(schema, root) if required else None
        text = text[: schema.get("maxLength", len(text))]
        return text if len(text) >= schema.get("minLength", 0) else minimal(schema, root)
    return minimal(schema, root) if required else None


def fill_array(schema, clues, root, required):
    items = resolve(schema.get("items", {}), root)
    if items.get("type") in ("integer", "number"):
        values = [clamp(n, items, items["type"] == "integer") for n in clues.numbers]
        clues.numbers = []
    elif items.get("enum"):
        values = [v for v in items["enum"] if mentioned(v, clues.text)]
    elif items.get("type") in (None, "string"):
        first = clues.runs.pop(0) if clues.runs else None
        values = entity_list(first) or ([first] if first else [])
    else:
        values = []
    if schema.get("uniqueItems"):
        values = [v for i, v in enumerate(values) if v not in values[:i]]
    values = values[: schema.get("maxItems", len(values))]
    while len(values) < schema.get("minItems", 0):
        values.append(minimal(items, root))
    if not values and not required:
        return None
    return values if is_valid(values, schema, root) else minimal(schema, root)


def fill_object(schema, clues, root):
    props = schema.get("properties") or {}
    required = [k for k in schema.get("required", []) if k in props or True]
    order = required + [k for k in props if k not in required]
    args = {}
    for key in order:
        value = fill(props.get(key, {}), clues, root, key in required, key)
        if value is not None or (key in required and resolve(props.get(key, {}), root).get("type") == "null"):
            args[key] = value
    return repair(args, schema, root)


def repair(args, schema, root):
    """最后一道保险：用 jsonschema 检查，出错的属性换成最小合法值（必填）或删掉（选填）。"""
    for _ in range(len(args) + 2):
        errors = list(jsonschema.Draft202012Validator({**schema, "$defs": root.get("$defs", {}),
                                                       "definitions": root.get("definitions", {})}).iter_errors(args))
        if not errors:
            return args
        for error in errors:
            key = error.path[0] if error.path else None
            if key in args:
                if key in schema.get("required", []):
                    args[key] = minimal((schema.get("properties") or {}).get(key, {}), root)
                else:
                    args.pop(key)
    return args if is_valid(args, schema, root) else minimal(schema, root)


def mentioned(value, text):
    return position(value, text) >= 0


def position(value, text):
    """枚举值在问题里第一次出现的位置，没出现是 -1。英文缩写要整词匹配（"c" 不能匹配 "calc"）。"""
    value = str(value)
    spots = [text.find(hint) for hint in ENUM_HINTS.get(value.lower(), "").split() if hint in text]
    if re.fullmatch(r"[A-Za-z0-9_\-]+", value):
        found = re.search(rf"(?<![A-Za-z]){re.escape(value)}(?![A-Za-z])", text, re.I)
        spots += [found.start()] if found else []
    elif value in text:
        spots.append(text.find(value))
    return min(spots) if spots else -1


# ---------------------------------------------------------------- 选工具、定计划

def plan_calls(question, tools, tool_choice=None):
    """问题 -> [(工具名, 参数)]。一句里问了两件事（"…，再…" 或 "北京和上海"）就计划两次调用。"""
    if not tools or tool_choice == "none":
        return []
    forced = tool_choice.get("function", {}).get("name") if isinstance(tool_choice, dict) else None
    calls = []
    for clause in [c for c in CLAUSE_BREAK.split(question) if c.strip()] or [question]:
        tool = best_tool(clause, tools, forced, must=(tool_choice == "required" or forced is not None))
        if tool is None:
            continue
        words = tool_keywords(tool)
        root = tool["function"].get("parameters") or {"type": "object", "properties": {}}
        clues = Clues(clause, words)
        primary = first_string_property(root)
        entities = entity_list(clues.runs[0]) if (primary and clues.runs) else []
        for entity in entities or [None]:
            if entity is not None:
                clues = Clues(clause, words)
                clues.runs[0] = entity
            call = (tool["function"]["name"], fill_object(resolve(root, root), clues, root))
            if call not in calls:
                calls.append(call)
    if not calls and (tool_choice == "required" or forced):
        tool = best_tool(question, tools, forced, must=True)
        root = tool["function"].get("parameters") or {"type": "object", "properties": {}}
        calls.append((tool["function"]["name"], fill_object(resolve(root, root), Clues(question, set()), root)))
    return calls


def best_tool(text, tools, forced=None, must=False):
    if forced:
        return next((t for t in tools if t["function"]["name"] == forced), tools[0])
    wanted = question_keywords(text)
    scored = [(len(wanted & tool_keywords(t)), -i, t) for i, t in enumerate(tools)]
    score, _, tool = max(scored, key=lambda s: s[:2])
    return tool if score > 0 or must else None


def first_string_property(schema):
    for name, prop in (schema.get("properties") or {}).items():
        prop = resolve(prop, schema)
        if prop.get("type") in (None, "string") and not prop.get("enum") and name in schema.get("required", [name]):
            return name
    return None


# ---------------------------------------------------------------- 读对话

def text_of(content):
    if isinstance(content, list):   # 多段内容：[{"type": "text", "text": ...}]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def is_observation(message):
    return message.get("role") == "user" and text_of(message.get("content")).lstrip().startswith("Observation")


def is_error(text):
    return text.lstrip().removeprefix("Observation:").lstrip().startswith("❌")


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

class OfflineModel:
    """respond(messages, tools=...) -> (assistant 消息, finish_reason)；完全确定、不联网。"""

    def __init__(self, mistake=None):
        if mistake and mistake not in MISTAKES:
            raise ValueError(f"未知的错误类型 {mistake!r}，可选：{', '.join(MISTAKES)}")
        self.mistake = mistake

    def respond(self, messages, tools=None, tool_choice=None, parallel_tool_calls=None, stop=None):
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
        history = messages[asked[-1] + 1:]
        first_turn = not any(m.get("role") == "assistant" for m in history)
        plan = plan_calls(question, tools, tool_choice)
        if not plan:
            names = "、".join(t["function"]["name"] for t in tools) or "（没有工具）"
            return self._final(f"我没有找到和问题匹配的工具（可用：{names}），所以不调用工具。"
                               f"请换个说法，或者换成真实模型试试。", mode), "stop"
        remaining, results, failures = replay(plan, history, mode)
        mistake = self.mistake if first_turn else None
        if not remaining or failures >= 2:
            return self._final(summarise(results), mode), "stop"
        batch = remaining if (mode == "native" and parallel_tool_calls is not False) else remaining[:1]
        calls = [plan[i] for i in batch]
        if mode == "native":
            return native_message(calls, mistake, question), "tool_calls"
        text = react_text(calls[0], remaining, plan, mistake) if mode == "react" else json_text(calls[0], remaining, plan, mistake)
        if stop and mistake != "invented_observation":   # 编造 Observation 模拟的正是不支持 stop 的后端
            for marker in stop:
                text = text.split(marker)[0] if marker in text else text
        return {"role": "assistant", "content": text}, "stop"

    def _final(self, answer, mode):
        answer = f"{answer}\n{NOTICE}"
        if mode == "react":
            answer = f"Thought: 工具结果已经齐了，可以作答。\nFinal Answer: {answer}"
        elif mode == "json":
            answer = json.dumps({"answer": answer}, ensure_ascii=False)
        return {"role": "assistant", "content": answer}

    # ---- HTTP 形状：和 OpenAI 的 /chat/completions 一样
    def completion_body(self, request):
        message, finish = self.respond(request.get("messages") or [], request.get("tools"),
                                       request.get("tool_choice"), request.get("parallel_tool_calls"),
                                       as_list(request.get("stop")))
        prompt = sum(len(text_of(m.get("content"))) for m in request.get("messages") or [])
        answer = len(json.dumps(message, ensure_ascii=False))
        return {
            "id": "offline-" + digest(request.get("messages"))[:12],
            "object": "chat.completion",
            "created": 0,    # 固定值：同样的请求得到逐字节相同的响应
            "model": MODEL_NAME,
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            # 没有真正的分词器：按字符数粗估，只为让界面有东西可显示。
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


def as_list(stop):
    return [stop] if isinstance(stop, str) else list(stop or [])


def digest(value):
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()


def replay(plan, history, mode):
    """重放历史：哪些计划中的调用已经成功、拿到了哪些结果、末尾连续失败了几轮。"""
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
        ok = [(plan_index, text) for plan_index, text in zip(covered, answers) if text is not None and not is_error(text)]
        results += [(plan[p][0], plan[p][1], text) for p, text in ok]
        remaining = [p for p in remaining if p not in {p for p, _ in ok}]
        failed = [t for t in answers if t is not None and is_error(t)]
        failures = failures + 1 if answers and not ok else 0
        if failed and not ok:
            results.append((None, None, failed[-1]))
    return remaining, results, failures


def summarise(results):
    good = [(name, args, text) for name, args, text in results if name]
    if not good:
        last = results[-1][2] if results else "没有结果"
        return f"工具调用没有成功，最后一次的反馈是：{last[:300]}"
    lines = []
    for name, args, text in good:
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        lines.append(f"- {name}({shown})：{text[:300]}")
    return "根据工具返回的结果：\n" + "\n".join(lines)


# ---------------------------------------------------------------- 三种写法 + 故意犯错

def spoil(name, args, mistake, tools_hint=""):
    """按 mistake 把一次正确的调用改坏，返回 (工具名, 参数文本)。"""
    args = dict(args)
    text = None
    if mistake == "wrong_type":
        key = next((k for k, v in args.items() if isinstance(v, (int, float)) and not isinstance(v, bool)), None)
        if key is not None:
            args[key] = str(args[key])
        elif args:
            key = next(iter(args))
            args[key] = 3 if isinstance(args[key], str) else "3"
    elif mistake == "missing_argument" and args:
        args.pop(next(iter(args)))
    elif mistake == "unknown_tool":
        name = f"{name}_info"
    text = json.dumps(args, ensure_ascii=False) if text is None else text
    if mistake == "bad_json":
        text = text[:-1]
    elif mistake == "fenced_json":
        text = f"```json\n{text}\n```"
    return name, text


def call_id(name, args, index):
    return f"call_{digest([name, args, index])[:16]}"


def native_message(calls, mistake, question):
    tool_calls = []
    for index, (name, args) in enumerate(calls):
        shown_name, text = spoil(name, args, mistake if index == 0 else None)
        tool_calls.append({"id": call_id(name, args, index), "type": "function",
                           "function": {"name": shown_name, "arguments": text}})
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}


def react_text(call, remaining, plan, mistake):
    name, args = call
    shown_name, text = spoil(name, args, mistake)
    thought = f"Thought: 问题需要用 {name} 工具，参数从问题里取。"
    if mistake == "fenced_json":
        action = f"Action: {shown_name}\n{text}"
    elif mistake == "bold_action":
        action = f"**Action:** {shown_name}[{text}]"
    else:
        action = f"Action: {shown_name}[{text}]"
    reply = f"{thought}\n{action}"
    if mistake == "invented_observation":
        reply += "\nObservation: （这是我编的结果）一切正常\nThought: 我猜到答案了\nFinal Answer: 一切正常"
    if mistake == "multi_step":
        other = plan[remaining[1]] if len(remaining) > 1 else call
        reply += f"\nThought: 接着再查一步。\nAction: {other[0]}[{json.dumps(other[1], ensure_ascii=False)}]"
    return reply


def json_text(call, remaining, plan, mistake):
    name, args = call
    shown_name, text = spoil(name, args, mistake)
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
