"""离线规则模型的"填参数"部分：从一句问题里，按工具的 JSON Schema 抠出参数。

全是规则，没有模型。思路按顺序：
  1. 先拿走形状明确的线索：引号里的内容、算式、日期、数字（含"三天"这样的中文数字）；
  2. 枚举参数：问题里出现了某个枚举值，或者它的中文说法——说明里写的注解（"c 摄氏度，f 华氏度"）
     或常见单位、语言的对照表（km 公里、mi 英里……）；
  3. 数字参数：每个数字带着它旁边的"标签"（"基本工资 30000" 里的 "基本工资"、"税率 20%" 里的 "税率"），
     标签和参数的名字、说明最像的配成一对（基本工资 -> base，奖金 -> bonus）；配不上的按先后顺序填。
     "20%" 填进"率"一类的参数时写成 0.2；"3万" 是 30000；名字像 id 的参数（employee_id）拿问题里的编号；
  4. 字符串参数：从问题里删掉"属于工具的词"（工具名、描述、参数说明里的词）、问句词、时间词，
     在"的"这类虚词处切开，剩下的片段就是候选（城市名、人名……）。
     参数说明里举的例子（"如 北京、上海"）不是答案，只用来判断哪个候选更像（中文还是英文、几个字）；
  5. 候选里有"和/与/、"连着的几样东西（"北京和上海"），就拆成几次并行调用；
  6. 最后用 jsonschema 检查一遍，不合法的值换成最小合法值——所以参数永远合法。

入口：arguments_for(问题, 工具) -> [参数字典, ...]（通常一个，"北京和上海"时两个）；
      argument_fit(问题, 工具) -> 整数（参数能从问题里取到多少，给选工具打分用）。
"""
import re
import unicodedata

import jsonschema

# ---------------------------------------------------------------- 词表

# 问句里的套话：选工具时不算关键词，抠参数时删掉。长的在前，先删长的。
FILLER = sorted(
    "请问 请 帮我 帮忙 麻烦 一下 查询 查一下 查一查 查下 查查 查 看一下 看下 看看 问一下 问下 找一下 找下 "
    "搜一下 搜下 告诉我 怎么样 如何 是多少 多少 什么 哪些 哪个 分别 都有谁 有谁 的 了 吗 呢 吧 啊 呀 是 有 "
    "从 到 给我 我 你 想知道 知道 一个 算一下 等于 几 还有 以及 情况 结果 然后 再 并且 同时 另外 接着 需要 能否 "
    "可以 一共 用 把 给 加上 换算成 换算 转换成 转换 变成 换成 是不是".split(),
    key=len, reverse=True)
# 时间词：选工具时有用（"明天" 指向预报），但不会是城市名、人名，抠参数时删掉。
TIME_WORDS = sorted(
    "今天 明天 后天 昨天 今晚 今早 现在 当前 目前 最近 这几天 几天 未来 本周 这周 下周 周末 "
    "这个月 本月 上个月 下个月 今年 去年 明年".split(), key=len, reverse=True)
