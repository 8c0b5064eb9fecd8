"""技能和记忆（8.9）：要用的时候才读进来的说明书，和跨会话留下来的事实。两样都走工具。

比 function_calling_loop.py 多了这些（循环本身不变，变的是 system 提示词和多出来的几个工具）：
  - 技能是一个文件夹：skills/<名字>/SKILL.md，开头是 YAML 头（Agent Skills 格式）：
        ---
        name: release-notes          # 小写字母、数字、连字符，最多 64 字，和文件夹同名
        description: 把一组提交写成发布说明。用户要写 changelog、发布说明时用。   # 最多 1024 字
        ---
        正文：一步一步怎么做（最好不超过 5000 个 token）
    find_skills 把每个技能读出来并逐条检查；不合格的不悄悄跳过，写进 problems 说清楚哪里不对；
  - 渐进式披露：system 提示词里只列每个技能的名字和描述（catalogue_prompt），再给模型一个
    load_skill(name) 工具，它觉得用得上时自己去读正文，正文作为工具结果回来；名字不对就把有哪些技能告诉它。
    课程仓库的做法是把选中的技能全文都贴进 system 提示词（pasted_prompt）：技能一多，每次请求都背着它们。
    两种写法的 token 数，用 context.tokens 一比就知道；
  - 描述是写给模型看的：模型只凭描述决定读哪个技能。描述含糊或者写错，它就会读错（离线规则模型也一样：
    它按描述里的词挑技能）；
  - 记忆也是工具：remember(fact) 记下一条事实（带来源和时间），recall(query) 按关键词找回来，
    forget(number) 删掉一条。记忆存在一个 JSON 文件里，人可以打开看、改、删：模型记错的事要有地方改。

技能的正文是别人写的文字，和工具结果一样不可全信：它可以让模型去做任何事，所以模型之后的每个调用
照样要过权限检查（permissions.py）。

    python code/skills.py
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import re
from pathlib import Path
from typing import Any

import yaml

from context import tokens
from function_calling_loop import run_function_calling
from tool_registry import ToolRegistry

NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")   # 没有开头、结尾或连续的连字符
NAME_LIMIT, DESCRIPTION_LIMIT = 64, 1024
FRONT_LIMIT = 4096                               # YAML 头最多这么多字
FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)


@dataclasses.dataclass
class Skill:
    name: str
    description: str
    body: str
    path: str


def parse_skill(text: str, folder: str, path: str = "") -> tuple[Skill | None, list[str]]:
    """一个 SKILL.md -> (技能, 问题列表)。有问题就返回 None，每个问题一句话。"""
    where = path or f"{folder}/SKILL.md"
    found = FRONT.match(text)
    if not found:
        return None, [f"{where}：开头没有 YAML 头（第一行应是 ---，写完 name 和 description 后再一行 ---）"]
    if len(found.group(1)) > FRONT_LIMIT:       # name 和 description 用不了这么长；太长的 YAML 解析起来也慢
        return None, [f"{where}：YAML 头有 {len(found.group(1))} 字，最多 {FRONT_LIMIT} 字"]
    try:
        front = yaml.safe_load(found.group(1))
    except (yaml.YAMLError, RecursionError) as error:
        return None, [f"{where}：YAML 头写错了（{(str(error).splitlines() or ['嵌套太深'])[0]}）"]
    if not isinstance(front, dict):
        return None, [f"{where}：YAML 头应是 name: … 和 description: … 这样的键值"]
    name, description, problems = front.get("name"), front.get("description"), []
    if not isinstance(name, str) or not name:
        problems.append(f"{where}：缺少 name")
    elif len(name) > NAME_LIMIT or not NAME.fullmatch(name):
        problems.append(f"{where}：name {name!r} 不合格式（小写字母、数字和连字符，最多 {NAME_LIMIT} 字，"
                        "不能以连字符开头或结尾，也不能连着两个）")
    elif name != folder:
        problems.append(f"{where}：name {name!r} 应和文件夹同名（{folder!r}）")
    if not isinstance(description, str) or not description.strip():
        problems.append(f"{where}：缺少 description（写清楚它做什么、什么时候用：模型只凭它决定读不读）")
    elif len(description) > DESCRIPTION_LIMIT:
        problems.append(f"{where}：description 有 {len(description)} 字，最多 {DESCRIPTION_LIMIT} 字")
    if problems:
        return None, problems
    return Skill(name, description.strip(), found.group(2).strip(), where), []


def find_skills(root: Path) -> tuple[dict[str, Skill], list[str]]:
    """root 下每个 <名字>/SKILL.md -> ({名字: 技能}, 问题列表)。"""
    skills, problems = {}, []
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()) if Path(root).is_dir() else []:
        file = folder / "SKILL.md"
        if not file.is_file():
            problems.append(f"{folder.name}/：文件夹里没有 SKILL.md")
            continue
        skill, said = parse_skill(file.read_text(encoding="utf-8"), folder.name, f"{folder.name}/SKILL.md")
        problems += said
        if skill is not None:
            skills[skill.name] = skill
    return skills, problems


# ── 两种把技能交给模型的写法

CATALOGUE_HEAD = "你可以用这些技能。需要时先调用 load_skill 读它的说明，再照着做：\n"


def catalogue_prompt(skills: dict[str, Skill]) -> str:
    """渐进式披露：只列名字和描述。"""
    return CATALOGUE_HEAD + "\n".join(f"- {s.name}: {s.description}" for s in skills.values())


PASTED_HEAD = "你会用到这些技能：\n\n"


def pasted_prompt(skills: dict[str, Skill]) -> str:
    """课程仓库的做法：每个技能整个贴进来（描述和正文）。"""
    return PASTED_HEAD + "\n\n".join(f"## {s.name}\n{s.description}\n\n{s.body}" for s in skills.values())


def skill_tools(skills: dict[str, Skill], registry: ToolRegistry | None = None) -> ToolRegistry:
    registry = registry or ToolRegistry()

    @registry.tool("读一个技能的完整说明。name 是技能列表里的名字。", read_only=True)
    def load_skill(name: str) -> str:
        """读技能。

        Args:
            name: 技能的名字，和 system 提示词里列出的一样
        """
        if name not in skills:       # 一次失败的调用：模型从结果里看到有哪些技能，可以改了再读
            raise ValueError(f"没有叫 {name!r} 的技能。可用的技能：{', '.join(skills) or '（没有）'}")
        return skills[name].body

    return registry


# ── 记忆：一个人能打开看、改、删的 JSON 文件

class Memory:
    """每条记忆：{"fact", "source", "at"}。source 是谁说的（用户原话、某个工具的结果），at 是什么时候记的。
    记忆会被模型读回去当真，所以人要看得到、改得了、删得掉：all()、correct()、forget()。"""

    FACT_LIMIT = 300      # 一条记忆最多这么多字：它是一句事实，不是一份文件
    COUNT_LIMIT = 100     # 最多这么多条：recall 的结果要放进上下文

    def __init__(self, path: Path):
        self.path = Path(path)

    def all(self) -> list[dict]:
        return json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else []

    def _save(self, items: list[dict]) -> None:
        # 先写另一个文件再换过去：写到一半出错，原来的记忆还在，不会留下一个读不出来的空文件。
        draft = self.path.with_name(self.path.name + ".draft")
        draft.write_text(json.dumps(items, ensure_ascii=False, indent=2), encoding="utf-8")
        draft.replace(self.path)

    def put_back(self, items: list[dict]) -> None:
        """换成一份保存过的记忆（课程仓库下次启动时读回文件；页面从浏览器里取回保存的那份）。
        每条只留 fact、source、at 三项，超长的截掉，最多 COUNT_LIMIT 条。"""
        self._save([{key: str(item.get(key, ""))[:self.FACT_LIMIT] for key in ("fact", "source", "at")}
                    for item in items[:self.COUNT_LIMIT]])

    def remember(self, fact: str, source: str) -> int:
        items = self.all()
        if len(items) >= self.COUNT_LIMIT:
            raise ValueError(f"已经记了 {self.COUNT_LIMIT} 条，记不下了：先用 forget 删掉过时的")
        items.append({"fact": fact[:self.FACT_LIMIT], "source": source[:self.FACT_LIMIT],
                      "at": datetime.datetime.now().isoformat(timespec="seconds")})
        self._save(items)
        return len(items)

    def recall(self, query: str) -> list[tuple[int, dict]]:
        """(编号, 记忆)：事实里含有 query 里任何一个词的（不分大小写）。"""
        words = [w for w in re.split(r"[\s，,。、]+", query.lower()) if w]
        return [(number, item) for number, item in enumerate(self.all(), 1)
                if any(word in item["fact"].lower() for word in words)]

    def forget(self, number: int) -> dict | None:
        items = self.all()
        if not 1 <= number <= len(items):
            return None
        gone = items.pop(number - 1)
        self._save(items)
        return gone

    def correct(self, number: int, fact: str) -> dict | None:
        """人改正一条记忆：事实换掉，来源记成"用户改正"，时间是现在。"""
        items = self.all()
        if not 1 <= number <= len(items):
            return None
        items[number - 1] = {"fact": fact[:self.FACT_LIMIT], "source": "用户改正",
                             "at": datetime.datetime.now().isoformat(timespec="seconds")}
        self._save(items)
        return items[number - 1]


def memory_tools(memory: Memory, registry: ToolRegistry | None = None) -> ToolRegistry:
    registry = registry or ToolRegistry()

    @registry.tool("记住一条以后还要用的事实（用户的名字、偏好、约定）。用户说“记住……”时用；只记用户明确说过的。")
    def remember(fact: str, source: str = "用户说的") -> str:
        """记住。

        Args:
            fact: 一句话的事实，如 用户叫小林
            source: 这条事实从哪来：用户说的，还是某个工具的结果
        """
        return f"记下了，第 {memory.remember(fact, source)} 条。"

    @registry.tool("按关键词找回以前记住的事实。用户问“你记得……吗”、问起以前说过的事时用。", read_only=True)
    def recall(query: str) -> str:
        """回忆。

        Args:
            query: 关键词，空格分开，如 名字 偏好
        """
        found = memory.recall(query)
        if not found:
            return f"没有记着和 {query!r} 有关的事。"
        return "\n".join(f"{n}. {item['fact']}（{item['source']}，{item['at']}）" for n, item in found)

    @registry.tool("删掉一条记错了或过时的记忆。", destructive=True)
    def forget(number: int) -> str:
        """忘记。

        Args:
            number: recall 列出的编号
        """
        gone = memory.forget(number)
        return f"删掉了第 {number} 条：{gone['fact']}" if gone else f"没有第 {number} 条记忆。"

    return registry


WAYS = ("catalogue", "pasted")     # 渐进式披露，还是课程仓库那样全贴进来


def skills_event(skills: dict[str, Skill], problems: list[str], way: str) -> dict:
    """运行之前先说清楚：找到了哪些技能、哪些不合格，两种写法的 system 提示词各多少 token（context.tokens）。"""
    cost = {name: tokens([{"role": "system", "content": prompt(skills)}])[0]
            for name, prompt in (("catalogue", catalogue_prompt), ("pasted", pasted_prompt))}
    return {"type": "skills", "turn": 0, "way": way, "skills": [{"name": s.name, "description": s.description}
                                                                for s in skills.values()],
            "problems": problems, "system_tokens": cost}


def run_with_skills(client: Any, question: str, skills: dict[str, Skill], memory: Memory | None = None,
                    *, way: str = "catalogue", problems: list[str] | None = None, max_turns: int = 6,
                    temperature: float | None = None, stream: bool = False):
    """先发一个 skills 事件，再跑 Function Calling 循环。way="catalogue"：system 里是技能目录，工具是
    load_skill；way="pasted"：system 里是全部正文，没有 load_skill。有记忆时再加 remember / recall / forget。"""
    yield skills_event(skills, problems or [], way)
    registry = skill_tools(skills) if way == "catalogue" else ToolRegistry()
    if memory is not None:
        memory_tools(memory, registry)
    system = catalogue_prompt(skills) if way == "catalogue" else pasted_prompt(skills)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return (yield from run_function_calling(client, messages, registry.to_schemas() or None, registry,
                                            max_turns=max_turns, temperature=temperature, stream=stream))


# ── 两三个示例技能

EXAMPLES = {
    "release-notes": """---
