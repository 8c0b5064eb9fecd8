"""会话与分支（8.11）：一次运行是一棵消息树；从任何一步改一条消息，长出一条新分支接着跑，几条分支并排比较。

比 function_calling_loop.py 多了这些（循环本身不变，这里管的是“哪些消息交给它”和“它写的消息存到哪里”）：
  - 会话是只追加的条目列表，存成 JSONL（一行一个 JSON 对象）：第一行是文件头（格式名、版本），之后每条
    消息一行，带 id、parent_id（上一条是谁）、time。条目顺着 parent_id 连成一棵树；
  - 当前分支就是一片叶子。发给模型的 messages 是从根走到这片叶子的那条路，只顺着 parent_id 往回走，
    所以别的分支的消息不在路上，也就进不了请求；
  - fork（分叉）：改一条消息（工具结果、用户消息、最初的问题），改好的那条成为原条目的兄弟，从它接着跑，
    原来的分支原样留着。改的是工具结果时 tool_call_id 不变；同一批调用里排在它后面的结果也抄到新分支上，
    调用和结果总是成对的；
  - 在叶子上接着跑：路上的消息交给 run_function_calling，它新写的消息挂到叶子下面，每写一条发一个 entry 事件；
    这次运行的每个事件都带上 branch（分支的 id），页面据此把几条分支并排画出来，各自评判。
    一轮的 assistant 消息和它要的全部工具结果一起写进会话：跑到一半被停下，分支停在上一轮的末尾，
    不会留下一个等不到结果的调用（那样的 messages 真的 API 会拒收）；
  - branches() 列出每条分支：叶子、从哪一条分出来、和兄弟哪里不一样（改了什么、原来是什么）、最后的回答；
    compare(a, b) 说两条分支共有几条、从哪里分开；
  - 一条分支导出成 Markdown（给人读）或 JSONL（能再读回来）；JSONL 文件在重启之后 load 回来接着问（resume）。
    读的时候逐行检查：文件多大、多少条、每个字段的类型、父条目在不在前面、id 有没有重复、调用和结果配不配对。
    哪一行、错在哪里，说一句中文（旁边有英文）；文件里的内容只当数据，从不执行。

课程仓库的写法是一个分支一个 JSON 文件，fork 时把父分支的消息整份拷一遍：分支一多，同样的消息存了好几份，
也看不出两条分支从哪一步分开；读文件时不做检查，坏文件要么被悄悄跳过，要么在后面某处出错。
Pi（/tree、/fork）和 Claude Code（--resume、--fork-session）都是这里的做法：JSONL，每条带自己的 id 和父 id。

    python code/sessions.py
"""
from __future__ import annotations

import copy
import json
import os
import re
import tempfile
import uuid
from datetime import datetime, timezone
from typing import Any, Iterator

import jsonschema

import events
from function_calling_loop import run_function_calling

FORMAT = "tool-workshop-session"       # 文件头里写明是谁的格式：别家的会话文件（Pi、Claude Code）一眼认得出
VERSION = 1
MAX_FILE_BYTES = 4 * 1024 * 1024       # 读进来的文件最大多少字节（一条工具结果最多 4000 字，够存上千条）
MAX_ENTRIES = 2000                     # 一个会话最多多少条：超过了就不读，也不再往里写
MAX_TEXT = 100_000                     # 一条消息的文字最多多少字
PREVIEW = 60                           # 列表、树里每条消息显示多少字

# ── 一行长什么样：文件头一种，条目一种，消息按 role 各一种。jsonschema 检查，出错的地方再说成一句话。

ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
TIME = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$"}
TEXT = {"type": "string", "maxLength": MAX_TEXT}
CALL_ID = {"type": "string", "minLength": 1, "maxLength": 200}
HEADER_SCHEMA = {"type": "object", "required": ["type", "format", "version", "id", "time"],
                 "additionalProperties": False,
                 "properties": {"type": {"const": "session"}, "format": {"type": "string"}, "version": {"type": "integer"},
                                "id": ID, "time": TIME, "parent_session": ID}}
ENTRY_SCHEMA = {"type": "object", "required": ["type", "id", "parent_id", "time", "message"],
                "additionalProperties": False,
                "properties": {"type": {"const": "message"}, "id": ID, "parent_id": {**ID, "type": ["string", "null"]},
                               "time": TIME, "message": {"type": "object"}, "edited_from": ID, "copied_from": ID,
                               "model": {"type": "string", "maxLength": 200}}}
TOOL_CALL = {"type": "object", "required": ["id", "type", "function"], "additionalProperties": False,
             "properties": {"id": CALL_ID, "type": {"const": "function"},
                            "function": {"type": "object", "required": ["name", "arguments"],
                                         "additionalProperties": False,
                                         "properties": {"name": {"type": "string", "maxLength": 200},
                                                        "arguments": TEXT}}}}
