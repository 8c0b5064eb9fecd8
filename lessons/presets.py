"""Preset questions per example set and the offline model's simulated mistakes."""
from __future__ import annotations

PRESETS = {
    "天气": ["广州冷不冷？", "用华氏度告诉我广州今天的天气", "杭州未来 5 天的天气预报", "北京和上海今天的天气分别怎么样？"],
    "计算器": ["帮我算一下 (3+5)*12", "算一下 2**10 + 24"],
    "工资/员工档案": ["王五的工资是多少？", "查一下李四的员工档案"],
}


def mistake_choices() -> list[tuple[str, str]]:
    """("中文说明", code) pairs for the 模拟模型失误 selector; the empty code means none."""
    try:
        import offline_model
        mistakes = dict(offline_model.MISTAKES)
    except (ImportError, AttributeError):
        mistakes = {}
    return [("不模拟（模型表现正常）", "")] + [(f"{text}", code) for code, text in mistakes.items()]
