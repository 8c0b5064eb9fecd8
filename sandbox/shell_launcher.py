"""The supervisor of one `bash -c` run: a jail for the shell, and a watch over it until it ends.

Started by sandbox/shell.py as `python -I -B -X utf8 shell_launcher.py` from a private
runtime directory (next to copies of hardening.py and cpu_share.py), already as the
unprivileged user and in a session of its own, with a minimal environment.  It reads one JSON request on stdin
and writes JSON lines on stdout: `{"started": pid}` once the shell exists, then one
result.  It never runs the student's command itself:

1. It moves into a new user and PID namespace (when the kernel allows it without
   privilege): the shell becomes process 1 of its own PID namespace, and when process 1
   ends the kernel kills every process left in it, daemons and `setsid` children included.
   Without namespaces it becomes a child subreaper instead: orphans of the shell are
   re-parented to it, and it kills and reaps them until none is left.
2. It forks the shell's process, which applies rlimits (processes, memory, CPU, file
   size, open files), Landlock (read-only system, read-write workspace, no TCP, signals
   and abstract sockets scoped) and seccomp (no sockets but socketpair, no ptrace, no
   namespaces, no mounts...), reports the layers through a pipe, and execs /bin/bash.
3. It watches: the deadline, the output (a cap per stream), the memory of all the shell's
   processes together, and the size and file count of the workspace.  Any breach stops the
   whole run.  The deadline, the demotion to SCHED_IDLE and the duty cycle of a demoted
   command are cpu_share.CpuShare's, the same rules as for a tool (see cpu_share.py); the
   command's processes are held (SIGSTOP / SIGCONT) between their turns.  Everything runs at
   nice 19, in the web server's session (see cpu_share.lower_priority).  The shell may not
   start a session of its own (`setsid`): under autogroup scheduling that would be a
   scheduling group of its own, the server's equal whatever its nice value.
"""
import ctypes
import errno
import json
import os
import select
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cpu_share  # noqa: E402
import hardening  # noqa: E402

CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
TIOCSTI = 0x5412
AF_UNIX = 1
CHECK_SECONDS = cpu_share.DUTY_TICK_SECONDS   # memory, disk and new processes: checked this often

_libc = ctypes.CDLL(None, use_errno=True)

# System calls a shell and Python never need here, refused with EPERM.
DENIED = (
    "socket", "connect", "bind", "listen", "accept", "accept4",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "mount_setattr", "unshare", "setns", "setsid",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "open_by_handle_at", "name_to_handle_at", "fanotify_init", "syslog", "acct",
    "mknod", "mknodat", "swapon", "swapoff", "reboot", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "iopl", "ioperm", "quotactl",
    "move_pages", "migrate_pages", "personality", "vhangup",
)


def _seccomp_filter():
    sc = hardening.pyseccomp
    deny = sc.ERRNO(errno.EPERM)
    f, rule = hardening.deny_list_filter(DENIED)
    rule(deny, "socketpair", sc.Arg(0, sc.NE, AF_UNIX))          # pipes between processes only
    rule(deny, "sendto", sc.Arg(4, sc.NE, 0))                    # no destination address
    for flag in CLONE_NEW_FLAGS:
        rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))  # no new namespace of any kind
    rule(sc.ERRNO(errno.ENOSYS), "clone3")                         # hides its flags: the C library falls back to clone
    rule(deny, "prlimit64", sc.Arg(0, sc.NE, 0))                  # limits: only one's own
    rule(deny, "prctl", sc.Arg(0, sc.EQ, PR_SET_PDEATHSIG))       # keep dying with the supervisor
    rule(deny, "ioctl", sc.Arg(1, sc.EQ, TIOCSTI))                # no typing into a terminal
    return f


# ------------------------------------------------------------------ the jail (runs in the forked child)

def _write_line(fd, value):
    data = (json.dumps(value) + "\n").encode()   # ASCII: no U+2028 or NEL can split the line
    while data:
        data = data[os.write(fd, data):]


