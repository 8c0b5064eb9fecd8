"""Evaluation speed: scoring recorded runs, and an offline evaluation end to end, each against a peer
measured in the same run.

    /opt/tool-workshop-venv/bin/python benchmarks/eval_speed.py [--runs 1000] [--repeat 7]

1. Scoring. Every built-in case set (code/evaluation_cases.py) is run once through the offline model
   and its example tools, with the offline model's simulated mistakes too, so the recordings hold
   right runs, corrected ones and wrong ones. `--runs` of them (taken in turn) are scored by
   evaluation.score and by `plain_score` below, the scorer a student would write first: the same
   rules, spelled out with lists, answering pass / fail only (it stops at the first failure, while
   evaluation.score fills every criterion and writes each problem for the page). Both must agree on
   every run's pass / fail (checked), then the median of `--repeat` rounds of each is printed, with
   their ratio (above 1: evaluation.score is the slower).
2. Totals. The page redraws the totals of every trial so far a few times a second while an evaluation
   runs; evaluation.totals now also looks, for each failed tool call, at whether the model made its
   arguments up (accents.unsaid_arguments over what that round sent). `--runs` recorded runs (as
   trials) are totalled by evaluation.totals and, as its peer, tabled by evaluation.table (the page's
   other per-redraw summary): the median of `--repeat` rounds of each and their ratio.
3. An offline evaluation of 20 cases × 3 trials through runs/eval_backend.run_evaluation (tools in
   the sandbox, as the page does it), against its peer: the same 60 questions run one by one as the
   page's ▶ 运行 runs them (backend.start_run + run_to_end). The ratio is the evaluation's overhead.
"""
from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "code"), str(ROOT)]
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import evaluation  # noqa: E402
from evaluation import read_cases, score  # noqa: E402
from evaluation_cases import CASE_SETS  # noqa: E402
from function_calling_loop import run_function_calling  # noqa: E402
from llm_clients import make_client  # noqa: E402

MISTAKES = (None, "unknown_tool", "wrong_type", "missing_argument", "stubborn")


def recordings() -> list[tuple[evaluation.Case, list[dict]]]:
    recorded = []
    for example, written in CASE_SETS.items():
        registry = importlib.import_module(example[:-3]).registry
        for mistake in MISTAKES:
            client = make_client("offline", mistake=mistake)
            for case in read_cases(written):
                recorded.append((case, list(run_function_calling(client, case.messages(), registry.to_schemas(),
                                                                 registry))))
    return recorded


def plain_matches(spec, value, given) -> bool:
    if not isinstance(spec, dict):
        return given and json.dumps(spec, sort_keys=True) == json.dumps(value, sort_keys=True)
    if "absent" in spec:
        return not given
    if not given:
        return False
    if "equals" in spec:
        return plain_matches(spec["equals"], value, True)
    if "one_of" in spec:
        return any(plain_matches(option, value, True) for option in spec["one_of"])
    if "near" in spec:
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and abs(value - spec["near"]) <= spec.get("tolerance", 0))
    if "contains" in spec:
        return isinstance(value, str) and spec["contains"] in value
    import re
    return isinstance(value, str) and re.search(spec["matches"], value) is not None


