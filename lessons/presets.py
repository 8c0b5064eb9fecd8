"""Preset questions per example set and the offline model's simulated mistakes."""
from __future__ import annotations

# The first question of each set is the default in the run panel. Every preset is one the offline
# model answers correctly (tests/models/test_natural_questions.py runs them all through the loops).
PRESETS = {
    "天气": ["广州冷不冷？", "北京今天天气怎么样？", "北京和上海今天天气怎么样？", "用华氏度告诉我广州今天的天气",
             "杭州未来 5 天的天气预报"],
    "计算器": ["帮我算一下 (3+5)*12", "5 公里是多少英里？", "100 摄氏度是多少华氏度？", "算一下 2**10 + 24"],
    "工资/员工档案": ["张三的月薪是多少？", "研发部有哪些员工？", "张三和李四的工资分别是多少？", "查一下李四的员工档案"],
}


def mistake_choices() -> list[tuple[str, str]]:
    """("中文说明", code) pairs for the 模拟模型失误 selector; the empty code means none."""
    try:
        import offline_model
        mistakes = dict(offline_model.MISTAKES)
    except (ImportError, AttributeError):
        mistakes = {}
    return [("不模拟（模型表现正常）", "")] + [(f"{text}", code) for code, text in mistakes.items()]
