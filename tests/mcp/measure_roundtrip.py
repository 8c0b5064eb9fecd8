"""Median wall time of one MCP round trip as the client loop does it: start the server process,
initialize, tools/list, one tools/call (closing is timed on its own). Not a test; run it:

    nice /opt/tool-workshop-venv/bin/python tests/mcp/measure_roundtrip.py [runs]
"""
import pathlib
import statistics
import subprocess
import sys
import time

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
sys.path.insert(0, str(CODE))

from mcp_client_loop import McpConnection, server_for  # noqa: E402


def once() -> dict:
    connection = McpConnection(server_for(CODE / "examples_weather.py"))
    start = time.perf_counter()
    connection.open()
    initialized = time.perf_counter()
    connection.list_tools()
    listed = time.perf_counter()
    result = connection.call_tool("get_weather", {"city": "北京"})
    called = time.perf_counter()
    connection.close()
    closed = time.perf_counter()
    assert not result.isError
    return {"start+initialize": initialized - start, "tools/list": listed - initialized,
            "tools/call": called - listed, "total": called - start, "close": closed - called}


def baseline(code: str) -> float:
    """The same machine at the same moment: a bare interpreter, and one that only imports the SDK's server."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    once()                                   # warm the .pyc files and the page cache
    samples = [{**once(), "python -c pass": baseline("pass"),
                "import mcp server": baseline("import mcp.server.lowlevel, mcp.server.stdio")} for _ in range(runs)]
    for key in samples[0]:
        values = sorted(s[key] * 1000 for s in samples)
        print(f"{key:>17}: median {statistics.median(values):8.1f} ms   min {values[0]:8.1f}   max {values[-1]:8.1f}")