def jail(request, out_w, err_w, report_w, supervisor_pid):
    """Hardens this process and execs bash. Never returns."""
    try:
        layers = {"uid": os.getuid()}
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != supervisor_pid and request["namespace"] == "subreaper":
            os._exit(124)  # the supervisor died before we could watch it
        for sig in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        # The launcher's nice value (set in main) is inherited.
        if request.get("idle"):   # a session on probation: its shell runs only when a CPU is idle
            try:
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            except OSError:
                pass
        limits = request["limits"]
        try:
            import resource
            hardening.apply_rlimits(limits["cpu_seconds"], limits["memory_bytes"],
                                    limits["file_bytes"], limits["open_files"])
            resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
            layers["rlimits"] = True
        except (OSError, ValueError) as exc:
            layers["rlimits"] = False
            layers["rlimits_error"] = repr(exc)
        try:
            layers["landlock"] = hardening.apply_landlock(request["read_only"], request["writable"])
        except OSError as exc:
            layers["landlock"] = 0
            layers["landlock_error"] = repr(exc)
        layers["isolated_signals"] = request["namespace"] == "pid_namespace" or layers["landlock"] >= 6
        try:
            if hardening.pyseccomp is None:
                raise OSError(errno.ENOSYS, hardening._seccomp_error or "pyseccomp not loaded")
            _seccomp_filter().load()
            layers["seccomp"] = True
        except Exception as exc:  # libseccomp missing, or the kernel refuses filters
            layers["seccomp"] = False
            layers["seccomp_error"] = f"{type(exc).__name__}: {exc}"
        missing = [name for name in request["required"] if not layers.get(name)]
        _write_line(report_w, {"layers": layers, "missing": missing})
        if missing:
            os._exit(125)
        os.chdir(request["cwd"])
        os.closerange(3, 1 << 16)   # report_w is close-on-exec anyway; nothing else may leak in
        os.execve("/bin/bash", ["bash", "-c", request["command"]], request["env"])
    except BaseException as exc:
        try:
            os.write(2, f"沙箱启动失败：{exc!r}\n".encode())
        except OSError:
            pass
    os._exit(126)


# ------------------------------------------------------------------ namespaces

