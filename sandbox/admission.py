"""Who may run a job now, and how: per-session ledgers, fairness budgets, probation,
refusal pauses and the slots that bound how many jobs run at once.

`Gate.admit(session_id)` is a context manager: it refuses quickly (raising `Refusal`)
when the session is over its limits, runs the admitted job in the pool within the
limits that apply to it, and charges the session for the time when the job ends.

One gate serves one kind of job, whose rules are `settings().budget(kind)` (its lane,
`Settings.tool` or `Settings.shell`, and the shared ones): "tool" (tool
runs and schema extraction, run in the pool by `Admission.run`) or "shell" (bash commands:
sandbox/shell.py runs them itself, reading `on_probation` and `seconds_left` and calling
`note_limit_hit()`). Each kind has its own ledgers and slots.
"""
import collections
import random
import threading
import time

from . import messages

WINDOW_SECONDS = 60.0          # the budgets are per minute
PRUNE_EVERY_SECONDS = 30.0
REFUSAL_JITTER = 0.5           # a refusal pause is up to this share longer, at random


class Refusal(Exception):
    """A job that is not run: `code` is a tool_outcome label key, `message` says why in Chinese."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


class Ledger:
    """What one session has been using: jobs admitted now, job starts and worker-seconds
    in the last minute (with which job spent them), and until when it is on probation (and
    which job put it there, when): a refusal says where the time went, not only that it is gone."""
    __slots__ = ("running", "in_slot", "starts", "spent", "probation_until", "probation_cause", "last_seen",
                 "refused")

    def __init__(self, now):
        self.refused = 0                       # refusals in a row for an exhausted budget
        self.running = 0                       # admitted, waiting for a slot or running
        self.in_slot = 0                       # of those, holding a slot (running in a worker)
        self.starts = collections.deque()      # start times of tool runs
        self.spent = collections.deque()       # (end time, seconds charged, the job) of every job
        self.probation_until = 0.0
        self.probation_cause = (0.0, "")       # (when, the job) that last ran into a limit
        self.last_seen = now

    def forget_old(self, now):
        while self.starts and now - self.starts[0] > WINDOW_SECONDS:
            self.starts.popleft()
        while self.spent and now - self.spent[0][0] > WINDOW_SECONDS:
            self.spent.popleft()

    def seconds_used(self):
        return sum(seconds for _, seconds, _ in self.spent)

    def heaviest(self, now):
        """(job, seconds, seconds ago) of the job that used most of the last minute, or None."""
        if not self.spent:
            return None
        ended, seconds, job = max(self.spent, key=lambda entry: entry[1])
        return job, seconds, int(now - ended)

    def probation(self, now, budget):
        """What a refusal says about probation (messages.on_probation), or "" when not on it."""
        if now >= self.probation_until:
            return ""
        since, job = self.probation_cause
        return messages.on_probation(budget.what, job, int(now - since), int(self.probation_until - now) + 1,
                                     budget.probation_seconds_per_minute, budget.seconds_per_minute)

    def seconds_until_under(self, budget, now):
        """How long until enough of the last minute's usage has aged out to run again."""
        used = self.seconds_used()
        for ended, seconds, _ in self.spent:
            used -= seconds
            if used < budget:
                return max(1, int(WINDOW_SECONDS - (now - ended)) + 1)
        return int(WINDOW_SECONDS)


