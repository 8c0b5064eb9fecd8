"""What abusive tabs cost the machine, in CPU, against ordinary students measured in the same run.

    python benchmarks/abuse_cost.py            # 10 abusers against 50 students, 4 rounds, about 6 minutes

Latency in a class is noisy on a shared 2-vCPU machine (the same loop of Python takes 180 ms
one second and 350 ms the next, with nothing else running); CPU seconds are not. So this
measures what the abusers of classroom.py's lecture cost, and nothing else is running:
the app alone on loopback, then rounds of four blocks:
  abuse     `--abusers` tabs at it as in the lecture (half hostile tools, half bash commands
            that never end, clicking again 0.2 s after each answer), 20 s;
  rest      nobody, 18 s;
  ordinary  `--students` tabs doing classroom.py's lesson at the lecture's pace, 20 s;
  rest      nobody, 18 s.
The first round is a warm-up (every abuser's first offence, before probation) and is printed
apart. Printed: CPU per second of each kind of block, by where it went (the server, the sandbox
and kernel, the tools' own niced code, this process's clients), and the abusers' cost above
rest against the students' (the peer): one abuser costs the machine as much as N students.
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import threading
import time
from collections import Counter

from classroom import (ABUSERS_START_WITHIN, CALCULATOR_SOURCE, FC_QUESTION, REACT_QUESTION, WEATHER_SOURCE,
                       WORKSPACE_EVERY, WORKSPACE_QUESTION, Clock, CpuMeter, Results, bash_abuser, connect, edited_source,
                       free_port, start_app, stop_app, tool_abuser)

BLOCKS = (("abuse", 20.0), ("rest", 18.0), ("ordinary", 20.0), ("rest", 18.0))
THINK = 10.0                 # the lecture's pace


def ordinary(tab, seed: int, results: Results, starts: float, ends: float):
    """A student at the lecture's pace, within one block: classroom.py's lesson (schema, Function
    Calling, ReAct or a lesson-4 test run, export, echo) with three pauses of about THINK seconds,
    here one pause of 3/5 THINK after each action."""
    rng, run = random.Random(seed), None
    lesson = [lambda: tab.predict(edited_source(rng), False, "registry", api_name="/schema"),
              lambda: tab.predict(WEATHER_SOURCE, FC_QUESTION, api_name="/run_function_calling"),
              (lambda: tab.predict(WORKSPACE_QUESTION, None, None, api_name="/run_workspace"))
              if seed % WORKSPACE_EVERY == 0 else
              (lambda: tab.predict(CALCULATOR_SOURCE, REACT_QUESTION, api_name="/run_react")),
              lambda: run and tab.predict(run, "function_calling", WEATHER_SOURCE, FC_QUESTION, api_name="/export"),
              lambda: tab.predict("ping", api_name="/echo")]
    pause = 3 / len(lesson) * THINK
    time.sleep(max(0.0, starts - time.monotonic()) + rng.uniform(0, pause))
    turn = seed
    while time.monotonic() < ends:
        started = time.monotonic()
        try:
            value = lesson[turn % len(lesson)]()
            run = value if turn % len(lesson) == 1 else run
            results.record("students", "lesson", started)
        except Exception as exc:  # counted, the student goes on
            results.record("students", "lesson", started, type(exc).__name__)
        turn += 1
        time.sleep(min(rng.uniform(0.5, 1.5) * pause, max(0.0, ends - time.monotonic())))


def abuser(tab, seed: int, results: Results, blocks: list, lesson: str):
    for starts, ends in blocks:
        time.sleep(max(0.0, starts - time.monotonic()) + random.Random(seed).uniform(0.0, ABUSERS_START_WITHIN))
        (bash_abuser if lesson == "bash" else tool_abuser)(tab, seed, results, 0.2, ends)
        seed += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--abusers", type=int, default=10)
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4, help="rounds of four blocks, the first a warm-up")
    args = parser.parse_args()

    port = free_port()
    app = start_app(port, {"TOOL_WORKSHOP_SESSION_TTL": "900"})
    url = f"http://127.0.0.1:{port}/"
    try:
        clock = Clock(0, 0, 0)
        results = Results(clock)
        # Every tab opens first: opening one is not what a block measures.
        abusive = [connect(url, results, "abusers") for _ in range(args.abusers)]
        tabs = [connect(url, results, "students") for _ in range(args.students)]
        gc.disable()
        moment = time.monotonic() + 5.0
        plan = []                                        # (round, kind, start, end)
        for round_ in range(args.rounds):
            for kind, length in BLOCKS:
                plan.append((round_, kind, moment, moment + length))
                moment += length
        abuse = [(s, e) for _, kind, s, e in plan if kind == "abuse"]
        for index in range(args.abusers):
            threading.Thread(target=abuser, daemon=True,
                             args=(abusive[index], 1000 + index, results, abuse, "bash" if index % 2 else "tools")).start()
        for round_, kind, starts, ends in plan:
            if kind == "ordinary":
                for index in range(args.students):
                    threading.Thread(target=ordinary, daemon=True,
                                     args=(tabs[index], round_ * 1000 + index, results, starts, ends)).start()
        meter = CpuMeter(app.pid)
        spent = {}                                       # (warm-up?, kind) -> Counter of CPU seconds
        for round_, kind, starts, ends in plan:
            time.sleep(max(0.0, starts - time.monotonic()))
            meter.lap()
            time.sleep(max(0.0, ends - time.monotonic()))
            lap = meter.lap()
            lap["sandbox"] = lap.pop("other")
            lap["seconds"] = ends - starts
            spent.setdefault((round_ == 0, kind), Counter()).update(lap)

        requests = Counter((group, bool(error)) for _, _, group, action, error in results.samples
                           if action != "connect")
        print(f"abuse cost: {args.abusers} abusive tabs against {args.students} students at think {THINK:g} s, "
              f"{os.cpu_count()} CPUs; requests: abusers {requests[('abusers', False)]}, students "
              f"{requests[('students', False)]} ({requests[('students', True)]} failed)")
        print(f"abusers' tool results by error code: {dict(results.contained)}")
        per_second = {}
        for (warm, kind), used in sorted(spent.items()):
            rate = {name: used[name] / used["seconds"] for name in ("busy", "server", "sandbox", "nice", "clients")}
            per_second[(warm, kind)] = rate
            print(f"{'warm-up ' if warm else ''}{kind:8s} CPU per second: " + ", ".join(
                f"{name} {value:.3f}" for name, value in rate.items()))
        rest = per_second[(False, "rest")]
        for warm in (True, False):
            above = {kind: {name: per_second[(warm, kind)][name] - rest[name] for name in rest}
                     for kind in ("abuse", "ordinary")}
            # The clients run here, on the same CPUs; real students' browsers run elsewhere.
            machine = {kind: value["busy"] - value["clients"] for kind, value in above.items()}
            print(f"{'warm-up round' if warm else 'later rounds'}: above rest, without the clients: "
                  f"abusers {machine['abuse']:.3f} CPU/s (server {above['abuse']['server']:.3f}, sandbox "
                  f"{above['abuse']['sandbox']:.3f}), students {machine['ordinary']:.3f} CPU/s (server "
                  f"{above['ordinary']['server']:.3f}); one abuser costs as much as "
                  f"{machine['abuse'] / args.abusers / max(machine['ordinary'] / args.students, 1e-9):.1f} students")
        return 0
    finally:
        stop_app(app)


if __name__ == "__main__":
    sys.exit(main())
