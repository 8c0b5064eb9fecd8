"""A whole classroom on one app: N simulated students hitting the named API endpoints.

    python benchmarks/classroom.py            # 50 students, 5 of them abusive: 2 + 2 minutes, taking turns
    python benchmarks/classroom.py --preset lecture    # a lecture hall: 200 students, 10 abusive
    python benchmarks/classroom.py --students 10 --abusers 2 --seconds 15 --smoke    # CI

`--preset lecture` is `--students 200 --abusers 10 --think 10 --ramp 30 --settle 30 --seconds 240
--rounds 12`: a student who reads each result for ~10 s, the hall opening the link over half a
minute, and the abusive students at it twelve times for 20 s, between thirteen quiet blocks of
about 18 s (about 12 minutes in all, two of them waiting for tabs to expire). Options given with a preset
override it. The app forgets idle tabs after `--ttl` seconds, by default just longer than
any idle gap of the class (see class_ttl), so that memory can be read after they are gone.

The app runs as a subprocess on loopback (`python app.py`), exactly as it is served.
Each simulated student opens the page some time within the first `--ramp` seconds: first as
a browser does ("page": GET / asking for gzip/br, and /config and /gradio_api/info only if the
page does not carry them inline, which Gradio 6 does), then with its own session on the app's
queue, as the page's own script does (browser_tab.py: a POST to queue/join per call, the session's
event stream open while a call waits, a heartbeat stream), and loops through a lesson for a fixed
time, pausing between actions (`--think`, mean 3 s: a student who reads each result
before the next click; the lesson loop then takes ~10 s, far busier than a real class):

  schema   the tools JSON from an edited tool source (the sandbox runs the source)
  fc       a function-calling question answered with two tool calls on the offline model
  mcp      (every fifth student, instead of fc: the MCP lesson; `--mcp-every N`, 0 for none) `/run_mcp`, the same question with
           the same tools served over MCP: a contained MCP server for the source, initialize,
           tools/list and a tools/call for each call
  hooks    (every fifth student, another one, instead of fc: the hooks lesson) `/run_hooks`, the same
           question with a PostToolUse hook that masks secrets: each hook call a sandbox job too
  subagent (every fifth student, another one, instead of fc: the sub-agent lesson) `/run_subagent`, a
           job handed to a child loop that calls the sandboxed weather tool
  react    a ReAct question (one tool call, regex-parsed text)
  context  (every fifth student, another one, instead of react: the context lesson) `/run_context`, the
           example conversation shrunk by /compact (one more model call) and asked a name said early
  skills   (every fifth student, another one, instead of react: the skills lesson) `/run_skills`, the
           example skills as a catalogue, one read with load_skill
  bash     (every fifth student, instead of react: lesson 4) `/run_workspace` "跑一下测试": the
           offline model runs `python3 -m unittest` through `bash` in a private workspace, in
           the shell's own sandbox (a fresh jail, a PID namespace, the workspace copied in and out)
  export   the session document of the last run
  echo     `/echo`, which returns its input: the floor Gradio itself sets

The well-behaved students all live in one asyncio loop: a call waiting for its answer is a
suspended coroutine. (They used gradio_client before, whose threads wake while a call waits,
here every 5 ms (poll_sooner): with 200 students on 2 cores the clients then took 43-62% of the
machine once the app slowed down, slowing it further.) `--abusers` of the students write hostile tools instead: they loop forever, allocate without
bound or print megabytes, and the student clicks again 0.2 s after each answer. Every second
of them is on lesson 4 instead, and scripts `/run_workspace` with a bash command that waits
(`sleep 60`) or spins (a CPU loop) until the shell's time limit stops it, again and again, so
the fairness figure covers the shared bash slots too. One class:
  arrival   all the tabs open over `--ramp` seconds, and everyone's first lesson (`--settle`
            seconds more: the first clicks come in step, and take a while to spread out);
  quiet     the well-behaved students work on their own (part "baseline");
  abuse     the abusive students set to it (part "abuse"), each within the block's first
            2 s (ABUSERS_START_WITHIN), as the students start within their first pause;
  quiet, abuse, ... quiet: `--rounds` abuse blocks, `--seconds` in all, between quiet blocks,
            `--seconds` in all too.
Fairness is the well-behaved students' p95 with the abusers at it against the baseline: the
same people, the same tabs, only the abusers differ. An action counts in the block it
started in (in the abuse block as long as an abuser's call begun in it still runs); quiet
blocks before, between and after the abuse cancel whatever drifts over a class. Many short
blocks do that better than a few long ones: the p95 of a few minutes is set by a handful of
slow seconds (a burst of clicks, the host's other tenants), and a few of them more in one
part move its p95 by a third, abusers or not. So each part's p95 is given two ways: over all
its actions, and as the median of its blocks' own p95s, which a slow spell in one block does
not move. The p95 of each block is printed, and the noise floor: every other quiet block
against the rest, the same comparisons with nobody abusive in either.

Reported per part: p50/p95/max per action and its ratio to the echo floor, errors by kind,
whole lessons per second, CPU used by the server, by the simulated clients (they share the
machine) and by the rest (the sandbox's workers and the kernel, read from /proc/stat), and
the memory of the app with its sandbox (PSS summed over the process tree; RSS too) at start,
at peak, and once every tab has expired. "Start" is
measured after a short warm-up class whose tabs have expired, so that one-time growth
(imports, allocator pools) is not counted as memory the sessions kept; the figure after a
single lesson is printed too. `--trace FILE` writes every timed action, one JSON line each.
Every goal printed is listed again at the end, met or missed; the run exits 1 when one is
missed. `--smoke` skips the quiet blocks (the abusers start right after the arrival), checks no
goal and exits 1 on any error (CI runs it).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import gzip
import json
import multiprocessing
import os
import random
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import types
import urllib.request
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from import_paths import use_project_paths  # noqa: E402

use_project_paths()
from context import EXAMPLE  # noqa: E402
from skills import EXAMPLES as SKILL_FILES  # noqa: E402

with open(os.path.join(ROOT, "code", "examples_weather.py"), encoding="utf-8") as handle:
    WEATHER_SOURCE = handle.read()
with open(os.path.join(ROOT, "code", "examples_calculator.py"), encoding="utf-8") as handle:
    CALCULATOR_SOURCE = handle.read()

# The context lesson's example conversation, without its last question (as its page shows it).
CONVERSATION = json.dumps(EXAMPLE[:-1], ensure_ascii=False)

FC_QUESTION = "北京和上海今天天气怎么样？"
REACT_QUESTION = "帮我算一下 (3+4)*5 等于多少"
WORKSPACE_QUESTION = "跑一下测试"
WORKSPACE_EVERY = 5          # one student in five is on lesson 4 (the four atomic tools)
MCP_EVERY = 5                # one student in five (another one) is on the MCP lesson
LESSON_EVERY = 5             # and one in five more on each of the hooks, sub-agent, context and skills lessons
MASK_HOOKS = "from hooks import Hooks, POST, mask_secrets\n\nhooks = Hooks()\nhooks.add(POST, mask_secrets)\n"
CONTEXT_QUESTION = "我叫什么名字？"
# A budget the summary fits: over it, the verdict says the context sent was over budget, and is no success.
CONTEXT_BUDGET = 600
SUBAGENT_QUESTION = "派一个子代理去查北京今天的天气，告诉我结论"
SKILLS_QUESTION = "帮我把这几个提交写成发布说明"

PRESETS = {"lecture": {"students": 200, "abusers": 10, "think": 10.0, "seconds": 240.0, "ramp": 30.0,
                       "settle": 30.0, "rounds": 12}}

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


def class_ttl(think: float, baseline: float, rounds: int) -> float:
    """The tab lifetime the app is given: short, so that memory can be read once every tab is
    gone, but longer than any gap in which a tab of this class sits idle (a student's longest
    pause; an abuser's quiet block between two abuse blocks). A tab forgotten in such a gap
    comes back a stranger: its probation is gone, and an abuser would start each block as a
    first offender, which no real class with its 2-hour lifetime sees."""
    longest_pause = 1.5 * think + 5
    between_blocks = baseline / (rounds + 1) + 10 if rounds > 1 else 0.0
    return max(15.0, longest_pause, between_blocks)


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


def stop_app(process: subprocess.Popen):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


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


def thread_count(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("Threads:"))


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


class Clock:
    """The windows of one class: the tabs open (`arrival`), then quiet blocks, where the
    students work on their own (part `baseline`), take turns with `rounds` abuse blocks, where
    the abusive students set to it (part `abuse`): quiet 1, abuse 1, quiet 2, ..., quiet
    rounds+1. Quiet blocks before, between and after the abuse make whatever drifts over a class
    (the server warming up, the students' first clicks falling in step, what the host's other
    tenants do) weigh on both parts alike; the quiet blocks against each other show how much
    p95 moves with no change at all."""

    def __init__(self, ramp: float, baseline: float, abuse: float, settle: float = 0.0, rounds: int = 1):
        moment = self.opened = time.monotonic()
        self.windows = []                    # (name, part, start, end)
        # The arrival lasts `settle` seconds past the last tab's opening: everyone's first
        # lesson, begun in the same few seconds, is part of it, not of the baseline after it.
        quiet = baseline / (rounds + 1)
        plan = [("arrival", "arrival", ramp + settle), ("quiet 1", "baseline", quiet)]
        for turn in range(1, rounds + 1):
            plan += [(f"abuse {turn}", "abuse", abuse / rounds), (f"quiet {turn + 1}", "baseline", quiet)]
        for name, part, length in plan:
            if length > 0:
                self.windows.append((name, part, moment, moment + length))
                moment += length
        self.ends = moment

    def window(self, moment: float) -> tuple:
        return next((w for w in self.windows if moment < w[3]), self.windows[-1])

    def span(self, name: str) -> tuple[float, float]:
        found = [w for w in self.windows if w[0] == name]
        return (found[0][2], found[0][3]) if found else (self.ends, self.ends)

    def blocks(self, part: str) -> list[tuple[float, float]]:
        return [(start, end) for _, where, start, end in self.windows if where == part]

    def wait_until(self, moment: float):
        time.sleep(max(0.0, moment - time.monotonic()))


class Results:
    """Every timed action as it happened; `tally` sorts them into the parts of the class
    once it is over."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.lock = threading.Lock()
        self.samples = []                    # (started, seconds, group, action, error)
        self.lessons = []                    # when each whole lesson a student finished began
        self.contained = Counter()           # abusers: error code of each tool result they got
        self.texts = {}                      # (group, action, error kind) -> what the first one said

    def record(self, group: str, action: str, started: float, error: str | None = None, text: str = ""):
        with self.lock:
            self.samples.append((started, time.monotonic() - started, group, action, error))
            if error and text:
                self.texts.setdefault((group, action, error), text)

    def settled(self) -> list[tuple[float, float, str]]:
        """(end, settled, name) of each abuse block: the abusers stop clicking when their block
        ends, but a call they had started may still be running until `settled`."""
        found = []
        for name, part, start, end in self.clock.windows:
            if part == "abuse":
                found.append((end, max([end] + [s + d for s, d, group, _, _ in self.samples
                                                 if group == "abusers" and start <= s < end]), name))
        return found

    def tally(self):
        """latency[(part, group, action)], by_window[(window, group, action)] in seconds,
        errors[(part, group, action, kind)], episodes[part]. An abuse block lasts until the
        abusers' last calls in it have ended: what began before that counts in it."""
        settled = self.settled()
        self.overtime, self.overrun = 0, max([s - e for e, s, _ in settled], default=0.0)
        self.latency, self.by_window = defaultdict(list), defaultdict(list)
        self.errors, self.episodes = Counter(), Counter()
        for started, seconds, group, action, error in self.samples:
            name, part, _, _ = self.clock.window(started)
            late = next((block for end, until, block in settled if end <= started < until), None)
            if late is not None:
                name, part = late, "abuse"
                self.overtime += group == "students"
            self.latency[(part, group, action)].append(seconds)
            self.by_window[(name, group, action)].append(seconds)
            if error:
                self.errors[(part, group, action, error)] += 1
        for began in self.lessons:
            self.episodes[self.clock.window(began)[1]] += 1


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


# A command that ran and exited non-zero: the starter project's test fails on purpose.
RAN = (None, "exit_status")


def check_bash(result: dict) -> str | None:
    """The run came to an end, and its bash step ran (the starter's test fails on purpose: its exit code 1
    is a failed result, and so the run's verdict is not a success, but the command ran)."""
    if not isinstance(result, dict) or result.get("error") or not result.get("verdict"):
        return "run failed: " + str(((result or {}).get("error") or {}).get("code"))
    steps = [e for e in result.get("events", []) if e.get("type") == "tool_result" and e.get("name") == "bash"]
    if not steps:
        return "no bash step"
    return None if all(e.get("error_code") in RAN for e in steps) else "bash failed: " + str(steps[-1].get("error_code"))


def check_context(result: dict) -> str | None:
    """The summary kept the name said in the conversation's first line, and the model answered with it."""
    if not isinstance(result, dict) or not result.get("ok"):
        return "run failed: " + str(((result or {}).get("verdict") or {}).get("state"))
    return None if "小林" in result.get("final", "") else "the name was lost"


def check_schema(result: dict) -> str | None:
    if not isinstance(result, dict) or not result.get("ok"):
        return "schema failed: " + str(((result or {}).get("error") or {}).get("code"))
    return None if len(result.get("tools", [])) == 2 else f"{len(result.get('tools', []))} tools"


def timed(results: Results, group: str, action: str, call, check=None):
    started = time.monotonic()
    try:
        return judged(results, group, action, started, call(), check)
    except Exception as exc:  # every failure is counted by kind, none stops the student
        return failed(results, group, action, started, exc)


async def timed_async(results: Results, group: str, action: str, call, check=None):
    """timed() for a call that is a coroutine (a browser tab's, browser_tab.py)."""
    started = time.monotonic()
    try:
        return judged(results, group, action, started, await call(), check)
    except Exception as exc:
        return failed(results, group, action, started, exc)


def judged(results: Results, group: str, action: str, started: float, value, check):
    error = check(value) if check else None
    results.record(group, action, started, error, error)
    return value


def failed(results: Results, group: str, action: str, started: float, exc: Exception) -> None:
    results.record(group, action, started, type(exc).__name__, error_text(exc))


def error_text(exc: BaseException) -> str:
    """What an exception said and where it was raised (a CancelledError says nothing itself)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (raised in {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}, {frames[-1].name})" if frames else ""
    return "".join(traceback.format_exception_only(type(exc), exc)).strip() + where


# gradio_client opens a new httpx client for every call, and httpx builds a TLS context
# (loading the whole CA bundle, ~50 ms of CPU) each time unless it is handed one. Over
# plain-HTTP loopback that context is never used, but building it would make the
# simulated students, not the app, the bottleneck on a 2-core machine: share one.
SHARED_TLS = ssl.create_default_context()


def poll_sooner(seconds: float = 0.005):
    """gradio_client waits for each message of a call by polling every 50 ms, so every
    latency it reports is rounded up to a 50 ms step, and a few milliseconds more on the
    server push a call over a step; a browser reacts to each message at once. burst.py's
    students poll every 5 ms instead: their requests and the protocol stay gradio_client's,
    only these waits (the two sleeps of gradio_client.utils) are shorter. (This file's students
    wait without polling: browser_tab.py.)"""
    import gradio_client.utils as client_utils

    client_utils.time = types.SimpleNamespace(sleep=lambda wait: time.sleep(min(wait, seconds)))


def read_on_after_close():
    """gradio_client reads a tab's queue messages on one stream, which the server closes once the
    tab has no event left (close_stream). A call made right after the previous one ended can be
    registered on the stream the server has just closed: the server took the previous event's end as
    the last, and the client's reader thread had not yet handled close_stream (under load, its turn
    for the GIL comes late among hundreds of students' threads). gradio_client then ends that call
    with a bare CancelledError, though the server runs it and keeps its messages for the tab
    (tests/app/test_classroom_client.py shows it). Here the reader, on close_stream, reads on while
    calls registered on it still wait for their end: it opens the tab's stream again, or leaves them
    to a reader that a newer call has opened meanwhile."""
    from gradio_client import Client

    if getattr(Client.stream_messages, "reads_on", False):
        return
    stream_messages = Client.stream_messages

    def read_on(self, protocol, session_hash):
        with self.pending_lock:
            epoch = self.stream_epoch
        for _ in range(10):              # a server that keeps closing at once has no messages for them
            stream_messages(self, protocol, session_hash)
            with self.pending_lock:
                if self.stream_open:     # not closed by the server (stopped, connection lost): as before
                    return
                waiting = [e for e in self.pending_event_ids if self.pending_event_epoch.get(e) == epoch]
                if not waiting:
                    return
                if self.stream_epoch != epoch:    # a newer call opened a reader: it gets their messages
                    for event_id in waiting:
                        self.pending_event_epoch[event_id] = self.stream_epoch
                    return
                self.stream_open = True

    read_on.reads_on = True
    Client.stream_messages = read_on


BROWSER_HEADERS = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8", "Accept-Encoding": "gzip, deflate, br, zstd",
                   "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) classroom-benchmark"}


def fetch(url: str, timeout: float = 60.0) -> tuple[bytes, int, str]:
    """(decoded body, bytes over the wire, content encoding) of one GET, as a browser asks for it."""
    request = urllib.request.Request(url, headers=BROWSER_HEADERS)
    with urllib.request.urlopen(request, timeout=timeout, context=SHARED_TLS if url.startswith("https") else None) as answer:
        wire = answer.read()
        encoding = answer.headers.get("Content-Encoding", "")
    if encoding == "gzip":
        body = gzip.decompress(wire)
    elif encoding == "br":
        import brotli
        body = brotli.decompress(wire)
    else:
        body = wire
    return body, len(wire), encoding


def open_page(url: str) -> list[tuple[str, int, int, str]]:
    """What a browser fetches before the page can call the API: the page, then its config and
    the API's description unless the page carries them inline (Gradio 6 inlines both).
    (path, bytes over the wire, decoded bytes, encoding) of each."""
    body, wire, encoding = fetch(url)
    fetched = [("/", wire, len(body), encoding)]
    if b"window.gradio_config" not in body:
        raise RuntimeError("the page holds no Gradio config")
    for inline, path in ((b"window.gradio_config = {", "config"), (b"window.gradio_api_info = {", "gradio_api/info")):
        if inline not in body:
            extra, wire, encoding = fetch(url + path)
            fetched.append(("/" + path, wire, len(extra), encoding))
    return fetched


def connect(url: str, results: Results, group: str):
    """An abusive student's browser tab: the page as a browser fetches it (timed as "page"), then
    its own gradio_client session. Retries once if the page is slow to answer."""
    from gradio_client import Client

    timed(results, group, "page", lambda: open_page(url))
    for attempt in range(2):
        started = time.monotonic()
        try:
            # Tool arguments such as {"path": "src/calc.py"} look like files to gradio_client: keep results as data.
            client = Client(url, verbose=False, ssl_verify=SHARED_TLS, download_files=False)
            results.record(group, "connect", started)
            return client
        except Exception as exc:  # counted; the second failure ends this student
            results.record(group, "connect", started, type(exc).__name__)
            time.sleep(1.0)
    return None


def set_mcp_every(n: int) -> None:
    """One student in `n` on the MCP lesson (0: nobody)."""
    global MCP_EVERY
    MCP_EVERY = max(n, 0)


async def student(url: str, seed: int, results: Results, think: float, tabs):
    """One well-behaved student: opens the page (timed as "page"), then goes through a lesson
    again and again until the class ends, reading each result for about `think` seconds. `tabs`
    opens the student's browser tab on the app's queue (browser_tab.Tab)."""
    rng = random.Random(seed)
    group = "students"
    await timed_async(results, group, "page", lambda: asyncio.to_thread(open_page, url))
    tab = await tabs()
    deadline = results.clock.ends
    # The same question on the MCP lesson or on Function Calling: one lesson's run or the other's.
    action, endpoint, lesson = (("mcp", "/run_mcp", "mcp") if MCP_EVERY and (seed - 1) % MCP_EVERY == 0
                                else ("hooks", "/run_hooks", "hooks") if (seed - 2) % LESSON_EVERY == 0
                                else ("subagent", "/run_subagent", "subagents") if (seed - 3) % LESSON_EVERY == 0
                                else ("fc", "/run_function_calling", "function_calling"))
    arguments = {"hooks": (WEATHER_SOURCE, MASK_HOOKS, FC_QUESTION),
                 "subagent": (WEATHER_SOURCE, SUBAGENT_QUESTION)}.get(action, (WEATHER_SOURCE, FC_QUESTION))
    wanted = 1 if action == "subagent" else 2       # the parent's one task call, answered by its child
    await asyncio.sleep(rng.uniform(0, think))       # not everyone clicks at the same instant
    try:
        while time.monotonic() < deadline:
            began = time.monotonic()
            await timed_async(results, group, "schema",
                              lambda: tab.call("/schema", edited_source(rng), False, "registry"), check_schema)
            await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
            run = await timed_async(results, group, action, lambda: tab.call(endpoint, *arguments),
                                    lambda r: check_run(r, wanted))
            await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
            if seed % WORKSPACE_EVERY == 0:
                await timed_async(results, group, "bash",
                                  lambda: tab.call("/run_workspace", WORKSPACE_QUESTION, None, None), check_bash)
            elif (seed - 3) % LESSON_EVERY == 0:
                await timed_async(results, group, "context",
                                  lambda: tab.call("/run_context", CONVERSATION, CONTEXT_QUESTION, "compact", CONTEXT_BUDGET),
                                  check_context)
            elif (seed - 4) % LESSON_EVERY == 0:
                await timed_async(results, group, "skills",
                                  lambda: tab.call("/run_skills", SKILL_FILES, SKILLS_QUESTION, "catalogue"),
                                  lambda r: check_run(r, 1))
            else:
                await timed_async(results, group, "react",
                                  lambda: tab.call("/run_react", CALCULATOR_SOURCE, REACT_QUESTION),
                                  lambda r: check_run(r, 1))
            if run:
                await timed_async(results, group, "export",
                                  lambda: tab.call("/export", run, lesson, WEATHER_SOURCE, FC_QUESTION),
                                  lambda r: None if isinstance(r, dict) and r.get("events") == run["events"] else "bad export")
            await timed_async(results, group, "echo", lambda: tab.call("/echo", "ping"),
                              lambda r: None if r == "ping" else "bad echo")
            with results.lock:               # counted in the part it began in, like every action
                results.lessons.append(began)
            await asyncio.sleep(rng.uniform(0.5, 1.5) * think)
    finally:
        await tab.close()


async def students_hall(url: str, plan: list[tuple[float, int]], results: Results, think: float):
    """The well-behaved students, each opening the page at its moment (`plan`: (when, seed)), all
    in one asyncio loop: a student waiting for an answer is a suspended coroutine, as a browser
    tab waiting for its event stream costs its machine nothing."""
    from browser_tab import Tab, named_endpoints, session

    endpoints = await asyncio.to_thread(named_endpoints, url)
    async with session() as http:
        async def tabs():
            tab = Tab(http, url, endpoints)
            await tab.open()
            return tab

        async def opening(moment: float, seed: int):
            await asyncio.sleep(max(0.0, moment - time.monotonic()))
            await student(url, seed, results, think, tabs)

        await asyncio.gather(*(opening(moment, seed) for moment, seed in plan))


ABUSIVE_COMMANDS = ("sleep 60", "while :; do :; done")
# Seconds over which the abusers set to it at the start of a block. In the same instant, ten
# of them were ten requests at once, which costs the others what any ten clicks at once do
# (benchmarks/burst.py: less than ten ordinary ones), every block, on top of the abuse.
ABUSERS_START_WITHIN = 2.0


def bash_abuser(client, seed: int, results: Results, pause: float, ends: float):
    """A lesson-4 student scripting `/run_workspace` with commands that only stop at the time limit."""
    turn = seed
    while time.monotonic() < ends:
        command = ABUSIVE_COMMANDS[turn % len(ABUSIVE_COMMANDS)]
        turn += 1
        run = timed(results, "abusers", "bash",
                    lambda: client.predict(f"运行 `{command}`", None, None, api_name="/run_workspace"))
        codes = [e.get("error_code") for e in (run or {}).get("events", []) if e.get("type") == "tool_result"]
        with results.lock:
            results.contained.update(str(code) for code in codes)
        time.sleep(pause)


def abuser(url: str, seed: int, results: Results, pause: float, lesson: str = "tools"):
    """One of the class: opens the tab with everyone else, then, in the abuse blocks only,
    runs a hostile tool again and again, clicking as fast as a person can. The app must
    contain it. A contained failure (ok False with a clear error code) is the expected
    answer; only an exception (no answer at all) counts as an error."""
    client = connect(url, results, "abusers")
    if client is None:
        return
    rng = random.Random(seed)
    for starts, ends in results.clock.blocks("abuse"):
        results.clock.wait_until(starts + rng.uniform(0.0, ABUSERS_START_WITHIN))
        if lesson == "bash":
            bash_abuser(client, seed, results, pause, ends)
        else:
            tool_abuser(client, seed, results, pause, ends)
        seed += 1


def tool_abuser(client, seed: int, results: Results, pause: float, ends: float):
    """A student whose tool loops, allocates without bound or prints megabytes, run through the
    Function Calling lesson and through 试调用, again and again."""
    kinds = list(ABUSIVE_TOOLS)
    turn = seed
    while time.monotonic() < ends:
        source = abusive_source(kinds[turn % len(kinds)])
        turn += 1
        run = timed(results, "abusers", "fc",
                    lambda: client.predict(source, "北京天气怎么样", api_name="/run_function_calling"))
        if time.monotonic() >= ends:
            break
        outcome = timed(results, "abusers", "try_call",
                        lambda: client.predict(source, "get_weather", '{"city": "北京"}', api_name="/try_call"))
        codes = [e.get("error_code") for e in (run or {}).get("events", []) if e.get("type") == "tool_result"]
        codes.append((outcome or {}).get("error_code"))
        with results.lock:
            results.contained.update(str(code) for code in codes)
        time.sleep(pause)


class CpuMeter:
    """CPU seconds used between two readings: by the app server, by the simulated clients
    (this process and the abusive students' one), and by everything else, which is the
    sandbox's workers and the kernel."""

    def __init__(self, app_pid: int, client_pids: tuple = ()):
        self.app_pid, self.client_pids = app_pid, client_pids
        self.reading = self.read()

    def read(self):
        clients = sum(os.times()[:2]) + sum(server_cpu_seconds(pid) for pid in self.client_pids)
        return server_cpu_seconds(self.app_pid), clients, machine_cpu()

    def lap(self) -> dict:
        (server0, own0, machine0), self.reading = self.reading, self.read()
        server1, own1, machine1 = self.reading
        machine = {k: v - machine0[k] for k, v in machine1.items()}
        busy = sum(v for k, v in machine.items() if k not in ("idle", "iowait", "steal"))
        return {"busy": busy, "server": server1 - server0, "clients": own1 - own0, "nice": machine["nice"],
                "steal": machine["steal"], "other": busy - (server1 - server0) - (own1 - own0)}


def hostile_tabs(url: str, clock: Clock, plan: list, pause: float, handover, release):
    """The abusive students, in a process of their own as separate browsers are: their long
    waits (gradio_client polls while it waits) and their parsing share no interpreter lock
    with the students being measured (they keep gradio_client's own 50 ms poll). `plan` is
    (when to open the tab, seed, "tools" or "bash") for each."""
    gc.disable()                         # as in the students' process: no collector pauses
    results = Results(clock)
    threads = []
    for opens, seed, lesson in plan:
        clock.wait_until(opens)
        thread = threading.Thread(target=abuser, args=(url, seed, results, pause, lesson), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(timeout=max(0.0, clock.ends - time.monotonic()) + 120)
    handover.put((results.samples, results.contained))
    release.wait(600)                    # stay until the CPU has been read for the last time


def run_class(url: str, students: int, abusers: int, ramp: float, baseline: float, abuse: float,
              think: float, pause: float, seed: int, app_pid: int | None = None, settle: float = 0.0,
              rounds: int = 1):
    """One class: all the tabs open over `ramp` seconds (the abusive students' among them),
    then the windows of `Clock`. Returns the results and the CPU used in each part."""
    clock = Clock(ramp, baseline, abuse, settle, rounds)
    results = Results(clock)
    everyone = students + (abusers if abuse > 0 else 0)
    # The abusive students are spread among the others, as in a real class.
    hostile = {round((i + 0.5) * everyone / abusers) for i in range(abusers)} if everyone > students else set()
    opens = [clock.opened + index * ramp / everyone for index in range(everyone)]
    apart = None
    if hostile:
        context = multiprocessing.get_context("spawn")
        handover, release = context.Queue(), context.Event()
        apart = context.Process(target=hostile_tabs, daemon=True, args=(
            url, clock, [(opens[i], seed + 1000 + i, "bash" if rank % 2 else "tools")
                               for rank, i in enumerate(sorted(hostile))], pause, handover, release))
        apart.start()
    meter = CpuMeter(app_pid, (apart.pid,) if apart else ()) if app_pid else None
    cpu = defaultdict(Counter)
    # "Open the link": the tabs open over the first seconds.
    plan = [(opens[index], seed + index) for index in range(everyone) if index not in hostile]
    stopped: list[BaseException] = []

    def hall():
        try:
            asyncio.run(students_hall(url, plan, results, think))
        except BaseException as exc:      # the students could not carry on: the class says so, not "0 errors"
            stopped.append(exc)

    hall_thread = threading.Thread(target=hall, daemon=True)
    hall_thread.start()
    for _, part, _, ends in clock.windows:
        clock.wait_until(ends)
        if meter:
            cpu[part].update(meter.lap())
    hall_thread.join(timeout=660)    # a last call may still run: 300 s for its POST, 300 s for its answer
    if stopped:
        raise RuntimeError("the simulated students stopped") from stopped[0]
    if apart:
        samples, contained = handover.get(timeout=180)
        results.samples.extend(samples)
        results.contained.update(contained)
        release.set()
        apart.join(timeout=10)
    results.tally()
    return results, cpu


def warm_up(url: str, students: int, seconds: float):
    """A short class before measuring: lazy imports, first-call caches and the allocators'
    working set for that many concurrent requests are paid here, not charged to the class."""
    results, _ = run_class(url, students, 0, 1.0, seconds, 0.0, think=0.3, pause=0.0, seed=99_000)
    if results.errors:
        raise SystemExit(f"the warm-up lessons failed: {dict(results.errors)}")


# ── report ──────────────────────────────────────────────────────────────────────


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


PART_TITLES = {"arrival": "arrival: the students open the link",
               "baseline": "baseline: the students working, nobody abusive",
               "abuse": "abuse: the same students, with the abusive ones among them"}


def summarise(part: str, results: Results, seconds: float, cpu: dict | None) -> dict:
    print(f"\n== {PART_TITLES[part]} ({seconds:.0f} s)")
    floor = results.latency.get((part, "students", "echo")) or [float("nan")]
    floor_p50, floor_p95 = statistics.median(floor), percentile(floor, 0.95)
    figures = {}
    print(f"  {'group/action':<20}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'p50/echo':>10}{'p95/echo':>10}")
    for (where, group, action), values in sorted(results.latency.items()):
        if where != part:
            continue
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        figures[(group, action)] = {"n": len(values), "p50": p50, "p95": p95, "max": max(values)}
        print(f"  {group + '/' + action:<20}{len(values):>6}{p50 * 1000:>10.1f}{p95 * 1000:>10.1f}"
              f"{max(values) * 1000:>10.1f}{p50 / floor_p50:>10.1f}{p95 / floor_p95:>10.1f}")
    episodes = results.episodes[part]
    print(f"  whole lessons begun: {episodes} in {seconds:.0f} s = {episodes / seconds:.2f} per second")
    errors = {key[1:]: n for key, n in results.errors.items() if key[0] == part}
    print("  errors: " + (", ".join(f"{g}/{a}:{kind}×{n}" for (g, a, kind), n in sorted(errors.items())) or "none"))
    for g, a, kind in sorted(errors):
        print(f"    {g}/{a}:{kind}, the first said: {results.texts.get((g, a, kind)) or kind}")
    if part == "abuse" and results.contained:
        print("  abusers' tool results by error code: "
              + ", ".join(f"{code}×{n}" for code, n in results.contained.most_common()))
    if cpu:
        print(f"  CPU used (of {os.cpu_count() * seconds:.0f} CPU-seconds): {cpu['busy']:.1f} s in all: app server "
              f"{cpu['server']:.1f} s, the simulated students' clients {cpu['clients']:.1f} s, sandbox workers and "
              f"kernel {cpu['other']:.1f} s (of which niced tool code {cpu['nice']:.1f} s); stolen by the "
              f"hypervisor {cpu['steal']:.1f} s")
    return {"figures": figures, "errors": sum(errors.values())}


def write_trace(path: str, results: Results):
    """Every timed action as a JSON line (seconds since the first tab opened), to plot or query;
    the first line gives the windows and when the first tab opened (time.monotonic)."""
    import json

    clock = results.clock
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"opened": clock.opened, "windows": [
            {"window": name, "from": round(start - clock.opened, 4), "to": round(end - clock.opened, 4)}
            for name, _, start, end in clock.windows]}) + "\n")
        for started, seconds, group, action, error in sorted(results.samples):
            handle.write(json.dumps({"at": round(started - results.clock.opened, 4), "ms": round(seconds * 1000, 2),
                                     "window": results.clock.window(started)[0], "group": group,
                                     "action": action, "error": error}) + "\n")


