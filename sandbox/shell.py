"""A real `bash -c` on a workspace folder, inside a jail: the app side.

    run(command, project_dir, tmp_dir, timeout) -> {"exit_code", "stdout", "stderr", "error",
                                                    "layers", "duration_ms"}
    status() -> {"mode": "sandboxed" | "unsandboxed" | "refused", "layers", "notice", "public"}

The app never forks a shell itself.  It starts sandbox/shell_launcher.py as a fresh
`python -I -B` (as an unprivileged user when the app is root, in a session of its own,
with a minimal environment), hands it one JSON request and reads one JSON result; the
launcher builds the jail, execs bash in it and watches it (see its docstring for the
layers).  The shell may write only in `project_dir` and `tmp_dir`, reads only the
read-only system (no /proc, no /root, no checkout, no venv), has no network, and every
process it started is gone when `run` returns.

On a public server a run is refused when a required layer is missing (Landlock, seccomp,
rlimits, and signal isolation: a PID namespace or Landlock ABI >= 6); on a loopback
address it runs with what holds and the notice says so plainly, like the tool sandbox.

Who may run a command now is decided by the sandbox's admission gate for "shell" jobs
(sandbox/admission.py, rules in Settings.shell): shared slots for the whole class, one
command at a time per session, a budget of wall-seconds per minute (a command's time
limit is cut to what is left of it), probation on idle CPU in a slot of its own after a
command hit its time or memory limit, and refusals answered after a growing pause.
"""
import atexit
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .admission import Refusal
from .cpu_share import WaitCredit, lower_priority
from .pool import _minimal_env, _worker_user

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_TIMEOUT = 30.0                      # the same ceiling as atomic_tools.MAX_TIMEOUT

LIMITS = {
    "processes": 48,                    # RLIMIT_NPROC (inside a user namespace: counted there)
    "memory_bytes": 256 << 20,          # RLIMIT_AS of each process, on top of what it has mapped
    "total_memory_bytes": 512 << 20,    # resident memory of all the shell's processes together
    "cpu_seconds": int(MAX_TIMEOUT) + 1,
    "file_bytes": 4 << 20,              # RLIMIT_FSIZE: one file
    "open_files": 128,
    "output_bytes": 64 << 10,           # each of stdout and stderr; past it the run is stopped
    "workspace_bytes": 8 << 20,         # the project and its temporary folder, watched while it runs
    "max_entries": 600,
}
REQUIRED = ("rlimits", "landlock", "seccomp", "isolated_signals")
# Every process of a command runs at nice 19, below a tool's worker (nice 10) and the server
# (nice 0): a student's loop in bash, even before it is demoted, takes little CPU from anyone.
NICE = 19
PROBATION_NICE = 19
USE_PID_NAMESPACE = True                # False: the subreaper fallback (tests run both)

_lock = threading.Lock()
_runtime = [None]
_probe = {}                             # layers seen by the first run (or the status probe)


def read_only_paths():
    """What the shell may read: the system's programs and libraries, Python's, time zones."""
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
             "/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives",
             "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"]
    paths += sorted(glob.glob("/etc/python3*"))  # Debian's sitecustomize lives there
    return [path for path in paths if os.path.exists(path)]


def _runtime_dir():
    """A copy of the launcher the unprivileged user can read, wherever the checkout lives."""
    with _lock:
        if _runtime[0] is None or not os.path.isdir(_runtime[0]):
            runtime = tempfile.mkdtemp(prefix="tool-workshop-shell-")
            for name in ("shell_launcher.py", "hardening.py", "cpu_share.py"):
                shutil.copyfile(os.path.join(HERE, name), os.path.join(runtime, name))
                os.chmod(os.path.join(runtime, name), 0o644)
            os.chmod(runtime, 0o755)
            _runtime[0] = runtime
        return _runtime[0]


@atexit.register
def _remove_runtime():
    if _runtime[0]:
        shutil.rmtree(_runtime[0], ignore_errors=True)


def sandbox_user():
    """(uid, gid) the shell runs as: `nobody` when the app is root, else the app's own."""
    return _worker_user() or (os.getuid(), os.getgid())


