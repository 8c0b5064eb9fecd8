"""Preset questions per example set and the offline model's simulated mistakes."""
from __future__ import annotations

PRESETS = {
    "天气": ["北京现在天气怎么样？", "北京和上海的天气分别怎么样？", "用华氏度告诉我广州的天气"],
    "计算器": ["帮我算一下 (3 + 5) * 12", "计算 2.5 * 4 - 1 等于多少？"],
    "工资/员工档案": ["帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）",
                  "员工 102 是哪个部门的？"],
}


def mistake_choices() -> list[tuple[str, str]]:
    """("中文说明", code) pairs for the 模拟模型失误 selector; the empty code means none."""
    try:
        import offline_model
        mistakes = dict(offline_model.MISTAKES)
    except (ImportError, AttributeError):
        mistakes = {}
    return [("不模拟（模型表现正常）", "")] + [(f"{text}", code) for code, text in mistakes.items()]
