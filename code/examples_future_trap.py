"""陷阱示例：模块顶部有 `from __future__ import annotations`，所有注解在运行时都是字符串。

朴素做法（code/naive_schema.py）直接读 p.annotation，拿到的是 'int' 这个字符串而不是 int，
查表失败，于是 count、priority、due 全都悄悄变成 "string"，tags 丢了元素类型。
ToolRegistry 用 typing.get_type_hints() 先把字符串还原成真实类型，结果就对了。

    python code/examples_future_trap.py
"""
from __future__ import annotations

import datetime
import enum
import json
from typing import Literal

from tool_registry import ToolRegistry

registry = ToolRegistry()


class Priority(enum.Enum):
    LOW = "低"
    NORMAL = "中"
    HIGH = "高"


TODOS: list[dict] = []   # 只放在内存里：示例不读写文件


@registry.tool("新建待办事项：给出标题，可选数量、标签、优先级和截止日期", read_only=False, destructive=False)
def add_todo(title: str, count: int = 1, tags: list[str] | None = None,
             priority: Priority = Priority.NORMAL, due: datetime.date | None = None,
             repeat: Literal["不重复", "每天", "每周"] = "不重复") -> dict:
    """新建待办。

    Args:
        title: 待办事项的标题，如 "买牛奶"
        count: 重复几份，必须是整数
        tags: 标签列表，如 ["购物", "周末"]
        priority: 优先级
        due: 截止日期，格式 2024-05-01
        repeat: 重复方式
    """
    todo = {"id": len(TODOS) + 1, "title": title, "count": count * 1,   # count 若是字符串，这里会出错
            "tags": sorted(tags or []), "priority": priority.value,
            "due": due.isoformat() if due else None, "repeat": repeat}
    TODOS.append(todo)
    return todo


@registry.tool("列出待办事项，可按标签筛选，最多返回 limit 条", read_only=True)
def list_todos(tag: str | None = None, limit: int = 10) -> list[dict]:
    """列出待办。

    Args:
        tag: 只看带这个标签的待办，不填表示全部
        limit: 最多返回几条
    """
    hits = [t for t in TODOS if tag is None or tag in t["tags"]]
    return hits[:limit]


if __name__ == "__main__":
    from naive_schema import naive_function_schema

    for tool in registry.tools.values():
        print(f"== {tool.name}")
        print("朴素做法:", json.dumps(naive_function_schema(tool.func, tool.description)["function"]["parameters"],
                                   ensure_ascii=False))
        print("ToolRegistry:", json.dumps(tool.parameters, ensure_ascii=False))
    print(registry.invoke("add_todo", {"title": "买牛奶", "count": "2", "tags": ["购物"], "priority": "高",
                                       "due": "2024-05-01"}))
    print(registry.invoke("list_todos", {"tag": "购物"}))
