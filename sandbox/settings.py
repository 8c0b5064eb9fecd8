"""How the sandbox runs: one immutable `Settings` value (with the workers' `Limits`).

`configure(**changes)` in the package replaces the current value with `settings.changed(...)`;
nothing here holds state.  Every number is checked and clamped once, here.  The rules of each
lane of jobs are grouped: `Settings.tool` and `Settings.shell` (a `JobSettings` each), e.g.
`configure(tool={"concurrent": 6}, shell={"seconds_per_minute": 30})`.
"""
import dataclasses
import ipaddress
import os
from types import MappingProxyType


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one worker may use. `wall_seconds` is per job; the rest are set in the worker."""
    wall_seconds: float = 2.0
    cpu_seconds: int = 3
    memory_bytes: int = 256 << 20
    output_bytes: int = 64 << 10
    result_bytes: int = 1 << 20
    file_bytes: int = 1 << 20
    open_files: int = 64

    def for_worker(self):
        return {"cpu_seconds": self.cpu_seconds, "memory_bytes": self.memory_bytes,
                "file_bytes": self.file_bytes, "open_files": self.open_files}


@dataclasses.dataclass(frozen=True)
class JobSettings:
    """The rules of one lane of jobs, `Settings.tool` (tool runs and schema extraction) or
    `Settings.shell` (bash commands). Each lane has its own ledgers and slots."""
    what: str                          # the job as a student calls it: "工具" or "bash 命令"
    concurrent: int                    # the shared slots ("quick" lane), all sessions together
    per_session_concurrent: int        # jobs of one session at once
    per_session_per_minute: int        # job starts of one session in any 60 s
    # Own seconds (see cpu_share.py) one session may use in any 60 s; past it, its jobs are
    # refused at once. A job's time limit is never more than what is left of it.
    seconds_per_minute: float
    # A session whose job hit a limit is on probation for Settings.probation_seconds: its jobs
    # run in probation slots of their own, demoted from their start (cpu_share.PROBATION_CYCLE),
    # with this time limit and budget.
    probation_concurrent: int
    probation_wall_seconds: float
    probation_seconds_per_minute: float
    # A job still running after this much of its own time is demoted (cpu_share.py) and trades
    # its quick slot for one of the slow lane's, if one is free: a loop then neither takes CPU
    # from the quick jobs of the others nor keeps them waiting for a slot.
    demote_after_seconds: float
    # Slow-lane slots (0: none); a demoted job that finds the lane full keeps its quick slot.
    slow_concurrent: int


TOOL = JobSettings(what="工具", concurrent=4, per_session_concurrent=2, per_session_per_minute=120,
                   seconds_per_minute=8.0, probation_concurrent=1, probation_wall_seconds=0.5,
                   probation_seconds_per_minute=1.0, demote_after_seconds=0.2, slow_concurrent=8)
# MCP servers (sandbox/mcp_host.py) live for a whole run, mostly waiting for the model: they are
# charged the CPU they use, `concurrent` bounds how many are alive at once, and a server that has
# used `demote_after_seconds` of CPU moves to SCHED_IDLE.
MCP = JobSettings(what="MCP 服务器", concurrent=16, per_session_concurrent=2, per_session_per_minute=60,
                  seconds_per_minute=8.0, probation_concurrent=2, probation_wall_seconds=10.0,
                  probation_seconds_per_minute=2.0, demote_after_seconds=0.3, slow_concurrent=0)
SHELL = JobSettings(what="bash 命令", concurrent=3, per_session_concurrent=1, per_session_per_minute=30,
                    seconds_per_minute=20.0, probation_concurrent=1, probation_wall_seconds=3.0,
                    probation_seconds_per_minute=6.0, demote_after_seconds=0.5, slow_concurrent=8)


@dataclasses.dataclass(frozen=True)
class Budget(JobSettings):
    """What the admission gate reads for one kind of job: its lane's rules and the shared ones."""
    probation_seconds: float
    queue_wait_seconds: float
    refusal_pause_seconds: float
    refusal_pause_max_seconds: float