def _public():
    from . import serving_publicly   # the one rule for "public" lives with the tool sandbox
    return serving_publicly()


def _gate():
    from . import _sandbox           # the gate's settings are the sandbox's
    return _sandbox.shell_gate


def _environment(project_dir, tmp_dir):
    """All the shell gets: no key, no proxy, nothing of the app's environment."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": project_dir, "PWD": project_dir,
            "TMPDIR": tmp_dir, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
            "PYTHONDONTWRITEBYTECODE": "1"}


def _launch(command, project_dir, tmp_dir, timeout, required, idle=False, demote_after=None):
    request = {
        "command": command, "cwd": project_dir, "timeout": timeout,
        "nice": PROBATION_NICE if idle else NICE, "idle": idle, "demote_after": demote_after,
        "env": _environment(project_dir, tmp_dir), "limits": LIMITS, "required": list(required),
        "read_only": read_only_paths(), "writable": [project_dir, tmp_dir, "/dev/null"],
        "watch": [project_dir, tmp_dir], "pid_namespace": USE_PID_NAMESPACE,
    }
    runtime = _runtime_dir()
    kwargs = {}
    if os.geteuid() == 0:
        uid, gid = sandbox_user()
        kwargs.update(user=uid, group=gid, extra_groups=[])
    launcher = subprocess.Popen(
        [sys.executable, "-I", "-B", "-X", "utf8", os.path.join(runtime, "shell_launcher.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=runtime,
        env=_minimal_env(), process_group=0, close_fds=True, **kwargs)   # the server's session
    # Lowered from here at once, the launcher's start-up (an interpreter and its imports, about
    # half of what a short command costs) does not compete with the page.
    lower_priority(request["nice"], launcher.pid)
    try:
        out, err = _communicate(launcher, json.dumps(request).encode(), 2 * timeout + 10)
    except BaseException:
        # Its group, while it is still ours to kill (not yet reaped); the shell's process 1
        # dies with the launcher (parent-death signal), and the rest of its namespace with it.
        _kill_group(launcher.pid)
        launcher.communicate()
        raise
    for line in reversed(out.decode("utf-8", "replace").split("\n")):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and isinstance(message.get("result"), dict):
            return message["result"]
    raise RuntimeError(err.decode("utf-8", "replace").strip()[-500:] or f"退出码 {launcher.returncode}")


def _communicate(launcher, request, limit):
    """The launcher's answer. The launcher keeps the command's deadline itself (up to twice the
    time limit on a full machine, see cpu_share.WaitCredit); this `limit` only covers the launcher
    failing, and it too moves on while the launcher waits for a CPU (at nice 19 on a machine
    kept full at higher priorities, even its start-up may wait that long). Raises
    subprocess.TimeoutExpired past it."""
    credit = WaitCredit(most=limit, busy=float("inf"), existing=[launcher.pid])
    deadline = time.monotonic() + limit
    while True:
        try:
            return launcher.communicate(request, timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            deadline += credit.more([launcher.pid])
            if time.monotonic() >= deadline:
                raise
            request = None          # sent already: the retry only goes on reading


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _error(code, conclusion, hint=""):
    return {"code": code, "conclusion": conclusion, "hint": hint}


def _stopped_error(result, timeout, cut=""):
    stopped = result.get("stopped")
    if stopped == "timeout":
        return _error("timeout", f"命令运行超过 {timeout:g} 秒，已被终止（连同它启动的所有进程）{cut}",
                      "如果命令在等待输入，请改成不需要输入的写法；如果是死循环，请修好后再试")
    if stopped == "output":
        return _error("output_too_large", f"输出超过 {LIMITS['output_bytes'] >> 10} KB，命令已被停止",
                      "请用 head、tail 或 grep 只看需要的部分")
    if stopped == "memory":
        return _error("memory_limit",
                      f"命令的所有进程合计占用内存超过 {LIMITS['total_memory_bytes'] >> 20} MB，已被停止",
                      "请减少数据量或同时运行的进程")
    if stopped == "disk":
        return _error("workspace_full",
                      f"工作区超过 {LIMITS['workspace_bytes'] >> 20} MB 或 {LIMITS['max_entries']} 个文件，"
                      "命令已被停止", "请删掉不需要的大文件后再试")
    return None


def _time_limit(timeout, admission):
    """The command's time limit within its session's budget and probation -> (seconds, why it was cut)."""
    cut = ""
    if admission.on_probation and timeout > admission.budget.probation_wall_seconds:
        timeout = max(1.0, admission.budget.probation_wall_seconds)
        cut = (f"。你的 bash 命令最近超时或超出了内存上限，{admission.budget.probation_seconds:g} 秒内"
               f"每条命令最多运行 {timeout:g} 秒，并且只在 CPU 空闲时运行。{admission.probation_note}")
    if admission.seconds_left is not None and admission.seconds_left < timeout:
        timeout = max(1.0, round(admission.seconds_left, 1))
        cut = (f"。每分钟 bash 命令最多累计运行 "
               f"{admission.budget.probation_seconds_per_minute if admission.on_probation else admission.budget.seconds_per_minute:g}"
               f" 秒，这一分钟你只剩 {timeout:g} 秒")
    return timeout, cut


def _shortened(command):
    command = " ".join(str(command).split())
    return command if len(command) <= 40 else command[:37] + "…"


def run(command, project_dir, tmp_dir, timeout=10.0, session_id=None):
    """Runs `bash -c command` in the jail, with `project_dir` as the current folder; the
    time is charged to `session_id` (None: the server's own command, no budget)."""
    started = time.perf_counter()
    reply = {"exit_code": None, "stdout": "", "stderr": "", "error": None, "layers": {},
             "duration_ms": 0.0}
    try:
        timeout = min(max(float(timeout), 1.0), MAX_TIMEOUT)
    except (TypeError, ValueError):
        timeout = 10.0
    public = _public()
    if public and _probe and [name for name in REQUIRED if not _probe.get(name)]:
        return dict(reply, error=_error("sandbox_refused", describe(_probe, public)["notice"]))
    try:
        with _gate().admit(session_id, job=f"bash 命令 {_shortened(command)}") as admission:
            timeout, cut = _time_limit(timeout, admission)
            # When the jail moves a long command to idle CPU, its slot moves to the slow lane too.
            # Stopped and joined before the admission ends, so the slot is never released twice.
            demote = threading.Timer(admission.demote_after, admission.demote)
            demote.daemon = True
            demote.start()
            try:
                result = _launch(command, project_dir, tmp_dir, timeout, REQUIRED if public else (),
                                 idle=admission.on_probation, demote_after=admission.demote_after)
            except subprocess.TimeoutExpired:
                # It has had no more than its time limit of its own: that is what it is charged.
                admission.note_own_time(timeout)
                return dict(reply, error=_error(
                    "busy", f"服务器太忙：命令排队等 CPU 太久，没能在时限（{timeout:g} 秒）内运行完，已被终止",
                    "这不是命令的问题，请过一会儿再试"))
            except (OSError, RuntimeError, ValueError) as exc:
                return dict(reply, error=_error("sandbox", f"无法启动命令的沙箱：{exc}", "请稍后再试"))
            finally:
                demote.cancel()
                demote.join()
            admission.note_own_time(result.get("own_seconds"))
            if result.get("stopped") in ("timeout", "memory"):
                admission.note_limit_hit()
    except Refusal as refusal:
        return dict(reply, error=_error(refusal.code, refusal.message))
    layers = result.get("layers") or {}
    if layers:
        _probe.clear()
        _probe.update(layers)
    reply.update(exit_code=result.get("exit_code"), stdout=result.get("stdout", ""),
                 stderr=result.get("stderr", ""), layers=layers,
                 duration_ms=round((time.perf_counter() - started) * 1000, 1))
    if result.get("missing"):
        reply.update(exit_code=None, stdout="", stderr="",
                     error=_error("sandbox_refused", describe(layers, public)["notice"]))
    else:
        reply["error"] = _stopped_error(result, timeout, cut)
        if reply["error"] and admission.on_probation and reply["error"]["code"] in ("timeout", "memory_limit"):
            reply["error"]["code"] = "probation"      # probation's shorter limit: the sandbox's doing, said so
    return reply


def status():
    """Which layers hold for the shell on this machine (one probe run of `true`, remembered)."""
    if not _probe:
        probe_dir = tempfile.mkdtemp(prefix="tool-workshop-shell-probe-")
        try:
            os.chmod(probe_dir, 0o777)
            with _gate().admit(None):
                result = _launch("true", probe_dir, probe_dir, 5.0, ())
            _probe.update(result.get("layers") or {})
        except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired, Refusal) as exc:
            return {"mode": "refused", "layers": {}, "public": _public(),
                    "notice": f"无法启动运行命令的沙箱，暂时不能运行 bash（{exc}）。",
                    "notice_en": f"The sandbox that runs commands could not start: bash cannot run for now ({exc})."}
        finally:
            shutil.rmtree(probe_dir, ignore_errors=True)
    return describe(dict(_probe), _public())


