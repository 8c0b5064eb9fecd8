"""MCP 服务器：把一个工具源码文件里的 ToolRegistry 原样搬到 MCP 上（stdio 传输）。

    python code/mcp_server.py code/examples_weather.py
    python code/mcp_server.py --call-seconds 5 code/examples_timeout.py     # 每次调用最多 5 秒（默认 20）

工具函数、schema、错误文本一行不改，变的只是“谁来调用”：以前是同一个进程里的循环直接
registry.call(...)；现在是另一个进程里的 MCP 客户端，每行一条 JSON-RPC 消息，经标准输入输出往来：
initialize → tools/list → tools/call …（客户端见 mcp_client_loop.py）。

为什么用 SDK 的低层 Server，而不用更省事的 FastMCP：
  - FastMCP 会用 pydantic 从函数签名重新推一份 inputSchema，和注册表的不一样（见 mcp_schema_diff.py）。
    低层 Server 让我们把注册表的 parameters 原样交出去：两种接法下，模型看到的是同一份 schema。
  - 参数不先按 inputSchema 校验（SDK 的校验只会回一句英文的 "Input validation error"），而是交给注册表：
    它会宽松转换（"5" → 5），不行就写出和上一课一模一样的“❌ [参数错误] …… 请……”。

两种失败，MCP 分得很清楚（规范 server/tools 的 Error Handling）：
  - 工具没做成（参数不对、工具抛异常、超时）：回一个 isError: true 的**结果**，内容是注册表的错误文本。
    结果会回到模型那里，模型看见了就能改正。
  - 请求本身不成立（点了一个服务器没有的工具）：回一个 JSON-RPC **error**（-32602），没有结果。
    这是协议层的错，由客户端处理；mcp_client_loop.py 再替模型写一条“没有这个工具”的结果。

比直接调用注册表多出来的，都是“工具在另一个进程里”带来的：
  - stdin、stdout 都是协议通道：工具里的 print() 改去 stderr，input() 读到的是空（不会偷走客户端的消息）；
  - 每次调用有时间上限（--call-seconds），客户端发 notifications/cancelled 就不再等；
    stdin 关了（客户端走了）服务器就退出，哪怕还有工具卡在死循环里；
  - 源码导入就出错时，服务器对每个请求都回一个 JSON-RPC error，写明源码文件的哪一行出了什么错；
  - mcp 1.x（网页用的 1.19）和 2.x 都能跑：两版登记处理函数的写法不同，见 build_server。
"""
from __future__ import annotations

import argparse
import ctypes
import importlib.metadata
import io
import json
import os
import runpy
import sys
import threading
import traceback

import anyio
import anyio.from_thread
import anyio.lowlevel

try:
    import mcp  # noqa: F401
except ImportError as error:     # mcp 1.19 在 pydantic 2.14 上导入就失败：版本要配对（见 requirements.txt）
    raise ImportError(f"导入 mcp 失败（{error}）。"
                      f"请按 requirements.txt 安装：mcp==1.19.0 和 pydantic==2.13.5") from error
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from tool_outcome import ToolOutcome, error_text, failure
from tool_registry import ToolRegistry, unknown_tool

NAME, VERSION = "tool-workshop", "1.0.0"      # initialize 时报给客户端的 serverInfo：是这个服务器，不是 SDK
CALL_SECONDS = 20        # 每次 tools/call 最多等这么久（比 mcp_client_loop.py 的 TIMEOUT 短：超时也要回得出结果）
MCP_MAJOR = int(importlib.metadata.version("mcp").split(".")[0])

if MCP_MAJOR >= 2:
    from mcp.shared.exceptions import MCPError

    def protocol_error(code: int, message: str) -> Exception:
        """处理函数抛出它，SDK 就回 JSON-RPC error，而不是结果。"""
        return MCPError(code, message)
else:
    from mcp.shared.exceptions import McpError

    def protocol_error(code: int, message: str) -> Exception:
        return McpError(types.ErrorData(code=code, message=message))


class LoadError(Exception):
    """工具源码加载不了：消息写明是哪个文件、哪一行、什么错。"""


