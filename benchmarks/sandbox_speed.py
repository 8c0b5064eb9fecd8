"""How long one sandboxed tool call takes, against a plain `subprocess.run` of the same tool.

    /opt/tool-workshop-venv/bin/python benchmarks/sandbox_speed.py [--calls 40]

Measures, in one run on this machine:
  classroom pace   run_tool with a pause between calls (the pool has time to refill)
  back to back     run_tool calls with no pause
  cold             run_tool with an empty pool (a worker is forked and hardened for the call)
  plain subprocess subprocess.run([python, "-c", ...]) running the same tool unprotected
and prints medians and the speed-up against the plain subprocess (plain median / case median).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "code")]

import sandbox  # noqa: E402

SOURCE = '''from typing import Literal
from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("查询指定城市的当前天气")
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    return f"{city} 晴，{25 if unit == 'c' else 77}°{unit.upper()}"
'''
PLAIN = SOURCE + '''
import json, sys
print(json.dumps(registry.call("get_weather", {"city": "北京"}).to_dict(), ensure_ascii=False))
'''


def timed(call, calls, pause):
    samples = []
    for _ in range(calls):
        if pause:
            time.sleep(pause)
        start = time.perf_counter()
        result = call()
        samples.append((time.perf_counter() - start) * 1000)
        assert result, "the call failed"
    return samples


def via_sandbox():
    result = sandbox.run_tool(SOURCE, "get_weather", {"city": "北京"})
    return result["ok"] and "北京" in result["content"]


def via_subprocess():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.path.join(ROOT, "code")}
    done = subprocess.run([sys.executable, "-c", PLAIN], capture_output=True, text=True, env=env, timeout=30)
    return done.returncode == 0 and "北京" in done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--pace", type=float, default=0.08, help="seconds between calls at classroom pace")
    options = parser.parse_args()

    sandbox.configure(pool_size=2)
    state = sandbox.status()
    layers = state["layers"]
    sandbox.start()
    rows = {}
    rows["sandbox, classroom pace"] = timed(via_sandbox, options.calls, options.pace)
    rows["sandbox, back to back"] = timed(via_sandbox, options.calls, 0)
    sandbox.configure(pool_size=0)
    sandbox.start()
    rows["sandbox, cold (fresh worker)"] = timed(via_sandbox, max(options.calls // 2, 5), options.pace)
    rows["plain subprocess.run"] = timed(via_subprocess, max(options.calls // 2, 5), 0)
    sandbox.shutdown()

    plain = statistics.median(rows["plain subprocess.run"])
    print(f"mode={state['mode']} seccomp={layers.get('seccomp')} landlock_abi={layers.get('landlock')} "
          f"rlimits={layers.get('rlimits')} worker_uid={layers.get('uid')} cpus={os.cpu_count()}")
    print(f"{'case':32} {'median ms':>10} {'p90 ms':>8} {'speed-up':>9}")
    for name, samples in rows.items():
        median = statistics.median(samples)
        p90 = sorted(samples)[int(len(samples) * 0.9) - 1]
        print(f"{name:32} {median:10.2f} {p90:8.2f} {plain / median:8.1f}x")


if __name__ == "__main__":
    main()
