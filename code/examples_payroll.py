"""示例工具：按工号查员工档案、算税后收入（课程 8.4 节的演示）。数据写在下面（虚构）。

这两个工具都没有在装饰器里写描述：@registry.tool 不带参数时，
工具说明取文档字符串的第一段，参数说明取 Args 段——函数的说明书就是模型看到的说明书。

试着问：帮我查询员工 101 的档案，并计算基本工资 30000 加上奖金 8000 的税后收入（税率 20%）

    python code/examples_payroll.py
"""
import json

from tool_registry import ToolRegistry

registry = ToolRegistry()

# 工号 -> 档案。真实系统会查人事数据库；这里写死几条，够演示。
RECORDS = {
    101: {"姓名": "张三", "部门": "研发部", "职位": "后端工程师", "入职年份": 2019},
    102: {"姓名": "李四", "部门": "销售部", "职位": "销售经理", "入职年份": 2016},
    103: {"姓名": "王五", "部门": "财务部", "职位": "会计", "入职年份": 2021},
    104: {"姓名": "赵六", "部门": "人事部", "职位": "招聘专员", "入职年份": 2023},
}


@registry.tool(read_only=True)
def get_employee(employee_id: int) -> dict:
    """按工号查询员工档案（姓名、部门、职位、入职年份）。

    Args:
        employee_id: 员工工号，是一个整数，如 101
    """
    if employee_id not in RECORDS:
        # 报错写成“结论 + 补救办法”，模型才知道下一步怎么改
        raise ValueError(f"查无工号 {employee_id}。在册工号：{'、'.join(map(str, RECORDS))}，请换一个再查")
    return {"工号": employee_id, **RECORDS[employee_id]}


@registry.tool(read_only=True)
def calculate_salary(base: float, bonus: float, tax_rate: float = 0.1) -> str:
    """计算员工税后净收入：(基本工资 + 奖金) × (1 - 税率)。

    Args:
        base: 基本工资，单位元
        bonus: 奖金，单位元
        tax_rate: 税率，0~1 之间的小数，如 0.2 表示 20%
    """
    # Schema 只管类型；“税率不能是 20”这种业务规则，得工具自己检查
    if not 0 <= tax_rate < 1:
        raise ValueError(f"税率应是 0~1 之间的小数，收到 {tax_rate:g}；20% 请写成 0.2")
    total = (base + bonus) * (1 - tax_rate)
    return f"税后净收入: {total:.2f} 元（({base:g} + {bonus:g}) × (1 - {tax_rate:g})）"


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    print(registry.invoke("get_employee", {"employee_id": 101}))
    print(registry.invoke("calculate_salary", {"base": 30000, "bonus": 8000, "tax_rate": 0.2}))
    print(registry.invoke("calculate_salary", {"base": "30000", "bonus": 8000, "tax_rate": 20}))
