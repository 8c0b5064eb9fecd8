"""Layers a worker puts around itself before it runs a student's code.

Order matters: resource limits, non-dumpable, Landlock (file system and TCP),
seccomp (system calls), then an audit hook.  The kernel layers are the boundary;
the audit hook only turns a blocked action into a message a student understands.

This module runs inside the worker (a fresh `python -I -B`), so it imports only the
standard library at module level; `pyseccomp` is imported by `preload()`.
"""
import ctypes
import errno
import os
import struct
import sys
import tempfile

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int

pyseccomp = None
_seccomp_error = None


def preload():
    """Imports what hardening needs while imports are still cheap and unrestricted."""
    global pyseccomp, _seccomp_error
    try:
        import ctypes.util as _util

        original = _util.find_library

        def quick_find(name):
            # find_library runs `ldconfig -p` in a subprocess (~40 ms); try the soname first.
            if name == "seccomp":
                try:
                    ctypes.CDLL("libseccomp.so.2")
                    return "libseccomp.so.2"
                except OSError:
                    pass
            return original(name)

        _util.find_library = quick_find
        try:
            import pyseccomp as module
        finally:
            _util.find_library = original
        pyseccomp = module
    except Exception as exc:  # missing package or missing libseccomp.so.2
        _seccomp_error = f"{type(exc).__name__}: {exc}"


def prctl(option, value):
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


TIOCNOTTY = 0x5422


