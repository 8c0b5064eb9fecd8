"""示例工具：转账和删除用户——参数合法，不等于这次调用被允许。

JSON Schema 只能说明"amount 是一个数字"，说不了"这笔钱能不能转"。模型传来的参数再合法，
也只是模型的意思，不是用户的授权：限额、收款人名单、受保护的账号，都要在工具里面检查。
不允许时，交回一个明确的拒绝（tool_outcome.failure，错误码 forbidden），说清楚为什么、下一步该怎么办，
模型就不会换个写法再试一次，而会如实告诉用户。
装饰器里的 destructive=True 也一样：它只是告诉客户端（MCP 的工具注解）“这个工具会删改东西”，是提示，不是授权。

试着问：给张三转账 8000 元（超过单笔限额）、给王五转账 100 元（不在收款人名单里）、删除用户 1（管理员）。
数据都是虚构的，不会真的转账或删除。

    python code/examples_authorization.py
"""
import json
from typing import Annotated

from tool_outcome import ToolOutcome, failure
from tool_registry import ToolRegistry

registry = ToolRegistry()

TRANSFER_LIMIT = 5000                                  # 单笔上限（元）：超过要用户本人另行确认
PAYEES = {"张三": "6222-0001", "李四": "6222-0002"}    # 用户已经登记过的收款人
USERS = {"1": "admin（管理员）", "42": "test42（测试账号）", "1001": "王五"}
PROTECTED = {"1"}                                      # 管理员账号不能通过工具删除


@registry.tool("向已登记的收款人转账（单位：元）。要“转账”“转钱”“打钱给某人”时使用", read_only=False, destructive=True)
def transfer_money(payee: Annotated[str, "收款人姓名，如 张三"],
                   amount: Annotated[float, "金额，单位元，如 800"]) -> str | ToolOutcome:
    # 走到这里，参数已经通过了 schema 校验：payee 是字符串，amount 是数字。下面是 schema 管不了的业务规则。
    if amount <= 0:
        return failure("invalid_arguments", f"金额必须大于 0，收到 {amount:g}", "请确认要转多少钱")
    if payee not in PAYEES:
        return failure("forbidden", f"{payee} 不在已登记的收款人名单里（名单：{'、'.join(PAYEES)}）",
                       "只能给已登记的收款人转账：请告诉用户先在 App 里登记收款人，不要换个名字或写法重试")
    if amount > TRANSFER_LIMIT:
        return failure("forbidden", f"单笔转账上限是 {TRANSFER_LIMIT} 元，这次要转 {amount:g} 元",
                       "超出限额需要用户本人在 App 里确认：请如实告诉用户，不要拆成几笔小额来绕过限额")
    return f"已向 {payee}（账户 {PAYEES[payee]}）转账 {amount:g} 元。（演示数据，没有真的转账）"


@registry.tool("删除一个用户账号。用户说“删除用户”“注销账号”时使用", read_only=False, destructive=True)
def delete_user(user_id: Annotated[str, "用户编号，如 42"]) -> str | ToolOutcome:
    if user_id not in USERS:
        return failure("invalid_arguments", f"没有编号为 {user_id} 的用户（现有：{'、'.join(USERS)}）",
                       "请先确认用户编号")
    if user_id in PROTECTED:
        return failure("forbidden", f"用户 {user_id} 是 {USERS[user_id]}，受保护，不能通过工具删除",
                       "请告诉用户这个操作需要管理员在后台手动完成")
    return f"已删除用户 {user_id}：{USERS[user_id]}。（演示数据，没有真的删除）"


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    for name, arguments in [("transfer_money", {"payee": "张三", "amount": 800}),
                            ("transfer_money", {"payee": "张三", "amount": 8000}),
                            ("transfer_money", {"payee": "王五", "amount": 100}),
                            ("delete_user", {"user_id": "1"})]:
        outcome = registry.call(name, arguments)
        print(f"{name}({arguments}) → [{outcome.error_code or 'ok'}]", outcome.content)