def describe(layers, public):
    """The mode and a notice for the layers a run reported: "notice" in Chinese, "notice_en" the same
    in English (an English page, i18n)."""
    found = []   # (Chinese, English)
    if layers.get("landlock"):
        found.append((f"Landlock 只允许写工作区、禁止 TCP（ABI {layers['landlock']}）",
                      f"Landlock allows writing the workspace only, and no TCP (ABI {layers['landlock']})"))
    if layers.get("seccomp"):
        found.append(("seccomp 禁止网络套接字、ptrace、挂载与新命名空间",
                      "seccomp forbids network sockets, ptrace, mounts and new namespaces"))
    if layers.get("cleanup") == "pid_namespace":
        found.append(("独立的 PID 命名空间（命令结束时其中所有进程一起结束）",
                      "a PID namespace of its own (when the command ends, every process in it ends)"))
    elif layers.get("cleanup") == "subreaper":
        found.append(("子进程收割（命令结束时杀掉它留下的所有进程）",
                      "a subreaper (when the command ends, every process it left is killed)"))
    if layers.get("rlimits"):
        found.append(("进程数、内存、CPU、文件大小与输出上限", "limits on processes, memory, CPU, file size and output"))
    if layers.get("uid") not in (None, 0) and os.geteuid() == 0:
        found.append(("以无特权用户运行", "an unprivileged user"))
    parts, parts_en = [zh for zh, _ in found], [en for _, en in found]
    missing = [name for name in REQUIRED if not layers.get(name)]
    names = {"rlimits": ("资源上限", "resource limits"), "landlock": ("Landlock 文件隔离", "Landlock file isolation"),
             "seccomp": ("seccomp 系统调用过滤", "seccomp system-call filtering"),
             "isolated_signals": ("信号隔离（PID 命名空间或 Landlock ABI 6）",
                                  "signal isolation (a PID namespace or Landlock ABI 6)")}
    if not missing:
        return {"mode": "sandboxed", "layers": layers, "public": public,
                "notice": "bash 命令在隔离的进程里运行：" + "、".join(parts) + "。",
                "notice_en": "bash commands run in isolated processes: " + ", ".join(parts_en) + "."}
    lacking = "、".join(names.get(name, (name, name))[0] for name in missing)
    lacking_en = ", ".join(names.get(name, (name, name))[1] for name in missing)
    if public:
        return {"mode": "refused", "layers": layers, "public": public,
                "notice": (f"这台服务器缺少 {lacking}。应用正在公开提供服务，为安全起见不运行 bash 命令；"
                           "读、写、编辑文件仍然可用。请在自己的电脑上运行本应用来体验 bash。"),
                "notice_en": (f"This server lacks {lacking_en}. The app is served publicly, so for safety bash "
                              "commands do not run; reading, writing and editing files still work. Run the app on "
                              "your own computer to try bash.")}
    return {"mode": "unsandboxed", "layers": layers, "public": public,
            "notice": (f"注意：本机缺少 {lacking}，bash 命令的隔离不完整"
                       f"（现有：{'、'.join(parts) or '无'}）。只适合在自己的电脑上运行自己信任的命令。"),
            "notice_en": (f"Note: this machine lacks {lacking_en}, so bash commands are not fully isolated (in place: "
                          f"{', '.join(parts_en) or 'none'}). Only for commands you trust, on your own computer.")}