def block_p95(results: Results, name: str, action: str) -> float:
    return percentile(results.by_window[(name, "students", action)] or [float("nan")], 0.95)


def report_fairness(results: Results, outcome: dict, goals: list):
    """Each action's p95 with the abusers at it against the quiet blocks around them, two ways:
    over all the part's actions together, and the median of the blocks' own p95s. The first
    is the plain figure; a few slow seconds (a burst of clicks, the host's other tenants) move
    it as much as abusers would, in whichever part they fall. The second is what a typical
    block saw, and a slow spell in one block does not move it. The noise floor is the same
    pair of comparisons with nobody abusive in either part: every other quiet block against
    the rest."""
    base, abuse = outcome["baseline"]["figures"], outcome["abuse"]["figures"]
    print(f"(an abuse block ran up to {results.overrun:.1f} s over its window, until the abusers' last calls "
          f"ended: {results.overtime} students' actions began then and count in it)")
    names = [name for name, part, _, _ in results.clock.windows if part != "arrival"]
    quiet_names = [name for name, part, _, _ in results.clock.windows if part == "baseline"]
    abuse_names = [name for name, part, _, _ in results.clock.windows if part == "abuse"]
    noise = []
    for action in ("fc", "mcp", "schema", "react", "bash", "export", "echo"):
        if ("students", action) not in base or ("students", action) not in abuse:
            continue
        quiet, busy = base[("students", action)]["p95"], abuse[("students", action)]["p95"]
        typical_quiet = statistics.median(block_p95(results, name, action) for name in quiet_names)
        typical_busy = statistics.median(block_p95(results, name, action) for name in abuse_names)
        blocks = " | ".join(f"{name} {block_p95(results, name, action) * 1000:.0f}" for name in names)
        print(f"fairness {action}: students' p95 {quiet * 1000:.0f} ms -> {busy * 1000:.0f} ms with abusers "
              f"({(busy / quiet - 1) * 100:+.0f}%, goal at most +20%); median of the blocks' p95 "
              f"{typical_quiet * 1000:.0f} -> {typical_busy * 1000:.0f} ms ({(typical_busy / typical_quiet - 1) * 100:+.0f}%); "
              f"each block: {blocks} ms")
        goals.append((f"fairness {action}, students' p95 with abusers", f"{(busy / quiet - 1) * 100:+.0f}%",
                       "at most +20%", busy <= quiet * 1.2))
        halves = [quiet_names[start::2] for start in (0, 1)]
        pooled = [[v for name in half for v in results.by_window[(name, "students", action)]] for half in halves]
        if len(quiet_names) > 1 and all(pooled):
            medians = [statistics.median(block_p95(results, name, action) for name in half) for half in halves]
            noise.append(f"{action} {(percentile(pooled[1], 0.95) / percentile(pooled[0], 0.95) - 1) * 100:+.0f}% "
                         f"({(medians[1] / medians[0] - 1) * 100:+.0f}%)")
    if noise:
        print(f"noise floor, nobody abusive in either: quiet blocks {', '.join(n.split()[-1] for n in quiet_names[1::2])} "
              f"against {', '.join(n.split()[-1] for n in quiet_names[0::2])}, p95 over all (median of the blocks'): "
              + ", ".join(noise))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=50, help="students in all (abusers included)")
    parser.add_argument("--abusers", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=120, help="length of the baseline and of the abuse part")
    parser.add_argument("--think", type=float, default=3.0, help="mean pause between a student's actions, s")
    parser.add_argument("--abuser-pause", type=float, default=0.2, help="pause between an abuser's clicks, s")
    parser.add_argument("--ramp", type=float, default=10, help="seconds over which the tabs open")
    parser.add_argument("--rounds", type=int, default=4, help="abuse blocks, each between two quiet ones")
    parser.add_argument("--settle", type=float, default=10, help="seconds after the last tab opens that still count as the arrival")
    parser.add_argument("--ttl", type=float, help="session lifetime given to the app, s (default: the class's "
                        "longest idle gap and some, at least 15; see class_ttl)")
    parser.add_argument("--trace", metavar="FILE", help="also write every timed action to FILE, one JSON line each")
    parser.add_argument("--smoke", action="store_true", help="no baseline, the abusers join at once; exit 1 on any error")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="a named class size (see the top of this file)")
    parser.add_argument("--mcp-every", type=int, default=MCP_EVERY,
                        help="one student in this many is on the MCP lesson instead of Function Calling (0: none; "
                             "with N other than 5 some of them are lesson 4's students too)")
    args = parser.parse_args()
    if args.preset:                     # the preset's values become the defaults: options still win
        parser.set_defaults(**PRESETS[args.preset])
        args = parser.parse_args()
    well_behaved = args.students - args.abusers
    set_mcp_every(args.mcp_every)
    if args.smoke:                      # no quiet blocks to take turns with: one abuse block
        args.rounds = 1
    if args.ttl is None:
        args.ttl = class_ttl(args.think, 0.0 if args.smoke else args.seconds, args.rounds)

    goals: list[tuple[str, str, str, bool]] = []     # (what, figure, goal, met) of every goal printed
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
        # All the simulated clients live in this one process; a full collection here would stall
        # them all at once (0.5-1 s with 200 of them), which a class of separate browsers never
        # does. The collector stays off until the class is over.
        gc.collect()
        gc.freeze()
        gc.disable()
        page = open_page(url)
        start_rss, start_pss = tree_memory_mb(app.pid)
        start_server = tree_memory_mb(app.pid, only_root=True)[1]
        start_threads = thread_count(app.pid)
        watch = MemoryWatch(app.pid)
        watch.start()
        with open("/proc/loadavg") as handle:
            load = handle.read().split()[0]
        baseline = 0.0 if args.smoke else args.seconds
        settle = 0.0 if args.smoke else args.settle
        print(f"classroom: {args.students} students, {args.abusers} of them abusive; tabs open over {args.ramp:g} s "
              f"(and {settle:g} s for everyone's first lesson), then {baseline:.0f} s on their own and "
              f"{args.seconds:.0f} s with the abusive ones at it, in {args.rounds} abuse block(s) between "
              f"{args.rounds + 1 if baseline else 0} quiet ones; think {args.think:g} s; {os.cpu_count()} CPUs, "
              f"load average {load} before the run; tabs forgotten after {args.ttl:g} s idle")
        print("the page as a browser fetches it: " + "; ".join(
            f"{path} {wire / 1000:.0f} KB over the wire ({encoding or 'identity'}, {body / 1000:.0f} KB decoded)"
            for path, wire, body, encoding in page) + "; each student fetches it when the tab opens (\"page\")")
        print(f"app memory: PSS {cold_pss:.0f} MB after one lesson, {start_pss:.0f} MB at start, after a short "
              f"warm-up class whose tabs have expired (RSS sum {start_rss:.0f} MB)")
        results, cpu = run_class(url, well_behaved, args.abusers, args.ramp, baseline, args.seconds,
                                 args.think, args.abuser_pause, seed=0, app_pid=app.pid,
                                 settle=settle, rounds=args.rounds)
        parts = {"arrival": results.clock.span("arrival")[1] - results.clock.opened, "baseline": baseline,
                 "abuse": args.seconds}
        gc.enable()
        if args.trace:
            write_trace(args.trace, results)
        outcome = {part: summarise(part, results, seconds, cpu.get(part))
                   for part, seconds in parts.items() if seconds > 0}
        watch.stop.set()
        watch.join()

        # The clients are gone; the app forgets their tabs once the TTL has passed.
        if not args.smoke:
            time.sleep(expire)
        end_rss, end_pss = tree_memory_mb(app.pid)
        end_server = tree_memory_mb(app.pid, only_root=True)[1]
        end_threads = thread_count(app.pid)
        if args.smoke:
            print(f"\nmemory: start PSS {start_pss:.0f} MB, peak PSS {watch.peak_pss:.0f} MB "
                  f"(peak RSS sum {watch.peak_rss:.0f} MB)")
        else:
            print(f"\nmemory: start PSS {start_pss:.0f} MB, peak PSS {watch.peak_pss:.0f} MB (goal < 1024; "
                  f"peak RSS sum {watch.peak_rss:.0f} MB), after the sessions expired PSS {end_pss:.0f} MB "
                  f"({(end_pss / start_pss - 1) * 100:+.1f}% of start, goal within 10%; "
                  f"{(end_pss / cold_pss - 1) * 100:+.1f}% of the one-lesson figure); of which the server "
                  f"process {start_server:.0f} -> {end_server:.0f} MB ({start_threads} -> {end_threads} threads), "
                  f"the sandbox {start_pss - start_server:.0f} -> {end_pss - end_server:.0f} MB")
            goals.append(("peak PSS", f"{watch.peak_pss:.0f} MB", "< 1024 MB", watch.peak_pss < 1024))
            goals.append(("PSS after the sessions expired", f"{(end_pss / start_pss - 1) * 100:+.1f}% of start",
                          "within 10%", end_pss <= start_pss * 1.10))

        errors = sum(results.errors.values())
        if not args.smoke:
            report_fairness(results, outcome, goals)
            for part, figures in outcome.items():
                figures = figures["figures"]
                fc = figures.get(("students", "fc"), {}).get("p95", float("nan"))
                mcp = figures.get(("students", "mcp"), {}).get("p95", float("nan"))
                schema = figures.get(("students", "schema"), {}).get("p95", float("nan"))
                print(f"goals, {part}: fc p95 {fc * 1000:.0f} ms (< 2000), mcp p95 {mcp * 1000:.0f} ms (< 2000), "
                      + "".join(f"{a} p95 {figures[('students', a)]['p95'] * 1000:.0f} ms (< 2000), "
                                for a in ("hooks", "subagent", "context", "skills") if ("students", a) in figures) +
                      f"schema p95 {schema * 1000:.0f} ms (< 300), errors {outcome[part]['errors']} (0)")
                goals.append((f"{part}: fc p95", f"{fc * 1000:.0f} ms", "< 2000 ms", fc < 2.0))
                # A class too small to have a student on a lesson has no figure for it.
                for action in ("mcp", "hooks", "subagent", "context", "skills"):
                    if ("students", action) in figures:
                        p95 = figures[("students", action)]["p95"]
                        goals.append((f"{part}: {action} p95", f"{p95 * 1000:.0f} ms", "< 2000 ms", p95 < 2.0))
                goals.append((f"{part}: schema p95", f"{schema * 1000:.0f} ms", "< 300 ms", schema < 0.3))
                goals.append((f"{part}: errors", str(outcome[part]["errors"]), "0", outcome[part]["errors"] == 0))
            print()
            for what, figure, target, met in goals:
                print(f"goal {'met   ' if met else 'MISSED'}: {what} {figure} (goal {target})")
        missed = [what for what, _, _, met in goals if not met]
        if args.smoke:                  # CI: only errors fail the smoke run, never a time
            print(f"smoke {'failed' if errors else 'passed'}: {errors} errors")
            return 1 if errors else 0
        print(f"classroom {'failed' if missed else 'passed'}: {errors} errors, {len(missed)} of {len(goals)} goals missed")
        return 1 if missed else 0
    finally:
        stop_app(app)


if __name__ == "__main__":
    sys.exit(main())
