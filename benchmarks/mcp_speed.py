"""How long one MCP session takes on a sandboxed server, against a plain `stdio_client` subprocess.

    /opt/tool-workshop-venv/bin/python benchmarks/mcp_speed.py [--sessions 10]

A session is: connect, initialize, tools/list and one tools/call (code/examples_weather.py), with
the official SDK's ClientSession. Measured in one run on this machine, the two kinds taking turns
(so that a busy moment of the machine falls on both):
  sandbox, classroom pace  sandbox.mcp_transport, a pause between sessions (a server is kept ready)
  sandbox, back to back    sandbox.mcp_transport, no pause (the next server is forked on demand)
  plain stdio_client       stdio_client(server_for(path)): a fresh `python code/mcp_server.py`, unprotected
Prints medians of the time and of the CPU a session costs (this process, the server, and for the
sandbox the zygote's fork, also of a server forked in the pause before; the plain subprocess's CPU includes its interpreter start and imports),
the speed-up against the plain subprocess (plain median / case median), the first
sandboxed session (it starts the MCP zygote) and the memory of the zygote and of one server.
"""
import argparse
import os
import resource
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "code"), ROOT]

import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import sandbox  # noqa: E402
from mcp_client_loop import server_for  # noqa: E402
from sandbox.cpu_share import process_clocks  # noqa: E402

EXAMPLE = os.path.join(ROOT, "code", "examples_weather.py")
with open(EXAMPLE, encoding="utf-8") as handle:
    SOURCE = handle.read()


async def one_session(transport, inside=None):
    """Milliseconds for connect + initialize + tools/list + tools/call."""
    start = time.perf_counter()
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        result = await session.call_tool("get_weather", {"city": "北京"})
        assert [tool.name for tool in tools][:1] == ["get_weather"] and not result.isError, result
        assert "北京" in result.content[0].text
        if inside is not None:
            inside()
    return (time.perf_counter() - start) * 1000


def cpu_seconds(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def sandboxed(inside=None):
    """(ms, CPU ms: this process + the server + the zygote's fork)."""
    zygote = sandbox._sandbox.mcp.zygote_pid()
    before = cpu_seconds(resource.RUSAGE_SELF), process_clocks(zygote)[1] if zygote else 0.0
    server = sandbox.mcp_transport(SOURCE)
    ms = anyio.run(one_session, server, inside)
    zygote = sandbox._sandbox.mcp.zygote_pid()
    used = cpu_seconds(resource.RUSAGE_SELF) - before[0] + server.cpu_seconds + \
        (process_clocks(zygote)[1] - before[1] if before[1] else 0.0)
    return ms, used * 1000


def plain():
    """(ms, CPU ms: this process + the server subprocess)."""
    before = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "w") as errlog:
        ms = anyio.run(one_session, stdio_client(server_for(EXAMPLE), errlog=errlog))
    return ms, (cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - before) * 1000


def memory_kb(pid):
    """(Rss, Pss, Private) of a process in KB, from /proc/<pid>/smaps_rollup."""
    found = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                name, _, rest = line.partition(":")
                if name in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
                    found[name] = int(rest.split()[0])
    except OSError:
        return None
    return found.get("Rss"), found.get("Pss"), found.get("Private_Clean", 0) + found.get("Private_Dirty", 0)


def median_row(name, samples, peer=None):
    times = [ms for ms, _ in samples]
    median = statistics.median(times)
    cpu = statistics.median(cpu_ms for _, cpu_ms in samples)
    ratio = f"  {peer[0] / median:5.1f}x faster, {peer[1] / cpu:5.1f}x less CPU than plain" if peer else ""
    print(f"  {name:<24} median {median:7.1f} ms  p90 {sorted(times)[int(len(times) * 0.9) - 1]:7.1f} ms"
          f"  CPU {cpu:6.1f} ms  n={len(times)}{ratio}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--pace", type=float, default=0.3, help="seconds between sessions at classroom pace")
    options = parser.parse_args()

    host = sandbox._sandbox.mcp
    first = sandboxed()
    server_memory = []
    rows = {"sandbox, classroom pace": [], "sandbox, back to back": [], "plain stdio_client": []}
    for _ in range(options.sessions):
        # The server kept ready for it is forked during the pause: that fork is counted too.
        zygote_before = process_clocks(host.zygote_pid())[1]
        time.sleep(options.pace)
        refill_ms = (process_clocks(host.zygote_pid())[1] - zygote_before) * 1000
        ms, cpu_ms = sandboxed(lambda: server_memory.append(memory_kb(host.live()[0].pid)))
        rows["sandbox, classroom pace"].append((ms, cpu_ms + refill_ms))
        rows["sandbox, back to back"].append(sandboxed())
        rows["plain stdio_client"].append(plain())
    zygote = memory_kb(host.zygote_pid())
    sandbox.shutdown()

    layers = sandbox.status()["layers"]
    print(f"MCP session (connect + initialize + tools/list + tools/call), {os.cpu_count()} CPUs, "
          f"seccomp={layers.get('seccomp')} landlock={layers.get('landlock')}")
    peer = (statistics.median(ms for ms, _ in rows["plain stdio_client"]),
            statistics.median(cpu_ms for _, cpu_ms in rows["plain stdio_client"]))
    for name, samples in rows.items():
        median_row(name, samples, None if name.startswith("plain") else peer)
    print(f"  first sandboxed session (starts the MCP zygote): {first[0]:.0f} ms")
    if zygote:
        print(f"  MCP zygote memory: RSS {zygote[0] / 1024:.1f} MB, PSS {zygote[1] / 1024:.1f} MB")
    servers = [entry for entry in server_memory if entry]
    if servers:
        private = statistics.median(entry[2] for entry in servers)
        print(f"  one live server: RSS {statistics.median(e[0] for e in servers) / 1024:.1f} MB, "
              f"private {private / 1024:.1f} MB (the rest shared with the zygote)")


if __name__ == "__main__":
    main()
