"""循环 7：MCP 客户端循环——function_calling_loop.py 一行不改，只是工具从 MCP 服务器来。

    python code/mcp_client_loop.py                       # 离线模型 + code/examples_weather.py，不联网
    python code/mcp_client_loop.py code/examples_calculator.py "算一下 (3+4)*5"

比 function_calling_loop.py 多了这些：
  - 工具不在本进程里：启动 mcp_server.py 子进程，经 stdio 用 JSON-RPC 说话（官方 SDK 的 ClientSession）；
  - 先 initialize（握手：双方报上协议版本和能力），再 tools/list：服务器的工具清单就是模型的 tools=；
  - 模型的每个 tool_call 变成一次 tools/call；结果（isError 标出成败）照旧以 role "tool" 回到历史；
    服务器回的若是 JSON-RPC error（比如没有这个工具），那是协议层的错、没有结果：循环替模型写一条结果；
  - 每条经过的 JSON-RPC 消息都 yield 一个 rpc 事件（events.rpc），时间线上能看到协议本身；
  - transport=（可选）换掉“启动子进程”这一步：任何像 stdio_client 那样给出一对消息流的东西都行，
    比如网页版把服务器放进沙箱（sandbox.mcp_transport），循环和会话一行不改。
其余（并行调用、单步干预、连续失败就停、max_turns）都是 function_calling_loop.py 原样的。
SDK 是异步的，循环是同步的生成器：连接在后台线程的事件循环里跑（anyio 的 blocking portal）。
mcp 1.x 和 2.x 都能用：读 SDK 给的对象时一律先转成线上的 JSON（model_dump），两版的字段名就一样了。
"""
from __future__ import annotations

import collections
import contextlib
import datetime
import importlib.metadata
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import anyio
from anyio.from_thread import start_blocking_portal

try:
    import mcp  # noqa: F401
except ImportError as error:     # mcp 1.19 在 pydantic 2.14 上导入就失败：版本要配对（见 requirements.txt）
    raise ImportError(f"导入 mcp 失败（{error}）。"
                      f"请按 requirements.txt 安装：mcp==1.19.0 和 pydantic==2.13.5") from error
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import events
from function_calling_loop import run_function_calling
from loop_parts import Steps
from tool_outcome import error_text
from tool_registry import unknown_tool

CODE = Path(__file__).resolve().parent
TIMEOUT = 30             # 秒：每个请求最多等这么久。服务器卡死（比如导入时死循环）就算失败，循环不会永远等下去
MCP_MAJOR = int(importlib.metadata.version("mcp").split(".")[0])
# JSON-RPC 规定的错误码：带着它们的 error 是服务器回的“这个请求不成立”。SDK 自己报的“连接断了”“等超时了”用别的码。
JSONRPC_ERRORS = (types.PARSE_ERROR, types.INVALID_REQUEST, types.METHOD_NOT_FOUND, types.INVALID_PARAMS,
                  types.INTERNAL_ERROR)


def server_for(source: str | Path) -> StdioServerParameters:
    """用当前的 Python 启动 mcp_server.py 来服务这个工具源码文件。
    env 不写：SDK 只把 PATH、HOME 这类无害的环境变量传给子进程，API Key 不会跟着过去。"""
    return StdioServerParameters(command=sys.executable,
                                 args=[str(CODE / "mcp_server.py"), str(Path(source).resolve())])


