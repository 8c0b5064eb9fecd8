"""The CPU-share decisions by themselves: a job's clocks, its wait credit, its demotion and
the duty cycle, on a scripted credit and given moments (no process, no sleeping)."""
import pytest

from sandbox import cpu_share
from sandbox.cpu_share import DUTY_TICK_SECONDS as TICK
from sandbox.cpu_share import CpuShare, Decision


class Credit:
    """A WaitCredit stand-in: starts at `started` and hands out the waits given in turn."""

    def __init__(self, started, waits=()):
        self.started, self.waits, self.read = started, list(waits), []

    def more(self, pids):
        self.read.append(list(pids))
        return self.waits.pop(0) if self.waits else 0.0

    def own_seconds(self):
        return 0.0


# A start at the beginning of a cycle that demoted jobs may run in (and probation jobs too).
START = 1000 * cpu_share.PROBATION_CYCLE * TICK


def share(limit=2.0, demote_after=None, on_probation=False, waits=(), start=START):
    credit = Credit(start, waits)
    return CpuShare(limit, demote_after, on_probation, credit=credit), credit


def test_a_job_runs_until_its_deadline_and_is_stopped_there():
    job, credit = share(limit=2.0)
    before = job.decide(lambda: [7], START + 1.0)
    assert before == Decision(timed_out=False, demote=False, hold=None, wait=pytest.approx(1.0))
    assert credit.read == []                         # no clock was due: nothing read
    assert job.decide(lambda: [7], START + 2.0).timed_out
    assert credit.read == [[7]]                      # read once the deadline came, and nothing was owed


def test_its_waits_for_a_cpu_move_the_deadline_on():
    job, credit = share(limit=2.0, waits=[0.5, 0.0])
    decision = job.decide(lambda: [7], START + 2.0)
    assert not decision.timed_out and decision.wait == pytest.approx(0.5)
    assert job.deadline == pytest.approx(START + 2.5)
    assert job.decide(lambda: [7], START + 2.5).timed_out


def test_a_due_clock_is_read_again_only_after_a_wait_that_matters():
    job, credit = share(limit=2.0, waits=[cpu_share.CREDIT_STEP_SECONDS / 2, 0.3])
    decision = job.decide(lambda: [7], START + 2.0)
    assert len(credit.read) == 1                                # the 0.3 s is not asked for yet
    assert not decision.timed_out and decision.wait == pytest.approx(cpu_share.CREDIT_STEP_SECONDS / 2)


def test_a_job_is_demoted_once_at_its_demotion_time_and_then_held_between_its_turns():
    job, _ = share(limit=2.0, demote_after=0.2)
    early = job.decide(lambda: [7], START + 0.1)
    assert not early.demote and early.hold is None and early.wait == pytest.approx(0.1)
    at = START + 0.2 + 0.001                             # the first tick of a cycle: its turn
    first = job.decide(lambda: [7], at)
    assert first.demote and first.hold is False and job.demoted
    between = job.decide(lambda: [7], at + TICK)         # the next tick is the others'
    assert not between.demote and between.hold is True
    # it wakes just past the start of its next turn, and then runs
    woken = at + TICK + between.wait
    assert woken == pytest.approx(START + 2 * cpu_share.DEMOTED_CYCLE * TICK + 0.001)
    assert job.decide(lambda: [7], woken).hold is False


def test_the_demotion_time_moves_on_by_the_waits_too():
    job, _ = share(limit=2.0, demote_after=0.2, waits=[0.15, 0.0])
    decision = job.decide(lambda: [7], START + 0.2)
    assert not decision.demote and not job.demoted
    assert job.demote_at == pytest.approx(START + 0.35) and job.deadline == pytest.approx(START + 2.15)
    assert job.decide(lambda: [7], START + 0.35).demote


def test_a_waiting_job_not_yet_due_is_credited_when_its_supervisor_reads_the_waits():
    job, _ = share(limit=2.0, demote_after=0.2, waits=[0.05])
    assert job.note_waits([7, 8]) == 0.05
    assert job.demote_at == pytest.approx(START + 0.25) and job.deadline == pytest.approx(START + 2.05)


def test_a_demoted_job_keeps_its_deadline():
    job, _ = share(limit=1.0, demote_after=0.2)
    job.decide(lambda: [7], START + 0.2)
    assert job.decide(lambda: [7], START + 0.999).wait <= 0.001 + 1e-9
    assert job.decide(lambda: [7], START + 1.0).timed_out


def test_on_probation_a_job_is_demoted_from_its_start_and_runs_one_tick_in_eight():
    job, _ = share(limit=1.0, demote_after=0.0, on_probation=True)
    first = job.decide(lambda: [7], START)
    assert first.demote and first.hold is False
    turns = [not job.decide(lambda: [7], START + (i + 0.5) * TICK).hold for i in range(16)]
    assert turns == [i % cpu_share.PROBATION_CYCLE == 0 for i in range(16)]


def test_on_probation_the_clock_starts_at_its_first_turn():
    """Started in a tick that is not its turn, it gets its time limit from its turn on."""
    late = START + TICK                                  # the tick after a probation turn
    job, _ = share(limit=1.0, demote_after=0.0, on_probation=True, start=late)
    first_turn = START + cpu_share.PROBATION_CYCLE * TICK
    assert job.deadline == pytest.approx(first_turn + 1.0 + 0.001)
    assert job.decide(lambda: [7], late).hold is True
    on_time, _ = share(limit=1.0, demote_after=0.0, on_probation=True)
    assert on_time.deadline == pytest.approx(START + 1.0)


def test_a_job_that_is_never_demoted_waits_for_its_deadline_only():
    job, _ = share(limit=3.0, demote_after=None)
    decision = job.decide(lambda: [7], START + 2.0)
    assert decision == Decision(False, False, None, pytest.approx(1.0))
    assert not job.demoted


def test_the_wait_credit_is_the_share_s_own_by_default():
    job = CpuShare(1.0, demote_after=0.2, existing=[])
    assert isinstance(job.credit, cpu_share.WaitCredit)
    assert job.credit.most == 1.0 and job.credit.busy == 0.2
    assert job.deadline == pytest.approx(job.credit.started + 1.0)
    assert 0.0 <= job.own_seconds() < 1.0


def test_lowering_a_job_reaches_its_threads_and_passes_over_what_has_ended():
    import os
    import subprocess
    import sys

    job = subprocess.Popen([sys.executable, "-c", "import threading, time\n"
                            "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
                            "print(flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE)
    try:
        job.stdout.readline()                                   # its second thread is running
        ended = subprocess.Popen([sys.executable, "-c", "pass"])
        ended.wait()
        cpu_share.lower([job.pid, ended.pid], nice=7, idle=True, every_thread=True)
        threads = [int(task) for task in os.listdir(f"/proc/{job.pid}/task")]
        assert len(threads) == 2
        assert all(os.sched_getscheduler(task) == os.SCHED_IDLE for task in threads)
        assert all(os.getpriority(os.PRIO_PROCESS, task) >= 7 for task in threads)
    finally:
        job.kill()
        job.wait()
