"""示例工具：计算器和单位换算。

计算器绝不能 eval(模型给的文本)：那等于让模型在你的机器上执行任意代码。
这里用 ast 把算式解析成语法树，只认数字、+ - * / ** % 和括号，其余一律拒绝。

    python code/examples_calculator.py
"""
import ast
import json
import operator
from typing import Annotated, Literal

from tool_registry import ToolRegistry

registry = ToolRegistry()

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.Pow: operator.pow, ast.Mod: operator.mod, ast.FloorDiv: operator.floordiv,
             ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_EXPONENT = 100          # 9**9**9 这种式子会把 CPU 算到天荒地老


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError(f"指数太大（超过 {MAX_EXPONENT}）")
        return OPERATORS[type(node.op)](left, right)
    raise ValueError(f"不支持的写法：{ast.unparse(node)}（只支持数字、+ - * / ** % 和括号）")


@registry.tool("计算一个四则运算算式的结果，支持 + - * / ** % 和括号，如 (3+4)*5。用户让你“算一下”时使用", read_only=True)
def calculate(expression: Annotated[str, "算式，如 (3+4)*5；乘号可写 × 或 *，除号可写 ÷ 或 /"]) -> str:
    text = expression.replace("×", "*").replace("÷", "/").replace("（", "(").replace("）", ")").strip()
    if len(text) > 200:
        raise ValueError("算式太长（超过 200 个字符）")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"算式写法有误：{expression}") from None
    try:
        value = _evaluate(tree.body)
    except ZeroDivisionError:
        raise ValueError("除数不能为 0") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{expression} = {value}"


# 换算到基准单位（米、千克）的倍数；温度不是倍数关系，单独处理
FACTORS = {"km": 1000, "m": 1, "cm": 0.01, "mi": 1609.344, "ft": 0.3048, "kg": 1, "g": 0.001, "lb": 0.45359237, "斤": 0.5}
KINDS = {"km": "长度", "m": "长度", "cm": "长度", "mi": "长度", "ft": "长度", "kg": "重量", "g": "重量", "lb": "重量",
         "斤": "重量", "c": "温度", "f": "温度"}
Unit = Literal["km", "m", "cm", "mi", "ft", "kg", "g", "lb", "斤", "c", "f"]


@registry.tool("单位换算：长度（km m cm mi ft）、重量（kg g lb 斤）、温度（c f）", read_only=True)
def convert_unit(value: Annotated[float, "要换算的数值"], from_unit: Annotated[Unit, "原单位"],
                 to_unit: Annotated[Unit, "目标单位"]) -> str:
    if KINDS[from_unit] != KINDS[to_unit]:
        raise ValueError(f"{from_unit} 是{KINDS[from_unit]}单位，{to_unit} 是{KINDS[to_unit]}单位，不能互相换算")
    if KINDS[from_unit] == "温度":
        result = value if from_unit == to_unit else (value * 9 / 5 + 32 if to_unit == "f" else (value - 32) * 5 / 9)
    else:
        result = value * FACTORS[from_unit] / FACTORS[to_unit]
    return f"{value:g} {from_unit} = {round(result, 4):g} {to_unit}"


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    print(registry.invoke("calculate", {"expression": "(3+4)*5"}))
    print(registry.invoke("calculate", {"expression": "__import__('os').system('ls')"}))
    print(registry.invoke("convert_unit", {"value": "100", "from_unit": "c", "to_unit": "f"}))