def plain_score(case: evaluation.Case, events: list[dict]) -> bool:
    """Passed or not, by the rules of code/evaluation.py, written the first way that comes to mind."""
    mine = [e for e in events if "child" not in e]
    calls = [e for e in mine if e["type"] == "tool_call"]
    results = [e for e in mine if e["type"] == "tool_result"]
    finals = [e for e in mine if e["type"] == "final"]
    if not finals:
        return False
    names = []
    for c in calls:
        if c["name"] not in names:
            names.append(c["name"])
    wanted = []
    for c in case.calls:
        if c["name"] not in wanted:
            wanted.append(c["name"])
    if sorted(names) != sorted(wanted):
        return False
    for r in results:
        if r["error_code"] in evaluation.NOT_RUN or r["error_code"] in evaluation.ARGUMENT_MISTAKES:
            return False
    if case.calls:
        taken = []
        for c in calls:
            for r in results:
                if r["id"] == c["id"] and r["turn"] == c["turn"]:
                    if r["ok"] or r["error_code"] not in evaluation.CALL_MISTAKES:
                        taken.append(c)
        if len(taken) != len(case.calls):
            return False
        if case.order == "parallel" and len({c["turn"] for c in taken}) > 1:
            return False
        orders = [taken] if case.order == "sequence" else list(itertools.permutations(taken))
        found = False
        for made in orders:
            good = True
            for expected, call in zip(case.calls, made):
                if call["name"] != expected["name"]:
                    good = False
                for name, spec in (expected.get("arguments") or {}).items():
                    arguments = call.get("arguments") or {}
                    if not plain_matches(spec, arguments.get(name), name in arguments):
                        good = False
            if good:
                found = True
        if not found:
            return False
    if case.answer is not None and not plain_matches(case.answer, finals[0]["content"], True):
        return False
    return True


def timed(fn, rounds: int) -> float:
    fn()     # warm-up
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def scoring(runs: int, repeat: int) -> None:
    recorded = recordings()
    batch = [recorded[i % len(recorded)] for i in range(runs)]
    ours = [score(case, events).passed for case, events in batch]
    theirs = [plain_score(case, events) for case, events in batch]
    disagree = [case.name for (case, _), a, b in zip(batch, ours, theirs) if a != b]
    assert not disagree, f"the two scorers disagree on {disagree[:5]}"
    full = timed(lambda: [score(case, events) for case, events in batch], repeat)
    plain = timed(lambda: [plain_score(case, events) for case, events in batch], repeat)
    print(f"scoring {runs} recorded runs ({len(recorded)} distinct, {sum(ours)} passed): "
          f"evaluation.score {full * 1000:.1f} ms, plain scorer {plain * 1000:.1f} ms, "
          f"ratio {full / plain:.2f}x (median of {repeat})")


def summing(runs: int, repeat: int) -> None:
    recorded = recordings()
    done = [evaluation.Trial(case, 1, events, score(case, events), 1.0)
            for case, events in (recorded[i % len(recorded)] for i in range(runs))]
    failed_calls = sum(sum(t.tool_failures()) for t in done)
    summed = timed(lambda: evaluation.totals(done), repeat)
    tabled = timed(lambda: evaluation.table(done), repeat)
    print(f"totals of {runs} runs ({failed_calls} failed tool calls looked at): evaluation.totals {summed * 1000:.1f} ms, "
          f"evaluation.table {tabled * 1000:.1f} ms, ratio {summed / tabled:.2f}x (median of {repeat})")


def end_to_end(repeat: int) -> None:
    from access.clients import Settings
    from catalogue import LESSONS
    from runs import backend, eval_backend, starters
    import sandbox

    sandbox.start()
    weather = (ROOT / "code" / "examples_weather.py").read_text(encoding="utf-8")
    built = CASE_SETS["examples_weather.py"]
    cases = [dict(built[i % len(built)], name=f"{built[i % len(built)]['name']} #{i}") for i in range(20)]
    models = [eval_backend.Contender("A", Settings())]

    def evaluation_run():
        for state in eval_backend.run_evaluation(weather, cases, models, 3):
            pass
        assert state.done == 60 and not state.problem, state.problem

    def one_by_one():
        for case in cases:
            for _ in range(3):
                run = backend.run_to_end(backend.start_run(starters.of(LESSONS["function_calling"]), weather, case["question"],
                                                           Settings()))
                assert run.error is None

    rounds = max(1, repeat // 2)
    whole = timed(evaluation_run, rounds)
    peer = timed(one_by_one, rounds)
    print(f"offline evaluation, 20 cases x 3 trials: {whole:.2f} s; the same 60 runs one by one {peer:.2f} s; "
          f"ratio {whole / peer:.2f}x (median of {rounds})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    scoring(args.runs, args.repeat)
    summing(min(args.runs, 300), args.repeat)
    end_to_end(args.repeat)


if __name__ == "__main__":
    main()