name: release-notes
description: 把一组提交记录写成给用户看的发布说明。用户要写发布说明、changelog、更新日志时用。
---
1. 按“新功能 / 修复 / 其他”分三组，每条一句话，写用户能感觉到的变化，不写文件名。
2. 破坏兼容的改动单独放在最前面，写明用户要做什么。
3. 结尾写版本号和日期。""",
    "code-review": """---
name: code-review
description: 审查一段代码的改动。用户要你看代码、找 bug、做 review 时用。
---
1. 先看改动想做什么，再看它做到了没有。
2. 依次检查：边界条件、错误处理、并发、安全（输入是否可信）。
3. 每个问题写：在哪一行、为什么是问题、怎么改。没有问题就直说没有。""",
    "sql-style": """---
name: sql-style
description: 团队写 SQL 的规矩。用户要写查询、改 SQL、问数据库怎么查时用。
---
关键字大写；每个子句另起一行；不写 SELECT *；JOIN 一律写明 ON 条件；时间列统一用 UTC。""",
}


if __name__ == "__main__":
    import tempfile

    from llm_clients import make_client

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "skills"
        for name, text in EXAMPLES.items():
            (root / name).mkdir(parents=True)
            (root / name / "SKILL.md").write_text(text, encoding="utf-8")
        (root / "Bad_Name").mkdir()
        (root / "Bad_Name" / "SKILL.md").write_text("---\nname: Bad_Name\n---\n正文", encoding="utf-8")
        skills, problems = find_skills(root)
        print(f"找到 {len(skills)} 个技能：{', '.join(skills)}")
        for problem in problems:
            print(f"   ⚠️ {problem}")
        for title, prompt in (("只列名字和描述", catalogue_prompt(skills)), ("正文全贴进来", pasted_prompt(skills))):
            print(f"── system 提示词（{title}）：{tokens([{'role': 'system', 'content': prompt}])[0]} 个 token")

        memory = Memory(Path(folder) / "memory.json")
        for event in run_with_skills(make_client("offline"), "帮我把这几个提交写成发布说明", skills, memory,
                                     problems=problems):
            if event["type"] == "tool_call":
                print(f"── 模型调用 {event['name']}({json.dumps(event['arguments'], ensure_ascii=False)})")
            elif event["type"] == "tool_result":
                print(f"   结果：{event['content'][:60]}……")
            elif event["type"] in ("final", "error"):
                print(f"── {event['type']}：{(event.get('content') or event.get('message'))[:100]}")
