"""Each lesson's exercises: a task, the state the page starts from, what a run must show, a hint and
a reference solution. Keyed by the lesson's id; a lesson adds its own by adding an entry to
EXERCISES (lesson_exercises() reads it; the catalogue's Lesson.exercises too).

A state is what the lesson's page holds, by name: "source" (the tool source, lessons with an
editor), "question", and the page's run options ("hooks", "skills", "conversation", "strategy",
"budget", "tool_choice" ...), each in the form the page's box holds it (a source as text, the
skills box as its one text, the conversation as JSON text). The reference solution lists only what
differs from the start.

A check is a list of probes: one run each, on a question (or the state's own), and the matchers its
events must meet (runs/exercises.py reads them):
  {"called": tool, "arguments": {name: evaluation matcher}}  the tool ran (the call was accepted and succeeded)
  {"asked": tool, "arguments": {...}}                         a response asked for it (run or not: the first call runs nothing)
  {"streamed": true}                                          the response arrived streamed, in fragments
  {"never": tool}                                             the model never asked for it
      (both with "child": true look at the sub-agents' calls instead of the main loop's)
  {"order": [tool, ...]}                                      these tools ran in this order
  {"no_tool": true}                                           no call at all
  {"answer": evaluation matcher}                              the final answer
  {"answer_lacks": text}                                      the final answer does not contain it
  {"answer_names_result": tool}                               the answer repeats a fact (a number, a host, a name)
                                                              from that tool's result
  {"hook": decision, "tool": tool}                            a PreToolUse hook answered deny / allow / ask for it
  {"budget_kept": true}                                       the context sent fits the budget
  {"schema": tool, "parameter": name, "enum": [...] | "type": t}  the registry's schema of that parameter
  {"plan_done": item}                                         the last plan marks the item containing this text done
  {"forked": role}                                            the run went on from an edited message of that role
                                                              (user / tool), on a new branch
  {"requests_within": tokens}                                 every request the loop sent holds at most that many
                                                              tokens (estimated as code/context.py does)
The starting sources are the lessons' examples (the course's files, read as text), changed to hold the
mistake the student fixes.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

from llm_clients import OFFLINE_MODEL

from i18n import tr

COURSE = Path(__file__).resolve().parent.parent / "code"


def course_text(name: str) -> str:
    return (COURSE / name).read_text(encoding="utf-8")


def changed(text: str, old: str, new: str) -> str:
    """`text` with its first `old` replaced: a starting state made from an example. Raises when the
    example no longer holds `old` (an exercise that silently started from the fixed file would pass by itself)."""
    if old not in text:
        raise ValueError(f"练习的起始状态找不到要改的那一段：{old[:60]!r}")
    return text.replace(old, new, 1)


@dataclasses.dataclass(frozen=True)
class Exercise:
    id: str
    lesson: str
    title: tr
    task: tr
    start: Mapping[str, Any]              # the page's state the exercise starts from
    probes: tuple[Mapping[str, Any], ...]  # [{"question": str | None, "expect": [matcher, ...]}]
    hint: tr
    solution: Mapping[str, Any]           # what differs from `start` in a reference solution
    fields: tuple[str, ...] = ()          # the state the student is meant to change (shown first on the page)

    def state(self, changes: Mapping[str, Any] | None = None) -> dict:
        return {**self.start, **dict(changes or {})}

    def to_json(self) -> dict:
        return {"id": self.id, "lesson": self.lesson, "title": {"zh": self.title.zh, "en": self.title.en},
                "task": {"zh": self.task.zh, "en": self.task.en}, "start": dict(self.start),
                "probes": [dict(p) for p in self.probes], "fields": list(self.fields)}


# ─────────────────────────────────────────────────────────── starting states

WEATHER = course_text("examples_weather.py")
WEATHER_VAGUE = course_text("examples_weather_vague.py")
UNIT_ENUM = 'unit: Annotated[Literal["c", "f"], "温度单位：c 摄氏度，f 华氏度"] = "c") -> str:'
WEATHER_NO_ENUM = changed(WEATHER, UNIT_ENUM, 'unit: Annotated[str, "温度单位：c 摄氏度，f 华氏度"] = "c") -> str:')
DAYS_INT = 'days: Annotated[int, '
WEATHER_DAYS_TEXT = changed(WEATHER, DAYS_INT, 'days: Annotated[str, ')
VAGUE_FORECAST = '@registry.tool("天气", read_only=True)\ndef get_forecast'
CLEAR_FORECAST = '@registry.tool("查询指定城市未来几天的天气预报。用户问“明天”“这几天”“周末”的天气时使用", read_only=True)\ndef get_forecast'

CHAT_TOOL = '''

@registry.tool("和用户聊天：打招呼、自我介绍、回答任何问题时使用")
def chat(message: str) -> str:
    """聊天。

    Args:
        message: 用户说的话
    """
    return "你好！"
'''

def rules_box(rules: Mapping[str, str]) -> str:
    return json.dumps(dict(rules), ensure_ascii=False, indent=2)


def presets() -> tuple[dict, dict]:
    """The permission lesson's presets 全部信任 and 只读 (code/permissions.py)."""
    import permissions
    return dict(permissions.TRUST_ALL), dict(permissions.READ_ONLY)


TRIP = "出差前准备：查北京今天的天气，再查上海未来3天的天气预报"   # the planning lesson's task (runs/planning_backend.py)

