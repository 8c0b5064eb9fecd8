"""bash is shared fairly: a per-session budget of shell wall-seconds, probation on idle CPU
in a slot of its own after a command hit its limit, refusals after a growing pause, and
/run_workspace charged to the caller's session, not to the call's private workspace."""
import os
import secrets
import threading
import time

import pytest

import sandbox
import workspace
from sandbox import shell

# Budgets of a second or two: run alone, never beside the parallel tests (scripts/test.sh).
pytestmark = pytest.mark.serial

# Short limits: a command that waits costs a second or two, never a minute.
QUICK_SHELL = {"seconds_per_minute": 2.0, "probation_seconds_per_minute": 30.0, "probation_wall_seconds": 2.0}
# Probation as a public server has it (on loopback it is off: Settings.probation_applies).
QUICK = {"refusal_pause_seconds": 0.2, "refusal_pause_max_seconds": 0.8, "probation": True}


def short_limits(**shell):
    """The short limits, with `shell` over the bash lane's."""
    return dict(QUICK, shell=dict(QUICK_SHELL, **shell))


@pytest.fixture
def configured():
    """configure(**changes) for this test; the settings before it come back afterwards."""
    before = sandbox.current_settings()
    yield lambda **changes: sandbox.configure(**changes)
    sandbox.configure(before)


@pytest.fixture
def sessions():
    """new() -> a fresh session id; its workspace and ledgers are forgotten after the test."""
    made = []

    def new():
        made.append("fair-" + secrets.token_hex(6))
        return made[-1]

    yield new
    for sid in made:
        workspace.forget(sid)
        sandbox.forget_session(sid)


def bash(session_id, command, timeout=10):
    return workspace.run_workspace_tool(session_id, "bash", {"command": command, "timeout": timeout})


def exhaust(session_id, timeout=10):
    """A command that waits past what is left of the budget (or past its own `timeout`, when that
    comes first): cut short, a wall-limit hit."""
    waited = bash(session_id, "sleep 20", timeout=timeout)
    assert waited["error_code"] == "timeout", waited
    return waited


def test_a_session_over_its_budget_is_refused_while_another_sessions_bash_runs(configured, sessions):
    configured(**short_limits(probation_seconds_per_minute=1.0))
    greedy, other = sessions(), sessions()
    waited = exhaust(greedy)
    assert "每分钟 bash 命令最多累计运行 2 秒" in waited["content"]          # why it was cut short
    refused = bash(greedy, "echo hi")
    assert refused["ok"] is False and refused["error_code"] == "rate_limited"
    assert refused["content"].startswith("❌ [请稍后再试] 运行太频繁：你的 bash 命令在最近一分钟里累计运行了")
    assert "上限 1 秒" in refused["content"] and "秒后再试" in refused["content"]   # on probation: its budget
    assert "hi" not in refused["content"]
    usage = sandbox.session_usage(greedy, "shell")
    assert usage["seconds_last_minute"] >= 1.0 and usage["running"] == 0
    assert sandbox.session_usage(greedy)["known"] is False          # the tool runs' ledger is another one
    fine = bash(other, "echo 另一个同学")
    assert fine["ok"] is True and "另一个同学" in fine["content"], fine


def test_a_wall_limit_hit_puts_the_session_on_probation_on_idle_cpu(configured, sessions, nice_at_least):
    configured(**short_limits())
    looping, other = sessions(), sessions()
    normal_nice, probation_nice = f"\n{nice_at_least(shell.NICE)}\n", f"\n{nice_at_least(shell.PROBATION_NICE)}\n"
    normal = bash(looping, "nice; chrt -p $$")
    # Every command runs at shell.NICE; probation adds SCHED_IDLE.
    assert normal["ok"] and normal_nice in normal["content"] and "SCHED_OTHER" in normal["content"], normal
    assert sandbox.session_usage(looping, "shell")["on_probation"] is False
    exhaust(looping)
    assert sandbox.session_usage(looping, "shell")["on_probation"] is True
    idle = bash(looping, "nice; chrt -p $$")
    assert idle["ok"] and probation_nice in idle["content"] and "SCHED_IDLE" in idle["content"], idle
    shorter = bash(looping, "sleep 20", timeout=10)
    assert shorter["error_code"] == "probation" and "运行超过 2 秒" in shorter["content"], shorter
    assert "每条命令最多运行 2 秒，并且只在 CPU 空闲时运行" in shorter["content"]
    unaffected = bash(other, "nice; chrt -p $$")
    assert normal_nice in unaffected["content"] and "SCHED_OTHER" in unaffected["content"]


def test_a_command_stays_in_the_servers_session_and_cannot_start_one(sessions, ws):
    """With autogroup scheduling a session is a scheduling group, the server's equal whatever
    its nice value: a command in a session of its own (`setsid`) would take that much CPU."""
    token = str(secrets.randbelow(10 ** 8) + 10 ** 8)
    seen = {}

    def watch():
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not seen:
            seen.update({pid: os.getsid(pid) for pid in ws.processes_with(f"sleep 2.{token}")})
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    result = bash(sessions(), f"sleep 2.{token}; setsid true; echo \"setsid 退出码 $?\"")
    watcher.join()
    assert seen and set(seen.values()) == {os.getsid(0)}, seen
    assert "Operation not permitted" in result["content"] and "setsid 退出码 1" in result["content"], result


