"""MCP 服务器：把一个工具源码文件里的 ToolRegistry 原样搬到 MCP 上（stdio 传输）。

    python code/mcp_server.py code/examples_weather.py

工具函数、schema、错误文本一行不改，变的只是“谁来调用”：以前是同一个进程里的循环直接
registry.call(...)；现在是另一个进程里的 MCP 客户端，每行一条 JSON-RPC 消息，经标准输入输出往来：
initialize → tools/list → tools/call …（客户端见 mcp_client_loop.py）。

为什么用 SDK 的低层 Server，而不用更省事的 FastMCP：
  - FastMCP 会用 pydantic 从函数签名重新推一份 inputSchema，和注册表的不一样（见 mcp_schema_diff.py）。
    低层 Server 让我们把注册表的 parameters 原样交出去：两种接法下，模型看到的是同一份 schema。
  - SDK 默认先按 inputSchema 校验参数，不通过就回一句英文的 "Input validation error"。
    这里关掉它（validate_input=False），参数交给注册表：它会宽松转换（"5" → 5），
    不行就写出和上一课一模一样的“❌ [参数错误] …… 请……”。
  - 工具失败不抛异常，而是回一个 isError: true 的结果，内容就是注册表的错误文本。
    MCP 把“工具没做成”放在结果里，让模型看见并改正；JSON-RPC 的 error 是留给协议本身出错的。
"""
from __future__ import annotations

import io
import logging
import os
import runpy
import sys

import anyio

try:
    import mcp  # noqa: F401
except ImportError as error:     # mcp 1.19 在 pydantic 2.14 上导入就失败：版本要配对（见 requirements.txt）
    raise ImportError(f"导入 mcp 失败（{error}）。"
                      f"请按 requirements.txt 安装：mcp==1.19.0 和 pydantic==2.13.5") from error
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from tool_registry import ToolRegistry


def load_registry(path: str) -> ToolRegistry:
    """运行工具源码文件，取出里面的 ToolRegistry：有叫 registry 的就用它，否则用第一个（和沙箱的找法一样）。"""
    if not os.path.isfile(path):
        raise SystemExit(f"找不到工具源码文件 {path}")
    namespace = runpy.run_path(path, run_name="mcp_tools")   # 不叫 __main__：文件末尾的演示代码不会跑
    found = {name: value for name, value in namespace.items() if isinstance(value, ToolRegistry)}
    if not found:
        raise SystemExit(f"{path} 里没有找到 ToolRegistry 实例：请写 registry = ToolRegistry()，"
                         f"再用 @registry.tool(...) 装饰工具函数。")
    return found.get("registry") or next(iter(found.values()))


def mcp_tool(tool) -> types.Tool:
    """注册表里的一个工具 -> MCP 的 Tool：inputSchema 就是注册表的 parameters，一个字不改。"""
    hints = {"readOnlyHint": tool.read_only, "destructiveHint": tool.destructive}
    hints = {key: value for key, value in hints.items() if value is not None}   # 没说的就不写，客户端按协议的默认值理解
    return types.Tool(name=tool.name, description=tool.description, inputSchema=tool.parameters,
                      annotations=types.ToolAnnotations(**hints) if hints else None)


def build_server(registry: ToolRegistry, name: str = "tool-workshop") -> Server:
    server = Server(name)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [mcp_tool(tool) for tool in registry.tools.values()]

    @server.call_tool(validate_input=False)   # 校验交给注册表：它的错误文本是写给模型看的
    async def call_tool(name: str, arguments: dict) -> types.CallToolResult:
        # registry.call 是同步的，工具可能很慢：放到线程里跑，几个调用可以同时进行（并行调用）
        outcome = await anyio.to_thread.run_sync(registry.call, name, arguments)
        # 未知工具、参数不对、工具抛异常……注册表都已经写成了一段文本：原样放进结果，isError 标出成败。
        # error_code 放在 _meta 里，给想按错误种类上色的客户端用；模型只看 content。
        return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.content)],
                                    isError=not outcome.ok,
                                    _meta={"error_code": outcome.error_code} if outcome.error_code else None)

    return server


def protocol_stdout():
    """stdout 是协议通道，多打印一个字，客户端就读到一行坏 JSON。所以先把真正的 stdout 复制一份留给协议，
    再把 1 号文件描述符和 sys.stdout 都指向 stderr：工具里的 print()、子进程的输出都只会进日志。"""
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return anyio.wrap_file(io.TextIOWrapper(channel, encoding="utf-8", write_through=True))


async def serve(path: str) -> None:
    stdout = protocol_stdout()          # 在运行学生的源码之前：导入时的 print 也不能进协议通道
    # 模型点了不存在的工具时，SDK 会在日志里说 "not listed, no validation will be performed"：
    # 对我们是误导（校验在注册表里做，错误文本已经回给了模型），只留真正的错误。
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)
    server = build_server(load_registry(path))
    async with stdio_server(stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


USAGE = "用法：python code/mcp_server.py 工具源码文件，例如 code/examples_weather.py（MCP 客户端经 stdio 连上来）"

if __name__ == "__main__":
    if sys.argv[1:] in (["-h"], ["--help"]):
        print(USAGE)
    elif len(sys.argv) != 2:
        raise SystemExit(USAGE)
    else:
        anyio.run(serve, sys.argv[1])