class Tap:
    """夹在 SDK 的传输和会话之间的一段“管子”：每条经过的消息先记下来，再原样转交。"""

    def __init__(self, stream: Any, direction: str, record: Any):
        self.stream, self.direction, self.record = stream, direction, record

    async def send(self, message: Any) -> None:
        self.record(self.direction, message)
        await self.stream.send(message)

    async def receive(self) -> Any:
        message = await self.stream.receive()
        self.record(self.direction, message)
        return message

    def __aiter__(self):
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class McpConnection:
    """到一个 MCP 服务器的连接，给同步代码用。wire 里按顺序存着线上的每条消息：
    (方向, 消息 dict, 它回答的方法, 从连接开始的毫秒数)。"""

    def __init__(self, server: StdioServerParameters, transport: Callable[[], Any] | None = None):
        self.server = server
        # transport()：返回一个异步上下文管理器，进入时给出 (读流, 写流)；不给就用 stdio_client 启动子进程
        self.transport = transport or (lambda: stdio_client(self.server, errlog=self.errlog))
        self.wire: collections.deque = collections.deque()   # 后台线程追加，循环取走：deque 两头操作是线程安全的
        self.errlog = tempfile.TemporaryFile("w+", encoding="utf-8")   # 服务器的 stderr：出错时拿来给人看
        self.opened: Any = None          # 这次连接用的传输，server_log 从它那里读日志（如果它自己记着）
        self._methods: dict = {}         # 请求 id -> 方法名，给响应配对
        self._stack = contextlib.ExitStack()
        self._start = time.perf_counter()

    def _record(self, direction: str, message: Any) -> None:
        if isinstance(message, Exception):               # 服务器写了一行不是 JSON-RPC 的东西
            self.wire.append((direction, {"error": {"message": f"{type(message).__name__}: {message}"}}, None,
                              self._ms()))
            return
        data = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)   # 和线上一字不差
        if "method" in data and "id" in data:
            self._methods[data["id"]] = data["method"]
        self.wire.append((direction, data, self._methods.get(data.get("id")), self._ms()))

    def _ms(self) -> float:
        return (time.perf_counter() - self._start) * 1000

    def open(self) -> Any:
        """启动服务器进程，initialize。返回服务器的 InitializeResult（名字、版本、能力）。"""
        self._start = time.perf_counter()
        portal = self._stack.enter_context(start_blocking_portal())
        self.opened = self.transport()
        read, write = self._stack.enter_context(portal.wrap_async_context_manager(self.opened))
        self.session = self._stack.enter_context(portal.wrap_async_context_manager(
            ClientSession(Tap(read, "receive", self._record), Tap(write, "send", self._record),
                          read_timeout_seconds=TIMEOUT if MCP_MAJOR >= 2 else datetime.timedelta(seconds=TIMEOUT),
                          client_info=types.Implementation(name="tool-workshop-loop", version="1.0"))))
        self.portal = portal
        return portal.call(self.session.initialize)

    def list_tools(self) -> list[dict]:
        """tools/list 的结果里的工具，线上的样子（inputSchema 等驼峰写法）。"""
        return wire_json(self.portal.call(self.session.list_tools))["tools"]

    def call_tool(self, name: str, arguments: dict) -> dict:
        """tools/call 的结果，线上的样子（content、isError、_meta）。服务器回 JSON-RPC error 时抛出 SDK 的异常。"""
        return wire_json(self.portal.call(self.session.call_tool, name, arguments))

    def server_log(self) -> str:
        if hasattr(self.opened, "log"):  # 自己记着服务器 stderr 的传输（如沙箱里的服务器）
            return self.opened.log()[-2000:]
        self.errlog.seek(0)
        return self.errlog.read()[-2000:]

    def close(self) -> None:
        """关掉 stdin，服务器读到结尾就退出；SDK 等它 2 秒，不退就结束它。"""
        with contextlib.suppress(Exception):
            self._stack.close()
        self.errlog.close()


def wire_json(result: Any) -> dict:
    """SDK 给的结果对象 -> 线上的 JSON（dict）。mcp 2.x 的属性名改成了 is_error、input_schema……，
    线上的名字（isError、inputSchema）两版一样。"""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def openai_tool(tool: dict) -> dict:
    """tools/list 里的一项 -> OpenAI tools 列表里的一项：inputSchema 就是 parameters。"""
    return {"type": "function",
            "function": {"name": tool["name"], "description": tool.get("description") or "",
                         "parameters": tool["inputSchema"]}}


def outcome_of(result: dict) -> dict:
    """tools/call 的结果 -> 循环认的结果（tool_outcome.as_outcome 会把它变成 ToolOutcome，并截断过长的文本）。"""
    failed = bool(result.get("isError"))
    text = "\n".join(block["text"] if block["type"] == "text" else f"[{block['type']} 内容]"
                     for block in result.get("content", []))
    code = ((result.get("_meta") or {}).get("error_code") or "tool_exception") if failed else None
    return {"ok": not failed, "content": text, "error_code": code}


def server_error(error: Exception) -> Any:
    """服务器回的 JSON-RPC error（SDK 抛出的异常里的 ErrorData：code、message）；不是就返回 None。"""
    data = getattr(error, "error", None)
    return data if getattr(data, "code", None) in JSONRPC_ERRORS else None


