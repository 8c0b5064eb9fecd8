"""Preset questions per example set, the offline model's simulated mistakes, and the run options
the Function Calling and MCP pages share."""
from __future__ import annotations

import gradio as gr

from i18n import now, tr
from serving.page_events import SILENT

# The walkthrough of the course text (lesson 8.4): one sentence, two requests, both tools called in one round.
WALKTHROUGH = "帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）"

# The first question of each set is the default in the run panel. Every preset is one the offline
# model answers correctly (tests/models/test_natural_questions.py and test_example_sets.py run them
# all through the loops); in the last four sets some presets are meant to end in a refusal or a timeout.
# What each one's run is for (the calls it wants) is written in runs/purposes.py, or in the evaluation
# lesson's case sets (code/evaluation_cases.py): the headline checks the run against it.
PRESETS = {
    "天气": ["广州冷不冷？", "北京今天天气怎么样？", "北京和上海今天天气怎么样？", "用华氏度告诉我广州今天的天气",
             "杭州未来 5 天的天气预报", "北京明天会下雨吗？"],
    "计算器": ["帮我算一下 (3+5)*12", "5 公里是多少英里？", "100 摄氏度是多少华氏度？", "算一下 2**10 + 24"],
    "工资/员工档案": ["张三的月薪是多少？", "研发部有哪些员工？", "张三和李四的工资分别是多少？", "查一下李四的员工档案"],
    "员工档案与税后收入（8.4）": [WALKTHROUGH, "查一下工号 102 的员工档案",
                            "底薪 25000，奖金 5000，税率 15%，税后收入是多少？",
                            "员工 103 的档案给我看看；另外基本工资 1.2万，奖金 3000，税率 10%，税后能拿多少？"],
    "转账与删除用户（Schema ≠ 授权）": ["给张三转账 8000 元", "给王五转账 100 元", "删除用户 1", "给张三转账 800 元", "删除用户 42"],
    "异步工具（async def）": ["北京和上海的空气质量怎么样？", "成都今天雾霾严重吗", "美元汇率是多少"],
    "会超时的工具（timeout）": ["北京现在的路况怎么样？", "上海现在堵不堵？", "上海和北京的路况"],
    "超长结果（截断）": ["列出上海的全部门店", "上海的前 5 家门店"],
    "运维：配置、SQL、命令": ["读一下 payments 服务的配置", "读一下 Payments 服务的配置", "读一下 payments 和 search 服务的配置",
                     "读一下 billing 服务的配置",
                     "执行 SQL `SELECT * FROM orders`", "执行 SQL `DROP TABLE orders`",
                     "执行 SQL `UPDATE orders SET paid = 1`", "运行 `rm notes.md`"],
}