ROLES = ("system", "user", "assistant", "tool")


def message_schema(role: str) -> dict:
    properties: dict[str, Any] = {"role": {"const": role}, "content": TEXT}
    required = ["role", "content"]
    if role == "assistant":
        properties.update(content={**TEXT, "type": ["string", "null"]}, reasoning_content=TEXT,
                          tool_calls={"type": "array", "minItems": 1, "maxItems": 64, "items": TOOL_CALL})
    if role == "tool":
        properties["tool_call_id"] = CALL_ID
        required.append("tool_call_id")
    return {"type": "object", "required": required, "additionalProperties": False, "properties": properties}


VALIDATORS = {"header": jsonschema.Draft202012Validator(HEADER_SCHEMA),
              "entry": jsonschema.Draft202012Validator(ENTRY_SCHEMA),
              **{role: jsonschema.Draft202012Validator(message_schema(role)) for role in ROLES}}

# 每个字段应该是什么样：一个字段出错时，告诉人它该怎么写（中文，英文）
RULES = {
    "id": ("只含字母、数字、- 和 _ 的文字，最长 64 个字", "letters, digits, - and _, at most 64"),
    "parent_id": ("上一条的 id，或者 null（树根）", "the id of the entry before, or null for a root"),
    "time": ("一个 ISO 8601 时间，如 2025-01-01T08:00:00Z", "an ISO 8601 time such as 2025-01-01T08:00:00Z"),
    "type": ("\"message\"（文件头是 \"session\"）", "\"message\" (\"session\" in the header)"),
    "message": ("一条消息对象：{\"role\": …, \"content\": …}", "a message object {\"role\": ..., \"content\": ...}"),
    "content": (f"文字（最多 {MAX_TEXT} 字；只有带 tool_calls 的 assistant 消息可以是 null）",
                f"text (at most {MAX_TEXT} characters; null only next to tool_calls)"),
    "tool_calls": ("调用的列表：每个是 {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}",
                   "a list of {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}"),
    "arguments": ("一段 JSON 文本（字符串），不是对象", "JSON text (a string), not an object"),
    "tool_call_id": ("它回答的那次调用的 id（文字）", "the id of the call it answers (text)"),
    "version": ("整数", "an integer"),
    "function": ("{\"name\": 工具名, \"arguments\": JSON 文本}", "{\"name\": ..., \"arguments\": JSON text}"),
    "name": ("工具名（文字）", "the tool's name (text)"),
    "reasoning_content": ("文字（模型的思考过程）", "text (the model's reasoning)"),
    "edited_from": ("被改的那一条的 id", "the id of the entry it edits"),
    "copied_from": ("抄过来的那一条的 id", "the id of the entry it copies"),
    "model": ("模型名（文字）", "the model's name (text)"),
    "parent_session": ("它从哪个会话导出的（会话 id）", "the id of the session it came from"),
    "format": (f"字符串 \"{FORMAT}\"", f"\"{FORMAT}\""),
}


class SessionProblem(ValueError):
    """会话（或会话文件）哪里不对。zh / en 是给人看的两种语言；line 是文件的第几行（不是读文件时为 None）。"""

    def __init__(self, zh: str, en: str, line: int | None = None):
        self.zh = f"第 {line} 行：{zh}" if line else zh
        self.en = f"line {line}: {en}" if line else en
        self.line = line
        super().__init__(self.zh)