EN_STOP = set("""a an the is are was what whats how much many please tell me show find get give of in on at
for to and or with about current now today can you i my me do does this that it be by from as into
using use value""".split())
# 常见枚举缩写的中文（和英文）说法：说明里没写注解时，靠这张表认出 "公里" 就是 km。
KNOWN_GLOSSES = {
    "c": "摄氏 celsius", "f": "华氏 fahrenheit", "celsius": "摄氏", "fahrenheit": "华氏",
    "km": "公里 千米 kilometer kilometre", "m": "米 meter metre", "cm": "厘米", "mm": "毫米",
    "mi": "英里 mile", "ft": "英尺 foot feet", "in": "英寸 inch", "kg": "公斤 千克 kilogram", "g": "克 gram",
    "lb": "磅 pound", "l": "升 liter litre", "ml": "毫升",
    "zh": "中文 汉语", "en": "英文 英语 english", "ja": "日文 日语 japanese", "fr": "法语 法文 french",
    "de": "德语 德文 german", "ko": "韩语 韩文 korean",
    "cny": "人民币", "rmb": "人民币", "usd": "美元", "eur": "欧元", "jpy": "日元", "gbp": "英镑",
}
# 英文参数名里常见的词，中文问题里怎么说：问题说 "奖金 8000"，参数叫 bonus，靠这张表配上。
PARAM_GLOSSES = {
    "base": "基本 基础 底薪", "bonus": "奖金 提成 年终奖", "tax": "税", "rate": "率", "ratio": "比例 率",
    "salary": "工资 薪", "price": "价格 单价 价", "amount": "金额 数额", "total": "总 合计", "fee": "费",
    "count": "数量 个数", "quantity": "数量", "discount": "折扣", "interest": "利息 利率",
    "id": "编号 工号 号", "employee": "员工", "user": "用户", "order": "订单", "days": "天", "hours": "小时",
    "minutes": "分钟", "age": "年龄 岁", "year": "年", "month": "月", "weight": "重量 体重", "height": "身高 高度",
}
# 常见城市的英文名（小写）-> 中文名。参数说明举的例子是这些中文城市名时（"城市名，如 北京、上海"），
# 问题里的 "Beijing" 就按中文名填，像真模型那样照着说明写；表里没有的英文名原样填（"Paris"、"New York"），
# 有没有这个城市由工具自己回答。
CITY_NAMES = {
    "beijing": "北京", "peking": "北京", "shanghai": "上海", "guangzhou": "广州", "canton": "广州",
    "shenzhen": "深圳", "hangzhou": "杭州", "chengdu": "成都", "chongqing": "重庆", "tianjin": "天津",
    "nanjing": "南京", "wuhan": "武汉", "xi'an": "西安", "xian": "西安", "suzhou": "苏州", "hong kong": "香港",
}
# 两个数字之间的这些词把"前一个数字的尾巴"和"后一个数字的标签"分开："30000 元底薪和 8000 元奖金"。
AMOUNT_BREAK = re.compile(r"加上|外加|另加|以及|还有|[和与及跟、，,；;]")
RATE_LIKE = re.compile(r"rate|ratio|率|比例|小数")
ID_LIKE = re.compile(r"(?:^|_)(?:id|ID|no)$|[a-z]Id$|编号|工号")
CONJUNCTIONS = re.compile(r"\s*(?:和|与|及|跟|、|,|，|\band\b|&)\s*")
QUOTED = re.compile(r"[\"“「『《`]([^\"”」』》`]+)[\"”」』》`]")
EXPRESSION = re.compile(r"[\d\s.+\-*/×÷()（）^%]*\d[\d\s.+\-*/×÷()（）^%]*")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:\s*(?P<wan>万))?(?P<percent>\s*[%％])?")
CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_NUMBER = re.compile(r"[一二两三四五六七八九十]+(?=[天个条次位名岁年月日周本件页号])")
EXAMPLES = re.compile(r"(?:例如|比如|e\.g\.|such as|(?<![\u4e00-\u9fff])如)\s*([^，,；;。）)\n]*)")
HAN = re.compile(r"[\u4e00-\u9fff]")
# 参数说明要的是一整句话（"一句话的事实，如 用户叫小林"）：整句照抄，不从里面挑词。
SENTENCE = re.compile(r"一句话|一句完整|sentence", re.I)
ASKING = re.compile(r"^(?:请|麻烦)?(?:你)?(?:帮我)?(?:记住|记一下|记下|记得|remember(?:\s+that)?)[：:，,\s]*", re.I)
DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")


