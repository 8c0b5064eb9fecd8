"""Ten clicks at once: what a burst of abusive requests costs the other students, against a
burst of as many ordinary ones, measured in the same run.

    python benchmarks/burst.py                 # 30 students, 12 bursts of each kind, about 3 minutes

The app runs as a subprocess on loopback, as in classroom.py, whose simulated students and
abusive tools this reuses. `--students` tabs click through echo, schema and Function Calling
at a steady pace (a pause of 0.3-1 s between actions). Every 5 s or so, ten more tabs send one
request each in the same instant, taking turns:
  ordinary  ten students' Function Calling runs (one in five a lesson-4 test run through bash);
  abusive   ten abusers: half a looping tool through Function Calling, half a bash command that
            never ends. They are on probation and out of budget first, as every abuser is once
            its first loop has run, so most of their requests are refused (after a pause).
Printed: the students' p50/p95 for the actions they began in the half second after each kind
of burst and elsewhere, and the abusive burst's p95 against the ordinary one's (the peer).
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import threading
import time

from classroom import (ABUSIVE_COMMANDS, CALCULATOR_SOURCE, FC_QUESTION, REACT_QUESTION, SHARED_TLS,
                       WEATHER_SOURCE, WORKSPACE_EVERY, WORKSPACE_QUESTION, abusive_source, free_port,
                       percentile, poll_sooner, read_on_after_close, start_app)

BURST = 10                 # tabs in one burst
AFTER = 0.5                # an action begun this long after a burst counts as hit by it
LOOP = abusive_source("infinite_loop")


def client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, ssl_verify=SHARED_TLS, download_files=False)


def ordinary(tab, index: int):
    if index % WORKSPACE_EVERY == 0:
        tab.predict(WORKSPACE_QUESTION, None, None, api_name="/run_workspace")
    else:
        tab.predict(WEATHER_SOURCE, FC_QUESTION, api_name="/run_function_calling")


def abusive(tab, index: int):
    if index % 2:
        tab.predict(f"运行 `{ABUSIVE_COMMANDS[1]}`", None, None, api_name="/run_workspace")
    else:
        tab.predict(LOOP, "北京天气怎么样", api_name="/run_function_calling")


def student(url: str, seed: int, done: threading.Event, samples: list):
    tab, rng = client(url), random.Random(seed)
    actions = (lambda: tab.predict("ping", api_name="/echo"),
               lambda: tab.predict(WEATHER_SOURCE, False, "registry", api_name="/schema"),
               lambda: tab.predict(WEATHER_SOURCE, FC_QUESTION, api_name="/run_function_calling"),
               lambda: tab.predict(CALCULATOR_SOURCE, REACT_QUESTION, api_name="/run_react"))
    while not done.is_set():
        for action in actions:
            started = time.monotonic()
            action()
            samples.append((started, time.monotonic() - started))
            time.sleep(rng.uniform(0.3, 1.0))


def burst_tab(url: str, kind: str, index: int, go: threading.Event, done: threading.Event,
              ready: threading.Barrier):
    tab = client(url)
    send = abusive if kind == "abusive" else ordinary
    if kind == "abusive":                # on probation and out of budget, like any abuser after a minute
        for _ in range(3):
            send(tab, index)
    ready.wait()
    while True:
        go.wait()
        go.clear()
        if done.is_set():
            return
        send(tab, index)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--bursts", type=int, default=12, help="bursts of each kind")
    args = parser.parse_args()
    poll_sooner()
    read_on_after_close()
    port = free_port()
    app = start_app(port, {"TOOL_WORKSHOP_SESSION_TTL": "600"})
    url = f"http://127.0.0.1:{port}/"
    try:
        gc.disable()                     # the simulated clients share one process: no collector pauses
        done = threading.Event()
        samples, bursts = [], []
        kinds = ("ordinary", "abusive")
        signals = {kind: [threading.Event() for _ in range(BURST)] for kind in kinds}
        ready = threading.Barrier(2 * BURST + 1)
        threads = [threading.Thread(target=student, args=(url, seed, done, samples), daemon=True)
                   for seed in range(args.students)]
        threads += [threading.Thread(target=burst_tab, args=(url, kind, index, signals[kind][index], done, ready),
                                     daemon=True) for kind in kinds for index in range(BURST)]
        for thread in threads:
            thread.start()
        ready.wait(timeout=120)
        time.sleep(10)                   # the students spread out
        rng = random.Random(0)
        for kind in kinds * args.bursts:
            bursts.append((time.monotonic(), kind))
            for signal in signals[kind]:
                signal.set()
            time.sleep(rng.uniform(4.5, 5.5))
        done.set()
        for signal in (s for kind in kinds for s in signals[kind]):
            signal.set()                 # the burst tabs see that it is over and end
        for thread in threads:
            thread.join(timeout=30)
        measured = [(started, seconds) for started, seconds in samples if started >= bursts[0][0]]

        def hit_by(started: float) -> str | None:
            return next((kind for moment, kind in bursts if moment <= started < moment + AFTER), None)

        groups = {kind: [s for started, s in measured if hit_by(started) == kind] for kind in kinds}
        groups["elsewhere"] = [s for started, s in measured if hit_by(started) is None]
        print(f"burst: {args.students} students, {args.bursts} bursts of {BURST} ordinary and {BURST} abusive "
              f"requests at once; the students' actions begun within {AFTER:g} s of a burst")
        for name, values in groups.items():
            print(f"  {name:<10} n={len(values):>5}  p50 {percentile(values, 0.5) * 1000:6.1f} ms  "
                  f"p95 {percentile(values, 0.95) * 1000:6.1f} ms")
        ratio = percentile(groups["abusive"], 0.95) / percentile(groups["ordinary"], 0.95)
        print(f"abusive burst against ordinary burst, students' p95: {ratio:.2f}x")
        return 0
    finally:
        app.terminate()


if __name__ == "__main__":
    sys.exit(main())