def shown(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def schema_problem(error: jsonschema.ValidationError, where: str = "") -> tuple[str, str]:
    """jsonschema 的一条错误 -> (中文, 英文)：哪个字段、应该怎么写、收到了什么。"""
    path = [str(p) for p in error.absolute_path]
    field = (where + ".".join(path)).rstrip(".")
    named = f"{field} " if field else "这一行"          # 字段名是英文，和中文之间空一格
    if error.validator == "required":
        missing = next(name for name in error.validator_value if name not in error.instance)
        name = f"{field}.{missing}" if field else missing
        return f"缺少字段 {name}", f"field {name} is missing"
    if error.validator == "additionalProperties":
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        known = "、".join(error.schema.get("properties", {}))
        return (f"{named}里有不认识的字段 {'、'.join(unknown)}（只认 {known}）",
                f"unknown field {', '.join(unknown)} in {field or 'this line'}")
    if not path and error.validator == "type":
        return "这一行应为一个 JSON 对象 {…}", "this line must be a JSON object {...}"
    last = next((p for p in reversed(path) if not p.isdigit()), "type" if error.validator == "const" else "")
    zh, en = RULES.get(last, ("", ""))
    if error.validator == "maxLength":
        zh, en = f"最多 {error.validator_value} 个字", f"at most {error.validator_value} characters"
    if error.validator in ("minItems", "maxItems"):
        zh, en = f"要有 {error.validator_value} 个以内、至少 1 个", f"between 1 and {error.validator_value} items"
    got = shown(error.instance)
    return (f"{named}不对：应为{zh or error.message}，收到 {got}",
            f"{field or 'this line'} is wrong: expected {en or error.message}, got {got}")


def check(kind: str, value: Any, line: int | None = None, where: str = "") -> None:
    error = jsonschema.exceptions.best_match(VALIDATORS[kind].iter_errors(value))
    if error is not None:
        raise SessionProblem(*schema_problem(error, where), line=line)


def check_message(message: Any, line: int | None = None) -> None:
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        role = message.get("role") if isinstance(message, dict) else message
        raise SessionProblem(f"message.role 只能是 {' / '.join(ROLES)}，收到 {shown(role)}",
                             f"message.role must be one of {', '.join(ROLES)}, got {shown(role)}", line)
    check(message["role"], message, line, "message.")
    calls = [call["id"] for call in message.get("tool_calls") or []]
    twice = next((call for call in calls if calls.count(call) > 1), None)
    if twice:
        raise SessionProblem(f"同一条 assistant 消息里有两个调用的 id 都是 {shown(twice)}：结果就分不清是回答哪一个的",
                             f"two tool calls in one assistant message share the id {shown(twice)}", line)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id() -> str:
    return uuid.uuid4().hex[:12]


def preview(message: dict, limit: int = PREVIEW) -> str:
    """一条消息的一行摘要：调用写成 名字(参数)，文字去掉换行。"""
    if message.get("tool_calls"):
        text = "；".join(f"{c['function']['name']}({c['function']['arguments']})" for c in message["tool_calls"])
    else:
        text = " ".join(str(message.get("content") or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ── 会话

class Session:
    """一棵消息树。entries 按写下的先后排（文件里也是这个顺序）；leaf 是当前分支的叶子。

    分支的 id 是它的第一条的 id：一条消息是它父条目的第一个孩子，就和父条目同一条分支；
    父条目已经有孩子了（或者它是又一个树根），它就开始一条新分支。分支由树本身决定，文件里不另外记。"""

    def __init__(self, file: str | os.PathLike | None = None, session_id: str | None = None,
                 parent_session: str | None = None, created: str | None = None):
        self.id = session_id or uuid.uuid4().hex
        self.created = created or now()
        self.parent_session = parent_session
        self.entries: dict[str, dict] = {}
        self.children: dict[str | None, list[str]] = {None: []}
        self.branch: dict[str, str] = {}             # 条目 id -> 分支 id
        self.leaf: str | None = None
        self.file = None
        if file is not None:                          # 新会话写进一个新文件：已有的文件不覆盖
            with open(file, "x", encoding="utf-8") as out:
                out.write(json.dumps(self.header(), ensure_ascii=False) + "\n")
            self.file = os.fspath(file)

    def header(self) -> dict:
        header = {"type": "session", "format": FORMAT, "version": VERSION, "id": self.id, "time": self.created}
        if self.parent_session:
            header["parent_session"] = self.parent_session
        return header

    # ── 写

    def append(self, message: dict, parent: str | None = ..., **marks: Any) -> dict:
        """把一条消息挂到 parent 下面（默认挂在当前叶子下面），它成为新的叶子。写之前检查：
        消息的形状对不对；parent 那里有没有在等结果的调用（有就只能接这些调用的结果，没有就不能接 tool 消息）。"""
        parent = self.leaf if parent is ... else parent
        self.make_room(1)
        if parent is not None:
            self.get(parent)
        check_message(message)
        self.check_pairing(message, parent)
        entry = {"type": "message", "id": new_id(), "parent_id": parent, "time": now(), "message": copy.deepcopy(message),
                 **{key: value for key, value in marks.items() if value is not None}}
        self.add(entry)
        if self.file:
            with open(self.file, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return copy.deepcopy(entry)

    def make_room(self, count: int) -> None:
        if len(self.entries) + count > MAX_ENTRIES:
            raise SessionProblem(f"会话已经有 {len(self.entries)} 条了，最多 {MAX_ENTRIES} 条，写不下：导出要留的分支，开一个新会话",
                                 f"the session holds {len(self.entries)} of at most {MAX_ENTRIES} entries; "
                                 "export a branch and start anew")

    def add(self, entry: dict) -> None:
        parent, siblings = entry["parent_id"], self.children[entry["parent_id"]]
        self.branch[entry["id"]] = self.branch[parent] if parent is not None and not siblings else entry["id"]
        siblings.append(entry["id"])
        self.children[entry["id"]] = []
        self.entries[entry["id"]] = entry
        self.leaf = entry["id"]

    def waiting(self, entry_id: str | None) -> list[str]:
        """走到 entry_id 为止，最近一次调用里还没有结果的调用 id（没有就是空列表）。"""
        answered = set()
        while entry_id is not None:
            message = self.entries[entry_id]["message"]
            if message["role"] != "tool":
                return [c["id"] for c in message.get("tool_calls") or [] if c["id"] not in answered]
            answered.add(message["tool_call_id"])
            entry_id = self.entries[entry_id]["parent_id"]
        return []

    def check_pairing(self, message: dict, parent: str | None, line: int | None = None) -> None:
        waiting = self.waiting(parent)
        if message["role"] == "tool" and message["tool_call_id"] not in waiting:
            call = shown(message["tool_call_id"])
            if waiting:
                raise SessionProblem(f"tool 消息的 tool_call_id {call} 对不上：前面在等的调用是 {'、'.join(waiting)}",
                                     f"tool_call_id {call} answers no waiting call ({', '.join(waiting)})", line)
            raise SessionProblem(f"tool 消息（tool_call_id {call}）前面没有在等它的调用：它要紧跟在带 tool_calls 的 "
                                 "assistant 消息（或同一批的别的结果）后面",
                                 f"the tool message {call} follows no assistant message waiting for it", line)
        if message["role"] != "tool" and waiting:
            raise SessionProblem(f"前面的调用 {'、'.join(waiting)} 还没有结果，不能先接一条 {message['role']} 消息",
                                 f"calls {', '.join(waiting)} have no results yet; a message with role "
                                 f"{message['role']} cannot come first", line)

    def say(self, text: str, role: str = "user") -> dict:
        """在当前叶子后面接一条人写的消息（接着问；会话还是空的时，也可以先写一条 system）。"""
        if role not in ("user", "system"):
            raise SessionProblem("人写的消息只能是 user 或 system", "a typed message is user or system")
        return self.append({"role": role, "content": self.typed(text)})

    @staticmethod
    def typed(text: Any) -> str:
        if not isinstance(text, str) or not text.strip():
            raise SessionProblem("内容是空的：写点什么再发", "the text is empty")
        if len(text) > MAX_TEXT:
            raise SessionProblem(f"内容有 {len(text)} 字，最多 {MAX_TEXT} 字", f"the text exceeds {MAX_TEXT} characters")
        return text

    def fork(self, entry_id: str, content: str) -> list[dict]:
        """改一条消息：改好的那条挂在原条目的父条目下面（成为它的兄弟），当前分支移到新的这条。
        返回写下的条目：改好的那条，加上同一批调用里排在它后面、抄过来的结果（只在改工具结果时有）。"""
        old = self.get(entry_id)
        message = old["message"]
        if message.get("tool_calls"):
            raise SessionProblem("带工具调用的 assistant 消息不能直接改：改它的工具结果，或者改之前的问题",
                                 "an assistant message with tool calls cannot be edited; edit its results instead")
        if self.typed(content) == message["content"]:
            raise SessionProblem("内容和原来一样：改了什么才会分出新分支", "the content is unchanged")
        later = []
        if message["role"] == "tool":           # 同一批调用里排在它后面的结果：新分支上也得有，调用才都有结果
            path = self.path_ids(self.leaf_of(self.branch[entry_id]))
            for following in path[path.index(entry_id) + 1:]:
                if self.entries[following]["message"]["role"] != "tool":
                    break
                later.append(following)
        self.make_room(1 + len(later))            # 改好的和抄过来的一起写下，不会只写一半
        written = [self.append({**message, "content": content}, parent=old["parent_id"], edited_from=entry_id)]
        for following in later:
            written.append(self.append(self.entries[following]["message"], copied_from=following))
        return written

    def switch(self, entry_id: str) -> str:
        """换到 entry_id 所在的那条分支（它的叶子）；返回叶子的 id。"""
        self.get(entry_id)
        self.leaf = self.leaf_of(self.branch[entry_id])
        return self.leaf

    # ── 读

    def get(self, entry_id: str) -> dict:
        if entry_id not in self.entries:
            raise SessionProblem(f"没有 id 为 {shown(entry_id)} 的条目", f"no entry has the id {shown(entry_id)}")
        return self.entries[entry_id]

    def path_ids(self, leaf: str | None = None) -> list[str]:
        """从根走到 leaf（默认当前叶子）的条目 id：只顺着 parent_id 往回走，别的分支一条也到不了这里。"""
        leaf = self.leaf if leaf is None else leaf
        ids = []
        while leaf is not None:
            ids.append(leaf)
            leaf = self.entries[leaf]["parent_id"]
        return ids[::-1]

    def path(self, leaf: str | None = None) -> list[dict]:
        return [copy.deepcopy(self.entries[i]) for i in self.path_ids(leaf)]

    def messages(self, leaf: str | None = None) -> list[dict]:
        """这条分支发给模型的 messages：路上每一条的 message，别的什么也不加。"""
        return [copy.deepcopy(self.entries[i]["message"]) for i in self.path_ids(leaf)]

    def leaf_of(self, branch: str) -> str:
        """分支的叶子：从分支的第一条起，一直走父条目的第一个孩子（和它同一条分支的那个）。"""
        node = branch
        while self.children[node]:
            node = self.children[node][0]
        return node

    def branch_of(self, entry_id: str | None = None) -> str | None:
        entry_id = self.leaf if entry_id is None else entry_id
        return None if entry_id is None else self.branch[self.get(entry_id)["id"]]

    def branch_ids(self) -> list[str]:
        return [i for i in self.entries if self.branch[i] == i]

    def kind(self, entry_id: str, question: str | None = ...) -> str:
        """question（这条路上第一条用户消息）、user、assistant、tool 或 system。
        question 是这条路上问题的 id，调用方已经知道时传进来，省得再走一遍路。"""
        if question is ...:
            question = self.question(self.path_ids(entry_id))
        return "question" if entry_id == question else self.entries[entry_id]["message"]["role"]

    def question(self, path: list[str]) -> str | None:
        return next((i for i in path if self.entries[i]["message"]["role"] == "user"), None)

    def answer(self, leaf: str) -> str | None:
        """分支最后的回答：叶子是一条不带调用的 assistant 消息时，它的文字。"""
        message = self.entries[leaf]["message"]
        return message.get("content") or "" if message["role"] == "assistant" and not message.get("tool_calls") else None

    def branches(self) -> list[dict]:
        """每条分支一行：id、第几条（number）、叶子、多少条、是不是当前分支、最后的回答，
        以及它从哪里分出来（fork_point：和兄弟共有的最后一条）、和兄弟哪里不同（change）。"""
        rows = []
        for number, branch in enumerate(self.branch_ids(), 1):
            leaf, first = self.leaf_of(branch), self.entries[branch]
            fork_point = first["parent_id"]
            sibling = first.get("edited_from") if first.get("edited_from") in self.entries else None
            sibling = sibling or next((i for i in self.children[fork_point] if i != branch), None)
            if sibling is not None and self.children[fork_point].index(sibling) > self.children[fork_point].index(branch):
                sibling = None                       # 最早的那条分支：它没有从谁那里分出来
            change = None
            if sibling is not None:
                change = {"entry": branch, "sibling": sibling, "sibling_branch": self.branch[sibling],
                          "kind": self.kind(branch), "role": first["message"]["role"],
                          "before": self.entries[sibling]["message"].get("content"),
                          "after": first["message"].get("content"), "edited": "edited_from" in first}
            rows.append({"id": branch, "number": number, "leaf": leaf, "length": len(self.path_ids(leaf)),
                         "current": leaf == self.leaf, "fork_point": fork_point if sibling else None,
                         "change": change, "answer": self.answer(leaf)})
        return rows

    def compare(self, a: str, b: str) -> dict:
        """两条分支（给分支 id 或其中任一条的 id）并排：共有几条、从哪一条之后分开、各自第一条不同的、各自的回答。"""
        numbers = {row["id"]: row["number"] for row in self.branches()}
        sides = []
        for given in (a, b):
            branch = self.branch_of(given)
            sides.append((branch, self.path_ids(self.leaf_of(branch))))
        (branch_a, path_a), (branch_b, path_b) = sides
        shared = 0
        while shared < min(len(path_a), len(path_b)) and path_a[shared] == path_b[shared]:
            shared += 1

        def side(branch: str, path: list[str]) -> dict:
            first = self.entries[path[shared]] if shared < len(path) else None
            return {"branch": branch, "number": numbers[branch], "leaf": path[-1], "length": len(path),
                    "first": copy.deepcopy(first), "answer": self.answer(path[-1])}
        return {"shared": shared, "fork_point": path_a[shared - 1] if shared else None,
                "a": side(branch_a, path_a), "b": side(branch_b, path_b)}

    def tree(self) -> list[dict]:
        """整棵树，一条一行（先根后子，孩子按写下的先后）：页面画 /tree 用。depth 是缩进的层数。"""
        on_path, rows = set(self.path_ids()), []
        numbers = {branch: number for number, branch in enumerate(self.branch_ids(), 1)}
        stack = [(root, 0, None) for root in reversed(self.children[None])]
        while stack:
            entry_id, depth, question = stack.pop()
            entry = self.entries[entry_id]
            if question is None and entry["message"]["role"] == "user":
                question = entry_id
            rows.append({"id": entry_id, "parent_id": entry["parent_id"], "depth": depth,
                         "role": entry["message"]["role"], "kind": self.kind(entry_id, question),
                         "preview": preview(entry["message"]), "branch": self.branch[entry_id],
                         "number": numbers[self.branch[entry_id]], "current": entry_id in on_path,
                         "leaf": not self.children[entry_id], "edited_from": entry.get("edited_from"),
                         "copied_from": entry.get("copied_from")})
            stack.extend((child, depth + 1, question) for child in reversed(self.children[entry_id]))
        return rows

    # ── 跑

    def run(self, client: Any, tools: list[dict] | None, execute: Any, question: str | None = None,
            system: str | None = None, **options: Any) -> Iterator[dict]:
        """在当前分支上接着跑：先把 question（有的话）接在叶子后面，再把路上的 messages 交给
        run_function_calling。yield 它的每个事件（都带上 branch），写下的每一条再 yield 一个 entry 事件。
        options 原样交给循环（max_turns、tool_choice、stream……）；tool_call 之后照样可以 send 干预。"""
        if system is not None:
            if self.entries:
                raise SessionProblem("会话已经开始了：要换 system 提示词，就 fork 原来那一条",
                                     "the session has begun; fork its system message to change it")
            yield self.entry_event(0, self.say(system, role="system"))
        if question is not None:
            yield self.entry_event(0, self.say(question))
        yield from self.run_on(client, tools, execute, **options)

    def fork_and_run(self, entry_id: str, content: str, client: Any, tools: list[dict] | None, execute: Any,
                     **options: Any) -> Iterator[dict]:
        """改一条消息分出新分支（fork），马上在新分支上接着跑：页面的“改了，从这里重跑”。"""
        for entry in self.fork(entry_id, content):
            yield self.entry_event(0, entry)
        yield from self.run_on(client, tools, execute, **options)

    def entry_event(self, turn: int, entry: dict) -> events.EntryEvent:
        return events.entry(turn, self.branch[entry["id"]], entry)

    def run_on(self, client: Any, tools: list[dict] | None, execute: Any, **options: Any) -> Iterator[dict]:
        branch = self.branch_of()
        refused = self.cannot_run()
        if refused:
            yield {**events.error(0, "session", refused), "branch": branch}
            return
        steps = run_function_calling(client, self.messages(), tools, execute, **options)
        turn: list[dict] = []            # 这一轮还没写下的：带调用的 assistant 消息，和已经回来的结果
        reply = None
        try:
            while True:
                try:
                    event = steps.send(reply)
                except StopIteration:
                    return
                reply = yield {**event, "branch": branch}
                try:
                    kept = self.keep(event, turn, getattr(client, "model", None))
                except SessionProblem as problem:
                    yield {**events.error(event["turn"], "session", problem.zh), "branch": branch}
                    return
                for entry in kept:
                    yield self.entry_event(event["turn"], entry)
        finally:
            steps.close()

    def cannot_run(self) -> str | None:
        if self.leaf is None:
            return "会话还是空的：先问一个问题（question=…）"
        if self.answer(self.leaf) is not None:
            return "这条分支已经有回答了：接着问一句（question=…），或者改一条消息分出新分支"
        return None

    def keep(self, event: dict, turn: list[dict], model: str | None) -> list[dict]:
        """循环的一个事件 -> 这时该写进会话的条目。不带调用的回答马上写；带调用的回答等它的结果都回来，一起写。"""
        if event["type"] == "response":
            if not event["message"].get("tool_calls"):
                return [self.append(event["message"], model=model)]
            turn[:] = [event["message"]]
        elif event["type"] == "tool_result" and turn:
            turn.append(event["message"])
            if len(turn) - 1 == len(turn[0]["tool_calls"]):
                done, turn[:] = list(turn), []
                self.make_room(len(done))        # 一轮要么整个写下，要么一条也不写
                return [self.append(message, model=model if index == 0 else None) for index, message in enumerate(done)]
        return []

    # ── 存、导出

    def dumps(self, leaf: str | None = None) -> str:
        """JSONL 文本：整个会话；给了 leaf 就只有那一条分支（一个新会话，文件头记着它从哪个会话来）。"""
        if leaf is None:
            header, entries = self.header(), list(self.entries.values())
        else:
            header = Session(parent_session=self.id).header()
            entries = [self.entries[i] for i in self.path_ids(self.leaf_of(self.branch_of(leaf)))]
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in [header, *entries])

    def save(self, file: str | os.PathLike, leaf: str | None = None) -> None:
        """写到 file：先写临时文件再换名，写到一半断电也不会留下半个文件。"""
        folder = os.path.dirname(os.path.abspath(file))
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, delete=False, suffix=".part") as out:
            out.write(self.dumps(leaf))
        os.replace(out.name, file)

    def to_markdown(self, leaf: str | None = None) -> str:
        """一条分支（默认当前分支）写成给人读的 Markdown：每条消息一节，调用写出名字和参数，改过的注明原来是什么。"""
        branch = self.branch_of(leaf)
        row = next(r for r in self.branches() if r["id"] == branch)
        ids = self.path_ids(row["leaf"])
        question = self.question(ids)
        lines = [f"# 会话 {self.id[:8]} · 分支 {row['number']}", "",
                 f"- 分支 id：`{branch}`，{len(ids)} 条消息，导出于 {now()}"]
        if row["change"]:
            change = row["change"]
            lines.append(f"- 从分支 {self.branch_number(change['sibling_branch'])} 分出：第 "
                         f"{len(self.path_ids(change['sibling']))} 条{KIND_NAMES[change['kind']]}"
                         f"{'被人改过' if change['edited'] else '不一样'}")
        calls: dict[str, str] = {}
        for number, entry_id in enumerate(ids, 1):
            entry = self.entries[entry_id]
            message = entry["message"]
            title = f"## {number}. {message['role']}（{KIND_NAMES[self.kind(entry_id, question)]}）"
            if message["role"] == "tool":
                title += f" · {calls.get(message['tool_call_id'], '?')} 的结果 · `{message['tool_call_id']}`"
            if entry.get("edited_from"):
                title += " · ✏️ 人改过"
            lines += ["", title, "", f"*{entry['time']}* · id `{entry_id}`", ""]
            if entry.get("edited_from") in self.entries:
                lines += ["原来是：", "", fenced(self.entries[entry["edited_from"]]["message"].get("content")), "",
                          "改成：", ""]
            if message.get("content"):
                lines.append(fenced(message["content"]))
            for call in message.get("tool_calls") or []:
                calls[call["id"]] = call["function"]["name"]
                lines.append(f"- 调用 **{call['function']['name']}** · `{call['id']}`")
                lines += ["", fenced(call["function"]["arguments"], "json"), ""]
        return "\n".join(lines).rstrip() + "\n"

    def branch_number(self, branch: str) -> int:
        return self.branch_ids().index(branch) + 1


KIND_NAMES = {"question": "问题", "user": "用户消息", "assistant": "模型的回答", "tool": "工具结果", "system": "system 提示词"}


def fenced(text: Any, language: str = "text") -> str:
    """代码块包住原文：围栏比原文里最长的一串反引号还长，原文里的 ``` 和 # 就只是文字，排版不会被它改掉。"""
    text = "" if text is None else str(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


# ── 读回来

def loads(text: str | bytes) -> Session:
    """JSONL 文本 -> Session，当前分支是文件里最后写下的那一条所在的分支。
    哪里不对就抛 SessionProblem（第几行、错在哪里）。只用 json.loads 读：文件里的东西只当数据。"""
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise too_big(len(text))
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SessionProblem(f"文件不是 UTF-8 文本（第 {error.start + 1} 个字节读不出来）：它不像一个会话文件",
                                 "the file is not UTF-8 text") from None
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise too_big(size)
    lines = [(number, line) for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), 1)
             if line.strip()]
    if not lines:
        raise SessionProblem("文件是空的：会话文件的第一行是文件头", "the file is empty")
    if len(lines) - 1 > MAX_ENTRIES:
        raise SessionProblem(f"文件里有 {len(lines) - 1} 条，最多读 {MAX_ENTRIES} 条",
                             f"the file holds {len(lines) - 1} entries; at most {MAX_ENTRIES} are read")
    parsed = [(number, parse_line(number, line)) for number, line in lines]
    number, header = parsed[0]
    read_header(number, header)
    session = Session(session_id=header["id"], parent_session=header.get("parent_session"), created=header["time"])
    where = {}                                       # id -> 第几行：说重复、说父条目在后面时用
    for number, entry in parsed[1:]:
        check("entry", entry, number)
        if entry["id"] in where:
            raise SessionProblem(f"id {shown(entry['id'])} 和第 {where[entry['id']]} 行的重复了：每一条的 id 都要不一样",
                                 f"the id {shown(entry['id'])} repeats line {where[entry['id']]}", number)
        where[entry["id"]] = number
        parent = entry["parent_id"]
        if parent is not None and parent not in session.entries:
            raise wrong_parent(number, entry, parsed)
        edited = session.entries.get(entry.get("edited_from"))
        if edited is not None and edited["parent_id"] != parent:
            raise SessionProblem(f"edited_from 指向第 {where[edited['id']]} 行，可它们的父条目不同：改过的一条和原来那条是兄弟",
                                 "edited_from must name a sibling (an entry with the same parent)", number)
        check_message(entry["message"], number)
        session.check_pairing(entry["message"], parent, number)
        session.add(copy.deepcopy(entry))
    for leaf in [i for i in session.entries if not session.children[i]]:
        waiting = session.waiting(leaf)
        if waiting:
            raise SessionProblem(f"这一条是分支的最后一条，它要的调用 {'、'.join(waiting)} 却没有结果：文件缺了几行",
                                 f"the branch ends while calls {', '.join(waiting)} have no results", where[leaf])
    return session


def parse_line(number: int, line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as error:
        raise SessionProblem(f"不是合法的 JSON（第 {error.colno} 列：{error.msg}）",
                             f"not valid JSON (column {error.colno}: {error.msg})", number) from None
    except RecursionError:
        raise SessionProblem("JSON 嵌套得太深：会话文件的一行只有几层", "JSON nested too deeply", number) from None


def read_header(number: int, header: Any) -> None:
    if not isinstance(header, dict) or header.get("type") != "session":
        raise SessionProblem("第一行应该是文件头 {\"type\": \"session\", \"format\": …}：这不像一个会话文件",
                             "the first line must be the header {\"type\": \"session\", ...}", number)
    if header.get("format") != FORMAT:
        raise SessionProblem(f"文件头的 format 是 {shown(header.get('format'))}，不是 {FORMAT}：它是别的程序的会话文件",
                             f"the header's format is {shown(header.get('format'))}, not {FORMAT}", number)
    if header.get("version") != VERSION:
        raise SessionProblem(f"文件是第 {shown(header.get('version'))} 版格式，这里只认第 {VERSION} 版",
                             f"format version {shown(header.get('version'))}; only version {VERSION} is read", number)
    check("header", header, number)


def wrong_parent(number: int, entry: dict, parsed: list) -> SessionProblem:
    parent = entry["parent_id"]
    if parent == entry["id"]:
        return SessionProblem("parent_id 是它自己：顺着 parent_id 走会原地绕圈", "the entry is its own parent", number)
    later = next((n for n, e in parsed if isinstance(e, dict) and e.get("id") == parent and n > number), None)
    if later:
        return SessionProblem(f"parent_id 指向后面第 {later} 行：父条目总写在前面（文件只追加），"
                              "指向后面的父条目可能让路径绕成一个圈",
                              f"parent_id points forward to line {later}; parents come first", number)
    return SessionProblem(f"parent_id {shown(parent)} 在文件里找不到：这一条接在一条不存在的消息后面",
                          f"parent_id {shown(parent)} is not in the file", number)


def too_big(size: int) -> SessionProblem:
    return SessionProblem(f"文件有 {size} 字节，最多读 {MAX_FILE_BYTES} 字节",
                          f"the file has {size} bytes; at most {MAX_FILE_BYTES} are read")


def load(file: str | os.PathLike) -> Session:
    """读一个会话文件（resume）：之后写下的条目接着追加到这个文件里。"""
    with open(file, "rb") as source:
        data = source.read(MAX_FILE_BYTES + 1)       # 多读一个字节就知道它超了：不把一个巨大的文件整个读进内存
    session = loads(data)
    session.file = os.fspath(file)
    if not data.endswith(b"\n"):                      # 手改过的文件最后一行可能没有换行：补上，接着写的才是新的一行
        with open(file, "a", encoding="utf-8") as out:
            out.write("\n")
    return session


if __name__ == "__main__":
    from examples_weather import registry
    from llm_clients import make_client

    client = make_client("offline")

    def show(steps: Iterator[dict]) -> None:
        for event in steps:
            if event["type"] == "entry":
                entry = event["entry"]
                mark = "  ✏️ 人改过" if entry.get("edited_from") else ""
                print(f"  [{entry['id']} ← {entry['parent_id']}] {entry['message']['role']}: "
                      f"{preview(entry['message'])}{mark}")
            elif event["type"] == "error":
                print("  出错：", event["message"])

    session = Session()
    print("① 第一次运行（分支 1）")
    show(session.run(client, None, registry, question="北京今天天气怎么样？"))
    result = next(e for e in session.path() if e["message"]["role"] == "tool")

    print("\n② 从工具结果分叉：把晴改成大雨，接着跑（分支 2）")
    show(session.fork_and_run(result["id"], "北京今天大雨，气温 18°C，湿度 95%", client, None, registry))

    print("\n③ 两条分支并排")
    side = session.compare(session.branch_ids()[0], session.branch_ids()[1])
    print(f"  共有前 {side['shared']} 条，从 {side['fork_point']} 之后分开")
    for key in ("a", "b"):
        one = side[key]
        print(f"  分支 {one['number']}：第一条不同的是 {preview(one['first']['message'])}")
        print(f"          回答：{' '.join((one['answer'] or '').split())[:70]}")

    print("\n④ 分支 2 导出成 Markdown（开头几行）")
    print("\n".join(session.to_markdown().splitlines()[:8]))

    with tempfile.TemporaryDirectory() as folder:
        file = os.path.join(folder, "branch-2.jsonl")
        session.save(file, leaf=session.leaf)
        print(f"\n⑤ 分支 2 存成 JSONL（{sum(1 for _ in open(file, encoding='utf-8'))} 行），重启以后读回来接着问")
        resumed = load(file)
        show(resumed.run(client, None, registry, question="上海今天天气怎么样？"))
        print(f"  文件现在有 {sum(1 for _ in open(file, encoding='utf-8'))} 行；再读一次，当前分支有 "
              f"{len(load(file).messages())} 条消息")