def keywords(text):
    """一段文字 -> 关键词集合：中文相邻两字，英文单词（小写，去掉复数 s）。套话先删掉。"""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text or "").replace("_", " ")
    words = {w.lower() for w in re.findall(r"[A-Za-z]{2,}", text)} - EN_STOP
    words = {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}
    han = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", blank_out(text, [w for w in FILLER if len(w) > 1 or w in "的了吗呢吧"])):
        han |= {run[i:i + 2] for i in range(len(run) - 1)} or {run}
    return words | han


def blank_out(text, phrases):
    for phrase in phrases:
        text = text.replace(phrase, " ")
    return text


def strip_examples(text):
    """说明里的举例（"城市名，如 北京、上海"）不算工具的词：否则问题里的 "北京" 会被当成工具词删掉。"""
    return EXAMPLES.sub(" ", text)


def examples_in(description):
    """说明里举的例子：'城市名，如 北京、上海' -> ['北京', '上海']。"""
    found = []
    for m in EXAMPLES.finditer(description or ""):
        found += [p.strip() for p in re.split(r"[、/，,\s]+|或", m.group(1)) if p.strip()]
    return found


def parameters_of(tool):
    return (tool["function"].get("parameters") or {}) if isinstance(tool.get("function"), dict) else {}


def tool_words(tool):
    """工具自己的词：名字、描述、参数名、参数说明、枚举值（说明里的举例除外）。"""
    fn = tool["function"]
    parts = [fn["name"], strip_examples(fn.get("description") or "")]
    for name, prop in (parameters_of(tool).get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        parts += [name, strip_examples(str(prop.get("description", "")))] + [str(v) for v in prop.get("enum", [])]
    return keywords(" ".join(parts))


def find_expression(text):
    """最长的一段"数字 + 运算符"，例如 (3+4)*5；没有运算符的纯数字、日期 2025-12-01 不算。"""
    spans = [m.group().strip() for m in EXPRESSION.finditer(DATE.sub(" ", text))]
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


# ---------------------------------------------------------------- 枚举值：值本身或它的说法

def glosses(value, description):
    """一个枚举值在问题里可能的说法：值本身、说明里紧挨着它的中文（"c 摄氏度"）、常见对照表。"""
    value = str(value)
    said = [value]
    if re.fullmatch(r"[A-Za-z0-9_\-]+", value):
        token = rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])"
        said += re.findall(token + r"\s*[:：=（(]?\s*([\u4e00-\u9fff]{1,6})", description, re.I)
        said += re.findall(r"([\u4e00-\u9fff]{1,6})\s*[（(]\s*" + token, description, re.I)
        said += KNOWN_GLOSSES.get(value.lower(), "").split()
    return said


def find_said(word, text):
    """word 在 text 里出现的位置；英文缩写要整词匹配（"c" 不能匹配 "calc"）。"""
    if re.fullmatch(r"[A-Za-z0-9_\-]+", word):      # 前面可以紧挨数字："5km"
        return [m.start() for m in re.finditer(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text, re.I)]
    return [m.start() for m in re.finditer(re.escape(word), text)] if word else []


def enum_mentions(text, schemas):
    """问题里提到的枚举值：[(位置, 长度, 值)]，按位置排序。长说法先占位，"千米" 里的 "米" 不再算一次。"""
    spots = []
    for schema in schemas:
        description = str(schema.get("description", ""))
        for value in schema.get("enum", []):
            for word in glosses(value, description):
                spots += [(len(word), start, value) for start in find_said(word, text)]
    taken, found = set(), []
    for length, start, value in sorted(spots, key=lambda s: (-s[0], s[1], str(s[2]))):
        cells = set(range(start, start + length))
        if not cells & taken:
            taken |= cells
            found.append((start, length, value))
    return sorted(found, key=lambda f: (f[0], str(f[2])))


# ---------------------------------------------------------------- 一句话里的线索