def detach_terminal():
    """Gives up the controlling terminal the server may have (`python app.py` in a terminal):
    in the server's session, a sandboxed process would otherwise share it. Nothing it starts
    afterwards can reach the terminal through /dev/tty."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return                  # no controlling terminal: nothing to give up
    try:
        import fcntl
        fcntl.ioctl(fd, TIOCNOTTY)
    except OSError:
        pass
    finally:
        os.close(fd)


def set_non_dumpable():
    """Other processes of the same user can no longer read our /proc environ or memory."""
    prctl(PR_SET_DUMPABLE, 0)


# ---------------------------------------------------------------- resource limits

def apply_rlimits(cpu_seconds, memory_bytes, file_bytes, open_files):
    import resource

    def lower(kind, value):
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    lower(resource.RLIMIT_CORE, 0)
    lower(resource.RLIMIT_CPU, cpu_seconds)
    lower(resource.RLIMIT_FSIZE, file_bytes)
    lower(resource.RLIMIT_NOFILE, open_files)
    # Address space counts what the interpreter already mapped; the budget comes on top.
    lower(resource.RLIMIT_AS, _current_vm_bytes() + memory_bytes)
    return True


def _current_vm_bytes():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 512 * 1024 * 1024


# ---------------------------------------------------------------- Landlock

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_FS_EXECUTE = 1 << 0
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
# All file-system rights each ABI knows; everything handled and not granted is denied.
_FS_ALL = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_FS_WRITE_FILE, _FS_TRUNCATE = 1 << 1, 1 << 14
_FS_WRITABLE_DIR = ((1 << 16) - 1) & ~(1 << 6 | 1 << 9 | 1 << 10 | 1 << 11 | 1 << 15)  # no device/fifo/socket, ioctl
_NET_BIND_TCP = 1 << 0
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi():
    """The kernel's Landlock ABI version, or 0 when it has none (or it is disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                            ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def apply_landlock(read_only_paths, writable_paths=()):
    """Read-only access beneath `read_only_paths`; writes only beneath `writable_paths` (no
    device, pipe or socket files); no TCP (ABI >= 4); no signals or abstract sockets outside
    the sandbox (ABI >= 6). Returns the ABI used."""
    abi = landlock_abi()
    if abi <= 0:
        return 0
    fs_all = _FS_ALL[max(k for k in _FS_ALL if k <= abi)]
    attr = _RulesetAttr(handled_access_fs=fs_all)
    size = 8
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size = 24
    ruleset = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr),
                            ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path in [*read_only_paths, *writable_paths]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path this system does not have
            try:
                access = _FS_READ_FILE | _FS_EXECUTE
                if os.path.isdir(path):
                    access |= _FS_READ_DIR
                if path in writable_paths:  # files: write and truncate; folders: all but special files
                    access = fs_all & (_FS_WRITABLE_DIR if os.path.isdir(path) else access | _FS_WRITE_FILE | _FS_TRUNCATE)
                rule = _PathBeneathAttr(allowed_access=access, parent_fd=fd)
                if _libc.syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset),
                                 ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH),
                                 ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(fd)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if _libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def read_only_paths(extra=()):
    """What a worker may read: the Python install, the venv, system libraries, time zones."""
    import sysconfig

    paths = {sys.prefix, sys.base_prefix + "/lib", sys.exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        paths.add(sysconfig.get_paths().get(key, ""))
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    paths.update(("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo",
                  "/etc/localtime", "/etc/ld.so.cache"))
    paths.update(extra)
    return sorted(p for p in paths if p and p != "/")


# ---------------------------------------------------------------- seccomp

_AF_UNIX = 1
_CLONE_THREAD = 0x00010000
_WRITE_FLAGS = (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, os.O_APPEND)

# Syscalls a tool never needs, denied outright with EPERM (not a kill, so Python can
# raise a PermissionError the audit hook or the error mapping can explain).
_DENIED = (
    "connect", "bind", "listen", "accept", "accept4", "sendmsg", "sendmmsg",
    "execve", "execveat", "fork", "vfork",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "kcmp",
    "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat",
    "rmdir", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "truncate",
    "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat", "utimes",
    "utimensat", "futimesat", "memfd_create", "mount", "umount2", "pivot_root", "chroot",
    "unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key",
    "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "personality", "setpriority", "sched_setaffinity", "sched_setscheduler", "sched_setattr",
    "sched_setparam",
    "move_pages", "migrate_pages", "process_madvise", "name_to_handle_at",
    "open_by_handle_at", "fanotify_init", "inotify_init", "inotify_init1", "syslog",
    "setrlimit",
)


def deny_list_filter(denied):
    """A seccomp filter that allows everything but `denied` (EPERM), and `rule(action, name,
    *args)` to add more. Shared by the tool workers and the shell's jail; a call unknown on
    this architecture is skipped, not an error."""
    sc = pyseccomp
    f = sc.SyscallFilter(sc.ALLOW)

    def rule(action, name, *args):
        try:
            f.add_rule(action, name, *args)
        except (OSError, ValueError, RuntimeError):
            pass  # unknown on this architecture

    for name in denied:
        rule(sc.ERRNO(errno.EPERM), name)
    return f, rule


def _build_filter(own_pid):
    sc = pyseccomp
    deny = sc.ERRNO(errno.EPERM)
    f, rule = deny_list_filter(_DENIED)
    # Sockets: only AF_UNIX (asyncio's self-pipe uses socketpair).
    rule(deny, "socket", sc.Arg(0, sc.NE, _AF_UNIX))
    rule(deny, "socketpair", sc.Arg(0, sc.NE, _AF_UNIX))
    rule(deny, "sendto", sc.Arg(4, sc.NE, 0))  # a destination address = a new peer
    # New processes: clone only for threads; clone3 hides its flags, so report it as
    # missing and let the C library fall back to clone.
    rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
    rule(sc.ERRNO(errno.ENOSYS), "clone3")
    rule(sc.ERRNO(errno.ENOSYS), "openat2")
    # Signals and limits: only for ourselves.
    rule(deny, "kill", sc.Arg(0, sc.NE, own_pid))
    rule(deny, "tgkill", sc.Arg(0, sc.NE, own_pid))
    rule(deny, "tkill", sc.Arg(0, sc.NE, own_pid))
    rule(deny, "prlimit64", sc.Arg(0, sc.NE, 0))
    # Opening files for writing.
    for flag in _WRITE_FLAGS:
        rule(deny, "open", sc.Arg(1, sc.MASKED_EQ, flag, flag))
        rule(deny, "openat", sc.Arg(2, sc.MASKED_EQ, flag, flag))
    return f


# Compiled once in the zygote; each worker only writes its pid in and loads it. Building
# the filter with libseccomp in every worker cost about 5 ms of CPU per job.
_PID_PLACEHOLDERS = (0x7E57_1D01, 0x7E57_1D02)
_INSTRUCTION = struct.Struct("=HBBI")       # struct sock_filter: code, jt, jf, k
_compiled = None                            # (BPF program bytes, offsets of the pid constants)


def _export(own_pid):
    with tempfile.TemporaryFile() as handle:
        _build_filter(own_pid).export_bpf(handle)
        handle.seek(0)
        return handle.read()


def prepare_seccomp():
    """Compiles the filter with a placeholder pid, twice with different placeholders: the
    instructions that differ are exactly where a worker's pid goes. Anything unexpected
    leaves `_compiled` unset and workers build the filter themselves, as before."""
    global _compiled
    if pyseccomp is None:
        return False
    first, second = (_export(pid) for pid in _PID_PLACEHOLDERS)
    if len(first) != len(second) or not first or len(first) % _INSTRUCTION.size:
        return False
    offsets = []
    for offset in range(0, len(first), _INSTRUCTION.size):
        a = _INSTRUCTION.unpack_from(first, offset)
        b = _INSTRUCTION.unpack_from(second, offset)
        if a == b:
            continue
        if a[:3] != b[:3] or (a[3], b[3]) != _PID_PLACEHOLDERS:
            return False
        offsets.append(offset)
    if not offsets:
        return False
    _compiled = (first, tuple(offsets))
    return True


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def apply_seccomp():
    """Loads the system-call filter. Raises when libseccomp is unavailable."""
    if pyseccomp is None:
        raise OSError(errno.ENOSYS, _seccomp_error or "pyseccomp not loaded")
    if _compiled is None:
        _build_filter(os.getpid()).load()
        return True
    template, offsets = _compiled
    program = bytearray(template)
    for offset in offsets:
        struct.pack_into("=I", program, offset + 4, os.getpid())
    buffer = ctypes.create_string_buffer(bytes(program), len(program))
    fprog = _SockFprog(len(program) // _INSTRUCTION.size, ctypes.addressof(buffer))
    prctl(PR_SET_NO_NEW_PRIVS, 1)   # what libseccomp's load does first, too
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter not loaded: {os.strerror(err)}")
    return True


# ---------------------------------------------------------------- audit hook

class BlockedAction(PermissionError):
    """A capability the sandbox does not give tools, with a message for the student."""

    def __init__(self, capability, detail):
        self.capability = capability
        super().__init__(
            f"沙箱不允许{capability}操作（{detail}）。工具只能根据传入的参数计算结果，"
            f"请使用参数或示例数据。")


_NETWORK_EVENTS = {"socket.connect", "socket.bind", "socket.getaddrinfo",
                   "socket.gethostbyname", "socket.gethostbyaddr", "socket.sendto",
                   "socket.sendmsg", "urllib.Request", "http.client.connect",
                   "ftplib.connect", "smtplib.connect", "poplib.connect", "imaplib.open",
                   "telnetlib.Telnet.open"}
_PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "os.fork", "os.forkpty", "pty.spawn", "os.startfile"}
_WRITE_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                 "os.truncate", "os.link", "os.symlink", "os.utime", "shutil.rmtree",
                 "shutil.copyfile", "shutil.move", "os.chflags", "os.lchflags",
                 "os.setxattr", "os.removexattr", "os.mkfifo", "os.mknod"}
