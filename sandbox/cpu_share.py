"""How much CPU a student's job may take from everybody else: one policy for the tool pool
(sandbox/pool.py) and the bash launcher (sandbox/shell_launcher.py).

A job has two clocks, its time limit and its demotion time, and `CpuShare.decide()` says
what to do with it at a moment: stop it, demote it, hold it, or wait how long. Invariants:

- Own time only. Both clocks stop while the job waits for a CPU (`WaitCredit`, read from
  the kernel): a job is stopped or demoted for what it ran, never for what a full machine
  kept from it. The credit is bounded by the time limit, and it ends for good once the job
  has used its demotion time of CPU, so a loop earns no delay of its own.
- Demotion. A job still running at its demotion time moves to SCHED_IDLE (every thread and
  process of it) and from then on runs only in the demoted jobs' tick: the first of every
  DEMOTED_CYCLE ticks of DUTY_TICK_SECONDS, stopped (SIGSTOP) the rest of the time. Every
  supervisor reads the same machine-wide clock (CLOCK_MONOTONIC), so all demoted jobs share
  that one tick: together they use at most 1/DEMOTED_CYCLE of the machine, however many.
- Probation. A job of a session on probation is demoted from its start and runs in one tick
  of PROBATION_CYCLE, always one of the demoted jobs' ticks; its clocks start at its first turn.
- Priority. Every sandboxed process runs below the web server (`lower_priority`), in the
  server's session (see there why not in sessions of their own).

Only the standard library: the launcher runs it from its private runtime folder.
"""
import os
import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

DUTY_TICK_SECONDS = 0.05
DEMOTED_CYCLE = 4
PROBATION_CYCLE = 8          # a multiple of DEMOTED_CYCLE: its tick is one of the demoted jobs'
CREDIT_STEP_SECONDS = 0.001  # a due clock is read again only after a wait longer than this


def lower_priority(nice, pid=0):
    """A process's nice value (by default this one's), below the web server's.

    Every sandboxed process stays in the web server's session. With autogroup scheduling (on
    by default on many kernels, wherever processes are not in a cgroup of their own) each
    session is a scheduling group that competes with the others as an equal, whatever the
    nice values inside it; and SCHED_IDLE only yields to the tasks of its own group. A
    sandbox in sessions of its own would take a group's share from the server, and a loop
    moved to SCHED_IDLE would keep its group's share from everybody else. In one session,
    nice values and SCHED_IDLE weigh task against task, as they do in a container."""
    if nice > 0:
        lower([pid], nice)


def lower(pids, nice=None, idle=False, every_thread=False):
    """Best effort (the time limits and the slots hold regardless): `pids` to `nice`, and with
    `idle` to SCHED_IDLE, where a process runs only on a CPU nothing else wants and yields the
    moment the server or another job wakes up (a nice value alone still buys a share of a busy
    CPU). Threads and children inherit both when they start; `every_thread` also lowers the
    threads already running. A sandboxed process cannot undo either (seccomp, or no privilege)."""
    for pid in pids:
        tasks = [pid]
        if every_thread:
            try:
                tasks = [int(task) for task in os.listdir(f"/proc/{pid}/task")] or tasks
            except (OSError, ValueError):
                pass
        for task in tasks:
            if nice is not None:
                try:
                    os.setpriority(os.PRIO_PROCESS, task, nice)
                except OSError:
                    pass
            if idle:
                try:
                    os.sched_setscheduler(task, os.SCHED_IDLE, os.sched_param(0))
                except OSError:
                    pass


def _cycle(on_probation):
    return PROBATION_CYCLE if on_probation else DEMOTED_CYCLE


def demoted_may_run(now, on_probation=False):
    """Whether demoted jobs may run at `now` (time.monotonic()): in the first tick of each cycle
    (of PROBATION_CYCLE ticks for a job on probation, whose tick is always one of the others')."""
    return int(now / DUTY_TICK_SECONDS) % _cycle(on_probation) == 0


def until_next_turn(now, on_probation=False):
    """Seconds from `now` to just past the next moment demoted jobs start or stop running: a
    supervisor wakes twice a cycle, not at every tick."""
    cycle = _cycle(on_probation)
    tick = int(now / DUTY_TICK_SECONDS)
    ticks = 1 if tick % cycle == 0 else cycle - tick % cycle
    return (tick + ticks) * DUTY_TICK_SECONDS - now + 0.001