def load_registry(path: str) -> ToolRegistry:
    """运行工具源码文件，取出里面的 ToolRegistry：有叫 registry 的就用它，否则用第一个（和沙箱的找法一样）。
    出错就抛 LoadError，只说学生自己那一行，不带一长串 runpy、anyio 的调用栈。"""
    if not os.path.isfile(path):
        raise LoadError(f"找不到工具源码文件 {path}")
    try:
        namespace = runpy.run_path(path, run_name="mcp_tools")   # 不叫 __main__：文件末尾的演示代码不会跑
    except SyntaxError as error:
        raise LoadError(f"工具源码 {path} 第 {error.lineno} 行有语法错误（{error.msg}）。请修正这一行后再试。") from None
    except BaseException as error:      # sys.exit()、Ctrl-C 也算：都是源码在导入时停下了
        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
                 if os.path.abspath(frame.filename) == os.path.abspath(path)]
        where = f"第 {lines[-1]} 行" if lines else "导入时"
        raise LoadError(f"工具源码 {path} {where}出错：{type(error).__name__}: {error}。请修正后再试。") from None
    found = {name: value for name, value in namespace.items() if isinstance(value, ToolRegistry)}
    if not found:
        raise LoadError(f"{path} 里没有找到 ToolRegistry 实例：请写 registry = ToolRegistry()，"
                        f"再用 @registry.tool(...) 装饰工具函数。")
    return found.get("registry") or next(iter(found.values()))


def mcp_tool(tool) -> types.Tool:
    """注册表里的一个工具 -> MCP 的 Tool：inputSchema 就是注册表的 parameters，一个字不改。"""
    hints = {"readOnlyHint": tool.read_only, "destructiveHint": tool.destructive}
    hints = {key: value for key, value in hints.items() if value is not None}   # 没说的就不写，客户端按协议的默认值理解
    return types.Tool(name=tool.name, description=tool.description, inputSchema=tool.parameters,
                      annotations=types.ToolAnnotations(**hints) if hints else None)


class ToolStopped(BaseException):
    """抛进一个超时或被取消的工具线程里，让它停下（BaseException：工具自己的 except Exception 接不住）。"""


async def in_daemon_thread(function, *args):
    """在一个守护线程里跑同步的 function，等它的结果；等的时候可以被超时打断、被客户端取消。
    打断时请线程停下：Python 没有“结束线程”的正式接口，PyThreadState_SetAsyncExc 让它在下一次执行
    Python 代码时抛出 ToolStopped。死循环这样就停了；卡在 C 代码里的（time.sleep、等网络）回到 Python 才停。
    守护线程也不会拦着进程退出（anyio.to_thread 的线程会：死循环的工具让服务器永远关不掉）。"""
    done, box = anyio.Event(), []
    token = anyio.lowlevel.current_token()

    def work():
        try:
            box.append(function(*args))
        except ToolStopped:
            pass
        finally:
            try:
                anyio.from_thread.run_sync(done.set, token=token)
            except Exception:            # 事件循环已经结束了（这次调用早被放弃，服务器在退出）
                pass

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        await done.wait()
    except BaseException:                # 超时或取消：不再等，也请线程停下
        try:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(ToolStopped))
        except Exception:                # 网页的沙箱不许调用 ctypes：那里到时连进程一起结束
            pass
        raise
    if not box:                          # function 抛出了异常（已经印在 stderr 上）
        raise RuntimeError(f"{getattr(function, '__name__', function)} 没有返回结果")
    return box[0]


async def call_tool(registry: ToolRegistry, name: str, arguments: dict, call_seconds: float) -> types.CallToolResult:
    if name not in registry.tools:       # 协议层的错：没有这个工具，也就没有结果
        raise protocol_error(types.INVALID_PARAMS, error_text("unknown_tool", *unknown_tool(name, list(registry.tools))))
    # registry.call 是同步的，工具可能很慢：放到线程里跑，几个调用可以同时进行（并行调用）。
    # 客户端发来 notifications/cancelled 时，SDK 取消的就是这里的等待。
    try:
        with anyio.fail_after(call_seconds):
            outcome: ToolOutcome = await in_daemon_thread(registry.call, name, arguments)
    except TimeoutError:
        outcome = failure("timeout", f"{name} 超过 {call_seconds:g} 秒没有返回", "请换一种做法，或如实告诉用户")
    # 参数不对、工具抛异常、超时……注册表都已经写成了一段文本：原样放进结果，isError 标出成败。
    # error_code 放在 _meta 里，给想按错误种类上色的客户端用；模型只看 content。
    return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.content)],
                                isError=not outcome.ok,
                                _meta={"error_code": outcome.error_code} if outcome.error_code else None)


