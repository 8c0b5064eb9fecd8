"""Who may run a job now, and how: per-session ledgers, fairness budgets, probation,
refusal pauses and the slots that bound how many jobs run at once.

`Gate.admit(session_id)` is a context manager: it refuses quickly (raising `Refusal`)
when the session is over its limits, runs the admitted job in the pool within the
limits that apply to it, and charges the session for the time when the job ends.
"""
import collections
import threading
import time

WINDOW_SECONDS = 60.0          # the budgets are per minute
PRUNE_EVERY_SECONDS = 30.0


class Refusal(Exception):
    """A job that is not run: `code` is a tool_outcome label key, `message` says why in Chinese."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


class Ledger:
    """What one session has been using: jobs admitted now, job starts and worker-seconds
    in the last minute, and until when it is on probation."""
    __slots__ = ("running", "in_slot", "starts", "spent", "probation_until", "last_seen", "refused")

    def __init__(self, now):
        self.refused = 0                       # refusals in a row for an exhausted budget
        self.running = 0                       # admitted, waiting for a slot or running
        self.in_slot = 0                       # of those, holding a slot (running in a worker)
        self.starts = collections.deque()      # start times of tool runs
        self.spent = collections.deque()       # (end time, worker seconds) of every job
        self.probation_until = 0.0
        self.last_seen = now

    def forget_old(self, now):
        while self.starts and now - self.starts[0] > WINDOW_SECONDS:
            self.starts.popleft()
        while self.spent and now - self.spent[0][0] > WINDOW_SECONDS:
            self.spent.popleft()

    def seconds_used(self):
        return sum(seconds for _, seconds in self.spent)

    def seconds_until_under(self, budget, now):
        """How long until enough of the last minute's usage has aged out to run again."""
        used = self.seconds_used()
        for ended, seconds in self.spent:
            used -= seconds
            if used < budget:
                return max(1, int(WINDOW_SECONDS - (now - ended)) + 1)
        return int(WINDOW_SECONDS)


class Gate:
    """The ledgers of every session and the slots; `settings()` and `pool()` are read at
    each admission, so a new configuration applies to the next job."""

    def __init__(self, settings, pool):
        self.settings = settings
        self.pool = pool
        self._lock = threading.Lock()
        self._ledgers = {}                     # session id -> Ledger, forgotten once idle
        self._last_prune = 0.0
        self._slots = {}                       # lane -> (size, semaphore)

    # ------------------------------------------------------------ slots

    def slots(self, lane):
        """The semaphore of a lane ("quick", "probation", "slow"), rebuilt when its size changes;
        a job releases the one it took."""
        settings = self.settings()
        size = {"quick": settings.max_concurrent, "probation": settings.probation_concurrent,
                "slow": settings.slow_concurrent}[lane]
        with self._lock:
            built = self._slots.get(lane)
            if built is None or built[0] != size:
                built = self._slots[lane] = (size, threading.BoundedSemaphore(size) if size > 0 else None)
            return built[1]

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
        keep_for = max(WINDOW_SECONDS, self.settings().probation_seconds)
        for sid in [sid for sid, ledger in self._ledgers.items()
                    if ledger.running == 0 and now - ledger.last_seen > keep_for]:
            del self._ledgers[sid]

    def refusal_pause(self, in_a_row):
        """Seconds before the n-th refusal in a row is answered: 1.5, 3, 6, 6, ..."""
        settings = self.settings()
        base = settings.refusal_pause_seconds
        return min(base * 2 ** max(0, in_a_row - 1), max(base, settings.refusal_pause_max_seconds))

    def admit(self, session_id, counts_as_run=True):
        return Admission(self, session_id, counts_as_run)


class Admission:
    """One job's way through the gate: refused, or admitted into a slot and run."""

    def __init__(self, gate, session_id, counts_as_run=True):
        self.gate = gate
        self.settings = gate.settings()        # one job, one configuration
        self.session_id = session_id
        self.counts_as_run = counts_as_run
        self.slot = None
        self.on_probation = False
        self.entered = False
        self.started = 0.0
        self.hit_limit = False

    @property
    def wall_seconds(self):
        limits = self.settings.limits
        if self.on_probation:
            return min(limits.wall_seconds, self.settings.probation_wall_seconds)
        return limits.wall_seconds

    @property
    def memory_bytes(self):
        return self.settings.probation_memory_bytes if self.on_probation else self.settings.limits.memory_bytes

    @property
    def nice(self):
        return self.settings.probation_nice if self.on_probation else self.settings.job_nice

    def __enter__(self):
        gate, settings, sid = self.gate, self.settings, self.session_id
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
                budget = (settings.probation_seconds_per_minute if self.on_probation
                          else settings.per_session_seconds_per_minute)
                used = ledger.seconds_used()
                over_budget = used >= budget
                if over_budget:
                    ledger.refused += 1
                    in_a_row = ledger.refused
                    refusal = Refusal("rate_limited", (
                        f"运行太频繁：你的工具在最近一分钟里累计运行了 {used:.1f} 秒（上限 {budget:g} 秒），"
                        f"请修好死循环或耗时的代码后，约 {ledger.seconds_until_under(budget, now)} 秒后再试。"))
                # Schema refreshes (one per tab on page load) may overlap; they still count
                # against the budget above and queue for the global slots below.
                elif self.counts_as_run and ledger.running >= settings.per_session_concurrent:
                    raise Refusal("busy", f"你已经有 {ledger.running} 个工具任务在运行，"
                                          "请等它们结束后再试。")
                elif self.counts_as_run and len(ledger.starts) >= settings.per_session_per_minute:
                    raise Refusal("rate_limited", "一分钟内运行次数太多，请稍等片刻再试。")
                else:
                    if self.counts_as_run:
                        ledger.starts.append(now)
                    ledger.running += 1
                    ledger.refused = 0
                    self.entered = True
            if over_budget:
                time.sleep(gate.refusal_pause(in_a_row))
                raise refusal
        try:
            if self.on_probation:   # probation jobs have their own slot: never one the others need
                slot = gate.slots("probation")
                if not slot.acquire(timeout=settings.queue_wait_seconds / 2):
                    raise Refusal("busy", "你的工具最近超时或超出了资源上限，这类任务需要排队，"
                                          "现在排队的太多了。请修好代码后几秒再试。")
            else:
                slot = gate.slots("quick")
                if slot is None or not slot.acquire(timeout=settings.queue_wait_seconds):
                    raise Refusal("busy", "服务器正忙（同时运行的工具任务太多），请几秒后再试。")
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
                                       demote_after=self.settings.demote_after_seconds,
                                       on_demote=self.demote)
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
                ledger.spent.append((now, now - self.started))
                if self.hit_limit:
                    ledger.probation_until = now + self.settings.probation_seconds

    def __exit__(self, exc_type, *exc):
        self._release()
        if exc_type is not None and not issubclass(exc_type, Refusal):
            self.hit_limit = True
        self._leave(charge=True)
        return False