OPS = course_text("examples_ops.py")
EMPTY_HOOKS = '''from hooks import Hooks, PRE, POST

hooks = Hooks()


@hooks.on(PRE)
def guard(call):
    # call["tool_name"] 是工具名，call["tool_input"] 是参数（字典）
    return None      # 没意见：放行
'''
GUARD_RM = '''from hooks import Hooks, PRE, POST

hooks = Hooks()


@hooks.on(PRE)
def guard(call):
    command = (call["tool_input"] or {}).get("command", "")
    if call["tool_name"] == "bash" and "rm -rf" in command:
        return {"permissionDecision": "deny", "permissionDecisionReason": "rm -rf 会删掉整个目录，不许运行"}
    return None
'''
MASKING = EMPTY_HOOKS.replace("from hooks import Hooks, PRE, POST", "from hooks import Hooks, PRE, POST, mask_secrets") + \
    "\n\nhooks.add(POST, mask_secrets)\n"

def context_conversation() -> str:
    """The context lesson's example conversation, as the page's box holds it (the question is asked apart)."""
    import context        # code/ is on the path wherever the catalogue is read (import_paths)
    return json.dumps(context.EXAMPLE[:-1], ensure_ascii=False, indent=2)


def skills_box(change: tuple[str, str] | None = None) -> str:
    """The skills lesson's box (runs/skills_backend.text_from_files's format), its example skills in
    folder order, with one text changed."""
    import skills
    files = dict(sorted(skills.EXAMPLES.items()))
    text = "\n".join(f"==> skills/{folder}/SKILL.md <==\n{body.strip()}\n" for folder, body in files.items())
    return changed(text, *change) if change else text


RELEASE_NOTES_DESCRIPTION = "description: 把一组提交记录写成给用户看的发布说明。用户要写发布说明、changelog、更新日志时用。"


# The sessions lesson's file after one run of the weather example on the offline model (as the page's
# export writes it), with fixed ids: a session the student forks from. The loader checks it like any file.
ASKED_ID, CALLED_ID, RESULT_ID, ANSWERED_ID = "5e55100a0001", "5e55100a0002", "5e55100a0003", "5e55100a0004"
WEATHER_SESSION = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in [
    {"type": "session", "format": "tool-workshop-session", "version": 1, "id": "5e551017e0c54a0b9d2f3e8a4c6b1d7f",
     "time": "2026-01-05T09:00:00.000Z"},
    {"type": "message", "id": ASKED_ID, "parent_id": None, "time": "2026-01-05T09:00:00.100Z",
     "message": {"role": "user", "content": "北京今天天气怎么样？"}},
    {"type": "message", "id": CALLED_ID, "parent_id": ASKED_ID, "time": "2026-01-05T09:00:00.200Z",
     "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "call_5e55100a", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\"}"}}]},
     "model": OFFLINE_MODEL},
    {"type": "message", "id": RESULT_ID, "parent_id": CALLED_ID, "time": "2026-01-05T09:00:00.300Z",
     "message": {"role": "tool", "tool_call_id": "call_5e55100a", "content": "北京今天晴，气温 25°C，湿度 30%"}},
    {"type": "message", "id": ANSWERED_ID, "parent_id": RESULT_ID, "time": "2026-01-05T09:00:00.400Z",
     "message": {"role": "assistant", "content": "北京今天晴，气温 25°C，湿度 30%。"}, "model": OFFLINE_MODEL},
])
STORM = "北京今天暴雨，气温 12°C，湿度 95%"

def agent_parts(**changes: Any) -> dict:
    """The MiniAgent page's parts as its controls hold them, code/mini_agent.py's DEMO (what
    runs/mini_agent_backend.default_options gives the page; a test keeps the two the same), some changed."""
    from mini_agent import DEMO
    demo = {"tools": list(DEMO.tools), "rules_on": DEMO.rules is not None, "rules": rules_box(DEMO.rules or {}),
            "hooks": list(DEMO.hooks), "context": DEMO.context, "budget": DEMO.budget, "skills": list(DEMO.skills),
            "subagents": DEMO.subagents, "plan": DEMO.plan}
    return {**demo, **changes}


CAUTIOUS_RULES = {"read": "allow", "edit:src/*": "allow", "write": "ask", "bash": "ask"}
FIX_TASK = "找出失败的测试并修好它"       # the MiniAgent page's default task (code/mini_agent_file.py)


# ─────────────────────────────────────────────────────────── the exercises