def build_server(registry: ToolRegistry, name: str = NAME, call_seconds: float = CALL_SECONDS) -> Server:
    async def list_tools() -> list[types.Tool]:
        return [mcp_tool(tool) for tool in registry.tools.values()]

    async def call(tool_name: str, arguments: dict | None) -> types.CallToolResult:
        return await call_tool(registry, tool_name, arguments or {}, call_seconds)

    if MCP_MAJOR >= 2:                   # mcp 2.x：处理函数在构造时交给 Server，收到 (ctx, params)
        async def on_list_tools(ctx, params) -> types.ListToolsResult:
            return types.ListToolsResult(tools=await list_tools())

        async def on_call_tool(ctx, params) -> types.CallToolResult:
            return await call(params.name, params.arguments)

        return Server(name, version=VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool)

    server = Server(name, version=VERSION)        # mcp 1.x：用装饰器登记
    server.list_tools()(list_tools)

    # 不用 @server.call_tool()：它把处理函数抛出的一切都包成 isError 结果，未知工具就成不了协议错误；
    # 它还会先按 inputSchema 校验参数。直接登记 tools/call 请求的处理函数，两件事都由我们决定。
    async def on_call_tool(request: types.CallToolRequest) -> types.ServerResult:
        return types.ServerResult(await call(request.params.name, request.params.arguments))

    server.request_handlers[types.CallToolRequest] = on_call_tool
    return server


def protocol_channels() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    """stdin 和 stdout 是协议通道：工具读一行 stdin，就偷走了客户端的一条消息；多打印一个字，客户端就读到
    一行坏 JSON。所以先把真正的 0 号、1 号文件描述符各复制一份留给协议，再把 0 号指向空设备（input() 读到
    结尾），1 号和 sys.stdout 指向 stderr（print()、子进程的输出都只进日志）。返回 (收, 发) 两个文本流。"""
    incoming = os.fdopen(os.dup(0), "rb")
    outgoing = os.fdopen(os.dup(1), "wb", buffering=0)
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)
    os.close(empty)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return (io.TextIOWrapper(incoming, encoding="utf-8", errors="replace"),
            io.TextIOWrapper(outgoing, encoding="utf-8", write_through=True))


def refuse_every_request(incoming, outgoing, message: str) -> None:
    """源码没加载起来，服务器没有工具可给，客户端却还在等 initialize 的回答。与其一声不吭地退出
    （客户端只会说“连接断了”），不如对每个请求都回一个 JSON-RPC error，写明哪一行出了什么错：
    任何客户端都能把它原样告诉用户。stdin 关了就结束。"""
    for line in incoming:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if isinstance(request, dict) and "method" in request and "id" in request:   # 通知不用回答
            error = {"code": types.INTERNAL_ERROR, "message": message}
            outgoing.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}, ensure_ascii=False) + "\n")


async def serve(server: Server, incoming, outgoing) -> None:
    """在这对协议通道上服务，直到 stdin 关闭。"""
    async with anyio.create_task_group() as group:
        async def lines():
            async for line in anyio.wrap_file(incoming):
                yield line
            # 客户端关了 stdin，就是要服务器退出（MCP 的 stdio 规定）。SDK 会等还没答完的调用，
            # 可卡住的工具永远答不完：不再等它们，取消整个服务。
            group.cancel_scope.cancel()

        async with stdio_server(stdin=lines(), stdout=anyio.wrap_file(outgoing)) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def main(path: str, call_seconds: float) -> None:
    incoming, outgoing = protocol_channels()     # 在运行学生的源码之前：导入时的 print 也不能进协议通道
    try:
        registry = load_registry(path)
    except LoadError as error:
        print(error, file=sys.stderr)
        refuse_every_request(incoming, outgoing, str(error))
        raise SystemExit(1) from None
    anyio.run(serve, build_server(registry, call_seconds=call_seconds), incoming, outgoing)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MCP 服务器：经 stdio 提供一个工具源码文件里的工具",
                                     epilog="例如 python code/mcp_server.py code/examples_weather.py（MCP 客户端经 stdio 连上来）")
    parser.add_argument("source", help="工具源码文件，里面有 registry = ToolRegistry()")
    parser.add_argument("--call-seconds", type=float, default=CALL_SECONDS, help="每次 tools/call 最多等几秒")
    options = parser.parse_args()
    main(options.source, options.call_seconds)