def _unshare_namespaces():
    """True when this process is now in a new user + PID namespace, mapped to its own uid."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return False
    # Our /proc files belong to root while we are not dumpable (we changed uid): writing the
    # maps needs them to be ours for a moment.
    hardening.prctl(hardening.PR_SET_DUMPABLE, 1)
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)     # the same uid inside: no root, and no capability after exec
    finally:
        hardening.set_non_dumpable()
    return True


def enter_namespaces(wanted=True):
    """A new user + PID namespace, whose process 1 will be the next fork: "pid_namespace".
    Tried first in a throw-away child, because a half-made namespace cannot be left again;
    when the kernel (or a container's filter) refuses it, or it is not `wanted`: "subreaper"."""
    if not wanted:
        hardening.prctl(PR_SET_CHILD_SUBREAPER, 1)
        return "subreaper"
    trial = os.fork()
    if trial == 0:
        os._exit(0 if _unshare_namespaces() else 1)
    _pid, status = os.waitpid(trial, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and _unshare_namespaces():
        return "pid_namespace"
    hardening.prctl(PR_SET_CHILD_SUBREAPER, 1)
    return "subreaper"


# ------------------------------------------------------------------ the watch

def descendants(root_pid):
    """Pids of `root_pid` and everything below it (via /proc/<pid>/task/<tid>/children)."""
    found, queue = [], [root_pid]
    while queue:
        pid = queue.pop()
        found.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    queue.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def resident_bytes(pids):
    total = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total += int(handle.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            pass
    return total


def workspace_usage(paths, max_entries):
    """(bytes, entries) beneath `paths`, counting stops past `max_entries`: bounded work."""
    size, entries, stack = 0, 0, list(paths)
    while stack and entries <= max_entries:
        try:
            with os.scandir(stack.pop()) as items:
                for item in items:
                    entries += 1
                    try:
                        info = item.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    size += max(info.st_size, info.st_blocks * 512)
                    if item.is_dir(follow_symlinks=False):
                        stack.append(item.path)
        except OSError:
            continue
    return size, entries


def hold(pids, paused):
    """Stops every process of `pids` (SIGSTOP), or lets them go on (SIGCONT)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGSTOP if paused else signal.SIGCONT)
        except ProcessLookupError:
            pass


def kill_everything(child, namespace):
    """PID namespace: killing its process 1 kills the rest. Subreaper: every descendant."""
    if child is not None:
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if namespace == "subreaper":
        for pid in descendants(os.getpid())[1:]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def reap_all(namespace):
    """Subreaper: waits for every process that was re-parented to us, killing each new one.
    When no child is left, nothing below us is left: an orphan is re-parented before its
    parent can be reaped."""
    while True:
        if namespace == "subreaper":
            kill_everything(None, namespace)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _read_available(fd, into, cap):
    """Reads what is there without waiting; False at end of file."""
    while True:
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            return True
        chunk = os.read(fd, 65536)
        if not chunk:
            return False
        if len(into) <= cap:
            into += chunk


def supervise(request, child, out_r, err_r, report_r, namespace):
    limits = request["limits"]
    cap = limits["output_bytes"]
    share = cpu_share.CpuShare(request["timeout"], request.get("demote_after"), request.get("idle", False))
    streams = {out_r: bytearray(), err_r: bytearray()}
    report = bytearray()
    stopped, detail, status = None, "", None
    next_check = 0.0
    watching = [out_r, err_r, report_r]
    running = []
    while status is None:
        decision = share.decide(lambda: descendants(os.getpid())[1:])
        if decision.timed_out:
            stopped = "timeout"
            break
        if decision.hold is not None:
            # At every turn: catches what was forked since the last one.
            cpu_share.lower(running, idle=True, every_thread=True)
            hold(running, paused=decision.hold)
        ready, _, _ = select.select(watching, [], [], min(CHECK_SECONDS, decision.wait))
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                watching.remove(fd)
            elif fd == report_r:
                report += chunk
            else:
                streams[fd] += chunk
                if len(streams[fd]) > cap:
                    stopped = "output"
        if stopped:
            break
        pid, code = os.waitpid(child, os.WNOHANG)
        if pid:
            status = code       # the shell is done: what it left running does not count
            break
        now = time.monotonic()
        if now >= next_check or share.demoted:
            next_check = now + CHECK_SECONDS
            running = descendants(os.getpid())[1:]
            # Read at every check, while they run: a process that ends keeps what it waited.
            share.note_waits(running)
            used = resident_bytes(running)
            if used > limits["total_memory_bytes"]:
                stopped, detail = "memory", str(used)
                break
            size, entries = workspace_usage(request["watch"], limits["max_entries"])
            if size > limits["workspace_bytes"] or entries > limits["max_entries"]:
                stopped, detail = "disk", f"{size} {entries}"
                break
    own_seconds = share.own_seconds()
    if status is None:      # (once reaped, its pid may belong to someone else: never signal it)
        kill_everything(child, namespace)
        _pid, status = os.waitpid(child, 0)
    reap_all(namespace)
    # Everything is gone: what is still in the pipes is all there will be.
    for fd in (out_r, err_r):
        _read_available(fd, streams[fd], cap)
    _read_available(report_r, report, 1 << 16)
    jailed = {}
    try:
        jailed = json.loads(report.decode().splitlines()[0])
    except (ValueError, IndexError):
        pass
    result = {"stopped": stopped, "detail": detail,
              "layers": dict(jailed.get("layers") or {}, cleanup=namespace),
              "missing": jailed.get("missing") or [],
              "stdout": bytes(streams[out_r][:cap]).decode("utf-8", "replace"),
              "stderr": bytes(streams[err_r][:cap]).decode("utf-8", "replace"),
              "exit_code": None, "signal": None, "own_seconds": own_seconds}
    if os.WIFEXITED(status):
        result["exit_code"] = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        result["signal"] = os.WTERMSIG(status)
        result["exit_code"] = 128 + result["signal"]
    return result


def main():
    request = json.loads(sys.stdin.read())
    cpu_share.lower_priority(request["nice"])
    hardening.detach_terminal()
    hardening.set_non_dumpable()
    hardening.preload()
    namespace = enter_namespaces(request.get("pid_namespace", True))
    request["namespace"] = namespace
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    report_r, report_w = os.pipe2(os.O_CLOEXEC)
    supervisor = os.getpid()
    child = os.fork()
    if child == 0:
        os.close(out_r), os.close(err_r), os.close(report_r)
        jail(request, out_w, err_w, report_w, supervisor)
    for fd in (out_w, err_w, report_w):
        os.close(fd)
    _write_line(1, {"started": child})
    try:
        result = supervise(request, child, out_r, err_r, report_r, namespace)
    except BaseException:
        kill_everything(child, namespace)   # whatever went wrong here, nothing of the shell stays
        raise
    _write_line(1, {"result": result})


if __name__ == "__main__":
    main()
