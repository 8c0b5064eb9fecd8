"""Containment of the workspace's bash, run the way the app runs it, as an unprivileged user.

The test process plays the app: it holds a sealed key, is non-dumpable, has a sibling that
holds the key in its environment, a `.env` file, TCP, UDP and Unix listeners, and files it
guards.  Every command below is hostile; each case asserts that nothing leaked (the key
never shows up in any output), nothing outside the workspace changed, nothing reached a
listener, and no process the command started is left once the call has returned.
Run by scripts/test.sh as `nobody` (root skips RLIMIT_NPROC and file permissions).
"""
import json
import os
import secrets
import signal
import socket
import subprocess

import pytest

import atomic_tools
import workspace
from tests.attack_setup import REPO, digest, env_file, plant_secret, sibling_holding

pytestmark = pytest.mark.unprivileged

CANARY_NAME = "WORKSHOP_SHELL_CANARY"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    secret = plant_secret(CANARY_NAME)
    place = tmp_path_factory.mktemp("outside")
    place.chmod(0o777)                       # writable by anyone: only the sandbox can stop a write
    env = env_file(place, secret, 0o644)     # readable by anyone: only the sandbox can stop a read
    sibling = sibling_holding(CANARY_NAME, secret, 600)
    try:
        yield from _world(secret, place, env, sibling)
    finally:
        sibling.kill()
        sibling.wait()


