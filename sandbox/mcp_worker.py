"""The MCP server program: serves one student's tool source over MCP, inside a tool worker's limits.

Started by the app (sandbox/mcp_host.py) as `python -I -B -X utf8 mcp_worker.py zygote '<config>'`
from a private runtime folder that also holds worker.py, hardening.py, cpu_share.py and the
course modules, `mcp_server.py` among them.  The zygote is worker.py's: it imports everything
a tool worker has, and with mcp_server.py the `mcp` SDK (about 1.3 s, paid once), then forks
one child per server.  A child hardens itself exactly like a tool worker (rlimits,
non-dumpable, Landlock, seccomp, audit hook), reports its layers, reads the student's source
as the first line of its standard input, and from then on is the course's MCP server
(`mcp_server.build_server`, served by `mcp_server.serve`) on the rest of that input and its
protocol channel. A source that fails to load gets every request answered with a JSON-RPC
error naming its line (`mcp_server.refuse_every_request`), as `python code/mcp_server.py` does.

File descriptors of a child: 0 in (one JSON line {"source", "wall_seconds"}, then the client's JSON-RPC
messages), 1 the protocol channel (the server's JSON-RPC messages, nothing else), 2 stderr
(the source's print() lands here too, as with `python code/mcp_server.py`), 3 the "ready"
line.  Both protocol ends are moved off 0 and 1 first (`mcp_server.protocol_channels`): a tool's
input() reads the null device, not the client's messages.  The source is loaded only in here,
after the layers are in place.
"""
import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import hardening  # noqa: E402  (needs the path above)
import worker  # noqa: E402

PR_SET_PDEATHSIG = 1
# Beyond the app's own time limit: the app kills the server at its limit; this alarm only
# covers an app that died without doing so (the zygote's death is covered by PDEATHSIG).
ALARM_MARGIN_SECONDS = 5


def warm():
    """What the server needs besides the tool worker's imports, run once in the zygote: one
    whole session (initialize, tools/list, tools/call) between the course's server and the SDK's
    client over memory streams, so lazy imports and first-call caches are filled before any fork."""
    import anyio
    import mcp_server
    import tool_registry
    from mcp import ClientSession
    from mcp.server.stdio import stdio_server  # noqa: F401  (what a child serves with)

    registry = tool_registry.ToolRegistry()

    @registry.tool("预热")
    def warm_tool(count: int) -> str:
        """预热。

        Args:
            count: 次数
        """
        return "x" * count

    server = mcp_server.build_server(registry)

    async def session():
        to_server, server_in = anyio.create_memory_object_stream(8)
        to_client, client_in = anyio.create_memory_object_stream(8)
        async with anyio.create_task_group() as group:
            group.start_soon(server.run, server_in, to_client, server.create_initialization_options())
            async with ClientSession(client_in, to_server) as client:
                await client.initialize()
                await client.list_tools()
                await client.call_tool("warm_tool", {"count": "2"})
                await client.call_tool("warm_tool", {"count": "x"})
            group.cancel_scope.cancel()

    anyio.run(session)


def server_main(fds, config):
    """Runs in the freshly forked child; never returns."""
    try:
        worker.enter_child(fds, config)                        # fds: stdin, stdout, stderr, ready
        hardening.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)     # gone with the zygote, whatever happens
        import anyio
        import mcp_server

        # Both ends are moved before the audit hook, which refuses to open anything for writing:
        # print() goes to stderr, input() reads the null device.
        incoming, protocol = mcp_server.protocol_channels()
        layers = worker.harden(config)
        refuse = config.get("require_seccomp") and not layers.get("seccomp")
        worker._write_all(worker.RESULT_FD, worker._json_line({"ready": not refuse, "layers": layers}))
        os.close(worker.RESULT_FD)
        if refuse:
            os._exit(3)
        line = incoming.readline()        # buffered: what follows the line stays for the server
        try:
            job = json.loads(line)
            source, wall_seconds = job["source"], float(job["wall_seconds"])
        except (ValueError, KeyError, TypeError):
            os._exit(4)
        signal.alarm(int(wall_seconds) + ALARM_MARGIN_SECONDS)   # its life starts now
        module, error = worker.load_module(source)
        if error is None and (registry := worker.find_registry(module)) is None:
            error = worker._error("no_registry", worker.NO_REGISTRY, None)
        if error is not None:
            sys.stderr.write(error["message"] + "\n")
            sys.stderr.flush()
            mcp_server.refuse_every_request(incoming, protocol, error["message"])
            os._exit(1)
        anyio.run(mcp_server.serve, mcp_server.build_server(registry), incoming, protocol)
    except BaseException:
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    try:
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(0)


if __name__ == "__main__":
    # The parent starts this file as the zygote: `python -I -B mcp_worker.py zygote CONFIG_JSON`.
    worker.zygote_main(json.loads(sys.argv[2]), child=server_main, warm=warm)