PARALLEL_LABEL = tr("允许并行调用 parallel_tool_calls", "Allow parallel calls parallel_tool_calls")
MISTAKE_LABEL = tr("模拟模型失误（离线模型）", "Simulate a model mistake (offline model)")
MISTAKE_TAGS = {"quirk": tr("【容错】", "【tolerated】"), "error": tr("【出错】", "【error】")}
NO_MISTAKE = tr("不模拟（模型表现正常）", "None (the model behaves normally)")
# Each of the offline model's mistakes (offline/model.py MISTAKE_TABLE): a short name that fits the
# dropdown, and in English what the model's own Chinese description (shown under it) says.
MISTAKE_TEXTS = {
    "wrong_type": (tr("参数类型写错", "wrong argument type"),
                   'Writes an argument of the wrong type (a number as the Chinese word for three, text as an object): '
                   'the tool result is an argument error, nothing converts it, and the model corrects it in the next '
                   'round'),
    "missing_argument": (tr("漏掉必填参数", "missing argument"),
                         "Leaves out a required argument: the tool result is an argument error naming it, and the "
                         "model adds it in the next round"),
    "unknown_tool": (tr("调用不存在的工具", "unknown tool"),
                     "Calls a tool name that does not exist (the real name plus _info): the result is an unknown-tool "
                     "error listing the tools there are, and the model uses the right name in the next round"),
    "bad_json": (tr("参数 JSON 不完整", "incomplete JSON"),
                 "The arguments' JSON lacks its closing brace: the result is a JSON format error (in JSON-from-text "
                 "mode the whole reply fails to parse), and the model rewrites it in the next round"),
    "fenced_json": (tr("JSON 包在代码块里", "JSON in a code fence"),
                    "Wraps the JSON in a ```json code fence: the parser removes the fence and runs the call as usual, "
                    "and a note says so (tolerated)"),
    "string_numbers": (tr("数字写成字符串", "numbers as strings"),
                       'Writes numbers as strings ("5" instead of 5): the registry converts them to 5 and records the '
                       'conversion, and the call succeeds (tolerated)'),
    "bold_action": (tr("粗体 **Action:**", "bold **Action:**"),
                    "Writes Action: in markdown bold, **Action:**: the regex still reads it, and a parse note says so "
                    "(tolerated)"),
    "invented_observation": (tr("编造 Observation", "invented Observation"),
                             "Invents an Observation without waiting for the tool (as with a backend that ignores "
                             "stop): the invented part is ignored, and a note says so (tolerated)"),
    "multi_step": (tr("一次写了好几步", "several steps at once"),
                   "Writes several steps in one reply: only the first action runs, and a note says the rest waits for "
                   "the next round (tolerated)"),
    "no_action_line": (tr("只有 Thought、没有 Action 行", "only Thought, no Action line"),
                       "Broken ReAct format: only a Thought and no Action: line; the parse shows «no match» (and why), "
                       "the format error goes back to the model, and it rewrites the reply in the format next round"),
    "action_input_kv": (tr("Action Input 不是 JSON", "Action Input, not JSON"),
                        "Broken ReAct format: only the tool name after Action:, and the arguments on another line as "
                        "Action Input: city=… (not JSON); the regex does not match, shows «no match», and the model "
                        "corrects it in the next round"),
    "paren_call": (tr("方括号写成圆括号", "parentheses, not brackets"),
                   "Broken ReAct format: parentheses instead of square brackets, Action: tool({...}); the regex does "
                   "not match, shows «no match», and the model corrects it in the next round"),
    "stubborn": (tr("固执：重发同一个错误调用", "stubborn: the same bad call"),
                 "Stubborn: sends the same failing call again every round, ignoring the feedback; after several "
                 "failures in a row the loop stops itself (too_many_failures)"),
    "repeat_call": (tr("原地打转：同一个调用写几十遍", "going round: one call dozens of times"),
                    "Going round in circles: writes the same call over and over in one reply until max_tokens cuts "
                    "it, every round; the loop runs them all and every result joins the conversation. The offline "
                    "model then acts as a llama-server with a context of only 4096 tokens (-c 4096): the conversation "
                    "soon outgrows it and the server refuses the request (a small model given a large max_tokens "
                    "really does this)"),
    "endless": (tr("停不下来：从不回答", "endless: never answers"),
                "Never stops: keeps calling tools round after round after the result and never answers; the loop "
                "stops after max_turns rounds (max_turns)"),
}


def mistake_choices(mode: str | None = None) -> list[tuple[str, str]]:
    """(label, code) pairs for the 模拟模型失误 selector; the empty code means none.
    mode ("function_calling", "react" or "json") keeps only the mistakes that can happen in that mode;
    each label says whether the parser tolerates it (容错) or the call fails (出错), and names the mistake
    briefly: what it does is said under the selector (mistake_note)."""
    try:
        from offline import model as offline_model
        mistakes = offline_model.mistakes_for(mode) if mode else dict(offline_model.MISTAKES)
        kinds = dict(getattr(offline_model, "MISTAKE_KINDS", {}))
    except (ImportError, AttributeError, ValueError):
        mistakes, kinds = {}, {}
    none = tr("", "")
    return [(now(NO_MISTAKE), "")] + [(now(MISTAKE_TAGS.get(kinds.get(code), none)) + now(MISTAKE_TEXTS[code][0]), code)
                                      for code in mistakes]


def mistake_note(code: str | None) -> str:
    """What the chosen mistake does: the offline model's own description, or its English."""
    try:
        from offline import model as offline_model
        described = offline_model.MISTAKES.get(code or "")
    except ImportError:
        described = None
    if not described or code not in MISTAKE_TEXTS:
        return ""
    return "ℹ️ " + tr(described, MISTAKE_TEXTS[code][1])


def describe_mistakes(dropdown: gr.Dropdown) -> gr.Markdown:
    """The line under a 模拟模型失误 selector saying what the chosen mistake does (built where it is called)."""
    note = gr.Markdown(mistake_note(dropdown.value), elem_classes=["tw-mistake-note"])
    dropdown.change(mistake_note, [dropdown], [note], **SILENT)
    return note
