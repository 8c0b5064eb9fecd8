"""Fairness limits: a session whose tools loop forever is refused quickly once it has used its
minute's budget, is put on probation (SCHED_IDLE, one shared slot, shorter time limit,
smaller budget), and the others keep running normally. A job still running after a moment
moves to idle CPU and to a slow lane of slots, and runs only a quarter of the time from then on.
Functional checks only, and one share of a CPU with a wide margin: no timing asserts."""
import dataclasses
import os
import re
import threading
import time
import uuid

import pytest

import sandbox
from sandbox.admission import Gate
from sandbox.pool import Pool
from sandbox.settings import Settings

# Limits of a few tenths of a second: run alone, never beside the parallel tests (scripts/test.sh).
pytestmark = pytest.mark.serial

GOOD = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("把两个整数相加")
def add(a: int, b: int = 1) -> int:
    return a + b
'''
LOOP = "while True:\n    pass"
PRIORITY = "import os\nreturn f'{os.getpriority(os.PRIO_PROCESS, 0)} {os.sched_getscheduler(0)}'"
ESCAPE = '''import os
attempts = []
for attempt in (lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)),
                lambda: os.setpriority(os.PRIO_PROCESS, 0, 0),
                lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))):
    try:
        attempt()
        attempts.append("changed")
    except PermissionError:
        attempts.append("refused")
return f"{attempts} {os.sched_getscheduler(0)}"'''

# Spins for half a second in a thread started at once, then reports the priority of both.
SLOW = '''import os, threading, time
seen = {}
def spin():
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        pass
    seen["thread"] = os.sched_getscheduler(0)