def protocol_failure(name: str, names: list[str], error: Any) -> dict:
    """tools/call 得到的是 JSON-RPC error：请求本身不成立，没有结果。可模型在等这次调用的结果，
    不告诉它，它就会一遍遍重试。所以循环替它写一条：没有这个工具，就说没有、该用哪个（和注册表说的一样）。"""
    if name not in names:
        return {"ok": False, "error_code": "unknown_tool", "content": error_text("unknown_tool", *unknown_tool(name, names))}
    return {"ok": False, "error_code": "tool_exception",
            "content": error_text("tool_exception", f"MCP 服务器拒绝了这次 tools/call（JSON-RPC 错误 {error.code}："
                                  f"{error.message}）", "请检查工具名和参数后再试")}


def run_mcp(client: Any, messages: str | list[dict], source: str | Path = CODE / "examples_weather.py", *,
            server: StdioServerParameters | None = None, transport: Callable[[], Any] | None = None,
            **options: Any) -> Steps:
    """和 run_function_calling 一样 yield 事件、接受 send 干预；options 原样交给它（max_turns、stream……）。
    给了 transport（见 McpConnection）就用它连服务器，不再按 source / server 启动子进程。"""
    connection = McpConnection(server or server_for(source), transport)
    turn = 1

    def rpc_events():                    # 上一个事件以来线上走过的消息，按顺序变成 rpc 事件
        while connection.wire:
            direction, message, method, at_ms = connection.wire.popleft()
            yield events.rpc(turn, direction, message, method, at_ms)

    try:
        try:
            connection.open()            # initialize：请求、响应，再加一条 notifications/initialized
            tools = [openai_tool(tool) for tool in connection.list_tools()]
        except Exception as error:
            yield from rpc_events()
            log, answered = connection.server_log().strip(), server_error(error)
            if answered is not None:     # 服务器还能说话，只是说“不行”：它的话就是原因（比如源码哪一行出错）
                reason = f"服务器回了 JSON-RPC 错误 {answered.code}：{answered.message.rstrip('。. ')}"
            else:
                reason = f"{type(error).__name__}: {str(error).rstrip('。. ')}"
            if log and (answered is None or answered.message not in log):
                advice = f"服务器的输出：{log}"
            else:
                advice = "" if log else "请先单独运行服务器，看看它报什么错。"
            yield events.error(turn, "mcp_connect", f"连不上 MCP 服务器：{reason}。{advice}")
            return
        yield from rpc_events()
        names = [tool["function"]["name"] for tool in tools]

        def execute(name: str, arguments: Any) -> dict:
            if not isinstance(arguments, dict):
                # 参数读不成 JSON 对象：tools/call 里没法发（arguments 必须是对象）。抛出去，
                # 循环（loop_parts.execute_call）写出和注册表同一句“参数格式错误”，服务器不用跑这一趟。
                raise TypeError("arguments 不是 JSON 对象")
            try:
                return outcome_of(connection.call_tool(name, arguments))
            except Exception as error:
                if (answered := server_error(error)) is not None:      # 服务器回了 JSON-RPC error
                    return protocol_failure(name, names, answered)
                # 超时、服务器退出了：连回答都没有，更不是工具的结果
                return {"ok": False, "error_code": "tool_exception",
                        "content": error_text("tool_exception", f"tools/call 没有得到结果（{type(error).__name__}: "
                                              f"{error}）", "MCP 服务器可能已经退出或卡住了，请稍后重试")}

        steps = run_function_calling(client, messages, tools, execute, **options)
        sent = None
        while True:                      # 转交内层循环的事件；每个事件之前，先交出这期间的 JSON-RPC 消息
            try:
                event = steps.send(sent)
            except StopIteration:
                break
            turn = event.get("turn", turn)
            yield from rpc_events()
            sent = yield event           # 单步干预（tool_call 之后 send 的东西）原样转交
    finally:
        connection.close()


if __name__ == "__main__":
    import json

    from llm_clients import make_client
    source = sys.argv[1] if len(sys.argv) > 1 else CODE / "examples_weather.py"
    question = sys.argv[2] if len(sys.argv) > 2 else "北京和上海的天气怎么样？"
    for event in run_mcp(make_client("offline"), question, source):
        if event["type"] == "rpc":
            arrow = "→" if event["direction"] == "send" else "←"
            body = event["params"] if event["kind"] in ("request", "notification") else (event["result"]
                                                                                         or event["error"])
            print(f"  {arrow} {event['kind']:<12} {event['method']}  {json.dumps(body, ensure_ascii=False)[:110]}")
        elif event["type"] in ("tool_call", "tool_result", "final", "error"):
            shown = {k: v for k, v in event.items() if k in ("name", "arguments", "content", "code", "message")}
            print(event["type"], json.dumps(shown, ensure_ascii=False)[:160])
        else:
            print(event["type"])