class Clues:
    """一句话里能当参数的线索：引号内容、算式、数字、枚举提及、剩下的词段；用掉一个少一个。"""

    def __init__(self, clause, tool, cues=()):
        self.text = clause
        self.quoted = QUOTED.findall(clause)
        rest = QUOTED.sub(" ", clause)
        self.date = DATE.search(rest)
        if self.date:
            rest = rest.replace(self.date.group(), " ")
        self.expression = find_expression(rest)
        if self.expression:
            rest = rest.replace(self.expression, " ")
        self.numbers = said_numbers(rest)
        self.pairs = pair_numbers(self.numbers, numeric_properties(parameters_of(tool)))
        self.mentions = enum_mentions(rest, enum_schemas(parameters_of(tool)))
        for start, length, _ in self.mentions:       # 已经当了枚举值的字不再当字符串
            rest = rest[:start] + " " * length + rest[start + length:]
        self.runs = leftover_runs(rest, tool_words(tool), cues)
        self.missing = []        # 必填的文字参数，问题里却找不到（只好先填个占位值）
        self.strings = 0         # 从问题里取到了几个文字参数

    def take_enum(self, values):
        """问题里提到的、属于这个参数的枚举值，按出现的先后取（"把 km 换算成 mi"：先 km 后 mi）。"""
        for i, (_, _, value) in enumerate(self.mentions):
            if value in values:
                self.mentions.pop(i)
                return value
        return None

    def take_number(self, name="", prop=None):
        """这个参数的数字：标签配上了它的那个；没有就取还没用掉的第一个。"20%" 给"率"参数时是 0.2。"""
        said = self.pairs.pop(name, None)
        if said is None or said not in self.numbers:
            paired = set(map(id, self.pairs.values()))
            said = next((n for n in self.numbers if id(n) not in paired), None)
        if said is None:
            return None
        self.numbers.remove(said)
        label = f"{name} {(prop or {}).get('description', '')}"
        if (prop or {}).get("type") == "number" and RATE_LIKE.search(label) and (said.percent or 1 < said.value <= 100):
            return said.value / 100
        return said.value

    def take_string(self, name, prop):
        label = f"{name} {prop.get('description', '')}".lower()
        if self.expression and re.search(r"expr|formula|math|calc|表达式|算式|公式|计算", label):
            value, self.expression = self.expression, None
            return value
        if self.date and re.search(r"date|日期", label):
            value, self.date = self.date.group(), None
            return value
        if self.quoted:
            return self.quoted.pop(0)
        if SENTENCE.search(str(prop.get("description", ""))) and self.runs:
            self.runs = []                # 整句话用掉了问题里所有的词：别的文字参数不再从里面挑
            return sentence_of(self.text)
        if (ID_LIKE.search(name) or ID_LIKE.search(str(prop.get("description", "")))) and self.numbers:
            number = self.take_number(name, {})   # 编号是字符串参数时，"员工 101" 里的 101 就是它
            return str(int(number)) if float(number).is_integer() else str(number)
        if self.runs:
            examples = examples_in(str(prop.get("description", "")))
            return as_the_examples_write(self.runs.pop(best_run(self.runs, examples)), examples)
        return None


def sentence_of(clause):
    """问题本身当一句事实：去掉"请记住"这类请求的话，"我"按说明里的写法换成"用户"（"用户叫小林"）。"""
    text = ASKING.sub("", clause.strip()).strip(" 。.！!")
    return re.sub(r"^我", "用户", text)


class Said:
    """问题里的一个数字，带着它的标签（紧挨着的那段话）和是不是百分数。"""

    def __init__(self, value, label, percent):
        self.value, self.label, self.percent = value, label, percent

    def __repr__(self):
        return f"Said({self.value:g}, {self.label!r}{', %' if self.percent else ''})"