helper = threading.Thread(target=spin)
helper.start()
helper.join()
return f"{os.getpriority(os.PRIO_PROCESS, 0)} {os.sched_getscheduler(0)} {seen['thread']}"'''

# Busy for 1.2 s of wall time, then the share of it this process had a CPU.
SHARE = """import time
end = time.monotonic() + 1.2
while time.monotonic() < end:
    pass
return str(round(time.process_time() / 1.2, 2))"""


@pytest.fixture
def quick_limits(configured):
    """Short time limits so that hitting them costs fractions of a second."""
    configured(wall_seconds=0.4, tool={"probation_wall_seconds": 0.3, "seconds_per_minute": 0.6,
                                       "probation_seconds_per_minute": 0.6}, refusal_pause_seconds=0.0)
    return configured


def session():
    return f"test-{uuid.uuid4().hex[:8]}"


def test_budget_refuses_a_looping_session_with_a_clear_message(helpers, quick_limits):
    sid = session()
    first = sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    assert first["error_code"] == "timeout" and "0.4 秒" in first["content"]
    second = sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    # On probation: a shorter limit, the sandbox's doing, and which job put the session there, when.
    assert second["error_code"] == "probation" and "0.3 秒" in second["content"]
    assert re.search(r"这个会话在观察期：(刚才|\d+ 秒前)，工具 attack 运行时超出了上限", second["content"])
    refused = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=sid)
    assert refused["error_code"] == "rate_limited" and refused.get("worker_pid") is None
    assert refused["content"].startswith("❌ [请稍后再试] 运行太频繁：你的工具在最近一分钟里累计运行了")
    assert "上限 0.6 秒" in refused["content"] and "秒后再试" in refused["content"]
    assert "其中最多的一次是工具 attack（" in refused["content"]                 # where the time went
    left = re.search(r"观察期还剩 (\d+) 秒", refused["content"])
    assert left and 0 < int(left.group(1)) <= sandbox.current_settings().probation_seconds + 1
    usage = sandbox.session_usage(sid)
    assert usage["seconds_last_minute"] >= 0.6 and usage["on_probation"] and usage["running"] == 0
    other = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=session())
    assert other["ok"] is True and other["content"] == "2"


def test_schema_extraction_counts_against_the_same_budget(helpers, quick_limits):
    sid = session()
    looping_module = "from tool_registry import ToolRegistry\nregistry = ToolRegistry()\nwhile True:\n    pass\n"
    stuck = sandbox.extract_schemas(looping_module, session_id=sid)
    assert stuck["error"]["code"] == "timeout"
    sandbox.extract_schemas(looping_module, session_id=sid)
    refused = sandbox.extract_schemas(GOOD, session_id=sid)
    assert not refused["ok"] and refused["error"]["code"] == "rate_limited" and "运行太频繁" in refused["error"]["message"]
    assert sandbox.extract_schemas(GOOD)["ok"] is True                      # the server's own calls: no session
    assert sandbox.extract_schemas(GOOD, session_id=session())["ok"] is True


def test_a_local_run_puts_nobody_on_probation(helpers, quick_limits):
    """On loopback (no class to protect) a loop is stopped at its limit, and the session's next jobs
    run with the usual limits: the examples of the other lessons keep working."""
    # A wall limit with room to spare over probation's 0.3 s: the slow job below must fit in it whole.
    quick_limits(wall_seconds=1.0, tool={"seconds_per_minute": 30.0})
    sandbox.configure(dataclasses.replace(sandbox.current_settings(), probation=None))     # as the app runs
    assert not sandbox.current_settings().serving_publicly()
    sid = session()
    assert sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)["error_code"] == "timeout"
    assert sandbox.session_usage(sid)["on_probation"] is False
    slow = sandbox.run_tool(helpers.tool_source("import time\ntime.sleep(0.5)\nreturn 'done'"), "attack", {},
                            session_id=sid)
    assert slow["ok"] and slow["content"] == "done", slow         # longer than probation's 0.3 s limit
    assert Settings(public=True).probation_applies() and Settings(server_name="0.0.0.0").probation_applies()
    assert not Settings(server_name="127.0.0.1").probation_applies() and Settings(probation=True).probation_applies()


def test_probation_runs_only_on_idle_cpu_and_others_do_not(helpers, quick_limits, nice_at_least):
    sid = session()
    normal = f"{nice_at_least(sandbox.current_settings().job_nice)} {os.SCHED_OTHER}"
    assert sandbox.run_tool(helpers.tool_source(PRIORITY), "attack", {}, session_id=sid)["content"] == normal
    sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    assert sandbox.session_usage(sid)["on_probation"] is True
    idle = sandbox.run_tool(helpers.tool_source(PRIORITY), "attack", {}, session_id=sid)
    probation = f"{nice_at_least(sandbox.current_settings().probation_nice)} {os.SCHED_IDLE}"
    assert idle["ok"] and idle["content"] == probation, idle
    fine = sandbox.run_tool(helpers.tool_source(PRIORITY), "attack", {}, session_id=session())
    assert fine["ok"] and fine["content"] == normal


def test_every_job_stays_in_the_servers_session(helpers):
    """With autogroup scheduling a session is a scheduling group, the server's equal whatever
    the nice values inside it; and SCHED_IDLE yields only within a group. Each worker is a
    process group of its own (killed as one) in the session of the process that runs the
    sandbox, and cannot start a session of its own: it leads its process group."""
    source = helpers.tool_source("import os\ntry:\n    os.setsid()\n    left = 'left'\n"
                                 "except PermissionError:\n    left = 'stayed'\n"
                                 "return f'{os.getsid(0)} {os.getpgid(0) == os.getpid()} {left}'")
    for sid in (session(), None):
        ran = sandbox.run_tool(source, "attack", {}, session_id=sid)
        assert ran["ok"] and ran["content"] == f"{os.getsid(0)} True stayed", ran


def test_a_job_still_running_after_a_moment_moves_to_idle_cpu_threads_and_all(helpers, configured, nice_at_least):
    configured(tool={"demote_after_seconds": 0.1})
    slow = sandbox.run_tool(helpers.tool_source(SLOW), "attack", {}, session_id=session())
    assert slow["ok"], slow
    assert slow["content"] == f"19 {os.SCHED_IDLE} {os.SCHED_IDLE}"
    quick = sandbox.run_tool(helpers.tool_source(PRIORITY), "attack", {}, session_id=session())
    assert quick["content"] == f"{nice_at_least(sandbox.current_settings().job_nice)} {os.SCHED_OTHER}"


def test_a_job_still_running_after_a_moment_gets_a_quarter_of_a_cpu(helpers, configured):
    """SCHED_IDLE alone lets a loop take every CPU nobody else wants, and that still costs the
    others: from its demotion time on, a job runs one tick in four (stopped the rest). Alone on
    the machine it would have had a whole CPU."""
    configured(tool={"demote_after_seconds": 0.1})
    spun = sandbox.run_tool(helpers.tool_source(SHARE), "attack", {}, session_id=session())
    assert spun["ok"] and float(spun["content"]) < 0.6, spun


def test_a_job_on_probation_is_held_back_from_its_start(helpers, configured):
    """A session whose job looped is not given the first moments at full speed again: its
    jobs run from the start in one tick of eight (the demoted jobs' tick of every other cycle),
    while a first run has its demotion time."""
    # The held job's 1.2 s loop may end while it is stopped: it finishes at its next turn, up to a
    # probation cycle (0.4 s) later, so its time limit leaves room for that and for its start.
    configured(wall_seconds=1.5, tool={"demote_after_seconds": 1.0, "probation_wall_seconds": 2.0,
                                       "seconds_per_minute": 30.0, "probation_seconds_per_minute": 30.0},
               refusal_pause_seconds=0.0)
    looping = session()
    first = sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=looping)
    assert first["error_code"] == "timeout", first
    held = sandbox.run_tool(helpers.tool_source(SHARE), "attack", {}, session_id=looping)
    fresh = sandbox.run_tool(helpers.tool_source(SHARE), "attack", {}, session_id=session())
    assert held["ok"] and fresh["ok"], (held, fresh)
    assert float(held["content"]) < 0.25 and float(fresh["content"]) > 0.5, (held, fresh)


# Spins until the sandbox has demoted it (SCHED_IDLE), then for a second: reports the CPU share it
# had in that second. Only the demoted part is measured: what a loop takes before its demotion
# depends on how its start fell against the others', not on the duty cycle.
DEMOTED_SHARE = """import os, time
while os.sched_getscheduler(0) != os.SCHED_IDLE:
    pass
start, used = time.monotonic(), time.process_time()
while time.monotonic() < start + 1.0:
    pass
return str(round((time.process_time() - used) / (time.monotonic() - start), 3))"""


def test_demoted_jobs_together_get_a_quarter_of_the_machine(helpers, configured):
    """All demoted jobs run in the same tick and none in the three after it: six demoted loops at
    once share a quarter of this 2-CPU machine between them, half a CPU (a tick more or less in
    their second: ±0.1), not six quarters of one (1.5)."""
    configured(tool={"demote_after_seconds": 0.1, "concurrent": 6})
    shares = []
    loops = [threading.Thread(target=lambda: shares.append(
        sandbox.run_tool(helpers.tool_source(DEMOTED_SHARE), "attack", {}, session_id=session())))
        for _ in range(6)]
    for loop in loops:
        loop.start()
    for loop in loops:
        loop.join()
    assert all(spun["ok"] for spun in shares), shares
    assert 0.25 < sum(float(spun["content"]) for spun in shares) < 0.75, shares


# Uses 40 ms of CPU, however long the machine makes it wait for them, then reports its scheduling policy.
BRIEF_WORK = """import os, time
start = time.process_time()
while time.process_time() - start < 0.04:
    pass
return str(os.sched_getscheduler(0))"""


def test_on_a_full_machine_brief_work_is_not_taken_for_a_loop(helpers, busy_loops):
    """On a full machine a job's tools wait for a CPU; only the time a job has had (running or
    sleeping, not waiting for its turn) counts towards its demotion and its time limit. Judged
    by wall time, this job would be demoted to idle CPU after 0.2 s, and there, behind busy
    loops, starved into its time limit."""
    busy_loops(per_cpu=2)          # at the test run's priority, above every job's
    done = sandbox.run_tool(helpers.tool_source(BRIEF_WORK), "attack", {}, session_id=session())
    assert done["ok"] and done["content"] == str(os.SCHED_OTHER), done


def test_on_a_full_machine_a_loop_is_charged_its_time_limit_not_its_wait(helpers, quick_limits, busy_loops):
    """The session's budget counts what the job had, like its clocks: a loop that hits its 0.4 s
    limit costs its session about 0.4 s, however long it waited for a CPU on the way. Charged by
    wall time, one such run on a full machine used the whole 0.6 s budget of a minute."""
    busy_loops(per_cpu=2)
    sid = session()
    done = sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    assert done["error_code"] == "timeout", done
    charged = sandbox.session_usage(sid)["seconds_last_minute"]
    assert done["wall_ms"] / 1000 > 0.5, done                 # it did wait: the clock moved on
    assert charged < 0.55 and charged < done["wall_ms"] / 1000 - 0.1, (charged, done["wall_ms"])


def test_the_wait_credit_is_capped_and_ends_once_the_job_has_used_its_cpu():
    """The rule by itself, on readings given in turn for each process (run-queue wait of its main
    thread, its CPU time): the waits of all the job's processes add up, a process that has ended
    keeps its last reading, the credit is capped, and it ends for good once the job has used its
    CPU: a loop in many processes, each waiting for the others, earns no delay of its own."""
    from sandbox.cpu_share import WaitCredit

    readings = {1: iter([(1.0, 0.5), (1.3, 0.55), (1.4, 0.6), (5.0, 0.6)]),   # the worker that was there
                2: iter([(0.1, 0.01), (0.2, 0.02), (4.0, 0.05)]),            # a process the job started
                3: iter([(0.0, 0.1)])}

    class Scripted(WaitCredit):
        @staticmethod
        def _read(pid):
            return next(readings[pid])

    credit = Scripted(most=2.0, busy=0.2, existing=[1])
    assert round(credit.more([1, 2]), 3) == 0.4     # 0.3 s of the worker's and 0.1 s of the new one's
    assert round(credit.more([1, 2]), 3) == 0.2
    assert round(credit.more([1]), 3) == 1.4        # capped: 2 s in all (process 2 keeps its 0.2 s)
    assert credit.more([2]) == 0.0
    assert credit.more([3]) == 0.0                  # 0.1 + 0.05 + 0.1 s of CPU: 0.2 s used, no more credit
    assert credit.ended


def start_loop(helpers, configured, slow_lane):
    """One quick slot, one loop in it that has been moved to idle CPU (a slow lane of
    `slow_lane` slots: 0 is a full one); returns its thread."""
    # A quick job waits at most 1.5 s for a slot; the loop holds one for 3 s unless it is moved to the
    # slow lane, which takes 0.1 s of its CPU: on a busy machine that CPU may be a while coming.
    configured(queue_wait_seconds=1.5, wall_seconds=3.0,
               tool={"demote_after_seconds": 0.1, "concurrent": 1, "slow_concurrent": slow_lane})
    sid, outcome = session(), {}
    loop = threading.Thread(target=lambda: outcome.update(
        sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)))
    loop.start()
    deadline = time.monotonic() + 10
    while not sandbox.session_usage(sid)["holding_slot"] and loop.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    return loop, outcome


def test_a_slow_job_gives_its_slot_to_the_quick_ones_behind_it(helpers, configured):
    loop, outcome = start_loop(helpers, configured, 1)
    quick = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=session())
    still_looping = loop.is_alive()
    loop.join()
    assert quick["ok"] and quick["content"] == "2", quick
    assert still_looping and outcome["error_code"] == "timeout"


def test_a_slow_job_keeps_its_slot_when_the_slow_lane_is_full(helpers, configured):
    loop, outcome = start_loop(helpers, configured, 0)
    waited = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=session())
    loop.join()
    assert waited["error_code"] == "busy" and "服务器正忙" in waited["content"], waited
    assert outcome["error_code"] == "timeout"


def test_a_job_on_idle_cpu_lets_the_warm_pool_refill_before_its_own_fork(helpers, monkeypatch, request):
    pool = Pool(pool_size=2)                   # a pool of its own, warm like the sandbox's in class
    request.addfinalizer(pool.close)
    pool.start()
    pool.wait_warm(timeout=15.0)
    for worker in [pool.take() for _ in range(pool.pool_size)]:   # the class just used every warm worker
        worker.kill()
        worker.close()
    warm_at_fork, spawn = [], pool.spawn
    monkeypatch.setattr(pool, "spawn", lambda memory_bytes=None: (
        warm_at_fork.append(pool.warm_count()) if memory_bytes else None) or spawn(memory_bytes))
    outcome = pool.run({"op": "run", "source": GOOD, "name": "add", "args": {"a": 1}},
                       idle=True, memory_bytes=64 << 20)
    assert outcome.result["content"] == "2"
    assert warm_at_fork == [pool.pool_size]


def test_a_tool_cannot_raise_its_own_priority(helpers, quick_limits):
    sid = session()
    sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)     # now on probation
    # At idle priority the tool gets CPU only when nothing else wants it (the containment tests
    # run beside this lane): time enough for its three attempts, however busy the machine is.
    quick_limits(tool={"probation_wall_seconds": 10.0, "probation_seconds_per_minute": 30.0})
    escaped = sandbox.run_tool(helpers.tool_source(ESCAPE), "attack", {}, session_id=sid)
    assert escaped["ok"], escaped
    assert escaped["content"] == f"['refused', 'refused', 'refused'] {os.SCHED_IDLE}"


def test_sessions_on_probation_share_one_slot(helpers, quick_limits):
    quick_limits(queue_wait_seconds=0.2, tool={"seconds_per_minute": 30.0, "probation_seconds_per_minute": 30.0,
                                               "probation_wall_seconds": 1.0, "probation_concurrent": 1})
    first, second = session(), session()
    for sid in (first, second):
        sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
        assert sandbox.session_usage(sid)["on_probation"]
    holding = {}
    slow = helpers.tool_source("import time\ntime.sleep(5)\nreturn 'late'")
    thread = threading.Thread(target=lambda: holding.update(sandbox.run_tool(slow, "attack", {}, session_id=first)))
    thread.start()
    deadline = time.monotonic() + 5
    while not sandbox.session_usage(first)["holding_slot"] and time.monotonic() < deadline:   # the one slot
        time.sleep(0.005)
    waiting = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=second)
    unaffected = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=session())
    thread.join()
    assert waiting["error_code"] == "busy" and "排队" in waiting["content"]
    assert unaffected["ok"] is True
    assert holding["error_code"] == "probation"          # probation's shorter limit


def test_idle_sessions_are_forgotten():
    sid = session()
    assert sandbox.run_tool(GOOD, "add", {"a": 2}, session_id=sid)["ok"]
    assert sandbox.session_usage(sid)["known"] and sandbox.session_usage(sid)["runs_last_minute"] == 1
    sandbox.forget_session(sid)
    assert not sandbox.session_usage(sid)["known"]



def test_sessions_idle_for_long_are_dropped_and_running_ones_kept():
    gate = Gate(lambda: Settings(), pool=None)       # the admission alone: no job is run
    with gate.admit("stale"):
        pass
    with gate.admit("running"):
        gate.forget_idle(now=time.monotonic() + 3600, force=True)      # an hour later
        assert not gate.usage("stale")["known"] and gate.usage("running")["known"]
    assert gate.known() == 1


def test_configure_sets_the_fairness_limits(configured):
    configured(probation_seconds=30, probation_nice=40, refusal_pause_seconds=0.25,
               tool={"seconds_per_minute": 5, "probation_wall_seconds": 0.5, "probation_seconds_per_minute": 1.5,
                     "probation_concurrent": 2})
    settings = sandbox.current_settings()
    assert settings.tool.seconds_per_minute == 5.0
    assert settings.tool.probation_seconds_per_minute == 1.5
    assert settings.probation_nice == 19                                  # clamped to what the kernel allows
    assert settings.tool.probation_concurrent == 2 and settings.refusal_pause_seconds == 0.25
    probation = Gate(sandbox.current_settings, pool=None).slots("probation")
    assert probation.acquire(blocking=False) and probation.acquire(blocking=False)
    assert not probation.acquire(blocking=False)
    with pytest.raises(TypeError):
        sandbox.configure(per_session_seconds=5)                          # a misspelt name is not ignored


def test_every_extraction_is_charged_to_its_session(quick_limits):
    sid = session()
    quick_limits(tool={"seconds_per_minute": 1e-6})              # one job's worth of budget
    first = sandbox.extract_schemas(GOOD, session_id=sid)
    assert first["ok"] and sandbox.session_usage(sid)["seconds_last_minute"] >= 0
    again = sandbox.extract_schemas(GOOD, session_id=sid)           # the very same source: charged again
    assert again["error"]["code"] == "rate_limited" and again.get("worker_pid") is None
    assert sandbox.extract_schemas(GOOD, session_id=session())["ok"]            # others: their own budget


def test_probation_has_a_smaller_memory_budget(helpers, quick_limits):
    quick_limits(tool={"probation_seconds_per_minute": 30.0})
    big = helpers.tool_source("block = bytearray(100 * 1024 * 1024)\nreturn len(block) >> 20")
    fine = sandbox.run_tool(big, "attack", {}, session_id=session())
    assert fine["ok"] and fine["content"] == "100"
    sid = session()
    sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    assert sandbox.session_usage(sid)["on_probation"]
    squeezed = sandbox.run_tool(big, "attack", {}, session_id=sid)
    budget = sandbox.current_settings().probation_memory_bytes >> 20
    assert squeezed["error_code"] == "memory_limit" and f"约 {budget} MB" in squeezed["content"]


def test_refusals_in_a_row_wait_longer():
    gate = Gate(lambda: Settings(refusal_pause_seconds=1.5, refusal_pause_max_seconds=6.0), pool=None)
    for in_a_row, least in ((1, 1.5), (2, 3.0), (3, 6.0), (4, 6.0), (9, 6.0)):
        assert least <= gate.refusal_pause(in_a_row) <= least * 1.5
    assert Gate(lambda: Settings(refusal_pause_seconds=0.0), pool=None).refusal_pause(5) == 0.0


def test_scripts_refused_together_are_not_answered_together():
    """Ten scripts refused in the same instant come back spread over a second or more, not
    in step: in step they would hit the server together every few seconds for as long as
    they kept at it."""
    gate = Gate(lambda: Settings(refusal_pause_seconds=1.5, refusal_pause_max_seconds=6.0), pool=None)
    pauses = [gate.refusal_pause(3) for _ in range(10)]
    assert max(pauses) - min(pauses) > 0.5, pauses


def test_a_job_that_runs_starts_the_refusal_count_again(helpers, quick_limits):
    sid = session()
    sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    sandbox.run_tool(helpers.tool_source(LOOP), "attack", {}, session_id=sid)
    for expected in (1, 2):
        assert sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=sid)["error_code"] == "rate_limited"
        assert sandbox.session_usage(sid)["refused_in_a_row"] == expected
    quick_limits(tool={"seconds_per_minute": 60.0, "probation_seconds_per_minute": 60.0})   # budget again
    assert sandbox.run_tool(GOOD, "add", {"a": 1}, session_id=sid)["ok"]
    assert sandbox.session_usage(sid)["refused_in_a_row"] == 0
