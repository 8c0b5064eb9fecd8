"""A whole classroom on one app: N simulated students hitting the named API endpoints.

    python benchmarks/classroom.py                      # 50 students (5 abusive), 2 minutes per phase
    python benchmarks/classroom.py --students 10 --abusers 2 --seconds 15 --smoke    # CI

The app runs as a subprocess on loopback (`python app.py`), exactly as it is served.
Each simulated student has its own `gradio_client.Client` (its own session), opens the
page some time within the first `--ramp` seconds, and loops through a lesson for a fixed
time, pausing between actions (`--think`, mean 3 s: a student who reads each result
before the next click; the lesson loop then takes ~10 s, far busier than a real class):

  schema   the tools JSON from an edited tool source (the sandbox runs the source)
  fc       a function-calling question answered with two tool calls on the offline model
  react    a ReAct question (one tool call, regex-parsed text)
  export   the session document of the last run
  echo     `/echo`, which returns its input: the floor Gradio itself sets

Two phases in the same run, each `--seconds` long:
  1. baseline: the well-behaved students alone;
  2. abuse:    the same students plus `--abusers` students whose tools loop forever,
               allocate without bound or print megabytes, clicking again 0.2 s after
               each answer.
Fairness is the well-behaved students' p95 in phase 2 against phase 1.

Reported: p50/p95/max per action and its ratio to the echo floor, errors by kind, whole
lessons per second, CPU used by the server, the sandbox workers and the simulated clients
(they share the machine), the memory of the app with its sandbox (PSS summed over the
process tree; RSS too) at start, at peak, and once every tab has expired. "Start" is
measured after a short warm-up class whose tabs have expired, so that one-time growth
(imports, allocator pools) is not counted as memory the sessions kept; the figure after a
single lesson is printed too.
`--smoke` runs one short phase with abusers and exits 1 on any error (CI runs it).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

with open(os.path.join(ROOT, "code", "examples_weather.py"), encoding="utf-8") as handle:
    WEATHER_SOURCE = handle.read()
with open(os.path.join(ROOT, "code", "examples_calculator.py"), encoding="utf-8") as handle:
    CALCULATOR_SOURCE = handle.read()

FC_QUESTION = "北京和上海今天天气怎么样？"
REACT_QUESTION = "帮我算一下 (3+4)*5 等于多少"

ABUSIVE_TOOLS = {
    "infinite_loop": "while True:\n        pass",
    "memory_bomb": "blocks = []\n    while True:\n        blocks.append(bytearray(50_000_000))",
    "huge_output": "print('x' * 50_000_000)\n    return 'done'",
}


def abusive_source(kind: str) -> str:
    body = ABUSIVE_TOOLS[kind]
    return ("from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"
            "@registry.tool(\"查询指定城市今天的天气\")\n"
            f"def get_weather(city: str) -> str:\n    {body}\n")


def edited_source(rng: random.Random) -> str:
    """What a student's editor holds after a small edit: a changed type or description."""
    source = WEATHER_SOURCE
    if rng.random() < 0.5:
        source = source.replace('"预报天数，1~7"] = 3', '"预报天数"] = 3')
    if rng.random() < 0.5:
        source = source.replace("days: Annotated[int,", "days: Annotated[float,")
    return source


# ── the app under test ──────────────────────────────────────────────────────────


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_app(port: int, extra_env: dict) -> subprocess.Popen:
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", GRADIO_SERVER_PORT=str(port),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **extra_env)
    process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"app exited early:\n{process.stderr.read().decode(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                if response.status == 200:
                    return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("app did not answer within 90 s")


