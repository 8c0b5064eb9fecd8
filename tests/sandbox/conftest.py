"""Shared helpers for the sandbox tests: tool sources, process checks, the layer summary."""
import os
import textwrap
import time

import pytest

import sandbox


def tool_source(body, signature="()", header=""):
    """A whole editor module with one tool named `attack` whose body is `body`."""
    return (f"{textwrap.dedent(header)}\nfrom tool_registry import ToolRegistry\n\n"
            f"registry = ToolRegistry()\n\n\n@registry.tool(\"测试用工具\")\n"
            f"def attack{signature}:\n{textwrap.indent(textwrap.dedent(body).strip(), '    ')}\n")


def group_members(pgid):
    """Pids of processes whose process group is `pgid` (read from /proc/<pid>/stat)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    return members


def assert_group_gone(pgid, within=3.0):
    """Nothing of the worker's process group may survive the job (bounded wait for the kernel)."""
    deadline = time.monotonic() + within
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert group_members(pgid) == [], f"worker group {pgid} still has processes"


@pytest.fixture(autouse=True)
def probation_as_on_a_public_server():
    """These tests run on loopback, where probation is off (Settings.probation_applies: a local run has no
    class to protect); they test probation as a public server has it."""
    before = sandbox.current_settings()
    sandbox.configure(probation=True)
    yield
    sandbox.configure(before)


@pytest.fixture(scope="session")
def sandbox_status():
    return sandbox.status()


def pytest_terminal_summary(terminalreporter):
    state = sandbox.status()
    layers = state["layers"]
    if not layers:
        return
    missing = [name for name in ("seccomp", "landlock", "rlimits", "non_dumpable") if not layers.get(name)]
    line = (f"sandbox mode={state['mode']} seccomp={layers.get('seccomp')} landlock_abi={layers.get('landlock')} "
            f"rlimits={layers.get('rlimits')} non_dumpable={layers.get('non_dumpable')} "
            f"worker_uid={layers.get('uid')} test_uid={os.getuid()}")
    terminalreporter.section("sandbox layers")
    terminalreporter.write_line(line)
    if missing:
        terminalreporter.write_line("WARNING: sandbox layers missing on this machine: " + ", ".join(missing)
                                    + " (containment tests relying on them fail)", red=True, bold=True)


@pytest.fixture
def configured():
    """`sandbox.configure` for one test: the settings in force before it come back afterwards."""
    before = sandbox.current_settings()
    yield sandbox.configure
    sandbox.configure(before)


# The naive generator is registered by the app (app.launch); tests that use it register it the same way.
NAIVE_METHOD = {"naive": "naive_schema:naive_function_schema"}


class _Helpers:
    tool_source = staticmethod(tool_source)
    group_members = staticmethod(group_members)
    assert_group_gone = staticmethod(assert_group_gone)
    naive_method = NAIVE_METHOD


@pytest.fixture(scope="session")
def helpers():
    return _Helpers