def _world(secret, place, env_file, sibling):
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    tcp.setblocking(False)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    unix_path = str(place / "app.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(unix_path)
    os.chmod(unix_path, 0o777)
    unix.listen(8)
    unix.setblocking(False)
    guarded = [os.path.join(REPO, "app.py"), os.path.join(REPO, "code", "atomic_tools.py"), str(env_file)]
    sentinels = ["root:x:0:0:"]              # /etc/passwd: readable by anyone outside the sandbox
    for path in (os.path.join(REPO, "app.py"), os.path.join(REPO, "code", "atomic_tools.py")):
        with open(path, encoding="utf-8") as handle:
            sentinels.append(handle.readline().strip())
    state = {"secret": secret, "sentinels": sentinels, "env_file": str(env_file), "place": place, "marker": str(place / "pwned"),
             "sibling": sibling, "tcp": tcp, "udp": udp, "unix": unix, "unix_path": unix_path,
             "guarded": {path: digest(path) for path in guarded}}
    yield state
    for listener in (tcp, udp, unix):
        listener.close()


def _fill(text, world):
    return (text.replace("APP_PID", str(os.getpid()))
                .replace("SIBLING_PID", str(world["sibling"].pid))
                .replace("ENV_FILE", world["env_file"])
                .replace("MARKER", world["marker"])
                .replace("TCP_PORT", str(world["tcp"].getsockname()[1]))
                .replace("UDP_PORT", str(world["udp"].getsockname()[1]))
                .replace("UNIX_PATH", world["unix_path"])
                .replace("REPO", REPO))


def _assert_contained(result, world):
    text = json.dumps(result, ensure_ascii=False)
    assert world["secret"] not in text, "the key leaked"
    assert "OPENAI_API_KEY" not in text, "the .env file was read"
    for sentinel in world["sentinels"]:
        assert json.dumps(sentinel, ensure_ascii=False)[1:-1] not in text, f"read a file outside: {sentinel}"
    assert not os.path.exists(world["marker"]), "a file outside the workspace was written"
    for path, fingerprint in world["guarded"].items():
        assert digest(path) == fingerprint, f"{path} changed"
    assert world["sibling"].poll() is None, "the sibling was killed"
    with pytest.raises(BlockingIOError):
        world["tcp"].accept()
    with pytest.raises(BlockingIOError):
        world["udp"].recvfrom(64)
    with pytest.raises(BlockingIOError):
        world["unix"].accept()


@pytest.fixture(scope="module", autouse=True)
def layers_hold():
    state = workspace.shell_status()
    assert state["mode"] == "sandboxed", state["notice"]


ATTACKS = [
    ("environment", "env; cat /proc/self/environ; echo; cat /proc/$PPID/environ"),
    ("app-environ", "cat /proc/APP_PID/environ; tr '\\0' '\\n' < /proc/APP_PID/environ"),
    ("app-mem", "head -c 100000 /proc/APP_PID/mem | strings"),
    ("sibling-environ", "cat /proc/SIBLING_PID/environ"),
    ("python-proc", "python3 -c \"print(open('/proc/APP_PID/environ', 'rb').read())\""),
    ("dotenv", "cat ENV_FILE; python3 -c \"print(open('ENV_FILE').read())\""),
    ("checkout", "cat REPO/app.py REPO/code/atomic_tools.py; ls REPO"),
    ("root-home", "ls -la /root; cat /root/.bashrc /root/.profile"),
    ("other-files", "cat /etc/passwd /etc/shadow /etc/hostname; ls /tmp /home /var /opt /proc"),
    ("other-sessions", "ls ..; ls ../..; cat ../../*/project/notes.md"),
    ("write-outside", "touch MARKER; echo x > MARKER; cp notes.md MARKER; ln -s notes.md MARKER"),
    ("change-checkout", "echo '# pwned' >> REPO/app.py; rm -f REPO/app.py; mv REPO/app.py REPO/app.bak"),
    ("hardlink-out", "ln ENV_FILE twin.txt; cat twin.txt"),
    ("dev-tcp", "exec 3<>/dev/tcp/127.0.0.1/TCP_PORT && echo connected >&3"),
    ("dev-udp", "echo hello > /dev/udp/127.0.0.1/UDP_PORT"),
    ("python-tcp", "python3 -c \"import socket; socket.create_connection(('127.0.0.1', TCP_PORT)); print('connected')\""),
    ("python-udp", "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', UDP_PORT))\""),
    ("python-unix", "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('UNIX_PATH'); print('connected')\""),
    ("python-ipv6", "python3 -c \"import socket; socket.create_connection(('::1', TCP_PORT))\""),
    ("signal-app", "kill -9 APP_PID; kill -9 SIBLING_PID; kill -9 -1; python3 -c 'import os; os.kill(APP_PID, 9)'"),
    ("ptrace", "python3 -c \"import ctypes; print(ctypes.CDLL(None).ptrace(16, APP_PID, 0, 0))\"; "
               "gdb -p APP_PID -batch -ex 'info registers' 2>&1 | head -3"),
    ("namespaces", "unshare -r id; unshare -U -m true; python3 -c \"import os; os.unshare(os.CLONE_NEWUSER)\""),
    ("relimit-app", "prlimit --pid APP_PID --nofile=3:3; python3 -c \"import resource; resource.prlimit(APP_PID, resource.RLIMIT_NOFILE, (3, 3))\""),
]


@pytest.mark.parametrize("command", [attack[1] for attack in ATTACKS], ids=[attack[0] for attack in ATTACKS])
def test_attack_is_contained(world, session, command):
    result = workspace.run_workspace_tool(session, "bash", {"command": _fill(command, world), "timeout": 10})
    # It ran (a command that failed, exit_status, ran too), and failed to do harm.
    assert result["error_code"] in (None, "timeout", "exit_status"), result["content"]
    _assert_contained(result, world)
    assert os.getpid() in [int(pid) for pid in os.listdir("/proc") if pid.isdigit()]


def test_another_sessions_files_are_out_of_reach(world, session):
    other = session + "-neighbour"
    try:
        workspace.import_files(other, {"diary.txt": world["secret"]})
        result = workspace.run_workspace_tool(session, "bash", {"command": (
            "ls ../..; cat ../../*/project/diary.txt; find / -name diary.txt 2>/dev/null; "
            "python3 -c \"import glob; print([open(p).read() for p in glob.glob('/tmp/*/*/project/diary.txt')])\"")})
        assert "Permission denied" in result["content"]
        _assert_contained(result, world)
    finally:
        workspace.forget(other)


def test_limits_of_the_app_are_untouched(world, session):
    import resource
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    workspace.run_workspace_tool(session, "bash", {"command": _fill(ATTACKS[-1][1], world)})
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before


def test_links_made_by_bash_do_not_lead_the_file_tools_out(world, session):
    made = workspace.run_workspace_tool(session, "bash", {"command": _fill(
        "ln -s ENV_FILE leak.txt; ln -s / rootfs; ln -s .. up; ln -s /proc/APP_PID/environ env.txt", world)})
    assert made["content"].startswith("退出码：0")      # making links is allowed; following them out is not
    for path in ("leak.txt", "rootfs/etc/passwd", "up/tmp/x", "env.txt"):
        outcome = workspace.run_workspace_tool(session, "read", {"path": path})
        assert outcome["error_code"] == "path_outside", outcome["content"]
        assert "符号链接" in outcome["content"]
        _assert_contained(outcome, world)
    written = workspace.run_workspace_tool(session, "write", {"path": "rootfs/" + world["marker"].lstrip("/"),
                                                              "content": "pwned"})
    assert written["error_code"] == "path_outside"
    edited = workspace.run_workspace_tool(session, "edit", {"path": "leak.txt", "old": "OPENAI", "new": "X"})
    assert edited["error_code"] == "path_outside"
    _assert_contained(edited, world)
    with pytest.raises(workspace.WorkspaceError):
        workspace.read_file(session, "leak.txt")
    exported = workspace.export_zip(session) + json.dumps(workspace.export_files(session)).encode()
    assert world["secret"].encode() not in exported


def test_read_tool_paths_that_leave(world, session):
    for path in (world["env_file"], "../" * 8 + world["env_file"].lstrip("/"), "src/../../x"):
        outcome = workspace.run_workspace_tool(session, "read", {"path": path})
        assert outcome["error_code"] == "path_outside"
        _assert_contained(outcome, world)


def test_network_layers_refuse_rather_than_time_out(world, session):
    result = workspace.run_workspace_tool(session, "bash", {"command": _fill(
        "exec 3<>/dev/tcp/127.0.0.1/TCP_PORT; echo status=$?", world)})
    assert "Operation not permitted" in result["content"] or "Permission denied" in result["content"]
    _assert_contained(result, world)


# ---------------------------------------------------------------- processes left behind
# Twice: with the PID namespace, and with the subreaper that replaces it where a container
# forbids user namespaces.

@pytest.fixture(params=["pid_namespace", "subreaper"])
def cleanup(request, monkeypatch):
    from sandbox import shell

    monkeypatch.setattr(shell, "USE_PID_NAMESPACE", request.param == "pid_namespace")
    return request.param


def _token():
    return str(secrets.randbelow(10 ** 8) + 10 ** 8)


@pytest.mark.parametrize("template", [
    "sleep 300.TOKEN &",
    "nohup sleep 300.TOKEN > /dev/null 2>&1 &",
    "setsid sleep 300.TOKEN &",
    "setsid -f sleep 300.TOKEN",
    "(trap '' HUP TERM; exec sleep 300.TOKEN) & disown",
    "bash -c 'sleep 300.TOKEN & sleep 300.TOKEN' &",
], ids=["background", "nohup", "setsid", "setsid-fork", "trap-disown", "nested"])
def test_background_processes_end_with_the_call(ws, world, session, template, cleanup):
    token = _token()
    result = ws.bash(session, template.replace("TOKEN", token) + "\necho launched")
    assert result["error_code"] is None and "launched" in result["content"]   # bash did not wait for them
    assert result["layers"]["cleanup"] == cleanup
    ws.assert_none_left(token)
    _assert_contained(result, world)


DAEMON = """
import os, sys, time
if os.fork():
    sys.exit(0)
try:
    os.setsid()     # refused in the jail (see test_shell_fairness); detached all the same
except PermissionError:
    pass
if os.fork():
    sys.exit(0)
for fd in (0, 1, 2):
    os.close(fd)
open('daemon-alive', 'w').write(str(os.getpid()))
time.sleep(300)  # TOKEN
"""


def test_a_double_forking_daemon_is_gone(ws, world, session, cleanup):
    token = _token()
    script = DAEMON.replace("TOKEN", token)
    workspace.run_workspace_tool(session, "write", {"path": "daemon.py", "content": script})
    result = ws.bash(session, f"python3 daemon.py {token}; until [ -e daemon-alive ]; do sleep 0.05; done; echo seen")
    assert result["error_code"] is None and "seen" in result["content"]   # it really ran, detached
    ws.assert_none_left(token)


def test_the_leftover_check_can_see_a_leftover(ws, tmp_path):
    """The same daemon under the unconfined course version of bash survives: the check is real."""
    token = _token()
    (tmp_path / "daemon.py").write_text(DAEMON.replace("TOKEN", token))
    result = atomic_tools.run_locally(f"python3 daemon.py {token}; until [ -e daemon-alive ]; do sleep 0.05; done",
                                      str(tmp_path), 10)
    assert result["error"] is None
    try:
        assert ws.processes_with(token) != []
    finally:
        for pid in ws.processes_with(token):
            os.kill(pid, signal.SIGKILL)


def test_a_timeout_kills_everything(ws, world, session, cleanup):
    token = _token()
    result = ws.bash(session, f"setsid sleep 300.{token} & sleep 300.{token}", timeout=1)
    assert result["error_code"] == "timeout" and "1 秒" in result["content"]
    ws.assert_none_left(token)


# ---------------------------------------------------------------- resources

def test_fork_bomb(ws, world, session, cleanup):
    token = _token()
    result = ws.bash(session, f": {token}; bomb() {{ bomb | bomb & }}; bomb", timeout=3)
    assert result["error_code"] in (None, "timeout", "exit_status")
    ws.assert_none_left(token)
    assert subprocess.run(["true"]).returncode == 0     # the app can still start processes
    _assert_contained(result, world)


def test_python_fork_bomb(ws, world, session, cleanup):
    token = _token()
    result = ws.bash(session, f"python3 -c 'import os  # {token}\nwhile True:\n    os.fork()'", timeout=3)
    assert result["error_code"] in (None, "timeout", "exit_status")
    ws.assert_none_left(token)


def test_memory_of_one_process(ws, session):
    result = ws.bash(session, "python3 -c 'x = bytearray(3 * 1024 ** 3)'")
    assert result["error_code"] == "exit_status" and "MemoryError" in result["content"]   # ran, and failed


def test_memory_of_many_processes_together(ws, session):
    token = _token()
    result = ws.bash(session, f"for i in 1 2 3 4 5 6; do python3 -c 'import time; x = bytearray(200 * 1024 ** 2); "
                              f"x[::4096] = b\"y\" * len(x[::4096]); time.sleep(30)  # {token}' & done; wait",
                     timeout=20)
    assert result["error_code"] == "memory_limit", result["content"]
    ws.assert_none_left(token)


def test_cpu_loop(ws, session):
    result = ws.bash(session, "while :; do :; done", timeout=1)
    assert result["error_code"] == "timeout"


@pytest.mark.parametrize("command", ["yes", "yes >&2", "cat /dev/urandom", "python3 -c 'while True: print(\"x\" * 1000)'"])
def test_output_floods_are_stopped(ws, session, command):
    result = ws.bash(session, command)
    assert result["error_code"] == "output_too_large" and "KB" in result["content"]
    assert len(result["content"]) < 4500


def test_one_huge_file(ws, session):
    result = ws.bash(session, "dd if=/dev/zero of=big.bin bs=1M count=100; ls -l big.bin")
    assert "File too large" in result["content"] or result["error_code"] == "workspace_full"
    assert all(entry["size"] <= atomic_tools.MAX_FILE_BYTES * 4 for entry in workspace.tree(session))


def test_filling_the_disk_is_stopped_and_undone(ws, session):
    before = workspace.snapshot(session)
    result = ws.bash(session, "i=0; while :; do head -c 1000000 /dev/zero > f$i; i=$((i+1)); done", timeout=20)
    assert result["error_code"] == "workspace_full"
    assert workspace.snapshot(session) == before


def test_many_tiny_files_are_stopped_and_undone(ws, session):
    before = workspace.snapshot(session)
    result = ws.bash(session, "i=0; while :; do : > f$i; i=$((i+1)); done", timeout=20)
    assert result["error_code"] == "workspace_full"
    assert workspace.snapshot(session) == before


# ---------------------------------------------------------------- a missing layer on a public server

def test_a_public_server_refuses_when_a_layer_is_missing(world, session, monkeypatch):
    from sandbox import shell

    monkeypatch.setattr(shell, "REQUIRED", shell.REQUIRED + ("layer_this_kernel_lacks",))
    monkeypatch.setattr(shell, "_public", lambda: True)
    monkeypatch.setattr(shell, "_probe", {})
    result = workspace.run_workspace_tool(session, "bash", {"command": "touch ran.txt"})
    assert result["error_code"] == "sandbox_refused" and "不运行 bash" in result["content"]
    assert "ran.txt" not in [entry["path"] for entry in workspace.tree(session)]   # the jail refused before exec
    assert workspace.run_workspace_tool(session, "read", {"path": "notes.md"})["ok"]  # the file tools still work


def test_chmod_cannot_lock_the_app_out(ws, session):
    step = ws.bash(session, "mkdir locked && echo x > locked/f && chmod 000 locked/f locked notes.md && chmod 500 .")
    assert step["error_code"] is None and step["changed"]["added"] == ["locked/f"]
    assert workspace.run_workspace_tool(session, "read", {"path": "notes.md"})["ok"]
    assert workspace.run_workspace_tool(session, "write", {"path": "after.txt", "content": "ok"})["ok"]
    workspace.reset(session)
    assert "locked/" not in [entry["path"] for entry in workspace.tree(session)]
    home = workspace.store.get(session).home
    workspace.forget(session)
    assert not os.path.exists(home)


def test_signals_cannot_reach_the_app_in_either_mode(world, session, cleanup):
    command = _fill("kill -9 APP_PID; kill -9 SIBLING_PID; kill -STOP APP_PID; python3 -c \""
                    "import os, signal\nfor pid in (APP_PID, SIBLING_PID):\n"
                    "    try:\n        os.pidfd_send_signal(os.pidfd_open(pid), signal.SIGKILL)\n"
                    "    except OSError as exc:\n        print(exc)\"; kill -9 -1; echo done", world)
    result = workspace.run_workspace_tool(session, "bash", {"command": command})
    assert result["layers"]["cleanup"] == cleanup and result["error_code"] is None
    _assert_contained(result, world)
