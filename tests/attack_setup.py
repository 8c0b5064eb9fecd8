"""What the containment tests plant before they attack (tests/sandbox/test_attacks.py,
tests/sandbox/test_mcp_containment.py, tests/workspace/test_containment.py): a key sealed as the
app seals it, a .env file that holds it, a listening socket, a sibling process that holds it in
its environment, and fingerprints of what must not change."""
from __future__ import annotations

import hashlib
import os
import resource
import secrets
import socket
import subprocess
import sys
import time

import sandbox

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = (resource.RLIMIT_NOFILE, resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NPROC)


def digest(path) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def plant_secret(name: str, prefix: str = "sk-canary-") -> str:
    """A fresh key in this process's environment under `name`, sealed from the workers."""
    secret = prefix + secrets.token_hex(12)
    os.environ[name] = secret
    assert sandbox.seal_secrets([name]) == {name: secret}
    return secret


def env_file(place, secret: str, mode: int = 0o600):
    """A .env file in `place` that holds `secret`."""
    path = place / ".env"
    path.write_text(f"OPENAI_API_KEY={secret}\n")
    path.chmod(mode)
    return path


def tcp_listener() -> socket.socket:
    """A TCP socket on loopback that accepts (non-blocking): a connection is a leak."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    return listener


def sibling_holding(name: str, secret: str, seconds: int = 300) -> subprocess.Popen:
    """A process beside the app whose environment holds `secret`, once it can be read there.
    Popen returns once exec has closed the child's descriptors, a moment before the kernel has
    set up the new program's environment block: until then the file reads empty (or, while the
    child is still the non-dumpable copy of this sealed process, is refused)."""
    sibling = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"],
                               env={name: secret, "PATH": "/usr/bin:/bin"})
    deadline = time.monotonic() + 10
    while True:
        try:
            with open(f"/proc/{sibling.pid}/environ", "rb") as handle:
                planted = handle.read()
        except PermissionError:
            planted = b""
        if planted or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert secret.encode() in planted        # the attacks are real: this process itself can read it
    return sibling


def process_limits() -> dict:
    return {kind: resource.getrlimit(kind) for kind in LIMITS}
