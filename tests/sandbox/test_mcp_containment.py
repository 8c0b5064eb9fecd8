"""Containment of the sandboxed MCP server: hostile tool source served over MCP, as an unprivileged user.

The same attacks as a tool worker's (tests/sandbox/test_attacks.py), made through tools/call on
a server from sandbox.mcp_transport, and at import time. Every case asserts that nothing leaked
(a planted key never shows up in a result or the server's log), nothing changed (files, this
process and its limits) and nothing is left running (the server's process group is gone).
"""
import json
import os
import resource
import time

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

import sandbox
from tests.attack_setup import REPO, env_file, plant_secret, process_limits, tcp_listener

pytestmark = pytest.mark.unprivileged

CANARY_NAME = "WORKSHOP_MCP_CANARY_KEY"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A planted key (sealed as the app seals it), a .env file, a TCP listener, a marker path."""
    secret = plant_secret(CANARY_NAME, "sk-mcp-canary-")
    place = tmp_path_factory.mktemp("mcp-attack")
    listener = tcp_listener()
    yield {"secret": secret, "env_file": str(env_file(place, secret)), "marker": str(place / "pwned.txt"),
           "place": place, "listener": listener, "port": listener.getsockname()[1], "limits": process_limits()}
    listener.close()


def _fill(text, world):
    return (text.replace("APP_PID", str(os.getpid())).replace("ENV_FILE", world["env_file"])
                .replace("MARKER", world["marker"]).replace("PORT", str(world["port"])).replace("REPO", REPO))


def _call(source, session_id):
    """tools/call attack on a fresh sandboxed server: (the result, or the McpError; the server)."""
    server = sandbox.mcp_transport(source, session_id)

    async def main():
        async with server as (read, write), ClientSession(read, write) as session:
            try:
                await session.initialize()
                return await session.call_tool("attack", {})
            except McpError as error:
                return error

    return anyio.run(main), server


def _gone(pid, within=3.0):
    deadline = time.monotonic() + within
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.02)
    return not os.path.exists(f"/proc/{pid}")


def _check_contained(result, server, world):
    text = json.dumps(result.model_dump(mode="json") if hasattr(result, "model_dump") else str(result),
                      ensure_ascii=False) + server.log()
    assert world["secret"] not in text, "the planted key leaked"
    assert not os.path.exists(world["marker"]), "a file was created outside the sandbox"
    assert sorted(os.listdir(world["place"])) == [".env"]
    with pytest.raises(BlockingIOError):
        world["listener"].accept()
    for kind, limits in world["limits"].items():
        assert resource.getrlimit(kind) == limits, "the test process's limits changed"
    assert _gone(server.pid), "the server outlived its block"


BLOCKED = [
    ("parent-environ", "return open('/proc/APP_PID/environ', 'rb').read().decode('latin-1')"),
    ("parent-mem", """
        maps = open('/proc/APP_PID/maps').read().splitlines()
        start, end = (int(x, 16) for x in maps[0].split()[0].split('-'))
        mem = open('/proc/APP_PID/mem', 'rb')
        mem.seek(start)
        return mem.read(min(end - start, 1 << 20)).decode('latin-1')"""),
    ("zygote-environ", "import os\nreturn open(f'/proc/{os.getppid()}/environ', 'rb').read().decode('latin-1')"),
    ("dotenv", "return open('ENV_FILE').read()"),
    ("read-outside", "return open('/etc/passwd').read()"),
    ("read-checkout", "return open('REPO/app.py').read()"),
    ("tcp-connect", "import socket\nsocket.create_connection(('127.0.0.1', PORT), timeout=1)\nreturn 'connected'"),
    ("raw-socket", """
        import _socket
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        s.connect(('127.0.0.1', PORT))
        return 'connected'"""),
    ("fork", "import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nreturn 'forked'"),
    ("exec", "import os\nos.execv('/bin/true', ['true'])"),
    ("os-system", "import os\nreturn str(os.system('touch MARKER'))"),
    ("subprocess", "import subprocess\nreturn subprocess.run(['touch', 'MARKER']).returncode"),
    ("ctypes", "import ctypes\nreturn ctypes.CDLL(None).system(b'touch MARKER')"),
    ("write-outside", "open('MARKER', 'w').write('pwned')\nreturn 'written'"),
    ("write-in-cwd", "with open('big.bin', 'wb') as f:\n    f.write(b'0' * 10 ** 6)\nreturn 'written'"),
    ("signal-parent", "import os, signal\nos.kill(APP_PID, signal.SIGKILL)\nreturn 'sent'"),
    ("signal-zygote", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nreturn 'sent'"),
    ("relimit-parent", "import resource\nresource.prlimit(APP_PID, resource.RLIMIT_NOFILE, (3, 3))\nreturn 'set'"),
    ("memory-bomb", "data = bytearray(4 * 1024 ** 3)\nreturn str(len(data))"),
]


@pytest.mark.parametrize("name, body", BLOCKED, ids=[case[0] for case in BLOCKED])
def test_a_tool_on_the_sandboxed_server_is_contained(name, body, world, helpers):
    result, server = _call(_fill(helpers.tool_source(body), world), f"mcp-attack-{name}")
    assert not isinstance(result, McpError), (name, str(result), server.log()[-500:])
    assert result.isError is True, (name, result.content[0].text[:300])
    assert result.content[0].text.startswith("❌")
    if name == "memory-bomb":
        assert "MemoryError" in result.content[0].text
    _check_contained(result, server, world)


def test_the_servers_environment_is_the_minimal_one(world, helpers):
    result, server = _call(helpers.tool_source("import os\nreturn dict(os.environ)"), "mcp-attack-env")
    assert result.isError is False
    environment = json.loads(result.content[0].text.replace("'", '"'))
    assert set(environment) <= {"PATH", "LANG", "LC_ALL", "TZ", "LC_CTYPE"}, environment
    _check_contained(result, server, world)


IMPORT_TIME = [
    ("connect-at-import", "import socket\nsocket.create_connection(('127.0.0.1', PORT), timeout=1)", "网络"),
    ("exec-at-import", "import os\nos.system('touch MARKER')", "子进程"),
    ("write-at-import", "open('MARKER', 'w').write('pwned')", "文件写入"),
    ("environ-at-import", "print(open('/proc/APP_PID/environ').read())", "PermissionError"),
]


@pytest.mark.parametrize("name, top, said", IMPORT_TIME, ids=[case[0] for case in IMPORT_TIME])
def test_side_effects_at_import_are_contained_and_named_in_the_log(name, top, said, world, helpers):
    result, server = _call(_fill(helpers.tool_source("return 'ok'", header=top), world), f"mcp-import-{name}")
    assert isinstance(result, McpError), "the server must not start"
    line = top.count("\n") + 1                  # the header's last line is the one that acts
    assert said in server.log() and f"第 {line} 行" in server.log(), server.log()
    _check_contained(result, server, world)


def test_the_servers_layers_are_the_tool_workers(world, helpers):
    _, server = _call(helpers.tool_source("return 'ok'"), "mcp-layers")
    layers = server.layers
    assert layers["seccomp"] is True and layers["landlock"] >= 1 and layers["rlimits"] is True
    assert layers["non_dumpable"] is True and layers["audit_hook"] is True
    assert layers["uid"] == os.getuid() != 0     # never root: the zygote drops to nobody when the app is root


def test_a_loop_in_a_tool_is_ended_by_the_cpu_limit(world, helpers, configured):
    # Not demoted to idle CPU on the way, so the CPU limit (not the clock) is what ends it.
    configured(mcp_cpu_seconds=1, mcp_request_seconds=30, mcp_wall_seconds=30, mcp={"demote_after_seconds": 100})
    started = time.monotonic()
    result, server = _call(helpers.tool_source("while True:\n    pass"), "mcp-cpu")
    assert isinstance(result, McpError)
    assert server.ended == "cpu_limit" and "用满了 1 秒 CPU" in server.log(), (server.ended, server.log())
    assert time.monotonic() - started < 25
    _check_contained(result, server, world)
    assert sandbox.session_usage("mcp-cpu", kind="mcp")["on_probation"] is True


def test_memory_creep_is_stopped_and_the_server_keeps_serving(world, helpers):
    source = helpers.tool_source("chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 ** 2))")
    server = sandbox.mcp_transport(source, "mcp-memory")

    async def main():
        async with server as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool("attack", {})
            again = await session.list_tools()
            return first, again

    first, again = anyio.run(main)
    assert first.isError is True and "MemoryError" in first.content[0].text
    assert [tool.name for tool in again.tools] == ["attack"]
    _check_contained(first, server, world)