def said_numbers(text):
    """text 里的数字（阿拉伯数字和"三天"这样的中文数字），按出现的先后。
    每个数字的标签：它前面、到上一个数字为止的那段话。两个数字之间要是有"和""加上""，"，
    分隔词前面那段归前一个数字（"30000 元底薪和 8000 元奖金"），后面那段归后一个。"""
    spots = []
    for m in NUMBER.finditer(text):
        value = float(m.group().split("万")[0].rstrip("%％ ")) * (10000 if m.group("wan") else 1)
        spots.append((m.start(), m.end(), value, bool(m.group("percent"))))
    spots += [(m.start(), m.end(), float(chinese_number(m.group())), False) for m in CN_NUMBER.finditer(text)]
    spots.sort()
    heads, tails = [], []
    for i, (start, end, _, _) in enumerate(spots):
        before = text[spots[i - 1][1]:start] if i else text[:start]
        split = AMOUNT_BREAK.search(before) if i else None
        if split:
            tails[-1] += before[:split.start()]
            before = before[split.end():]
        heads.append(before)
        tails.append(text[end:] if i == len(spots) - 1 else "")
    return [Said(value, f"{head} {tail}".strip(), percent)
            for (_, _, value, percent), head, tail in zip(spots, heads, tails)]


def numeric_properties(schema):
    """顶层的数字参数（和名字像编号的文字参数）：参数名 -> 描述它的词（名字、说明、英文词的中文说法）。"""
    found = {}
    for name, prop in (schema.get("properties") or {}).items():
        prop = resolve(prop, schema)
        if prop.get("type") in ("integer", "number") or (prop.get("type") in (None, "string") and ID_LIKE.search(name)):
            parts = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower().replace("_", " ").split()
            glossed = " ".join(PARAM_GLOSSES.get(p, "") for p in parts)
            words = keywords(f"{name} {strip_examples(str(prop.get('description', '')))}") | set(glossed.split())
            found[name] = words | set(parts)
    return found


def pair_numbers(numbers, properties):
    """数字和参数两两配对：标签里出现参数的词越多越像。最像的一对先配，配过的不再用。"""
    scored = []
    for i, said in enumerate(numbers):
        label = said.label.lower()
        for j, (name, words) in enumerate(properties.items()):
            score = sum(1 for w in words if w and w in label)
            if score:
                scored.append((-score, i, j, name, said))
    pairs, used = {}, set()
    for _, i, _, name, said in sorted(scored, key=lambda s: s[:3]):
        if name not in pairs and i not in used:
            pairs[name] = said
            used.add(i)
    return pairs


def enum_schemas(schema):
    """参数里所有带 enum 的属性（含 anyOf 里的一支），给 enum_mentions 用。"""
    found = []
    for prop in (schema.get("properties") or {}).values():
        prop = resolve(prop, schema)
        if prop.get("enum"):
            found.append(prop)
        elif prop.get("type") == "array" and resolve(prop.get("items", {}), schema).get("enum"):
            found.append({**resolve(prop["items"], schema), "description": prop.get("description", "")})
    return found


def leftover_runs(text, words, cues=()):
    """删掉工具词、套话、时间词、数字和标点以后剩下的片段。"北京和上海今天的天气" -> ["北京和上海"]。"""
    text = "".join(" " if is_symbol(c) else c for c in text)     # "北京☀️和上海🌧️" 里的 emoji 只是空白
    text = re.sub(r"\s*([和与及跟、])\s*", r"\1", text)
    keep = [True] * len(text)
    for i in range(len(text) - 1):
        if text[i:i + 2] in words:
            keep[i] = keep[i + 1] = False
    for phrase in sorted(cues, key=len, reverse=True) + TIME_WORDS + FILLER:
        for m in re.finditer(re.escape(phrase), text):
            keep[m.start():m.end()] = [False] * len(phrase)
    for m in re.finditer(r"[A-Za-z]+(?:['’](?!s\b)[A-Za-z]+)*", text):     # "Xi'an" 是一个词，"an" 不是虚词
        word = m.group().lower()
        if word in EN_STOP - {"and"} or word in words or (len(word) > 3 and word.rstrip("s") in words):
            keep[m.start():m.end()] = [False] * (m.end() - m.start())
    cleaned = "".join(c if k and not re.match(r"[\d?？!！。.,，:：;；()（）\[\]]", c) else "|"
                      for c, k in zip(text, keep))
    # 所有格的 's 和不在两个字母之间的引号切开；字母之间的留着（"Xi'an"、"O'Brien" 是一个名字）
    cleaned = re.sub(r"['’]s\b|['’](?![A-Za-z])|(?<![A-Za-z])['’]|(?<=[\u4e00-\u9fff])\s+|\s+(?=[\u4e00-\u9fff])",
                     "|", cleaned)
    runs = [r.strip(" 和与及跟、&") for r in cleaned.split("|")]
    runs = [re.sub(r"^(?:and\s+)+|(?:\s+and)+$", "", r).strip() for r in runs]
    return [r for r in runs if r and not re.fullmatch(r"[\u4e00-\u9fff]|[A-Za-z]", r)]


