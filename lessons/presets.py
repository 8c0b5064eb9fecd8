"""Preset questions per example set and the offline model's simulated mistakes."""
from __future__ import annotations

from i18n import now, tr

# The walkthrough of the course text (lesson 8.4): one sentence, two requests, both tools called in one round.
WALKTHROUGH = "帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）"

# The first question of each set is the default in the run panel. Every preset is one the offline
# model answers correctly (tests/models/test_natural_questions.py and test_example_sets.py run them
# all through the loops); in the last four sets some presets are meant to end in a refusal or a timeout.
PRESETS = {
    "天气": ["广州冷不冷？", "北京今天天气怎么样？", "北京和上海今天天气怎么样？", "用华氏度告诉我广州今天的天气",
             "杭州未来 5 天的天气预报"],
    "计算器": ["帮我算一下 (3+5)*12", "5 公里是多少英里？", "100 摄氏度是多少华氏度？", "算一下 2**10 + 24"],
    "工资/员工档案": ["张三的月薪是多少？", "研发部有哪些员工？", "张三和李四的工资分别是多少？", "查一下李四的员工档案"],
    "员工档案与税后收入（8.4）": [WALKTHROUGH, "查一下工号 102 的员工档案",
                            "底薪 25000，奖金 5000，税率 15%，税后收入是多少？",
                            "员工 103 的档案给我看看；另外基本工资 1.2万，奖金 3000，税率 10%，税后能拿多少？"],
    "转账与删除用户（Schema ≠ 授权）": ["给张三转账 8000 元", "给王五转账 100 元", "删除用户 1", "给张三转账 800 元", "删除用户 42"],
    "异步工具（async def）": ["北京和上海的空气质量怎么样？", "成都今天雾霾严重吗", "美元汇率是多少"],
    "会超时的工具（timeout）": ["北京现在的路况怎么样？", "上海现在堵不堵？", "上海和北京的路况"],
    "超长结果（截断）": ["列出上海的全部门店", "上海的前 5 家门店"],
}


MISTAKE_LABEL = tr("模拟模型失误（离线模型）", "Simulate a model mistake (offline model)")
MISTAKE_TAGS = {"quirk": tr("【容错】", "【tolerated】"), "error": tr("【出错】", "【error】")}
NO_MISTAKE = tr("不模拟（模型表现正常）", "None (the model behaves normally)")


def mistake_choices(mode: str | None = None) -> list[tuple[str, str]]:
    """("中文说明", code) pairs for the 模拟模型失误 selector; the empty code means none.
    mode ("function_calling", "react" or "json") keeps only the mistakes that can happen in that mode;
    each label says whether the parser tolerates it (容错) or the call fails (出错)."""
    try:
        from offline import model as offline_model
        mistakes = offline_model.mistakes_for(mode) if mode else dict(offline_model.MISTAKES)
        kinds = dict(getattr(offline_model, "MISTAKE_KINDS", {}))
    except (ImportError, AttributeError, ValueError):
        mistakes, kinds = {}, {}
    # What each mistake does is the offline model's own description, in Chinese like the model.
    none = tr("", "")
    return [(now(NO_MISTAKE), "")] + [(tr(MISTAKE_TAGS.get(kinds.get(code), none).zh + text,
                                          MISTAKE_TAGS.get(kinds.get(code), none).en + text), code)
                                      for code, text in mistakes.items()]
