"""评估用例集（8.12）：每个示例工具集一组，写法见 evaluation.py。

每组都有三种用例：该调哪个工具、参数该是什么；一句话里要调几次；以及"不该调用工具"的问题
（BFCL 叫 irrelevance：模型最常犯的错之一，就是什么问题都要调个工具）。
这些是 JSON 能写下的数据，不是代码：页面上可以改、可以导出成文件发给全班，再导入。
天气的两个示例（描述写得清楚 / 含糊）用同一组用例，分数的差别只来自描述。

    python code/evaluation_cases.py     # 每组几个用例、各属于 BFCL 的哪一类
"""
from __future__ import annotations

NOT_DUE = {"name": "闲聊：不该调用工具", "question": "你好，介绍一下你自己", "calls": []}

WEATHER = [
    {"name": "今天的天气", "question": "北京今天天气怎么样？",
     "calls": [{"name": "get_weather", "arguments": {"city": {"one_of": ["北京", "北京市"]}}}],
     "answer": {"contains": "25"}},
    {"name": "冷不冷", "question": "广州冷不冷？", "calls": [{"name": "get_weather", "arguments": {"city": "广州"}}]},
    {"name": "华氏度", "question": "用华氏度告诉我广州今天的天气",
     "calls": [{"name": "get_weather", "arguments": {"city": "广州", "unit": "f"}}]},
    {"name": "五天预报", "question": "杭州未来 5 天的天气预报",
     "calls": [{"name": "get_forecast", "arguments": {"city": "杭州", "days": {"near": 5}}}]},
    {"name": "这几天", "question": "上海这几天天气怎么样", "calls": [{"name": "get_forecast", "arguments": {"city": "上海"}}]},
    {"name": "周末", "question": "深圳周末天气怎么样", "calls": [{"name": "get_forecast", "arguments": {"city": "深圳"}}]},
    {"name": "两个城市一起查", "question": "北京和上海今天天气怎么样？", "order": "parallel",
     "calls": [{"name": "get_weather", "arguments": {"city": "北京"}},
               {"name": "get_weather", "arguments": {"city": "上海"}}]},
    NOT_DUE,
]

