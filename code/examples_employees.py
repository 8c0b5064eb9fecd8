"""示例工具：员工档案与薪资。数据写在下面（虚构），不读数据库。

    python code/examples_employees.py
"""
import enum
import json
from typing import Annotated

from tool_registry import ToolRegistry

registry = ToolRegistry()


class Department(enum.Enum):
    RESEARCH = "研发部"
    SALES = "销售部"
    FINANCE = "财务部"
    HR = "人事部"


EMPLOYEES = {
    "张三": {"工号": "E001", "部门": "研发部", "职位": "后端工程师", "入职年份": 2019, "基本月薪": 18000},
    "李四": {"工号": "E002", "部门": "销售部", "职位": "销售经理", "入职年份": 2016, "基本月薪": 15000},
    "王五": {"工号": "E003", "部门": "财务部", "职位": "会计", "入职年份": 2021, "基本月薪": 12000},
    "赵六": {"工号": "E004", "部门": "人事部", "职位": "招聘专员", "入职年份": 2023, "基本月薪": 10000},
    "钱七": {"工号": "E005", "部门": "研发部", "职位": "算法工程师", "入职年份": 2020, "基本月薪": 22000},
}
BONUS_RATE = {Department.RESEARCH: 0.15, Department.SALES: 0.25, Department.FINANCE: 0.10, Department.HR: 0.10}
CURRENT_YEAR = 2025


def _find(name: str) -> dict:
    name = name.strip()
    if name not in EMPLOYEES:
        raise ValueError(f"查无此人：{name}。在册员工：{'、'.join(EMPLOYEES)}")
    return EMPLOYEES[name]


@registry.tool("按姓名查询员工档案（工号、部门、职位、入职年份）", read_only=True)
def get_employee(name: Annotated[str, "员工姓名，如 张三"]) -> dict:
    record = _find(name)
    return {"姓名": name.strip(), **{k: v for k, v in record.items() if k != "基本月薪"}}


@registry.tool("计算员工的月薪：基本月薪 + 工龄补贴（每年 200 元）+ 部门绩效奖金。用户问“某人的月薪/工资是多少”时使用", read_only=True)
def calculate_salary(name: Annotated[str, "员工姓名，如 张三"],
                     performance: Annotated[float, "绩效系数，0~2，1 表示正常"] = 1.0) -> dict:
    if not 0 <= performance <= 2:
        raise ValueError("绩效系数应在 0~2 之间")
    record = _find(name)
    department = Department(record["部门"])
    seniority = (CURRENT_YEAR - record["入职年份"]) * 200
    bonus = round(record["基本月薪"] * BONUS_RATE[department] * performance)
    return {"姓名": name.strip(), "基本月薪": record["基本月薪"], "工龄补贴": seniority, "绩效奖金": bonus,
            "月薪合计": record["基本月薪"] + seniority + bonus}


@registry.tool("列出某个部门的全部员工姓名和职位", read_only=True)
def list_department(department: Annotated[Department, "部门名称"]) -> list[dict]:
    return [{"姓名": n, "职位": r["职位"]} for n, r in EMPLOYEES.items() if r["部门"] == department.value]


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    print(registry.invoke("calculate_salary", {"name": "张三"}))
    print(registry.invoke("list_department", {"department": "研发部"}))
    print(registry.invoke("get_employee", {"name": "不存在"}))