def process_clocks(pid):
    """(run-queue wait of the main thread, CPU time of the process, all its threads and its
    reaped children), in seconds; None when the kernel does not say (or the process is gone)."""
    try:
        with open(f"/proc/{pid}/schedstat") as schedstat:
            waited = int(schedstat.read().split()[1]) / 1e9
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return waited, sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class WaitCredit:
    """The seconds a job spends waiting for a CPU, read from the kernel, up to `most`.

    The wait is the run-queue wait of each process's main thread (/proc/<pid>/schedstat),
    summed over the job's processes. A stopped process (a demoted job between its ticks) is
    off the run queue, so a held loop earns nothing. Once the job has used `busy` seconds of
    CPU (all its processes and threads together) the credit ends for good. Where the kernel
    does not say, there is no credit: plain wall time."""

    def __init__(self, most, busy, existing=()):
        self.most, self.busy = most, busy
        self.started = time.monotonic()
        # Processes that existed before the job count from now (or not at all, if unreadable);
        # those it starts, from their start.
        readings = {pid: self._read(pid) for pid in existing}
        self.unread = {pid for pid, reading in readings.items() if reading is None}
        self.base = {pid: reading for pid, reading in readings.items() if reading is not None}
        self.last = dict(self.base)
        self.given = 0.0
        self.ended = False

    @staticmethod
    def _read(pid):
        return process_clocks(pid)

    def more(self, pids):
        """Seconds of waiting since the last call (or the start), within `most` in all; `pids`
        are the job's processes now (one that has ended keeps what was last read of it)."""
        if self.ended:
            return 0.0
        for pid in pids:
            reading = None if pid in self.unread else self._read(pid)
            if reading is not None:
                self.last[pid] = reading
        waited = used = 0.0
        for pid, (wait, cpu) in self.last.items():
            start_wait, start_cpu = self.base.get(pid, (0.0, 0.0))
            waited, used = waited + wait - start_wait, used + cpu - start_cpu
        if used >= self.busy:
            self.ended = True
            return 0.0
        total = min(max(waited, 0.0), self.most)
        extra, self.given = total - self.given, max(total, self.given)
        return max(extra, 0.0)

    def own_seconds(self):
        """The job's own time so far: since the credit began, less the waits it gave back."""
        return max(0.0, time.monotonic() - self.started - self.given)


class Decision(NamedTuple):
    """What a supervisor does with its job now."""
    timed_out: bool          # its time limit of own time is used up: stop it
    demote: bool             # it reached its demotion time just now: SCHED_IDLE, once
    hold: bool | None        # demoted: whether it is stopped now (None: not demoted)
    wait: float              # seconds until the next decision is due at the latest


class CpuShare:
    """One job's clocks and duty cycle. `limit` is its time limit; `demote_after` its demotion
    time (None: never, 0: from the start, as on probation); `existing` its processes that ran
    before it (their waits count from now)."""

    def __init__(self, limit, demote_after=None, on_probation=False, existing=(), credit=None):
        self.on_probation = on_probation
        self.credit = credit or WaitCredit(most=limit, busy=demote_after or limit, existing=existing)
        start = self.credit.started
        self.deadline = start + limit
        self.demote_at = None if demote_after is None else start + demote_after
        self.demoted = False
        if demote_after == 0 and not demoted_may_run(start, on_probation):
            self.deadline += until_next_turn(start, on_probation)   # its clock starts at its first turn

    def note_waits(self, pids):
        """Moves both clocks on by the waits of `pids` (the job's processes now) since the last
        reading; returns those seconds. A supervisor whose job forks may call it at every check,
        so that a process that ends keeps what it waited."""
        waited = self.credit.more(pids)
        if waited:
            self.deadline += waited
            if self.demote_at is not None:
                self.demote_at += waited
        return waited

    def _due(self, now):
        return now >= self.deadline or (self.demote_at is not None and now >= self.demote_at)

    def decide(self, pids: Callable[[], Iterable[int]], now=None) -> Decision:
        """What to do at `now` (time.monotonic()). When a clock is due, the waits of `pids()`
        are read first and move it on."""
        now = time.monotonic() if now is None else now
        while self._due(now) and self.note_waits(pids()) > CREDIT_STEP_SECONDS:
            pass
        remaining = self.deadline - now
        if remaining <= 0:
            return Decision(True, False, None, 0.0)
        demote = self.demote_at is not None and now >= self.demote_at
        if demote:
            self.demote_at, self.demoted = None, True
        if self.demoted:
            return Decision(False, demote, not demoted_may_run(now, self.on_probation),
                            min(remaining, until_next_turn(now, self.on_probation)))
        wait = remaining if self.demote_at is None else min(remaining, self.demote_at - now)
        return Decision(False, False, None, wait)

    def own_seconds(self):
        """The job's own time so far: since its start, less its waits for a CPU."""
        return self.credit.own_seconds()