class Gate:
    """The ledgers of every session and the slots; `settings()` and `pool()` are read at
    each admission, so a new configuration applies to the next job."""

    def __init__(self, settings, pool=None, kind="tool"):
        self.settings = settings
        self.pool = pool
        self.kind = kind
        self._lock = threading.Lock()
        self._ledgers = {}                     # session id -> Ledger, forgotten once idle
        self._last_prune = 0.0
        self._slots = {}                       # lane -> (size, semaphore)

    # ------------------------------------------------------------ slots

    def slots(self, lane):
        """The semaphore of a lane ("quick", "probation", "slow"), rebuilt when its size changes;
        a job releases the one it took."""
        budget = self.budget()
        size = {"quick": budget.concurrent, "probation": budget.probation_concurrent,
                "slow": budget.slow_concurrent}[lane]
        with self._lock:
            built = self._slots.get(lane)
            if built is None or built[0] != size:
                built = self._slots[lane] = (size, threading.BoundedSemaphore(size) if size > 0 else None)
            return built[1]

    def budget(self):
        return self.settings().budget(self.kind)

    # ------------------------------------------------------------ sessions

    def usage(self, session_id):
        """What the sandbox currently remembers about a session."""
        now = time.monotonic()
        with self._lock:
            ledger = self._ledgers.get(session_id)
            if ledger is None:
                return {"known": False, "running": 0, "holding_slot": 0, "runs_last_minute": 0,
                        "seconds_last_minute": 0.0, "on_probation": False, "refused_in_a_row": 0}
            ledger.forget_old(now)
            return {"known": True, "running": ledger.running, "holding_slot": ledger.in_slot,
                    "runs_last_minute": len(ledger.starts),
                    "seconds_last_minute": round(ledger.seconds_used(), 3),
                    "on_probation": now < ledger.probation_until, "refused_in_a_row": ledger.refused}

    def forget(self, session_id):
        """The app let the session go; a running job keeps its ledger until it ends."""
        with self._lock:
            ledger = self._ledgers.get(session_id)
            if ledger is not None and ledger.running == 0:
                del self._ledgers[session_id]

    def known(self):
        with self._lock:
            return len(self._ledgers)

    def forget_idle(self, now=None, force=False):
        """Drops sessions that have been idle for longer than anything about them matters
        (at most every half minute, unless `force`)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._prune(now, force)

    def _prune(self, now, force=False):
        if not force and now - self._last_prune < PRUNE_EVERY_SECONDS:
            return
        self._last_prune = now
        keep_for = max(WINDOW_SECONDS, self.budget().probation_seconds)
        for sid in [sid for sid, ledger in self._ledgers.items()
                    if ledger.running == 0 and now - ledger.last_seen > keep_for]:
            del self._ledgers[sid]

    def refusal_pause(self, in_a_row):
        """Seconds before the n-th refusal in a row is answered: at least 1.5, 3, 6, 6, ...,
        and up to half as long again, drawn at random: scripts refused at the same moment are
        not answered, and so do not come back, at the same moment (docs/classroom.md)."""
        budget = self.budget()
        base = budget.refusal_pause_seconds
        pause = min(base * 2 ** max(0, in_a_row - 1), max(base, budget.refusal_pause_max_seconds))
        return pause * random.uniform(1.0, 1.0 + REFUSAL_JITTER)

    def admit(self, session_id, counts_as_run=True, job=""):
        """`job` names it for the student ("工具 get_weather"), should it run into a limit."""
        return Admission(self, session_id, counts_as_run, job)


class Admission:
    """One job's way through the gate: refused, or admitted into a slot and run."""

    def __init__(self, gate, session_id, counts_as_run=True, job=""):
        self.gate = gate
        self.settings = gate.settings()        # one job, one configuration
        self.budget = self.settings.budget(gate.kind)
        self.session_id = session_id
        self.counts_as_run = counts_as_run
        self.job = job or self.budget.what
        self.probation_note = ""               # why this job runs within probation's limits (on_probation)
        self.slot = None
        self.on_probation = False
        self.entered = False
        self.started = 0.0
        self.hit_limit = False
        self.own_seconds = None                # the job's own time, once it is known
        self.seconds_left = None               # of the session's budget when admitted (None: no session)

    @property
    def wall_seconds(self):
        limits = self.settings.limits
        if self.on_probation:
            return min(limits.wall_seconds, self.budget.probation_wall_seconds)
        return limits.wall_seconds

    @property
    def memory_bytes(self):
        return self.settings.probation_memory_bytes if self.on_probation else self.settings.limits.memory_bytes

    @property
    def demote_after(self):
        """When the job moves to idle CPU and the demoted jobs' tick: at once on probation (its
        session's last job looped or hit a limit), else after the kind's demotion time."""
        if self.on_probation:
            return 0.0
        return self.budget.demote_after_seconds

    @property
    def nice(self):
        return self.settings.probation_nice if self.on_probation else self.settings.job_nice

    def __enter__(self):
        gate, budget, sid = self.gate, self.budget, self.session_id
        if sid is not None:
            now = time.monotonic()
            with gate._lock:
                gate._prune(now)
                ledger = gate._ledgers.get(sid)
                if ledger is None:
                    ledger = gate._ledgers[sid] = Ledger(now)
                ledger.last_seen = now
                ledger.forget_old(now)
                self.on_probation = now < ledger.probation_until
                allowed = (budget.probation_seconds_per_minute if self.on_probation
                           else budget.seconds_per_minute)
                used = ledger.seconds_used()
                refusal = None
                if self.on_probation:
                    self.probation_note = ledger.probation(now, budget)
                if used >= allowed:
                    refusal = Refusal("rate_limited", messages.over_budget(
                        budget.what, used, allowed, ledger.seconds_until_under(allowed, now), ledger.heaviest(now),
                        self.probation_note))
                # Schema refreshes (one per tab on page load) may overlap; they still count
                # against the budget above and queue for the global slots below.
                elif self.counts_as_run and ledger.running >= budget.per_session_concurrent:
                    refusal = Refusal("busy", messages.session_busy(budget.what, ledger.running))
                elif self.counts_as_run and len(ledger.starts) >= budget.per_session_per_minute:
                    refusal = Refusal("rate_limited", messages.too_many_runs(budget.what, self.probation_note))
                if refusal is not None:
                    ledger.refused += 1
                    in_a_row = ledger.refused
                else:
                    if self.counts_as_run:
                        ledger.starts.append(now)
                    ledger.running += 1
                    ledger.refused = 0
                    self.entered = True
                    self.seconds_left = allowed - used
            if refusal is not None:
                # Every refusal the session brought on itself is answered after a pause that
                # grows while they come in a row: a script cannot turn them into a flood.
                time.sleep(gate.refusal_pause(in_a_row))
                raise refusal
        try:
            if self.on_probation:   # probation jobs have their own slot: never one the others need
                slot = gate.slots("probation")
                if not slot.acquire(timeout=budget.queue_wait_seconds / 2):
                    raise Refusal("busy", messages.probation_queue_full(budget.what, self.probation_note))
            else:
                slot = gate.slots("quick")
                if slot is None or not slot.acquire(timeout=budget.queue_wait_seconds):
                    raise Refusal("busy", messages.server_busy(budget.what))
            self.slot = slot
            self._count_slot(+1)
        except BaseException:
            self._release()
            self._leave(charge=False)
            raise
        self.started = time.monotonic()
        return self

    def run(self, job):
        """Runs the admitted job in the pool, within this admission's limits."""
        outcome = self.gate.pool().run(job, wall_seconds=self.wall_seconds, nice=self.nice,
                                       idle=self.on_probation, memory_bytes=self.memory_bytes,
                                       demote_after=self.demote_after, on_demote=self.demote)
        self.note(outcome)
        return outcome

    def demote(self):
        """The job has run long enough to be moved to idle CPU: it trades its slot for one
        of the slow lane's, so that the quick jobs behind it need not wait for it to end."""
        slow = self.gate.slots("slow")
        if self.slot is not None and slow is not None and self.slot is not slow \
                and not self.on_probation and slow.acquire(blocking=False):
            self.slot.release()
            self.slot = slow

    def note(self, outcome):
        """The job is over: a job that ran into a limit puts its session on probation."""
        self.hit_limit = outcome is None or outcome.result is None or bool(outcome.too_large)
        if outcome is not None:
            self.note_own_time(outcome.own_seconds)

    def note_own_time(self, seconds):
        """The job ran this long, from its start to its end, less its waits for a CPU: its
        session is charged that much, not what a full machine or the server's own work added
        to its time in the slot (without it, that time in the slot is charged)."""
        if seconds is not None:
            self.own_seconds = max(0.0, float(seconds))

    def note_limit_hit(self):
        """A job run outside the pool (a shell command) ran into its time or memory limit."""
        self.hit_limit = True

    def _count_slot(self, step):
        if self.session_id is None:
            return
        with self.gate._lock:
            ledger = self.gate._ledgers.get(self.session_id)
            if ledger is not None:
                ledger.in_slot += step

    def _release(self):
        if self.slot is not None:
            self.slot.release()
            self.slot = None
            self._count_slot(-1)

    def _leave(self, charge=True):
        if not self.entered:
            return
        self.entered = False
        now = time.monotonic()
        with self.gate._lock:
            ledger = self.gate._ledgers.get(self.session_id)
            if ledger is None:
                return
            ledger.running -= 1
            ledger.last_seen = now
            if charge:
                charged = now - self.started if self.own_seconds is None else self.own_seconds
                ledger.spent.append((now, charged, self.job))
                # Probation protects the others on a shared server from one session's loop. A local run
                # has no others: there a loop in one lesson must not hold back the examples of the rest.
                if self.hit_limit and self.settings.probation_applies():
                    ledger.probation_until = now + self.budget.probation_seconds
                    ledger.probation_cause = (now, self.job)

    def __exit__(self, exc_type, *exc):
        self._release()
        if exc_type is not None and not issubclass(exc_type, Refusal):
            self.hit_limit = True
        self._leave(charge=True)
        return False