def is_symbol(char):
    """emoji 和 ☀、★ 这类符号（Unicode 的 So、Sk 类），以及拼 emoji 用的变体选择符和零宽连接符：
    它们不会是名字的一部分，"北京🌧️" 里的城市是 "北京"。"C++"、"$" 里的 + 和 $ 不算（Sm、Sc 类）。"""
    return unicodedata.category(char) in ("So", "Sk") or char in "\ufe0f\u200d"


def as_the_examples_write(value, examples):
    """说明举的例子是中文城市名时，问题里的英文城市名换成中文名（"Beijing" -> "北京"）；其余原样。"""
    if set(examples) & set(CITY_NAMES.values()):
        return CITY_NAMES.get(value.lower().replace("’", "'"), value)
    return value


def best_run(runs, examples):
    """选哪个片段：和说明里的举例长得像的优先（同是中文或英文、长短相近），一样像就取最前面的。"""
    if not examples:
        return 0

    def unlike(run):
        first = CONJUNCTIONS.split(run)[0]
        same_script = any(bool(HAN.search(first)) == bool(HAN.search(e)) for e in examples)
        closest = min(abs(len(first) - len(e)) for e in examples)
        return (0 if same_script else 1, min(closest, 3))

    return min(range(len(runs)), key=lambda i: (unlike(runs[i]), i))


def entity_list(run, limit=8):
    """"北京和上海" -> ["北京", "上海"]；不是并列就返回 []。最多 limit 样：一句话不该变成几百次调用。"""
    parts = [p for p in CONJUNCTIONS.split(run or "") if p.strip()]
    return parts[:limit] if len(parts) >= 2 else []


# ---------------------------------------------------------------- 入口

def arguments_for(clause, tool, cues=()):
    """一句话 + 一个工具 -> [参数字典]。主字符串参数里是 "北京和上海" 时，拆成每样一次调用。
    cues：问题里让人想到这个工具的词（"冷""工资"），它们不会是参数值。"""
    return arguments_and_gaps(clause, tool, cues)[0]


def arguments_and_gaps(clause, tool, cues=()):
    """-> ([参数字典], 缺的必填文字参数)。问题里一个文字参数都没取到、而工具要文字参数时，"缺"的才算数；
    找不到的参数先填了最小合法值，由调用方决定用不用。"""
    root = parameters_of(tool) or {"type": "object", "properties": {}}
    clues = Clues(clause, tool, cues)
    primary = first_string_property(root)
    index, listed = 0, []
    if primary and clues.runs:
        examples = examples_in(str(resolve(root["properties"][primary], root).get("description", "")))
        index = best_run(clues.runs, examples)
        listed = entity_list(clues.runs[index])
    calls, gaps = [], []
    for entity in listed or [None]:
        clues = Clues(clause, tool, cues)
        if entity is not None:
            clues.runs[index] = entity
        args = fill_object(resolve(root, root), clues, root)
        gaps = gaps or ([] if clues.strings else clues.missing)   # 一个文字参数都没取到，才算缺
        if args not in calls:
            calls.append(args)
    return calls, gaps


