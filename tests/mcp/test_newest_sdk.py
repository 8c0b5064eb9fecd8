"""code/mcp_server.py and code/mcp_client_loop.py on the newest `mcp` release, the one a student
installs today (the app pins 1.19): that release's official client against the course server, served
by that release and by the app's 1.19. tests/mcp/newest_client.py runs in scripts/mcp_newest.sh's
venv ($MCP_PYTHON) and reports what it saw; scripts/test.sh runs this lane on its own."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from mcp_server import load_registry

pytestmark = pytest.mark.mcp_newest
ROOT = pathlib.Path(__file__).resolve().parents[2]
WEATHER = ROOT / "code" / "examples_weather.py"


def newest_python() -> str:
    python = os.environ.get("MCP_PYTHON", "")
    if not python:
        found = subprocess.run(["bash", str(ROOT / "scripts" / "mcp_newest.sh"), "--check"],
                               capture_output=True, text=True, timeout=60, check=False)
        python = found.stdout.strip().removeprefix("MCP_PYTHON=")
    if not (python and os.access(python, os.X_OK)):
        reason = "no venv with the newest mcp: run `bash scripts/mcp_newest.sh` once (or set MCP_PYTHON)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return python


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """What the newest client saw, with the server on the newest SDK and on the app's (run side by side)."""
    newest = newest_python()
    stubborn = tmp_path_factory.mktemp("newest") / "stubborn_tools.py"
    text = (ROOT / "tests" / "mcp" / "test_server.py").read_text(encoding="utf-8")
    stubborn.write_text(re.search(r'STUBBORN = """(.*?)"""', text, re.S).group(1), encoding="utf-8")
    runs = {server: subprocess.Popen([newest, str(ROOT / "tests" / "mcp" / "newest_client.py"), python, str(stubborn)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for server, python in (("newest", newest), ("app", sys.executable))}
    found = {}
    for server, run in runs.items():
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-3000:]
        found[server] = json.loads(out)
    return found


def test_it_is_really_the_newest_major_release(reports):
    assert int(reports["newest"]["mcp"].split(".")[0]) >= 2


@pytest.mark.parametrize("server", ["newest", "app"])
def test_the_official_client_lists_and_calls_the_course_server(reports, server):
    registry = load_registry(str(WEATHER))
    seen = reports[server]["session"]
    assert seen["server_info"] == {"name": "tool-workshop", "version": "1.0.0"}
    assert seen["listed"] == list(registry.tools) == reports[server]["client"]
    assert seen["ok"]["isError"] is False
    assert seen["ok"]["content"][0]["text"] == registry.call("get_weather", {"city": "北京"}).content
    assert seen["wrong"]["isError"] is True and seen["wrong"]["_meta"] == {"error_code": "invalid_arguments"}
    assert seen["unknown"] == {"code": -32602, "message": registry.call("get_wether", {}).content}


@pytest.mark.parametrize("server", ["newest", "app"])
def test_stdin_and_the_time_limit_hold_on_either_sdk(reports, server):
    seen = reports[server]["stubborn"]
    assert seen["ask"]["isError"] and "EOFError" in seen["ask"]["content"][0]["text"]
    assert seen["spin"]["isError"] and seen["spin"]["_meta"] == {"error_code": "timeout"}


def test_the_course_loop_runs_on_the_newest_sdk(reports):
    seen = reports["newest"]["loop"]
    assert seen["whole"][-1] == "final" and "北京今天晴" in seen["final"]
    answer = next(e for e in seen["wrong"] if e["type"] == "rpc" and e["method"] == "tools/call"
                  and e["direction"] == "receive")
    assert answer["kind"] == "error" and answer["error"]["code"] == -32602
    result = next(e for e in seen["wrong"] if e["type"] == "tool_result")
    assert result["error_code"] == "unknown_tool" and "没有名为" in result["content"]
    assert seen["wrong"][-1]["type"] == "final"
