"""How the sandbox runs: one immutable `Settings` value (with the workers' `Limits`).

`configure(**changes)` in the package replaces the current value with `settings.changed(...)`;
nothing here holds state.  Every number is checked and clamped once, here.
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
class Budget:
    """What the admission gate reads for one kind of job: how many run at once, how much
    wall time one session may use per minute, and how probation and refusals work."""
    what: str                          # the job as a student calls it: "工具" or "bash 命令"
    concurrent: int                    # the shared slots ("quick" lane)
    per_session_concurrent: int
    per_session_per_minute: int
    seconds_per_minute: float
    probation_seconds: float
    probation_concurrent: int
    probation_seconds_per_minute: float
    slow_concurrent: int               # 0: no slow lane for this kind
    queue_wait_seconds: float
    refusal_pause_seconds: float
    refusal_pause_max_seconds: float


@dataclasses.dataclass(frozen=True)
class Settings:
    public: bool | None = None         # None: decide from SPACE_ID / the bound address
    server_name: str | None = None
    pool_size: int = 2
    max_concurrent: int = 4            # jobs running at once, all sessions together
    per_session_concurrent: int = 2
    per_session_per_minute: int = 120
    # Fairness: worker wall-seconds one session may use in any 60 s; past it, its jobs are
    # refused at once (a tool stuck in a loop costs 2 s a call, a working tool milliseconds).
    per_session_seconds_per_minute: float = 8.0
    # A session whose job hit a limit (time, memory, output) is on probation for a while:
    # its jobs run one at a time across all such sessions, in a slot and a freshly forked
    # worker of their own (never a slot or a warm worker the others were going to use),
    # demoted from its start (SCHED_IDLE, and only in one of the demoted jobs' ticks in two,
    # see demote_after_seconds and hardening.PROBATION_CYCLE), with a shorter time limit and a
    # smaller budget. A loop that keeps coming back then costs the others next to nothing;
    # fixed code runs in milliseconds and never notices.
    probation_seconds: float = 120.0
    probation_concurrent: int = 1
    probation_wall_seconds: float = 0.5
    probation_seconds_per_minute: float = 1.0
    probation_memory_bytes: int = 64 << 20      # a memory bomb on probation costs a quarter
    probation_nice: int = 19
    # Every student's tool runs below the web server's priority, so even a tool's first
    # run, before its session has a record, cannot take CPU from the page at equal weight.
    job_nice: int = 10
    # A job still running after this long (of its own time: waiting for a CPU counts neither
    # here nor towards its time limit, see hardening.WaitCredit) moves to SCHED_IDLE (its
    # tools' threads too), runs from then on only in the one tick in four that all demoted
    # jobs share (hardening.demoted_may_run: together they use at most a quarter of the
    # machine), gives its slot back for one of the slow lane's, if one is free: a looping
    # tool's first run, before its session is on probation, then neither takes CPU from the
    # quick jobs of the others nor keeps them waiting for a slot. Working tools answer in
    # milliseconds.
    demote_after_seconds: float = 0.2
    # Room for every demoted job of a hall's worth of loops at once: a job that finds the
    # slow lane full keeps its quick slot (and, with 200 students, held one of four for 2 s).
    slow_concurrent: int = 8
    # A refusal for an exhausted budget is answered after this pause (no CPU spent): a
    # hammered button or a script in a loop then cannot turn cheap refusals into a flood
    # of requests that slows the server for everyone. Each further refusal in a row
    # doubles it, up to the maximum; a job that runs starts the count again.
    refusal_pause_seconds: float = 1.5
    refusal_pause_max_seconds: float = 6.0
    queue_wait_seconds: float = 10.0
    # bash (sandbox/shell.py) goes through a gate of its own, with the same rules: its own
    # ledgers and slots, the pauses above. Three commands at once for the whole class: each
    # runs at nice 19, so the third costs the page nothing, and five scripted loops
    # starting together keep the others waiting at most the half second before they are
    # demoted. One command at a time per session; a budget of shell wall-seconds per minute,
    # and a command's time limit is cut to what is left of it, so `sleep 30` in a loop
    # holds a slot for at most that long a minute. A command that hits its time or memory
    # limit puts the session on probation (probation_seconds): its commands then run one
    # at a time with the other probation sessions' in a slot of their own, demoted from
    # their start (see shell_demote_after_seconds), with a shorter time limit and a smaller budget.
    shell_concurrent: int = 3
    shell_per_session_concurrent: int = 1
    shell_per_session_per_minute: int = 30
    shell_seconds_per_minute: float = 20.0
    shell_probation_concurrent: int = 1
    shell_probation_wall_seconds: float = 3.0
    shell_probation_seconds_per_minute: float = 6.0
    # Like demote_after_seconds for tools: a command still running after this long goes
    # to SCHED_IDLE with everything it started (the starter's tests take about 0.15 s),
    # runs only in the demoted jobs' tick from then on, and trades its shared slot for one
    # of the slow lane's when one is free, so that a `sleep` or a loop does not keep the
    # other students' quick commands waiting.
    shell_demote_after_seconds: float = 0.5
    shell_slow_concurrent: int = 8
    limits: Limits = Limits()
    # Extra ways to describe a registry's tools, besides the registry's own: method name ->
    # "module:function", a function (func, description) -> schema applied to every tool.
    # The module is copied into the workers' runtime folder and imported there.
    schema_methods: MappingProxyType = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    def changed(self, **changes):
        """A copy with `changes` applied (`wall_seconds` sets `limits.wall_seconds`); a change
        to None leaves that setting as it is. An unknown name is a TypeError."""
        unknown = set(changes) - {field.name for field in dataclasses.fields(self)} - {"wall_seconds"}
        if unknown:
            raise TypeError(f"unknown sandbox setting(s): {', '.join(sorted(unknown))}")
        values = {name: value for name, value in changes.items() if value is not None}
        limits = values.pop("limits", self.limits)
        if "wall_seconds" in values:
            limits = dataclasses.replace(limits, wall_seconds=float(values.pop("wall_seconds")))
        for field in dataclasses.fields(self):
            if field.name in values and field.type in (int, float):
                values[field.name] = field.type(values[field.name])
        if "public" in values:
            values["public"] = bool(values["public"])
        for name in ("probation_nice", "job_nice"):
            if name in values:
                values[name] = min(19, max(0, values[name]))    # what the kernel allows
        for name in ("probation_concurrent", "shell_probation_concurrent"):
            if name in values:
                values[name] = max(1, values[name])
        if "schema_methods" in values:
            values["schema_methods"] = MappingProxyType(_checked_methods(values["schema_methods"]))
        return dataclasses.replace(self, limits=limits, **values)

    def budget(self, kind):
        """The gate's rules for "tool" jobs (tool runs, schema extraction) or "shell" ones (bash)."""
        shared = {"probation_seconds": self.probation_seconds, "queue_wait_seconds": self.queue_wait_seconds,
                  "refusal_pause_seconds": self.refusal_pause_seconds,
                  "refusal_pause_max_seconds": self.refusal_pause_max_seconds}
        if kind == "shell":
            return Budget(what="bash 命令", concurrent=self.shell_concurrent,
                          per_session_concurrent=self.shell_per_session_concurrent,
                          per_session_per_minute=self.shell_per_session_per_minute,
                          seconds_per_minute=self.shell_seconds_per_minute,
                          probation_concurrent=self.shell_probation_concurrent,
                          probation_seconds_per_minute=self.shell_probation_seconds_per_minute,
                          slow_concurrent=self.shell_slow_concurrent, **shared)
        return Budget(what="工具", concurrent=self.max_concurrent, per_session_concurrent=self.per_session_concurrent,
                      per_session_per_minute=self.per_session_per_minute,
                      seconds_per_minute=self.per_session_seconds_per_minute,
                      probation_concurrent=self.probation_concurrent,
                      probation_seconds_per_minute=self.probation_seconds_per_minute,
                      slow_concurrent=self.slow_concurrent, **shared)

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
