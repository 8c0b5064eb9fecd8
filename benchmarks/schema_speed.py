"""Schema generation speed: ToolRegistry beside pydantic, LangChain and openai-agents, in one process.

    /opt/tool-workshop-venv/bin/python benchmarks/schema_speed.py [--repeat 40]

Each library turns every function of benchmarks/corpus_tools.py (36 varied tools) into a schema:
  registry       ToolRegistry().tool(f) then .to_schemas()   (a fresh registry each time: the whole public path,
                 signature + type hints + docstring + walker + the JSON copy to_schemas returns)
  pydantic       pydantic.TypeAdapter(f).json_schema()         (types only, no docstring descriptions)
  langchain      langchain_core.utils.function_calling.convert_to_openai_tool(f)
  openai-agents  agents.function_schema.function_schema(f)
Fairness: every timed call gets a fresh copy of the function object (same code, annotations, defaults and
docstring), made outside the timed region, so no library can reuse a result cached on the function.
The garbage collector is paused during each timed call (as `timeit` does) and runs between calls.
Classes used in annotations (pydantic models, enums) are shared, as in a real program; pydantic caches their
core schema on the class, which helps the three pydantic-based routes and the registry's delegation alike.
Each round runs every library over the whole corpus, one library after the other (the order rotates from round
to round), so slow drifts of the machine hit all of them while each library runs in its own steady state, as a
program registering a module of tools does. After a warm-up, the median of `--repeat` rounds is taken per
function, and the table reports the median (and mean) over functions plus ratios.
A library that raises on a function is counted as a failure and that function is left out of its figures.

Then the import time of code/tool_registry.py: median wall time of fresh `python -c "import tool_registry"`
processes minus that of `python -c pass`, alternating, with the bytecode cache in place (how Python normally
runs) and with -B and no cache (every run compiles the source).
"""
import argparse
import gc
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "code"), str(ROOT / "benchmarks")]

import corpus_tools  # noqa: E402
from tool_registry import ToolRegistry  # noqa: E402


def fresh_copy(func):
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__annotations__ = dict(func.__annotations__)
    copy.__doc__, copy.__qualname__, copy.__module__ = func.__doc__, func.__qualname__, func.__module__
    return copy


def contenders():
    from agents.function_schema import function_schema
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from pydantic import TypeAdapter

    def registry(f):
        tools = ToolRegistry()
        tools.tool(f)
        return tools.to_schemas()

    return {
        "registry": registry,
        "pydantic": lambda f: TypeAdapter(f).json_schema(),
        "langchain": convert_to_openai_tool,
        "openai-agents": lambda f: function_schema(f).params_json_schema,
    }


def measure(repeat: int, warmup: int = 3) -> dict:
    libraries = contenders()
    times = {name: {f.__name__: [] for f in corpus_tools.CORPUS} for name in libraries}
    failures = {name: {} for name in libraries}
    names = list(libraries)
    for round_ in range(warmup + repeat):
        order = names[round_ % len(names):] + names[:round_ % len(names)]     # rotate who goes first
        for name in order:
            make = libraries[name]
            for func in corpus_tools.CORPUS:
                if func.__name__ in failures[name]:
                    continue
                copy = fresh_copy(func)
                gc.disable()             # as timeit does: no collector pauses inside a timed call
                start = time.perf_counter()
                try:
                    make(copy)
                except Exception as exc:
                    failures[name][func.__name__] = f"{type(exc).__name__}: {str(exc)[:80]}"
                    continue
                finally:
                    elapsed = time.perf_counter() - start
                    gc.enable()
                if round_ >= warmup:
                    times[name][func.__name__].append(elapsed * 1e6)
    return {name: {f: statistics.median(v) for f, v in per.items() if v and f not in failures[name]}
            for name, per in times.items()}, failures


def import_time(runs: int = 21) -> dict:
    python, code_dir = sys.executable, ROOT / "code"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(code_dir)
    subprocess.run([python, "-c", "import tool_registry"], env=env, check=True)   # writes the bytecode cache

    def wall(args):
        start = time.perf_counter()
        subprocess.run([python, *args], env=env, check=True)
        return (time.perf_counter() - start) * 1000

    results = {}
    for label, flags in (("cached bytecode", []), ("no cache (-B, compiles)", ["-B"])):
        if flags:
            shutil.rmtree(code_dir / "__pycache__", ignore_errors=True)
        base, full = [], []
        for _ in range(runs):
            base.append(wall([*flags, "-c", "pass"]))
            full.append(wall([*flags, "-c", "import tool_registry"]))
        results[label] = (statistics.median(base), statistics.median(full))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=40, help="timed runs per function and library")
    options = parser.parse_args()

    medians, failures = measure(options.repeat)
    ours = medians["registry"]
    print(f"Schema generation, {len(corpus_tools.CORPUS)} functions, median of {options.repeat} runs each "
          f"(Python {sys.version.split()[0]})\n")
    print(f"{'library':<15}{'median µs':>11}{'mean µs':>10}{'ratio of medians':>18}{'median ratio':>14}  failures")
    for name, per in medians.items():
        common = [f for f in per if f in ours]
        ratio_of_medians = statistics.median(per.values()) / statistics.median(ours[f] for f in common)
        median_ratio = statistics.median(per[f] / ours[f] for f in common)
        print(f"{name:<15}{statistics.median(per.values()):>11.1f}{statistics.mean(per.values()):>10.1f}"
              f"{ratio_of_medians:>17.1f}x{median_ratio:>13.1f}x  {len(failures[name])}")
    for name, failed in failures.items():
        for func, why in failed.items():
            print(f"  {name} failed on {func}: {why}")
    slowest = sorted(ours.items(), key=lambda kv: -kv[1])[:5]
    print("\nregistry's slowest:", ", ".join(f"{f} {t:.0f} µs" for f, t in slowest))

    print("\nImport time of code/tool_registry.py (fresh processes, median of 21):")
    for label, (base, full) in import_time().items():
        print(f"  {label:<25} python -c pass {base:6.1f} ms   import tool_registry {full:6.1f} ms   "
              f"difference {full - base:5.1f} ms")


if __name__ == "__main__":
    main()