def argument_fit(clause, tool, cues=()):
    """参数能从问题里取到多少：提到的枚举值各 +2，必填枚举一个没提到 -2，
    必填字符串有候选 +1，数字参数有数字可填 +1。"""
    root = parameters_of(tool)
    clues = Clues(clause, tool, cues)
    numbers = len(clues.numbers)
    score = 2 * len(clues.mentions)
    required = root.get("required") or []
    for name, prop in (root.get("properties") or {}).items():
        prop = resolve(prop, root)
        if prop.get("type") in ("integer", "number") and numbers:
            score, numbers = score + 1, numbers - 1
        if name not in required:
            continue
        if prop.get("enum") and not any(value in prop["enum"] for _, _, value in clues.mentions):
            score -= 2
        elif prop.get("type") in (None, "string") and not prop.get("enum") and (clues.runs or clues.quoted):
            score += 1
    return score


def first_string_property(schema):
    for name, prop in (schema.get("properties") or {}).items():
        prop = resolve(prop, schema)
        if prop.get("type") in (None, "string") and not prop.get("enum") and name in schema.get("required", [name]):
            return name
    return None


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
    # 整数值的 number 也写成整数（30000 而不是 30000.0）：JSON 里两者都是合法的 number，前者好读
    return int(value) if integer or float(value).is_integer() else float(value)


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


def validator(schema, root):
    return jsonschema.Draft202012Validator({**schema, "$defs": root.get("$defs", {}),
                                            "definitions": root.get("definitions", {})})


def is_valid(value, schema, root):
    return validator(schema, root).is_valid(value)


def fill(schema, clues, root, required=True, name=""):
    """按一个属性的 schema 从线索里取值；取不到且非必填就返回 None（留给默认值）。"""
    schema = resolve(schema, root)
    kind = schema.get("type")
    fallback = minimal(schema, root) if required else None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        value = clues.take_enum(schema["enum"])
        return fallback if value is None else value
    if kind in ("integer", "number"):
        number = clues.take_number(name, schema)
        return fallback if number is None else clamp(number, schema, kind == "integer")
    if kind == "array":
        return fill_array(schema, clues, root, required)
    if kind == "object":
        return fill_object(schema, clues, root)
    if kind in (None, "string"):
        text = clues.take_string(name, schema)
        if text is None:
            if required:
                clues.missing.append(name)
            return fallback
        clues.strings += 1
        text = text[: schema.get("maxLength", len(text))]
        return text if len(text) >= schema.get("minLength", 0) else minimal(schema, root)
    return fallback       # 布尔值：问题里几乎不会明说，用默认


def fill_array(schema, clues, root, required):
    items = resolve(schema.get("items", {}), root)
    if items.get("type") in ("integer", "number"):
        values = [clamp(n.value, items, items["type"] == "integer") for n in clues.numbers]
        clues.numbers = []
    elif items.get("enum"):
        values = [v for v in items["enum"] if any(v == said for _, _, said in clues.mentions)]
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
    required = list(schema.get("required", []))
    order = required + [k for k in props if k not in required]
    args = {}
    for key in order:
        value = fill(props.get(key, {}), clues, root, key in required, key)
        if value is not None or (key in required and resolve(props.get(key, {}), root).get("type") == "null"):
            args[key] = value
    return repair(args, schema, root)


def repair(args, schema, root):
    """最后一道保险：用 jsonschema 检查，出错的属性换成最小合法值（必填）或删掉（选填）。"""
    check = validator(schema, root)
    for _ in range(len(args) + 2):
        errors = list(check.iter_errors(args))
        if not errors:
            return args
        for error in errors:
            key = error.path[0] if error.path else None
            if key in args:
                if key in schema.get("required", []):
                    args[key] = minimal((schema.get("properties") or {}).get(key, {}), root)
                else:
                    args.pop(key)
    return args if check.is_valid(args) else minimal(schema, root)
