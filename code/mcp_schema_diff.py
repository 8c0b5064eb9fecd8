"""同一个函数，两份 schema：MCP SDK 自己推的（FastMCP，靠 pydantic）和我们的注册表推的，差在哪里。

    python code/mcp_schema_diff.py                           # 下面的示例函数 search_orders
    python code/mcp_schema_diff.py code/examples_weather.py  # 某个工具源码文件里的每个工具

为什么要看：mcp_server.py 没用 FastMCP，而是把注册表的 parameters 原样交给低层 Server。
要是交给 FastMCP，它会按自己的规矩重推一份，模型看到的就不是你在上一课里检查过的那份了：
  - title 键：pydantic 给每个参数加 "title": "Customer"，根上加 "search_ordersArguments"——模型用不上，白占 token；
  - 描述：Annotated[str, "说明"] 里的字符串和文档字符串的 Args 段，pydantic 都不读，参数没有 description；
    工具的描述是整段文档字符串原样（连 Args: 那几行一起）；
  - 默认值：limit: int = None，它写 "default": null 却只许 integer——schema 自己就矛盾；
    timedelta 的默认值写成 "P7D"，注册表不写（转不成 JSON 的默认值由函数自己补）；
  - 注册表写 additionalProperties: false，模型多传的参数会被指出来；FastMCP 不写。
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from typing import Annotated, Any, Callable, Literal

try:
    import mcp  # noqa: F401
except ImportError as error:     # mcp 1.19 在 pydantic 2.14 上导入就失败：版本要配对（见 requirements.txt）
    raise ImportError(f"导入 mcp 失败（{error}）。"
                      f"请按 requirements.txt 安装：mcp==1.19.0 和 pydantic==2.13.5") from error
from mcp.server.fastmcp.tools import Tool as FastMCPTool

from mcp_server import mcp_tool
from tool_registry import Tool, ToolRegistry, build_tool

KINDS = {"title": "title 键", "description": "描述", "default": "默认值"}   # 其余的键都算“类型和其他”


def search_orders(customer: Annotated[str, "客户姓名，如 张三"],
                  status: Literal["paid", "shipped"] = "paid",
                  limit: int = None,
                  within: datetime.timedelta = datetime.timedelta(days=7)) -> list[dict]:
    """按客户查询最近的订单。

    Args:
        limit: 最多返回几条，不填就全部返回
        within: 查多久以内的订单
    """
    return []


@dataclasses.dataclass
class Difference:
    where: str                 # "根" 或参数名
    key: str                   # 哪个键不同
    registry: Any              # 注册表的值；MISSING 表示没有这个键
    fastmcp: Any

    @property
    def kind(self) -> str:
        return KINDS.get(self.key, "类型和其他")


MISSING = "（没有）"


def both_schemas(func: Callable, description: str | None = None) -> dict:
    """同一个函数 -> 两边的工具描述和参数 schema。两边拿到同样的 description；不给就各自从文档字符串里取。"""
    ours, theirs = build_tool(func, description), FastMCPTool.from_function(func, description=description)
    return {"registry": {"description": ours.description, "parameters": ours.parameters},
            "fastmcp": {"description": theirs.description, "parameters": theirs.parameters,
                        "outputSchema": theirs.output_schema}}


def registered(func: Callable) -> Tool:
    """登记了这个函数的那个工具（注解 read_only / destructive 在它上面）：到函数所在模块里找注册表。
    找不到（比如注册表建在某个函数里面）就按函数重新推一份，这时没有注解。"""
    for value in list(getattr(func, "__globals__", {}).values()):
        if isinstance(value, ToolRegistry):
            for tool in value.tools.values():
                if tool.func is func:
                    return tool
    return build_tool(func)


def mcp_views(func: Callable, description: str | None = None) -> dict:
    """一个工具在 MCP 上的两种样子，都写成 tools/list 里的一项：
    listed 是 mcp_server.py 的服务器会列出的（mcp_tool 生成，和服务器回答的一字不差），
    fastmcp 是换成 FastMCP 时它会列出的（两边拿到同一个 description）。网页在沙箱里逐个函数调用它。"""
    tool = registered(func)
    theirs = FastMCPTool.from_function(func, name=tool.name, description=description or tool.description)
    fastmcp = {"name": theirs.name, "description": theirs.description, "inputSchema": theirs.parameters}
    if theirs.output_schema:
        fastmcp["outputSchema"] = theirs.output_schema
    return {"name": tool.name, "listed": mcp_tool(tool).model_dump(by_alias=True, mode="json", exclude_none=True),
            "fastmcp": fastmcp}


def differences(registry: dict, fastmcp: dict) -> list[Difference]:
    """逐个参数、逐个键比较（根上的键也比）。值整个比较：
    {"type": "integer"} 和 {"type": ["integer", "null"]} 就是不同。"""
    found = []
    places = [("根", {k: v for k, v in registry.items() if k != "properties"},
               {k: v for k, v in fastmcp.items() if k != "properties"})]
    ours, theirs = registry.get("properties", {}), fastmcp.get("properties", {})
    places += [(name, ours.get(name, {}), theirs.get(name, {})) for name in {**ours, **theirs}]
    for where, left, right in places:
        for key in {**left, **right}:
            a, b = left.get(key, MISSING), right.get(key, MISSING)
            if a != b:
                found.append(Difference(where, key, a, b))
    return found


def show(value: Any) -> str:
    return value if value is MISSING else json.dumps(value, ensure_ascii=False)


def report(name: str, func: Callable, description: str | None = None) -> str:
    schemas = both_schemas(func, description)
    ours, theirs = schemas["registry"], schemas["fastmcp"]
    lines = [f"━━ {name} ━━",
             f"注册表的工具描述：{show(ours['description'])}",
             f"FastMCP 的工具描述：{show(theirs['description'])}"]
    found = differences(ours["parameters"], theirs["parameters"])
    for kind in [*KINDS.values(), "类型和其他"]:
        items = [d for d in found if d.kind == kind]
        lines.append(f"【{kind}】" + ("两边一样" if not items else f"{len(items)} 处不同"))
        for d in items:
            where = "根上的" if d.where == "根" else f"参数 {d.where} 的"
            lines.append(f"  {where} {d.key}：注册表 {show(d.registry)}　FastMCP {show(d.fastmcp)}")
    if theirs["outputSchema"]:
        lines.append(f"【outputSchema】FastMCP 还按返回值注解生成了一份：{show(theirs['outputSchema'])}；"
                     "注册表不生成（MCP 里它是可选的）")
    lines += [f"注册表的 parameters：{show(ours['parameters'])}",
              f"FastMCP 的 inputSchema：{show(theirs['parameters'])}"]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        from mcp_server import load_registry
        tools = [(tool.name, tool.func, tool.description) for tool in load_registry(sys.argv[1]).tools.values()]
    else:
        tools = [("search_orders", search_orders, None)]
    print("\n\n".join(report(*tool) for tool in tools))