def test_a_command_still_running_after_a_moment_moves_to_idle_cpu(configured, sessions):
    configured(**short_limits(seconds_per_minute=30.0, demote_after_seconds=0.3))
    quick, slow = sessions(), sessions()
    assert "SCHED_OTHER" in bash(quick, "chrt -p $$")["content"]
    demoted = bash(slow, "sleep 1.5; chrt -p $$; sh -c 'chrt -p $$'")
    assert demoted["ok"] and demoted["content"].count("SCHED_IDLE") == 2, demoted
    assert sandbox.session_usage(slow, "shell")["on_probation"] is False      # no limit was hit


def test_on_a_full_machine_a_short_command_is_not_taken_for_a_loop(configured, sessions, busy_loops):
    """Four busy loops per CPU at the commands' own priority: a command that needs about 0.15 s
    of CPU waits most of the time for its turn. Only its own time counts towards its demotion
    (0.5 s) and its time limit; judged by wall time it would be demoted to idle CPU."""
    configured(**short_limits(seconds_per_minute=30.0))
    busy_loops(per_cpu=4, nice=19)
    sid = sessions()
    ran = bash(sid, "python3 -c 'import time; start = time.process_time()\n"
                    "while time.process_time() - start < 0.1: pass'; chrt -p $$", timeout=3)
    assert ran["ok"] and "SCHED_OTHER" in ran["content"], ran
    charged = sandbox.session_usage(sid, "shell")["seconds_last_minute"]
    assert charged < ran["duration_ms"] / 1000 - 0.1, (charged, ran)     # nor is its session charged its waits


def test_a_long_command_trades_its_shared_slot_for_the_slow_lane(configured, sessions):
    # One shared slot and a short wait for it: if the sleeping command still held it once it
    # was moved to idle CPU, the other session's quick command would be refused as busy.
    configured(**short_limits(seconds_per_minute=30.0, concurrent=1, slow_concurrent=1, demote_after_seconds=0.3),
               queue_wait_seconds=0.5)
    sleeper, other = sessions(), sessions()
    outcome = {}
    sleeping = threading.Thread(target=lambda: outcome.update(bash(sleeper, "sleep 2.5; echo 醒了", timeout=10)))
    sleeping.start()
    deadline = time.monotonic() + 20
    while not sandbox.session_usage(sleeper, "shell")["running"] and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        time.sleep(1.0)                                   # past the demotion
        fine = bash(other, "echo 没有被挤掉")
        still_sleeping = sleeping.is_alive()
    finally:
        sleeping.join()
    assert fine["ok"] and "没有被挤掉" in fine["content"], fine
    assert still_sleeping and outcome["ok"] and "醒了" in outcome["content"], outcome


def test_probation_has_a_slot_of_its_own(configured, sessions):
    # One shared slot, and a short wait for it: if the probation command held it, the
    # other session's command would be refused as busy.
    configured(**short_limits(concurrent=1, probation_wall_seconds=2.5), queue_wait_seconds=0.5)
    looping, other = sessions(), sessions()
    exhaust(looping)
    outcome = {}
    waiting = threading.Thread(target=lambda: outcome.update(bash(looping, "sleep 20")))
    waiting.start()
    deadline = time.monotonic() + 20
    while not sandbox.session_usage(looping, "shell")["holding_slot"] and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert sandbox.session_usage(looping, "shell")["holding_slot"] == 1
        fine = bash(other, "echo 没有被挤掉")
        still_waiting = waiting.is_alive()
    finally:
        waiting.join()
    assert fine["ok"] and "没有被挤掉" in fine["content"], fine
    assert still_waiting and outcome["error_code"] == "probation"          # probation's shorter limit


def test_one_command_at_a_time_per_session(configured, sessions):
    configured(**short_limits(seconds_per_minute=30.0))
    sid = sessions()
    other_workspace = sessions()
    workspace.charge_to(other_workspace, sid)       # two workspaces, one budget
    outcome = {}
    first = threading.Thread(target=lambda: outcome.update(bash(sid, "sleep 3", timeout=10)))
    first.start()
    deadline = time.monotonic() + 20
    while not sandbox.session_usage(sid, "shell")["running"] and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        second = bash(other_workspace, "echo 第二条")
    finally:
        first.join()
    assert second["error_code"] == "busy" and "每人同时只能运行一条" in second["content"], second
    assert outcome["ok"] is True


def test_the_refusal_pause_grows_while_refusals_come_in_a_row(configured, sessions):
    configured(**short_limits(probation_seconds_per_minute=1.0))
    sid = sessions()
    exhaust(sid)
    pauses = []
    for in_a_row in (1, 2, 3, 4):
        started = time.monotonic()
        refused = bash(sid, "echo hi")
        pauses.append(time.monotonic() - started)
        assert refused["error_code"] == "rate_limited"
        assert sandbox.session_usage(sid, "shell")["refused_in_a_row"] == in_a_row
    # 0.2, 0.4, 0.8, then no longer than the maximum: lower bounds only (a busy machine adds).
    assert pauses[0] >= 0.2 and pauses[1] >= 0.4 and pauses[2] >= 0.8 and pauses[3] >= 0.8