def _all() -> list[Exercise]:
    conversation = context_conversation()
    trust_all, read_only = presets()
    return [
        # 8.4 工具注册
        Exercise(
            "registry_enum", "registry", tr("让 unit 只能是 c 或 f", "Make unit either c or f"),
            tr("get_weather 的 unit 参数只接受 c 或 f，可 schema 里它只是一个字符串，模型什么都可能填。改函数签名，"
               "让注册表生成的 schema 给 unit 一个 enum [\"c\", \"f\"]，再用华氏度问一次广州的天气。",
               "get_weather's unit takes only c or f, yet its schema says just \"string\": a model may put anything there. "
               "Change the signature so that the registry's schema gives unit an enum [\"c\", \"f\"], then ask for "
               "Guangzhou's weather in Fahrenheit."),
            {"source": WEATHER_NO_ENUM, "question": "用华氏度告诉我广州今天的天气"},
            ({"question": None, "expect": [
                {"schema": "get_weather", "parameter": "unit", "enum": ["c", "f"]},
                {"called": "get_weather", "arguments": {"city": "广州", "unit": "f"}}]},),
            tr("注册表从类型注解推出 schema：Literal[\"c\", \"f\"] 会变成 enum。",
               "The registry reads the type annotation: Literal[\"c\", \"f\"] becomes an enum."),
            {"source": WEATHER}, fields=("source",)),
        Exercise(
            "registry_integer", "registry", tr("days 应该是整数", "days should be an integer"),
            tr("get_forecast 的 days 被注解成了 str：schema 说它是字符串，模型就把 5 写成 \"5\"。改成整数，"
               "让“杭州未来 5 天的天气预报”收到整数 5。",
               "get_forecast's days is annotated str: the schema says string, so the model writes 5 as \"5\". Make it an "
               "integer so that `杭州未来 5 天的天气预报` gets the integer 5."),
            {"source": WEATHER_DAYS_TEXT, "question": "杭州未来 5 天的天气预报"},
            ({"question": None, "expect": [
                {"schema": "get_forecast", "parameter": "days", "type": "integer"},
                {"called": "get_forecast", "arguments": {"city": "杭州", "days": {"near": 5}}}]},),
            tr("schema 的 type 来自注解：Annotated[int, \"...\"]。", "The schema's type comes from the annotation: "
               "Annotated[int, \"...\"]."),
            {"source": WEATHER}, fields=("source",)),

        # 8.4 Function Calling
        Exercise(
            "fc_vague_forecast", "function_calling", tr("让模型分清今天和这几天", "Tell today from the next days"),
            tr("两个工具的描述都只写了“天气”，模型分不清：问“上海这几天天气怎么样”，它调的是查今天的 get_weather。"
               "改 get_forecast 的描述（@registry.tool 的第一个参数），让模型改调 get_forecast，而且不再调 get_weather。",
               "Both tools are described as just \"weather\", and the model cannot tell them apart: asked about the next "
               "few days in Shanghai it calls get_weather, which is today's. Rewrite get_forecast's description (the "
               "first argument of @registry.tool) so that the model calls get_forecast, and get_weather no more."),
            {"source": WEATHER_VAGUE, "question": "上海这几天天气怎么样"},
            ({"question": None, "expect": [{"called": "get_forecast", "arguments": {"city": "上海"}},
                                           {"never": "get_weather"}]},
             {"question": "深圳周末天气怎么样", "expect": [{"called": "get_forecast", "arguments": {"city": "深圳"}}]}),
            tr("模型只看得到描述：写明它查什么（未来几天的预报），以及用户会怎么问（“这几天”“周末”“明天”）。",
               "The model sees only the description: say what it looks up (the forecast of the coming days) and how "
               "people ask for it (\"these days\", \"the weekend\", \"tomorrow\")."),
            {"source": changed(WEATHER_VAGUE, VAGUE_FORECAST, CLEAR_FORECAST)}, fields=("source",)),
        Exercise(
            "fc_no_tool", "function_calling", tr("打个招呼不必调工具", "A greeting needs no tool"),
            tr("tool_choice 设成了 required：模型每次都必须调一个工具，连“你好”也不例外。改 tool_choice，让这个问候不调用任何工具，"
               "而天气问题照样调 get_weather。",
               "tool_choice is set to required: the model must call a tool every time, even for \"hello\". Change "
               "tool_choice so that this greeting calls no tool, while a weather question still calls get_weather."),
            {"source": WEATHER, "question": "你好，介绍一下你自己", "tool_choice": "required"},
            ({"question": None, "expect": [{"no_tool": True}]},
             {"question": "北京今天天气怎么样？", "expect": [{"called": "get_weather", "arguments": {"city": "北京"}},
                                                        {"answer_names_result": "get_weather"}]}),
            tr("auto 让模型自己决定调不调工具；required 逼它调，none 不许它调。",
               "auto lets the model decide; required forces a call, none forbids one."),
            {"tool_choice": "auto"}, fields=("tool_choice",)),

        # 8.7 钩子
        Exercise(
            "hooks_block_rm", "hooks", tr("拦下 rm -rf，放行 ls", "Block rm -rf, let ls run"),
            tr("写一个 PreToolUse 钩子：bash 的命令里有 rm -rf 时拒绝（写明理由），别的命令照常运行。检查会问两次：运行 `rm -rf build` 和运行 `ls`。",
               "Write a PreToolUse hook that denies bash when its command contains rm -rf (with a reason) and lets "
               "every other command run. The check asks twice: run `rm -rf build`, and run `ls`."),
            {"source": OPS, "hooks": EMPTY_HOOKS, "question": "运行 `rm -rf build`"},
            ({"question": "运行 `rm -rf build`", "expect": [{"hook": "deny", "tool": "bash"}]},
             {"question": "运行 `ls`", "expect": [{"called": "bash", "arguments": {"command": "ls"}}]}),
            tr("钩子返回 {\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"...\"} 就拦下；"
               "返回 None 是没意见，照常运行。命令在 call[\"tool_input\"][\"command\"]。",
               "Return {\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"...\"} to block; None means no "
               "objection. The command is call[\"tool_input\"][\"command\"]."),
            {"hooks": GUARD_RM}, fields=("hooks",)),
        Exercise(
            "hooks_mask", "hooks", tr("别让密钥到模型那里", "Keep the key from the model"),
            tr("读 payments 服务的配置时，工具的结果里有 api_key 和密码，原样交给了模型。加一个 PostToolUse 钩子把它们遮住，"
               "但回答里仍要说出配置里的地址。",
               "Reading the payments service's configuration hands its api_key and password to the model as they are. "
               "Add a PostToolUse hook that masks them; the answer must still name the configuration's address."),
            {"source": OPS, "hooks": EMPTY_HOOKS, "question": "读一下 payments 服务的配置"},
            ({"question": None, "expect": [{"called": "fetch_config", "arguments": {"service": "payments"}},
                                           {"answer_lacks": "sk-live9f3b2c7d1e8a4b6c"}, {"answer_lacks": "hunter2"},
                                           {"answer": {"contains": "pay.example.com"}}]},),
            tr("code/hooks.py 里有现成的 mask_secrets：hooks.add(POST, mask_secrets)。",
               "code/hooks.py has mask_secrets ready: hooks.add(POST, mask_secrets)."),
            {"hooks": MASKING}, fields=("hooks",)),

        # 8.8 上下文预算
        Exercise(
            "context_keep_name", "context", tr("600 个 token 里记住名字", "Keep the name within 600 tokens"),
            tr("滑动窗口把最早的消息丢了，连“我叫小林”一起：问“我叫什么名字？”模型答不上来。预算仍是 600，换一种做法，"
               "让发出去的上下文不超过预算，回答里又有“小林”。",
               "The sliding window drops the oldest messages, \"I am Xiaolin\" among them: asked its name, the model "
               "cannot say. Keep the budget at 600 and pick another strategy, so that the context sent fits it and the "
               "answer says `小林`."),
            {"conversation": conversation, "question": "我叫什么名字？", "strategy": "window", "budget": 600},
            ({"question": None, "expect": [{"budget_kept": True}, {"answer": {"contains": "小林"}}]},),
            tr("窗口只会从最早的消息丢起；大的是两份工具结果：把它们收拾掉，或者让摘要（/compact）把早先的事实写下来。",
               "A window drops from the oldest message on; what is big is the two tool results: shrink those, or have "
               "a summary (/compact) write the earlier facts down."),
            {"strategy": "compact"}, fields=("strategy",)),
        Exercise(
            "context_fit", "context", tr("装进预算，还答得出", "Fit the budget and still answer"),
            tr("“不处理”把整段对话原样发出，有一千多个 token，超过预算 800。选一种做法，让发出去的上下文不超过 800 个 token，"
               "并且问“构建为什么失败？”时回答里仍有 test_calc（日志里那一行 ERROR）。",
               "\"None\" sends the whole conversation as it is, over a thousand tokens, past the budget of 800. Pick a "
               "strategy so that the context sent fits 800 tokens and, asked why the build failed, the answer still "
               "names test_calc (the log's ERROR line)."),
            {"conversation": conversation, "question": "构建为什么失败？", "strategy": "none", "budget": 800},
            ({"question": None, "expect": [{"budget_kept": True}, {"answer": {"contains": "test_calc"}}]},),
            tr("答案在构建日志（第一份工具结果）的最后一行 ERROR：丢掉日志、换成一行说明都会把它丢掉；折叠留下长结果的开头和结尾。",
               "The answer is the build log's last line, ERROR (the first tool result): dropping the log or replacing "
               "it with a line loses it; folding keeps a long result's first and last lines."),
            {"strategy": "fold"}, fields=("strategy",)),

        # 8.9 技能
        Exercise(
            "skills_description", "skills", tr("让模型读对技能", "Get the right skill loaded"),
            tr("release-notes 技能的描述写成了“审查代码。”：要写发布说明时，模型在目录里找不到它。改这条描述，"
               "让“帮我把这几个提交写成发布说明”读的是 release-notes。",
               "The release-notes skill is described as `审查代码。` (review code): asked for release notes, the model "
               "cannot find it in the catalogue. Rewrite that description so that `帮我把这几个提交写成发布说明` loads "
               "release-notes."),
            {"skills": skills_box((RELEASE_NOTES_DESCRIPTION, "description: 审查代码。")),
             "question": "帮我把这几个提交写成发布说明", "way": "catalogue"},
            ({"question": None, "expect": [{"called": "load_skill", "arguments": {"name": "release-notes"}}]},),
            tr("目录里只有名字和描述：描述要写它做什么、用户说什么时用它（“发布说明”“changelog”）。",
               "The catalogue holds only names and descriptions: say what the skill does and when to use it "
               "(`发布说明`, \"changelog\")."),
            {"skills": skills_box()}, fields=("skills",)),
        Exercise(
            "skills_name", "skills", tr("技能的名字不合格", "A skill's name that does not pass"),
            tr("sql-style 的 name 写成了 SQL_Style：大写字母和下划线不合 Agent Skills 的格式，这个技能没有读进来，"
               "问“这个查询怎么写”时模型也就读不到它。改好名字（要和文件夹名一样）。",
               "sql-style's name is SQL_Style: capitals and underscores do not pass the Agent Skills format, so the "
               "skill is not read, and asked how to write a query the model cannot load it. Fix the name (it must "
               "equal the folder's)."),
            {"skills": skills_box(("name: sql-style", "name: SQL_Style")), "question": "这个查询怎么写",
             "way": "catalogue"},
            ({"question": None, "expect": [{"called": "load_skill", "arguments": {"name": "sql-style"}}]},),
            tr("名字只能用小写字母、数字和连字符，并且和文件夹 skills/<名字>/ 一致。",
               "A name is lowercase letters, digits and hyphens, the same as its folder skills/<name>/."),
            {"skills": skills_box()}, fields=("skills",)),

        # 8.2 正则 ReAct
        Exercise(
            "react_days", "react", tr("天数是整数", "Days are a number"),
            tr("ReAct 的提示词里写着每个工具的参数和类型。get_forecast 的 days 被注解成了 str，问“杭州未来 5 天的天气预报”，"
               "调用被退回了。改好注解，让 get_forecast 收到整数 5。",
               "ReAct's prompt lists each tool's parameters and their types. get_forecast's days is annotated str, and "
               "asked for Hangzhou's 5-day forecast the call is sent back. Fix the annotation so that get_forecast "
               "gets the integer 5."),
            {"source": WEATHER_DAYS_TEXT, "question": "杭州未来 5 天的天气预报"},
            ({"question": None, "expect": [
                {"schema": "get_forecast", "parameter": "days", "type": "integer"},
                {"called": "get_forecast", "arguments": {"city": "杭州", "days": {"near": 5}}},
                {"answer_names_result": "get_forecast"}]},),
            tr("看时间线里 Observation 的报错：它说 days 应为什么类型？把注解改成 int。",
               "Read the Observation's error in the timeline: which type does it want for days? Annotate it int."),
            {"source": WEATHER}, fields=("source",)),
        Exercise(
            "react_enum", "react", tr("单位写进提示词", "Put the units in the prompt"),
            tr("get_weather 的 unit 在提示词里只是一个字符串。让注册表给它 enum [\"c\", \"f\"]（模型在 ReAct 提示词里读到的就是它），"
               "再用华氏度问广州今天的天气：要调 get_weather，unit 是 f。",
               "In the prompt, get_weather's unit is just a string. Have the registry give it the enum [\"c\", \"f\"] "
               "(what the model reads in the ReAct prompt), then ask for Guangzhou's weather today in Fahrenheit: "
               "get_weather with unit f."),
            {"source": WEATHER_NO_ENUM, "question": "用华氏度告诉我广州今天的天气"},
            ({"question": None, "expect": [
                {"schema": "get_weather", "parameter": "unit", "enum": ["c", "f"]},
                {"called": "get_weather", "arguments": {"city": "广州", "unit": "f"}}]},),
            tr("Literal[\"c\", \"f\"] 会变成 enum。", "Literal[\"c\", \"f\"] becomes an enum."),
            {"source": WEATHER}, fields=("source",)),

        # MCP
        Exercise(
            "mcp_vague_forecast", "mcp", tr("tools/list 里的描述", "The description in tools/list"),
            tr("MCP 服务器在 tools/list 里交出的描述，就是 @registry.tool 的第一个参数。两个工具都只写“天气”时，"
               "问“深圳周末天气怎么样”，模型调的是查今天的 get_weather。改 get_forecast 的描述，让它改调 get_forecast。",
               "The description an MCP server hands out in tools/list is @registry.tool's first argument. With both "
               "tools described as \"weather\", asked about Shenzhen's weekend the model calls today's get_weather. "
               "Rewrite get_forecast's description so that it calls get_forecast."),
            {"source": WEATHER_VAGUE, "question": "深圳周末天气怎么样"},
            ({"question": None, "expect": [{"called": "get_forecast", "arguments": {"city": "深圳"}},
                                           {"never": "get_weather"}]},),
            tr("在左边对照 tools/list 的 inputSchema 和描述：写明它查未来几天，用户会说“周末”“这几天”。",
               "Compare tools/list's description on the left: say it looks ahead, and that people say \"weekend\"."),
            {"source": changed(WEATHER_VAGUE, VAGUE_FORECAST, CLEAR_FORECAST)}, fields=("source",)),
        Exercise(
            "mcp_enum", "mcp", tr("inputSchema 里的 enum", "An enum in inputSchema"),
            tr("tools/list 的 inputSchema 里，get_weather 的 unit 没有 enum。改签名，让服务器交出 enum [\"c\", \"f\"]，"
               "用华氏度问广州今天的天气时调 get_weather、unit 为 f。",
               "In tools/list's inputSchema get_weather's unit has no enum. Change the signature so that the server "
               "hands out the enum [\"c\", \"f\"], and asked for Guangzhou today in Fahrenheit the model calls "
               "get_weather with unit f."),
            {"source": WEATHER_NO_ENUM, "question": "用华氏度告诉我广州今天的天气"},
            ({"question": None, "expect": [
                {"schema": "get_weather", "parameter": "unit", "enum": ["c", "f"]},
                {"called": "get_weather", "arguments": {"city": "广州", "unit": "f"}}]},),
            tr("inputSchema 就是注册表的 parameters：Literal[\"c\", \"f\"]。",
               "inputSchema is the registry's parameters: Literal[\"c\", \"f\"]."),
            {"source": WEATHER}, fields=("source",)),

        # 8.10 子代理
        Exercise(
            "subagent_turns", "subagents", tr("给子代理够用的轮数", "Give the sub-agent enough rounds"),
            tr("子代理只有 1 轮：它调了 get_weather，还没来得及写结论就被停下了，主代理拿回的是一句“没做完”。"
               "调大子代理的轮数，让 task 成功，主代理的回答里说出子代理查到的天气。",
               "The sub-agent has 1 round: it calls get_weather and is stopped before it writes its conclusion, so the "
               "main agent gets back \"not finished\". Give it more rounds so that task succeeds and the main "
               "agent's answer names the weather the sub-agent found."),
            {"source": WEATHER, "question": "派一个子代理去查北京今天的天气，告诉我结论", "child_turns": 1,
             "child_seconds": 60},
            ({"question": None, "expect": [{"called": "task"}, {"answer_names_result": "task"}]},),
            tr("一轮调工具，还要一轮读结果、写结论。", "One round calls the tool; another reads the result and writes the "
               "conclusion."),
            {"child_turns": 4}, fields=("child_turns",)),
        Exercise(
            "subagent_description", "subagents", tr("子代理也只看描述", "The sub-agent reads descriptions too"),
            tr("子代理用的是同样的工具：描述都只写“天气”时，“交给子代理：上海这几天天气怎么样”里，子代理调的是查今天的 get_weather。"
               "改 get_forecast 的描述，让子代理调 get_forecast。",
               "The sub-agent has the same tools: with both described as \"weather\", given `上海这几天天气怎么样` it "
               "calls today's get_weather. Rewrite get_forecast's description so that the sub-agent calls it."),
            {"source": WEATHER_VAGUE, "question": "交给子代理：上海这几天天气怎么样", "child_turns": 4, "child_seconds": 60},
            ({"question": None, "expect": [{"called": "task"},
                                           {"called": "get_forecast", "arguments": {"city": "上海"}, "child": True},
                                           {"never": "get_weather", "child": True}]},),
            tr("子代理从零开始，只有 prompt 和工具的描述。", "A sub-agent starts from nothing but its prompt and the tools' "
               "descriptions."),
            {"source": changed(WEATHER_VAGUE, VAGUE_FORECAST, CLEAR_FORECAST)}, fields=("source",)),

        # 8.12 评估
        Exercise(
            "eval_vague_set", "evaluation", tr("让天气用例全部通过", "Make the weather cases pass"),
            tr("含糊的天气示例：两个工具的描述都只写“天气”。问“上海这几天”“深圳周末”时模型调错了工具。"
               "改描述，让这四个用例的调用都对（同一组用例在评估里跑，通过率会回来）。",
               "The vague weather example: both tools are described as \"weather\", and asked about the next days in "
               "Shanghai or Shenzhen's weekend the model picks the wrong tool. Rewrite the descriptions so that all "
               "four cases call the right tool (run the case set in the evaluation and see the pass rate come back)."),
            {"source": WEATHER_VAGUE, "question": "上海这几天天气怎么样"},
            ({"question": "北京今天天气怎么样？", "expect": [{"called": "get_weather", "arguments": {"city": "北京"}}]},
             {"question": "上海这几天天气怎么样", "expect": [{"called": "get_forecast", "arguments": {"city": "上海"}},
                                                       {"never": "get_weather"}]},
             {"question": "深圳周末天气怎么样", "expect": [{"called": "get_forecast", "arguments": {"city": "深圳"}},
                                                     {"never": "get_weather"}]},
             {"question": "杭州未来 5 天的天气预报", "expect": [
                 {"called": "get_forecast", "arguments": {"city": "杭州", "days": {"near": 5}}}]}),
            tr("每个描述写它查什么、用户会怎么问；只改描述，函数不用动。",
               "Say in each description what it looks up and how people ask; change only the descriptions."),
            {"source": changed(WEATHER_VAGUE, VAGUE_FORECAST, CLEAR_FORECAST)}, fields=("source",)),
        Exercise(
            "eval_irrelevance", "evaluation", tr("打招呼不该调工具", "A greeting should call no tool"),
            tr("有人加了一个 chat 工具，描述是“回答任何问题时使用”：评估里“闲聊：不该调用工具”的用例就掉了分——模型连打招呼都去调它。"
               "改掉它（收窄描述或者删掉），让问候不调用任何工具，天气问题仍调 get_weather。",
               "Someone added a chat tool described as \"use it to answer any question\": the case \"small talk: no "
               "tool\" now fails, the model calls it even for a greeting. Fix it (narrow the description or remove "
               "the tool) so that a greeting calls no tool and a weather question still calls get_weather."),
            {"source": WEATHER + CHAT_TOOL, "question": "你好，介绍一下你自己"},
            ({"question": None, "expect": [{"no_tool": True}]},
             {"question": "北京今天天气怎么样？", "expect": [{"called": "get_weather", "arguments": {"city": "北京"}}]}),
            tr("一个什么都能做的工具，模型什么时候都会想调它：BFCL 把这类用例叫 irrelevance。",
               "A tool for everything is a tool the model always wants: BFCL calls such cases irrelevance."),
            {"source": WEATHER}, fields=("source",)),

        # 8.5 原子工具
        Exercise(
            "ws_fix_not_run", "workspace", tr("让它修，而不只是跑", "Have it fix, not just run"),
            tr("“运行测试”只让模型跑一遍测试，报告失败就停了。改写问题，让模型读代码、用 edit 改好 src/calc.py，"
               "再跑一遍测试（检查在一份新的练习项目上跑，不动你的工作区）。",
               "`运行测试` only has the model run the tests and report the failure. Rewrite the question so that the "
               "model reads the code, fixes src/calc.py with edit, and runs the tests again (the check runs on a fresh "
               "copy of the practice project, not your workspace)."),
            {"question": "运行测试", "approach": "function_calling"},
            ({"question": None, "expect": [{"called": "edit", "arguments": {"path": "src/calc.py"}},
                                           {"order": ["read", "edit", "bash"]}]},),
            tr("说清楚你要的结果：找到失败的测试并修好它。", "Say the outcome you want: find the failing test and fix it."),
            {"question": "找到失败的测试并修好它"}, fields=("question",)),
        Exercise(
            "ws_new_file", "workspace", tr("写一个新文件", "Write a new file"),
            tr("“新建文件 hello.py”没有说写什么，模型只能写一个空文件。改写问题，让 write 写出的 hello.py 里有一行 print。",
               "`新建文件 hello.py` does not say what to write, so the model can only write an empty file. Rewrite the "
               "question so that write puts a print line into hello.py."),
            {"question": "新建文件 hello.py", "approach": "function_calling"},
            ({"question": None, "expect": [{"called": "write", "arguments": {
                "path": "hello.py", "content": {"contains": "print("}}}]},),
            tr("写在问题里：新建文件 hello.py，内容是 ……", "Put it in the question: `新建文件 hello.py，内容是 …`"),
            {"question": "新建文件 hello.py，内容是 print('你好，工作区')"}, fields=("question",)),

        # 8.6 权限与确认
        Exercise(
            "perm_deny_rm", "permissions", tr("全部信任也不许删", "Trust all, but no deleting"),
            tr("规则是“全部信任”：`rm notes.md` 直接就删了。加一条规则，让 bash 里的 rm 一律拒绝，而 `ls -la src` 照常运行。",
               "The rules trust everything: `rm notes.md` deletes at once. Add a rule that refuses every rm in bash, "
               "while `ls -la src` still runs."),
            {"rules": rules_box(trust_all), "question": "运行 `rm notes.md`", "approach": "function_calling"},
            ({"question": "运行 `rm notes.md`", "expect": [{"denied": "bash"}]},
             {"question": "运行 `ls -la src`", "expect": [{"called": "bash", "arguments": {"command": "ls -la src"}}]}),
            tr("模式规则写成 \"工具:模式\"，例如 \"bash:rm *\": \"deny\"；更具体的规则优先。",
               "A pattern rule is \"tool:pattern\", such as \"bash:rm *\": \"deny\"; the more specific rule wins."),
            {"rules": rules_box({**trust_all, "bash:rm *": "deny"})}, fields=("rules",)),
        Exercise(
            "perm_allow_one_file", "permissions", tr("只读，但放行一个文件", "Read-only, but one file"),
            tr("规则是“只读”：写 hello.py 被拒绝了。只放行写 hello.py 这一个文件（别的写入仍然拒绝），让模型建好它。",
               "The rules are read-only: writing hello.py is refused. Allow writing that one file (every other write "
               "still refused) so that the model creates it."),
            {"rules": rules_box(read_only), "question": "新建文件 hello.py，内容是 print('你好，工作区')",
             "approach": "function_calling"},
            ({"question": None, "expect": [{"called": "write", "arguments": {"path": "hello.py"}}]},
             {"question": "新建文件 other.py，内容是 print(1)", "expect": [{"denied": "write"}]}),
            tr("路径规则写成 \"write:路径\"，例如 \"write:hello.py\": \"allow\"。",
               "A path rule is \"write:path\", such as \"write:hello.py\": \"allow\"."),
            {"rules": rules_box({**read_only, "write:hello.py": "allow"})}, fields=("rules",)),

        # 8.3 计划与执行
        Exercise(
            "plan_vague", "planning", tr("计划写得出，才做得对", "A plan is as good as its tools' descriptions"),
            tr("含糊的天气示例里两个工具都只写“天气”：模型写计划时把“出差前准备”当成了城市，北京那一项根本没进计划。"
               "改工具的描述，让计划里查北京天气的那一项做完（completed），并且真的调了 get_weather(city=\"北京\")。",
               "In the vague weather example both tools just say \"weather\": planning, the model takes `出差前准备` "
               "for a city and Beijing never makes it into the plan. Rewrite the descriptions so that the plan's "
               "Beijing item is completed, with a real call `get_weather(city=\"北京\")`."),
            {"source": WEATHER_VAGUE, "question": TRIP, "approach": "todos", "broken": ""},
            ({"question": None, "expect": [{"plan_done": "北京"},
                                           {"called": "get_weather", "arguments": {"city": "北京"}}]},),
            tr("计划的每一项来自模型对工具的理解：描述写明查什么（今天的天气 / 未来几天的预报）。",
               "Each plan item comes from what the model makes of the tools: say what each looks up (today's weather "
               "/ the coming days' forecast)."),
            {"source": WEATHER}, fields=("source",)),
        Exercise(
            "plan_adapt", "planning", tr("一步失败了，计划要跟着改", "A step failed: the plan must change"),
            tr("get_forecast 被设定为失败。一次定好的计划（fixed）照样把“上海的预报”标成做完，其实什么也没查到。"
               "换一种计划的做法，让模型在那一步失败之后改计划，用 get_weather 查到上海的天气，并把那一项做完。",
               "get_forecast is set to fail. A plan fixed in advance still marks Shanghai's forecast done, though "
               "nothing was found. Switch to the other way of planning so that after the failure the model changes "
               "its plan, gets Shanghai's weather with get_weather, and completes that item."),
            {"source": WEATHER, "question": TRIP, "approach": "fixed", "broken": "get_forecast"},
            ({"question": None, "expect": [{"called": "get_weather", "arguments": {"city": "上海"}},
                                           {"plan_done": "上海"}]},),
            tr("计划是工具（write_todos）时，模型每一步都能重写它。", "When the plan is a tool (write_todos), the model can "
               "rewrite it at every step."),
            {"approach": "todos"}, fields=("approach",)),

        # 8.1 第一次调用
        Exercise(
            "first_two_calls", "first_call", tr("一次回复，两个调用", "One reply, two calls"),
            tr("第一次调用只发一个请求、不执行工具。写一个问题，让模型在这一次回复里就要求调用两次 get_weather：北京一次，上海一次。",
               "The first call sends one request and runs no tool. Write a question for which the model asks, in "
               "this one reply, for get_weather twice: once for Beijing, once for Shanghai."),
            {"question": "北京今天天气怎么样？", "stream": False},
            ({"question": None, "expect": [{"asked": "get_weather", "arguments": {"city": "北京"}},
                                           {"asked": "get_weather", "arguments": {"city": "上海"}}]},),
            tr("tool_calls 是一个列表：一个问题里问两个城市，模型可以一次要两个调用。",
               "tool_calls is a list: ask about two cities in one question and the model may ask for two calls at once."),
            {"question": "北京和上海今天天气怎么样？"}, fields=("question",)),
        Exercise(
            "first_streamed", "first_call", tr("看调用一片片到", "Watch a call arrive in pieces"),
            tr("把请求改成流式：工具调用的参数会一片一片地到，页面把它们拼起来。检查要的是：回答是流式到达的，拼出来的参数仍是 city=北京。",
               "Make the request streamed: the call's arguments arrive in fragments and the page assembles them. "
               "The check wants the reply streamed, and the assembled arguments still `city=北京`."),
            {"question": "北京今天天气怎么样？", "stream": False},
            ({"question": None, "expect": [{"streamed": True},
                                           {"asked": "get_weather", "arguments": {"city": "北京"}}]},),
            tr("请求里的 stream: true：页面上是那个勾选框。", "stream: true in the request: the checkbox on the page."),
            {"stream": True}, fields=("stream",)),

        # 8.11 会话与分支
        Exercise(
            "sessions_fork_result", "sessions", tr("改掉工具结果，看回答跟着变", "Edit the tool result, see the answer follow"),
            tr("会话里已经有一次运行：get_weather 说北京 25°C。从那条工具结果分叉：把它改成 " + STORM + "，在新分支上接着跑，"
               "让新分支的回答说出改过的结果（不再是 25°C）。在「从当前分支的哪一条分叉」选消息，在「改成」里写新内容。",
               "The session already holds a run: get_weather says 25°C in Beijing. Fork from that tool result: change "
               "it to `" + STORM + "` and run on in a new branch, so that the new branch's answer names the edited "
               "result (no more 25°C). Pick the message under «Fork from which message», write the new text in "
               "«Change it to»."),
            {"source": WEATHER, "question": "北京今天天气怎么样？", "session": WEATHER_SESSION, "fork_entry": None,
             "fork_content": ""},
            ({"question": None, "expect": [{"forked": "tool"}, {"answer_names_result": "get_weather"},
                                           {"answer_lacks": "25°C"}]},),
            tr("再问一次只会再调一次工具，拿回同样的 25°C。要分叉的是第 3 条（工具结果）：模型在新分支上读到的是你写的结果。",
               "Asking again only calls the tool again and gets the same 25°C. Fork message 3 (the tool result): on "
               "the new branch the model reads the result you wrote."),
            {"fork_entry": RESULT_ID, "fork_content": STORM}, fields=("fork_entry", "fork_content")),
        Exercise(
            "sessions_fork_city", "sessions", tr("换个城市，另开一条分支", "Another city, on a branch of its own"),
            tr("想知道上海的天气，又不想把北京那条分支弄乱。在问题框里接着问，问题会接在北京那条分支的后面；"
               "要做的是从第 1 条（问题）分叉，改成问上海：新分支调 get_weather(city=\"上海\")，北京那条原样留着。",
               "You want Shanghai's weather without cluttering the Beijing branch. Asking in the question box goes on "
               "at the end of the Beijing branch; fork from message 1 (the question) instead and ask about Shanghai: "
               "the new branch calls `get_weather(city=\"上海\")` and the Beijing one stays as it was."),
            {"source": WEATHER, "question": "上海今天天气怎么样？", "session": WEATHER_SESSION, "fork_entry": None,
             "fork_content": ""},
            ({"question": None, "expect": [{"forked": "user"},
                                           {"called": "get_weather", "arguments": {"city": "上海"}}]},),
            tr("分叉把改好的问题挂在原来那条的旁边：选第 1 条消息，把“北京”改成“上海”，再检查。",
               "A fork puts the edited question beside the old one: pick message 1, change `北京` to `上海`, check again."),
            {"fork_entry": ASKED_ID, "fork_content": "上海今天天气怎么样？"}, fields=("fork_entry", "fork_content")),

        # 8.13 MiniAgent
        Exercise(
            "mini_rules", "mini_agent", tr("测试直接跑，rm 一律不许", "Tests run at once, rm never"),
            tr("规则里 bash 一律要先问人：检查时没有人回答，模型连测试都跑不了，失败的测试也就修不好。"
               "改规则：让 python3 -m unittest 不用问就运行，bash 里的 rm 被规则拒绝。检查问两次：“"
               + FIX_TASK + "”和“运行 `rm notes.md`”。",
               "The rules have bash ask a person every time: nobody answers during a check, so the model cannot even "
               "run the tests, let alone fix the failing one. Change the rules so that python3 -m unittest runs "
               "without asking and rm in bash is refused by a rule. The check asks twice: `" + FIX_TASK + "` and "
               "`运行 rm notes.md`."),
            agent_parts(rules=rules_box(CAUTIOUS_RULES), question=FIX_TASK),
            ({"question": FIX_TASK, "expect": [{"called": "edit", "arguments": {"path": "src/calc.py"}},
                                                {"called": "bash", "arguments": {"command": {"contains": "unittest"}}}]},
             {"question": "运行 `rm notes.md`", "expect": [{"denied": "bash"}]}),
            tr("模式规则比工具名更具体，所以更优先：\"bash:python3 -m unittest*\": \"allow\"，\"bash:rm *\": \"deny\"。"
               "只把 bash 改成 allow 的话，rm 也会照样运行。",
               "A pattern rule is more specific than a tool name, so it wins: \"bash:python3 -m unittest*\": "
               "\"allow\", \"bash:rm *\": \"deny\". Setting bash to allow would let rm run too."),
            {"rules": rules_box({**CAUTIOUS_RULES, "bash:python3 -m unittest*": "allow", "bash:rm *": "deny"})},
            fields=("rules",)),
        Exercise(
            "mini_budget", "mini_agent", tr("1200 个 token 里修好测试", "Fix the test within 1200 tokens"),
            tr("每次发给模型的请求都不能超过 1200 个 token（估计值），失败的测试还要修好、再跑通。现在的零件（折叠长结果、"
               "计划 write_todos）发出去的请求越来越长。换零件：上下文的做法、要不要计划……让这两件事同时做到。",
               "Every request sent to the model must stay within 1200 tokens (an estimate), and the failing test must "
               "still be fixed and pass. With the parts as they are (folding long results, the write_todos plan) the "
               "requests keep growing. Change the parts (the context strategy, whether to plan ...) so that both "
               "hold."),
            agent_parts(budget=1200, question=FIX_TASK),
            ({"question": None, "expect": [{"requests_within": 1200},
                                           {"called": "edit", "arguments": {"path": "src/calc.py"}},
                                           {"called": "bash", "arguments": {"command": {"contains": "unittest"}}}]},),
            tr("折叠只收拾很长的工具结果，这里没有；滑动窗口装得下，可每一轮的计划很占地方，窗口一丢掉刚读的代码，"
               "模型就从头再读。少一个零件（计划），再用窗口或摘要。",
               "Folding only shrinks very long tool results, and there are none here; a window fits, but the plan "
               "takes room every round, and once the window drops the code just read the model reads it again. Drop "
               "one part (the plan), then use a window or a summary."),
            {"plan": False, "context": "window"}, fields=("context", "plan")),
    ]


EXERCISES: dict[str, tuple[Exercise, ...]] = {}
for _exercise in _all():
    EXERCISES[_exercise.lesson] = EXERCISES.get(_exercise.lesson, ()) + (_exercise,)
BY_ID: dict[str, Exercise] = {e.id: e for found in EXERCISES.values() for e in found}


def lesson_exercises(lesson_id: str) -> tuple[Exercise, ...]:
    return EXERCISES.get(lesson_id, ())