def process_tree(pid: int) -> list[int]:
    """A process and all its descendants (the sandbox's zygote and workers too)."""
    children = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
                children[parent].append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def tree_memory_mb(pid: int, only_root: bool = False) -> tuple[float, float]:
    """(RSS, PSS) summed over the tree, in MB. RSS counts pages shared between the
    forked workers once per process; PSS splits them, so its sum is what the tree
    really occupies (what a container's memory limit sees, give or take the page cache)."""
    rss = pss = 0
    for member in [pid] if only_root else process_tree(pid):
        try:
            with open(f"/proc/{member}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss / 1024, pss / 1024


def server_cpu_seconds(pid: int) -> float:
    """CPU seconds the app's own process has used so far."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> dict:
    """CPU seconds the whole machine has spent so far, by kind (/proc/stat). The sandbox's
    workers are reaped by the kernel, so their time is not in any parent's figures; the
    machine's total less the server and the clients is theirs (and the kernel's). Tools run
    niced, so "nice" is the students' tool code itself; "steal" is time the hypervisor gave
    to other machines."""
    tick = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:9]]
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    return {name: value / tick for name, value in zip(names, fields)}


class MemoryWatch(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak_rss, self.peak_pss, self.stop = pid, 0.0, 0.0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            rss, pss = tree_memory_mb(self.pid)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.stop.wait(0.2)


# ── students ────────────────────────────────────────────────────────────────────


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency = defaultdict(list)     # (group, action) -> seconds
        self.errors = Counter()              # (group, action, kind) -> count
        self.episodes = Counter()            # group -> whole lessons finished
        self.contained = Counter()           # abusers: error code of each tool result they got

    def record(self, group: str, action: str, seconds: float, error: str | None = None):
        with self.lock:
            self.latency[(group, action)].append(seconds)
            if error:
                self.errors[(group, action, error)] += 1


def check_run(result: dict, want_tool_results: int) -> str | None:
    if not isinstance(result, dict):
        return "not a dict"
    if not result.get("ok"):
        return "run failed: " + str((result.get("error") or {}).get("code"))
    done = [e for e in result.get("events", []) if e.get("type") == "tool_result" and e.get("ok")]
    failed = [e.get("error_code") for e in result.get("events", []) if e.get("type") == "tool_result" and not e.get("ok")]
    if failed:
        return "tool failed: " + ",".join(sorted(set(map(str, failed))))
    return None if len(done) >= want_tool_results else f"{len(done)} tool results, wanted {want_tool_results}"


def check_schema(result: dict) -> str | None:
    if not isinstance(result, dict) or not result.get("ok"):
        return "schema failed: " + str(((result or {}).get("error") or {}).get("code"))
    return None if len(result.get("tools", [])) == 2 else f"{len(result.get('tools', []))} tools"


def timed(results: Results, group: str, action: str, call, check=None):
    started = time.perf_counter()
    try:
        value = call()
        error = check(value) if check else None
    except Exception as exc:  # every failure is counted by kind, none stops the student
        value, error = None, type(exc).__name__
    results.record(group, action, time.perf_counter() - started, error)
    return value


# gradio_client opens a new httpx client for every call, and httpx builds a TLS context
# (loading the whole CA bundle, ~50 ms of CPU) each time unless it is handed one. Over
# plain-HTTP loopback that context is never used, but building it would make the
# simulated students, not the app, the bottleneck on a 2-core machine: share one.
SHARED_TLS = ssl.create_default_context()


def connect(url: str, results: Results, group: str):
    """One browser tab: its own gradio_client session. Retries once if the page is slow to answer."""
    from gradio_client import Client

    for attempt in range(2):
        try:
            return Client(url, verbose=False, ssl_verify=SHARED_TLS)
        except Exception as exc:  # counted; the second failure ends this student
            results.record(group, "connect", 0.0, type(exc).__name__)
            time.sleep(1.0)
    return None


def student(url: str, seed: int, deadline: float, results: Results, think: float):
    rng = random.Random(seed)
    group = "students"
    client = connect(url, results, group)
    if client is None:
        return
    time.sleep(rng.uniform(0, think))       # not everyone clicks at the same instant
    while time.monotonic() < deadline:
        timed(results, group, "schema",
              lambda: client.predict(edited_source(rng), False, "registry", api_name="/schema"), check_schema)
        time.sleep(rng.uniform(0.5, 1.5) * think)
        run = timed(results, group, "fc",
                    lambda: client.predict(WEATHER_SOURCE, FC_QUESTION, api_name="/run_function_calling"),
                    lambda r: check_run(r, 2))
        time.sleep(rng.uniform(0.5, 1.5) * think)
        timed(results, group, "react",
              lambda: client.predict(CALCULATOR_SOURCE, REACT_QUESTION, api_name="/run_react"),
              lambda r: check_run(r, 1))
        if run:
            timed(results, group, "export",
                  lambda: client.predict(run, "function_calling", WEATHER_SOURCE, FC_QUESTION, api_name="/export"),
                  lambda r: None if isinstance(r, dict) and r.get("events") == run["events"] else "bad export")
        timed(results, group, "echo", lambda: client.predict("ping", api_name="/echo"),
              lambda r: None if r == "ping" else "bad echo")
        if time.monotonic() < deadline:
            with results.lock:
                results.episodes[group] += 1
        time.sleep(rng.uniform(0.5, 1.5) * think)


def abuser(url: str, seed: int, deadline: float, results: Results, pause: float):
    """Runs a hostile tool again and again, clicking as fast as a person can: the app must
    contain it. A contained failure (ok False with a clear error code) is the expected answer;
    only an exception (no answer at all) counts as an error."""
    group = "abusers"
    client = connect(url, results, group)
    if client is None:
        return
    kinds = list(ABUSIVE_TOOLS)
    turn = seed
    while time.monotonic() < deadline:
        source = abusive_source(kinds[turn % len(kinds)])
        turn += 1
        run = timed(results, group, "fc",
                    lambda: client.predict(source, "北京天气怎么样", api_name="/run_function_calling"))
        outcome = timed(results, group, "try_call",
                        lambda: client.predict(source, "get_weather", '{"city": "北京"}', api_name="/try_call"))
        codes = [e.get("error_code") for e in (run or {}).get("events", []) if e.get("type") == "tool_result"]
        codes.append((outcome or {}).get("error_code"))
        with results.lock:
            results.contained.update(str(code) for code in codes)
        time.sleep(pause)


def run_phase(url: str, students: int, abusers: int, seconds: float, think: float, pause: float,
              seed: int, ramp: float = 0.0) -> Results:
    results = Results()
    deadline = time.monotonic() + seconds
    gap = ramp / max(1, students + abusers)
    threads = [threading.Thread(target=student, args=(url, seed + i, deadline, results, think), daemon=True)
               for i in range(students)]
    threads += [threading.Thread(target=abuser, args=(url, seed + 1000 + i, deadline, results, pause), daemon=True)
                for i in range(abusers)]
    order = list(range(len(threads)))
    random.Random(seed).shuffle(order)    # abusers arrive among the others
    for index in order:
        threads[index].start()
        time.sleep(gap)    # "open the link": the tabs open over the first seconds, not in one instant
    for thread in threads:
        thread.join(timeout=seconds + 120)
    return results


def warm_up(url: str, students: int, seconds: float):
    """A short class before measuring: lazy imports, first-call caches and the allocators'
    working set for that many concurrent requests are paid here, not charged to the class."""
    results = run_phase(url, students, 0, seconds, think=0.3, pause=0.0, seed=99_000)
    if results.errors:
        raise SystemExit(f"the warm-up lessons failed: {dict(results.errors)}")


# ── report ──────────────────────────────────────────────────────────────────────


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def summarise(title: str, results: Results, seconds: float) -> dict:
    print(f"\n== {title}")
    floor = results.latency.get(("students", "echo")) or [float("nan")]
    floor_p50, floor_p95 = statistics.median(floor), percentile(floor, 0.95)
    figures = {}
    print(f"  {'group/action':<20}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'p50/echo':>10}{'p95/echo':>10}")
    for (group, action), values in sorted(results.latency.items()):
        if action == "connect":
            continue
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        figures[(group, action)] = {"n": len(values), "p50": p50, "p95": p95, "max": max(values)}
        print(f"  {group + '/' + action:<20}{len(values):>6}{p50 * 1000:>10.1f}{p95 * 1000:>10.1f}"
              f"{max(values) * 1000:>10.1f}{p50 / floor_p50:>10.1f}{p95 / floor_p95:>10.1f}")
    episodes = results.episodes["students"]
    print(f"  whole lessons: {episodes} in {seconds:.0f} s = {episodes / seconds:.2f} per second")
    errors = dict(results.errors)
    print("  errors: " + (", ".join(f"{g}/{a}:{kind}×{n}" for (g, a, kind), n in sorted(errors.items())) or "none"))
    if results.contained:
        print("  abusers' tool results by error code: "
              + ", ".join(f"{code}×{n}" for code, n in results.contained.most_common()))
    return {"figures": figures, "errors": sum(errors.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=50, help="students in all (abusers included)")
    parser.add_argument("--abusers", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=120, help="length of each phase")
    parser.add_argument("--think", type=float, default=3.0, help="mean pause between a student's actions, s")
    parser.add_argument("--abuser-pause", type=float, default=0.2, help="pause between an abuser's clicks, s")
    parser.add_argument("--ramp", type=float, default=10, help="seconds over which the tabs open")
    parser.add_argument("--ttl", type=float, default=15, help="session lifetime given to the app, s")
    parser.add_argument("--smoke", action="store_true", help="one phase with abusers; exit 1 on any error")
    args = parser.parse_args()
    well_behaved = args.students - args.abusers

    port = free_port()
    app = start_app(port, {"TOOL_WORKSHOP_SESSION_TTL": f"{args.ttl:g}"})
    url = f"http://127.0.0.1:{port}/"
    expire = args.ttl * 1.25 + 5          # the app sweeps every TTL/4: every tab is gone after this
    try:
        warm_up(url, 1, 0.1)
        if not args.smoke:                # the smoke run checks for errors, not memory
            time.sleep(expire)
        cold_pss = tree_memory_mb(app.pid)[1]
        if not args.smoke:
            warm_up(url, min(10, args.students), 8.0)
            time.sleep(expire)
        start_rss, start_pss = tree_memory_mb(app.pid)
        start_server = tree_memory_mb(app.pid, only_root=True)[1]
        watch = MemoryWatch(app.pid)
        watch.start()
        with open("/proc/loadavg") as handle:
            load = handle.read().split()[0]
        print(f"classroom: {args.students} students ({args.abusers} abusive), {args.seconds:.0f} s per phase, "
              f"think {args.think:g} s, {os.cpu_count()} CPUs, load average {load} before the run")
        print(f"app memory: PSS {cold_pss:.0f} MB after one lesson, {start_pss:.0f} MB at start, after a short "
              f"warm-up class whose tabs have expired (RSS sum {start_rss:.0f} MB)")
        phases = []
        if not args.smoke:
            phases.append(("phase 1: well-behaved students only", well_behaved, 0))
        phases.append(("phase 2: with abusive students" if not args.smoke else "smoke", well_behaved, args.abusers))
        outcome = {}
        for index, (title, n_students, n_abusers) in enumerate(phases):
            app_before = server_cpu_seconds(app.pid)
            own_before = sum(os.times()[:2])
            machine_before = machine_cpu()
            results = run_phase(url, n_students, n_abusers, args.seconds, args.think, args.abuser_pause,
                                seed=index * 10_000, ramp=args.ramp)
            outcome[title] = summarise(title, results, args.seconds)
            app_after = server_cpu_seconds(app.pid)
            own = sum(os.times()[:2]) - own_before
            machine = {k: v - machine_before[k] for k, v in machine_cpu().items()}
            busy = sum(v for k, v in machine.items() if k not in ("idle", "iowait", "steal"))
            server = app_after - app_before
            print(f"  CPU used (of {os.cpu_count() * args.seconds:.0f} CPU-seconds): {busy:.1f} s in all: app server "
                  f"{server:.1f} s, the simulated students' clients {own:.1f} s, sandbox workers and kernel "
                  f"{busy - server - own:.1f} s (of which niced tool code {machine['nice']:.1f} s); "
                  f"stolen by the hypervisor {machine['steal']:.1f} s")
        watch.stop.set()
        watch.join()

        # The clients are gone; the app forgets their tabs once the TTL has passed.
        if not args.smoke:
            time.sleep(expire)
        end_rss, end_pss = tree_memory_mb(app.pid)
        end_server = tree_memory_mb(app.pid, only_root=True)[1]
        if args.smoke:
            print(f"\nmemory: start PSS {start_pss:.0f} MB, peak PSS {watch.peak_pss:.0f} MB "
                  f"(peak RSS sum {watch.peak_rss:.0f} MB)")
        else:
            print(f"\nmemory: start PSS {start_pss:.0f} MB, peak PSS {watch.peak_pss:.0f} MB (goal < 1024; "
                  f"peak RSS sum {watch.peak_rss:.0f} MB), after the sessions expired PSS {end_pss:.0f} MB "
                  f"({(end_pss / start_pss - 1) * 100:+.1f}% of start, goal within 10%; "
                  f"{(end_pss / cold_pss - 1) * 100:+.1f}% of the one-lesson figure); of which the server "
                  f"process {start_server:.0f} -> {end_server:.0f} MB, the sandbox {start_pss - start_server:.0f} -> "
                  f"{end_pss - end_server:.0f} MB")

        errors = sum(o["errors"] for o in outcome.values())
        if not args.smoke:
            base = outcome[phases[0][0]]["figures"]
            abuse = outcome[phases[1][0]]["figures"]
            for action in ("fc", "schema", "react", "export", "echo"):
                if ("students", action) in base and ("students", action) in abuse:
                    before, after = base[("students", action)]["p95"], abuse[("students", action)]["p95"]
                    print(f"fairness {action}: students' p95 {before * 1000:.0f} ms -> {after * 1000:.0f} ms "
                          f"with abusers ({(after / before - 1) * 100:+.0f}%, goal at most +20%)")
            for title, _, _ in phases:
                figures = outcome[title]["figures"]
                fc = figures.get(("students", "fc"), {}).get("p95", float("nan"))
                schema = figures.get(("students", "schema"), {}).get("p95", float("nan"))
                print(f"goals, {title.split(':')[0]}: fc p95 {fc * 1000:.0f} ms (< 2000), "
                      f"schema p95 {schema * 1000:.0f} ms (< 300), errors {outcome[title]['errors']} (0)")
        print(f"{'smoke' if args.smoke else 'classroom'} {'failed' if errors else 'passed'}: {errors} errors")
        return 1 if args.smoke and errors else 0
    finally:
        app.terminate()
        try:
            app.wait(timeout=10)
        except subprocess.TimeoutExpired:
            app.kill()


if __name__ == "__main__":
    sys.exit(main())