# ---------------------------------------------------------------- /run_workspace

@pytest.fixture(scope="module")
def app_url():
    from tests.app.harness import start_app

    demo, url = start_app()
    yield url
    demo.close()


def _run_workspace(client, command):
    result = client.predict(f"运行 `{command}`", None, None, "offline", "", "", api_name="/run_workspace")
    steps = [e for e in result["events"] if e["type"] == "tool_result" and e["name"] == "bash"]
    assert len(steps) == 1, result
    return steps[0]


def test_run_workspace_is_charged_to_the_callers_session(app_url, configured):
    from gradio_client import Client

    configured(**short_limits(probation_seconds_per_minute=1.0))
    script = Client(app_url, verbose=False, download_files=False)
    classmate = Client(app_url, verbose=False, download_files=False)
    try:
        assert _run_workspace(script, "echo 第一次")["ok"] is True
        waited = _run_workspace(script, "sleep 20")          # a private workspace, the same budget
        assert waited["error_code"] == "timeout" and "这一分钟你只剩" in waited["content"], waited
        refused = _run_workspace(script, "echo 第三次")
        assert refused["error_code"] == "rate_limited" and "你的 bash 命令在最近一分钟里" in refused["content"]
        usage = sandbox.session_usage(script.session_hash, "shell")
        assert usage["on_probation"] and usage["runs_last_minute"] == 2 and usage["refused_in_a_row"] == 1
        fine = _run_workspace(classmate, "echo 另一个同学")
        assert fine["ok"] is True and "另一个同学" in fine["content"], fine
        assert sandbox.session_usage(classmate.session_hash, "shell")["on_probation"] is False
    finally:
        for client in (script, classmate):
            sandbox.forget_session(client.session_hash)
            client.close()


# Busy for 1.2 s of wall time, then the share of it this process had the CPU.
SPIN = ("python3 -c 'import time; end = time.monotonic() + 1.2; exec(\"while time.monotonic() < end: pass\"); "
        "print(\"share\", round(time.process_time() / 1.2, 2))'")


def cpu_share(result):
    assert result["ok"] and "share" in result["content"], result
    return float(result["content"].split("share")[1].split()[0])


def test_a_command_still_running_after_its_demotion_time_gets_a_quarter_of_a_cpu(configured, sessions):
    """SCHED_IDLE alone lets a loop take every CPU nobody else wants, and that still costs the
    others; from its demotion time on, a command runs one tick in four (stopped the rest), and
    one in eight on probation. Alone on the machine it would have had the whole CPU."""
    configured(**short_limits(seconds_per_minute=30.0, demote_after_seconds=0.1))
    first, looping = sessions(), sessions()
    assert cpu_share(bash(first, SPIN)) < 0.6              # a first offence: demoted, then held back
    exhaust(looping, timeout=2)                            # its own time limit, well inside the budget
    assert cpu_share(bash(looping, SPIN)) < 0.3            # on probation: held back further
    woke = bash(looping, "sleep 0.5; echo 醒了")   # stopped and resumed, it still ends normally
    assert woke["ok"] and "醒了" in woke["content"], woke


def test_the_launchers_own_safety_limit_also_stops_while_it_waits_for_a_cpu():
    """The server's last-resort limit on a launcher (for one that hangs) must not fire on one that
    only waits for its turn. A stand-in needing 0.5 s of CPU shares one CPU with a loop that weighs
    three times as much: about 2 s of wall time, against a limit of 1.5 s."""
    import subprocess
    import sys

    cpu = min(os.sched_getaffinity(0))
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        time.sleep(0.2)
        waiter = subprocess.Popen(
            [sys.executable, "-c", "import sys, time\nsys.stdin.read()\n"
                                   "while time.process_time() < 0.5: pass\nprint('done')"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=lambda: (os.sched_setaffinity(0, {cpu}), os.nice(5)))
        started = time.monotonic()
        out, _ = shell._communicate(waiter, b"go", 1.5)
        assert out.strip() == b"done" and time.monotonic() - started > 1.5
    finally:
        loop.kill()
        loop.wait()


def test_a_launcher_past_its_safety_limit_is_reported_as_a_busy_server(sessions, monkeypatch):
    """No command line or path of the server in the answer, no probation, and no more charged than
    the command's own time limit (it had no more than that of its own)."""
    import subprocess

    def starved(launcher, request, limit):
        raise subprocess.TimeoutExpired(launcher.args, limit)

    monkeypatch.setattr(shell, "_communicate", starved)
    sid = sessions()
    ran = bash(sid, "echo 你好", timeout=3)
    assert ran["error_code"] == "busy" and "服务器太忙" in ran["content"], ran
    assert "shell_launcher" not in ran["content"] and "timed out" not in ran["content"], ran
    usage = sandbox.session_usage(sid, "shell")
    assert usage["seconds_last_minute"] <= 3.0 and not usage["on_probation"], usage
