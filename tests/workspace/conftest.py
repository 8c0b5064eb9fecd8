"""Shared helpers for the workspace tests: fresh sessions, and finding processes by a token."""
import os
import secrets
import time

import pytest

import workspace


@pytest.fixture
def session():
    """A fresh session id whose workspace is forgotten after the test."""
    session_id = "test-" + secrets.token_hex(8)
    yield session_id
    workspace.forget(session_id)


def processes_with(token):
    """Pids of live (non-zombie) processes whose command line contains `token`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def assert_none_left(token, within=3.0):
    """Nothing started with `token` may survive (bounded wait for the kernel to finish killing)."""
    deadline = time.monotonic() + within
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processes_with(token) == [], f"processes with {token} are still running"


def bash(session_id, command, timeout=10):
    return workspace.run_workspace_tool(session_id, "bash", {"command": command, "timeout": timeout})


class _Helpers:
    bash = staticmethod(bash)
    processes_with = staticmethod(processes_with)
    assert_none_left = staticmethod(assert_none_left)


@pytest.fixture(scope="session")
def ws():
    """bash(session, command, timeout), processes_with(token), assert_none_left(token)."""
    return _Helpers