@dataclasses.dataclass(frozen=True)
class Settings:
    public: bool | None = None         # None: decide from SPACE_ID / the bound address
    server_name: str | None = None
    probation: bool | None = None      # None: only when serving publicly (probation_applies)
    tool: JobSettings = TOOL
    shell: JobSettings = SHELL
    mcp: JobSettings = MCP
    # One MCP server's limits: how long it may take to answer a request (initialize, and so the
    # source's import; a tools/call), how long it may live (wall clock, from its start: a run
    # with a slow model in between) and how many seconds of CPU it may use in all (its other
    # limits are the tool workers').
    mcp_request_seconds: float = 5.0
    mcp_wall_seconds: float = 60.0
    mcp_cpu_seconds: int = 5
    # MCP servers kept started (hardened, waiting for a source) once the first one was asked for.
    mcp_pool_size: int = 1
    # Shared by both lanes: how long a session stays on probation after a job hit a limit
    # (time, memory, output), how long a job may wait for a slot, and the pause before a
    # refusal for an exhausted budget is answered (no CPU spent): it doubles with each
    # refusal in a row, up to the maximum, so that cheap refusals cannot become a flood.
    probation_seconds: float = 120.0
    queue_wait_seconds: float = 10.0
    refusal_pause_seconds: float = 1.5
    refusal_pause_max_seconds: float = 6.0
    # The tool workers: how many are kept warm, their limits, and their priority. Every tool
    # runs below the web server's priority, from its first run on; on probation lower still,
    # with less memory, in a freshly forked worker (never a warm one the others would use).
    pool_size: int = 2
    limits: Limits = Limits()
    job_nice: int = 10
    probation_nice: int = 19
    probation_memory_bytes: int = 64 << 20
    # Extra ways to describe a registry's tools, besides the registry's own: method name ->
    # "module:function", a function (func, description) -> schema applied to every tool.
    # The module is copied into the workers' runtime folder and imported there.
    schema_methods: MappingProxyType = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    def changed(self, **changes):
        """A copy with `changes` applied: `tool` and `shell` take a dict (or a JobSettings) of
        that lane's fields, `wall_seconds` sets `limits.wall_seconds`; a change to None leaves
        that setting as it is. An unknown name is a TypeError."""
        unknown = set(changes) - {field.name for field in dataclasses.fields(self)} - {"wall_seconds"}
        if unknown:
            raise TypeError(f"unknown sandbox setting(s): {_named(unknown)}")
        values = {name: value for name, value in changes.items() if value is not None}
        limits = values.pop("limits", self.limits)
        if "wall_seconds" in values:
            limits = dataclasses.replace(limits, wall_seconds=float(values.pop("wall_seconds")))
        for lane in ("tool", "shell", "mcp"):
            if lane in values:
                values[lane] = _lane(getattr(self, lane), values[lane], lane)
        _coerce(self, values)
        for name in ("public", "probation"):
            if name in values:
                values[name] = bool(values[name])
        for name in ("probation_nice", "job_nice"):
            if name in values:
                values[name] = min(19, max(0, values[name]))    # what the kernel allows
        if "schema_methods" in values:
            values["schema_methods"] = MappingProxyType(_checked_methods(values["schema_methods"]))
        return dataclasses.replace(self, limits=limits, **values)

    def budget(self, kind):
        """The gate's rules for "tool" jobs (tool runs, schema extraction), "shell" ones (bash)
        or "mcp" servers."""
        lane = {"shell": self.shell, "mcp": self.mcp}.get(kind, self.tool)
        return Budget(**{field.name: getattr(lane, field.name) for field in dataclasses.fields(JobSettings)},
                      probation_seconds=self.probation_seconds, queue_wait_seconds=self.queue_wait_seconds,
                      refusal_pause_seconds=self.refusal_pause_seconds,
                      refusal_pause_max_seconds=self.refusal_pause_max_seconds)

    def probation_applies(self):
        """Whether a job that ran into a limit puts its session on probation. On a public server it
        does: one student's loop must not slow the class. A local run has no class, and a loop tried
        in one lesson must not make the untouched examples of the other lessons fail."""
        return self.serving_publicly() if self.probation is None else self.probation

    def serving_publicly(self):
        """True on a Hugging Face Space, a ModelScope 创空间 or a non-loopback address: then no seccomp, no runs."""
        if self.public is not None:
            return self.public
        if os.environ.get("SPACE_ID"):
            return True
        if os.environ.get("MODELSCOPE_ENVIRONMENT") == "studio":   # a ModelScope 创空间
            return True
        name = self.server_name or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
        return not _is_loopback(name)


# Where the flat names of earlier versions went, for the error message.
_MOVED = {"max_concurrent": "tool.concurrent", "per_session_seconds_per_minute": "tool.seconds_per_minute",
          **{name: f"tool.{name}" for name in ("per_session_concurrent", "per_session_per_minute",
                                                "probation_concurrent", "probation_wall_seconds",
                                                "probation_seconds_per_minute", "demote_after_seconds",
                                                "slow_concurrent")},
          **{f"shell_{name}": f"shell.{name}" for name in (field.name for field in dataclasses.fields(JobSettings))}}


def _named(unknown, prefix=""):
    return ", ".join(f"{prefix}{name}" + (f" (now {_MOVED[name]})" if not prefix and name in _MOVED else "")
                     for name in sorted(unknown))


def _coerce(current, values):
    """Numbers to their field's type, in place."""
    for field in dataclasses.fields(current):
        if field.name in values and field.type in (int, float):
            values[field.name] = field.type(values[field.name])


def _lane(current, change, lane):
    """A lane's settings with `change` (a dict of its fields, or a whole JobSettings) applied."""
    if isinstance(change, JobSettings):
        change = dataclasses.asdict(change)
    unknown = set(change) - {field.name for field in dataclasses.fields(JobSettings)}
    if unknown:
        raise TypeError(f"unknown sandbox setting(s): {_named(unknown, lane + '.')}")
    values = {name: value for name, value in change.items() if value is not None}
    _coerce(current, values)
    if "probation_concurrent" in values:
        values["probation_concurrent"] = max(1, values["probation_concurrent"])
    return dataclasses.replace(current, **values)


def _checked_methods(methods):
    checked = {}
    for name, target in dict(methods).items():
        module, _, function = str(target).partition(":")
        if name == "registry" or not module.isidentifier() or not function.isidentifier():
            raise ValueError(f"schema method {name!r} must be \"module:function\" and not \"registry\"")
        checked[str(name)] = f"{module}:{function}"
    return checked


def _is_loopback(name):
    if name in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