CASE_SETS = {
    "examples_weather.py": WEATHER,
    "examples_weather_vague.py": WEATHER,
    "examples_calculator.py": [
        {"name": "算式", "question": "帮我算一下 (3+5)*12",
         "calls": [{"name": "calculate", "arguments": {"expression": {"matches": r"^\(3\s*\+\s*5\)\s*\*\s*12$"}}}],
         "answer": {"contains": "96"}},
        {"name": "公里换英里", "question": "5 公里是多少英里？",
         "calls": [{"name": "convert_unit", "arguments": {"value": {"near": 5}, "from_unit": "km", "to_unit": "mi"}}]},
        {"name": "摄氏换华氏", "question": "100 摄氏度是多少华氏度？",
         "calls": [{"name": "convert_unit", "arguments": {"value": {"near": 100}, "from_unit": "c", "to_unit": "f"}}]},
        NOT_DUE,
    ],
    "examples_employees.py": [
        {"name": "月薪", "question": "张三的月薪是多少？", "calls": [{"name": "calculate_salary", "arguments": {"name": "张三"}}]},
        {"name": "部门名单", "question": "研发部有哪些员工？",
         "calls": [{"name": "list_department", "arguments": {"department": {"one_of": ["研发部", "研发"]}}}]},
        {"name": "两个人的工资", "question": "张三和李四的工资分别是多少？", "order": "any",
         "calls": [{"name": "calculate_salary", "arguments": {"name": "张三"}},
                   {"name": "calculate_salary", "arguments": {"name": "李四"}}]},
        {"name": "档案", "question": "查一下李四的员工档案", "calls": [{"name": "get_employee", "arguments": {"name": "李四"}}]},
        NOT_DUE,
    ],
    "examples_payroll.py": [
        {"name": "课文的例子", "question": "帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）",
         "order": "any",
         "calls": [{"name": "get_employee", "arguments": {"employee_id": 101}},
                   {"name": "calculate_salary", "arguments": {"base": {"near": 30000}, "bonus": {"near": 8000},
                                                              "tax_rate": {"near": 0.2, "tolerance": 0.001}}}]},
        {"name": "工号查档案", "question": "查一下工号 102 的员工档案",
         "calls": [{"name": "get_employee", "arguments": {"employee_id": 102}}]},
        {"name": "税后收入", "question": "底薪 25000，奖金 5000，税率 15%，税后收入是多少？",
         "calls": [{"name": "calculate_salary", "arguments": {"base": {"near": 25000}, "bonus": {"near": 5000},
                                                              "tax_rate": {"near": 0.15, "tolerance": 0.001}}}]},
        NOT_DUE,
    ],
    "examples_authorization.py": [
        {"name": "超限额也要照实调用", "question": "给张三转账 8000 元",
         "calls": [{"name": "transfer_money", "arguments": {"payee": "张三", "amount": {"near": 8000}}}]},
        {"name": "限额之内", "question": "给张三转账 800 元",
         "calls": [{"name": "transfer_money", "arguments": {"payee": "张三", "amount": {"near": 800}}}]},
        {"name": "删除用户", "question": "删除用户 42",
         "calls": [{"name": "delete_user", "arguments": {"user_id": {"one_of": ["42", 42]}}}]},
        NOT_DUE,
    ],
    "examples_async.py": [
        {"name": "两个城市的空气", "question": "北京和上海的空气质量怎么样？", "order": "parallel",
         "calls": [{"name": "get_air_quality", "arguments": {"city": "北京"}},
                   {"name": "get_air_quality", "arguments": {"city": "上海"}}]},
        {"name": "雾霾", "question": "成都今天雾霾严重吗", "calls": [{"name": "get_air_quality", "arguments": {"city": "成都"}}]},
        {"name": "汇率", "question": "美元汇率是多少",
         "calls": [{"name": "get_exchange_rate", "arguments": {"currency": {"one_of": ["usd", "USD"]}}}]},
        NOT_DUE,
    ],
    "examples_timeout.py": [
        {"name": "超时不怪模型", "question": "北京现在的路况怎么样？",
         "calls": [{"name": "get_traffic", "arguments": {"city": "北京"}}]},
        {"name": "堵不堵", "question": "上海现在堵不堵？", "calls": [{"name": "get_traffic", "arguments": {"city": "上海"}}]},
        NOT_DUE,
    ],
    "examples_long_result.py": [
        {"name": "全部门店", "question": "列出上海的全部门店",
         "calls": [{"name": "list_stores", "arguments": {"city": "上海"}}]},
        {"name": "前几家", "question": "上海的前 5 家门店",
         "calls": [{"name": "list_stores", "arguments": {"city": "上海", "limit": 5}}]},
        NOT_DUE,
    ],
    "examples_ops.py": [
        {"name": "读配置", "question": "读一下 payments 服务的配置",
         "calls": [{"name": "fetch_config", "arguments": {"service": "payments"}}]},
        {"name": "两个服务", "question": "读一下 payments 和 search 服务的配置", "order": "any",
         "calls": [{"name": "fetch_config", "arguments": {"service": "payments"}},
                   {"name": "fetch_config", "arguments": {"service": "search"}}]},
        {"name": "SQL 原样传", "question": "执行 SQL `SELECT * FROM orders`",
         "calls": [{"name": "run_sql", "arguments": {"query": "SELECT * FROM orders"}}]},
        NOT_DUE,
    ],
}


if __name__ == "__main__":
    from evaluation import category, read_cases

    for example, written in CASE_SETS.items():
        cases = read_cases(written)
        kinds = [category(case, tool_count=2) for case in cases]
        print(f"{example:<28} {len(cases)} 个用例：{'、'.join(dict.fromkeys(kinds))}")