_SIGNAL_EVENTS = {"os.kill", "os.killpg", "signal.pthread_kill"}
_NATIVE_EVENTS = {"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function",
                  "ctypes.cdata", "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at",
                  "ctypes.get_errno", "ctypes.set_errno", "mmap.__new__"}
_LIMIT_EVENTS = {"resource.setrlimit", "resource.prlimit"}
_WRITE_MODE_CHARS = set("wax+")
_WRITE_OS_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _audit(event, args):
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        writing = (isinstance(mode, str) and bool(_WRITE_MODE_CHARS & set(mode))) or \
            (isinstance(flags, int) and bool(flags & _WRITE_OS_FLAGS))
        if writing:
            raise BlockedAction("文件写入", f"打开 {path!r} 用于写入")
        return
    if event == "socket.__new__":
        family = args[1] if len(args) > 1 else None
        if family not in (None, -1, _AF_UNIX):
            raise BlockedAction("网络", "创建网络套接字")
        return
    if event in _NETWORK_EVENTS:
        raise BlockedAction("网络", event)
    if event in _PROCESS_EVENTS or event.startswith("os.exec") or event.startswith("os.spawn"):
        raise BlockedAction("子进程", event)
    if event in _WRITE_EVENTS:
        raise BlockedAction("文件写入", event)
    if event in _SIGNAL_EVENTS:
        raise BlockedAction("信号", event)
    if event in _NATIVE_EVENTS:
        raise BlockedAction("底层内存与系统调用（ctypes）", event)
    if event in _LIMIT_EVENTS:
        raise BlockedAction("修改资源限制", event)


def install_audit_hook():
    sys.addaudithook(_audit)
    return True
