"""An evaluation on the server (code/evaluation.py): a case set run through the Function Calling
loop against one or two models, the tools in the sandbox, a few trials per case.

Every trial is a run like the page's 运行: the same client (a server key is metered per model
call, so each trial counts), the same sandboxed tools. How many runs one evaluation may make is
capped, lower on a public Space (`run_cap`), and the cap is said before anything runs.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import tempfile
import threading
import time
from typing import Any, Iterator, Mapping

from evaluation import (CRITERIA, Case, CaseProblem, Trial, against_tools, category, evaluate, read_cases, table,
                        totals)
from function_calling_loop import run_function_calling
from i18n import tr

import sandbox

from access.clients import Settings, make_client, whole
from runs import backend

TRIALS_MAX = 5
MODELS_MAX = 2
RUNS_MAX = 300            # one evaluation, on a machine of one's own: 50 cases × 3 trials × 2 models
HOSTED_RUNS_MAX = 60      # on a public Space, where a server key may pay for every run
LABELS = ("A", "B")


def hosted() -> bool:
    """Anyone may open the page: a Space, a 创空间 or a non-loopback address (the sandbox's one rule)."""
    return sandbox.current_settings().serving_publicly()


def run_cap() -> int:
    return HOSTED_RUNS_MAX if hosted() else RUNS_MAX


def cap_note() -> str:
    cap = run_cap()
    if hosted():
        return tr("这是公开的 Space：每次评估最多跑 {cap} 次（用例数 × 重复次数 × 模型数），用服务器密钥时每次都计入用量。",
                  "This is a public Space: one evaluation runs at most {cap} times (cases × trials × models); on the "
                  "server's key every run counts towards its usage.").format(cap=cap)
    return tr("每次评估最多跑 {cap} 次（用例数 × 重复次数 × 模型数）。",
              "One evaluation runs at most {cap} times (cases × trials × models).").format(cap=cap)


@dataclasses.dataclass(frozen=True)
class Contender:
    """One model of the comparison, as the page or the API describes it."""
    label: str
    settings: Settings
    session_key: str = ""
    mistake: str | None = None            # the offline model's simulated mistake
    price: dict | None = None             # {"input", "output"} per million tokens; None: not configured
    key_box: str = ""                     # where the page takes this model's key ("": «Model settings»)

    def name(self) -> str:
        public = self.settings.public()
        said = f"{public['provider']} · {public['model']}"
        return said + (f" · {self.mistake}" if self.mistake else "")


@dataclasses.dataclass
class Evaluation:
    """What one evaluation has done so far: per model its trials (or why it could not run)."""
    cases: list[Case] = dataclasses.field(default_factory=list)
    tools: list = dataclasses.field(default_factory=list)
    contenders: list[Contender] = dataclasses.field(default_factory=list)
    trials: dict = dataclasses.field(default_factory=dict)      # label -> [Trial]
    failed: dict = dataclasses.field(default_factory=dict)      # label -> why the model could not run
    planned: int = 0
    each: int = 0                                               # runs planned for each model (cases × trials)
    problem: str = ""                                           # why nothing ran
    stopped: bool = False
    running: bool = False                                       # the page's evaluation under way
    started: float = dataclasses.field(default_factory=time.time)   # tells one evaluation's view from the last one's

    @property
    def ran(self) -> bool:
        """Some trial has run (a model that could not start has none)."""
        return any(self.trials.values())

    @property
    def done(self) -> int:
        return sum(len(trials) for trials in self.trials.values())

    def totals(self, label: str):
        contender = next(c for c in self.contenders if c.label == label)
        return totals(self.trials.get(label, []), estimated=contender.settings.provider == "offline",
                      price=contender.price)

    def not_run(self, label: str) -> int:
        """How many of this model's planned runs did not run (it could not start, or the evaluation was stopped)."""
        return max(0, self.each - len(self.trials.get(label, [])))

    def why_not_run(self, label: str) -> str:
        """Why this model's runs that did not run did not: "" when every one ran."""
        if label in self.failed:
            return tr("模型 {label} 没有运行：{why}", "Model {label} did not run: {why}").format(
                label=label, why=self.failed[label])
        if self.not_run(label):
            return tr("模型 {label} 有 {n} 次没有运行：评估被停止了", "Model {label}: {n} runs did not run: the "
                      "evaluation was stopped").format(label=label, n=self.not_run(label))
        return ""

    def find(self, label: str, case: str, number: int) -> Trial | None:
        return next((t for t in self.trials.get(label, []) if t.case.name == case and t.number == number), None)


class Patient:
    """The sandbox's executor for an evaluation. An evaluation makes many calls in a row, and the
    sandbox turns away a session's calls past its budget (busy, rate_limited: a minute's share); a
    call turned away waits and tries again, for up to PATIENCE_S, instead of failing the run. The
    time spent waiting is counted in `waited` and taken off the run's time."""

    THROTTLED = ("busy", "rate_limited")
    PATIENCE_S = 60.0
    PAUSE_S = 1.0

    def __init__(self, execute: Any):
        self.execute, self.waited = execute, 0.0
        self.max_parallel = getattr(execute, "max_parallel", 1)
        self.lock = threading.Lock()

    def __call__(self, name: str, arguments: Any) -> Any:
        deadline = time.monotonic() + self.PATIENCE_S
        while True:
            outcome = self.execute(name, arguments)
            turned_away = isinstance(outcome, dict) and outcome.get("error_code") in self.THROTTLED
            if not turned_away or time.monotonic() + self.PAUSE_S > deadline:
                return outcome
            time.sleep(self.PAUSE_S)
            with self.lock:
                self.waited += self.PAUSE_S


def parse_price(text: Any) -> dict | None:
    """"2, 8" (per million input, output tokens) -> {"input": 2.0, "output": 8.0}; "" -> None.
    Raises ValueError with a sentence for anything else."""
    if isinstance(text, dict):
        text = f"{text.get('input', '')},{text.get('output', '')}"
    written = str(text or "").replace("，", ",").strip()
    if not written:
        return None
    parts = [part.strip() for part in written.split(",")]
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        numbers = []
    if len(numbers) != 2 or any(n < 0 or n != n or n == float("inf") for n in numbers):
        raise ValueError(tr("价格写成「输入, 输出」两个不小于 0 的数（每百万 token 的价格），例如 2, 8；收到 {text!r}",
                            "Write the price as two numbers of at least 0, «input, output» per million tokens, "
                            "e.g. 2, 8; got {text!r}").format(text=written[:40]))
    return {"input": numbers[0], "output": numbers[1]}


def run_evaluation(source: str, cases_text: Any, contenders: list[Contender], trials: Any, *,
                   secrets: Mapping[str, str] | None = None, session_id: str | None = None, request: Any = None,
                   class_code: str = "") -> Iterator[Evaluation]:
    """Yields the evaluation after each trial (and once before the first, and once at the end).
    Closing the generator stops it between two trials: what was done stays."""
    state = Evaluation(contenders=list(contenders[:MODELS_MAX]))
    trials = whole(trials, 1, 1, TRIALS_MAX)
    try:
        state.cases = read_cases(cases_text)
    except CaseProblem as problem:
        state.problem = str(problem)
        yield state
        return
    state.each = len(state.cases) * trials
    state.planned = state.each * len(state.contenders)
    if state.planned > run_cap():
        state.problem = tr("这次评估要跑 {n} 次（{cases} 个用例 × {trials} 次 × {models} 个模型），超过了上限 {cap} 次。"
                           "减少用例或重复次数，或者只评一个模型。",
                           "This evaluation would run {n} times ({cases} cases × {trials} trials × {models} models), "
                           "over the limit of {cap}. Use fewer cases or trials, or one model.").format(
            n=state.planned, cases=len(state.cases), trials=trials, models=len(state.contenders), cap=run_cap())
        yield state
        return
    report = backend.extract(source or "", "registry", False, session_id)
    if not report["ok"]:
        state.problem = tr("工具源码没有生成 schema：", "The tool source gives no schema: ") + backend.error_text(report["error"])
        yield state
        return
    state.tools = report["tools"]
    state.problem = against_tools(state.cases, state.tools)
    if state.problem:
        yield state
        return
    execute = Patient(backend.executor(source or "", session_id))
    state.trials = {contender.label: [] for contender in state.contenders}   # filled in place: readers never see it grow keys
    yield state
    for contender in state.contenders:
        try:
            client = make_client(contender.settings, contender.session_key, secrets or {}, mistake=contender.mistake,
                                 request=request, class_code=class_code, key_box=contender.key_box)
        except Exception as exc:   # a missing key, a refused address: this model does not run, the other does
            state.failed[contender.label] = str(exc) or exc.__class__.__name__
            continue
        settings = contender.settings


        def run_once(messages: list[dict]) -> Iterator[dict]:
            execute.waited = 0.0
            loop = run_function_calling(client, messages, state.tools, execute, max_turns=settings.max_turns,
                                        temperature=settings.temperature)
            return (backend.jsonable(event) for event in loop)

        for trial in evaluate(run_once, state.cases, trials):
            trial.ms = max(0.0, trial.ms - execute.waited * 1000)     # the run's own time, not the queue's
            state.trials[contender.label].append(trial)
            yield state
    yield state


def run_record(trial: Trial) -> dict:
    """One run, as exports and the API give it: its scores, time, tokens and the calls it made."""
    prompt, completion, unreported = trial.usage()
    calls = [{"name": e.get("name"), "arguments": e.get("arguments")} for e in trial.events
             if e.get("type") == "tool_call" and "child" not in e]
    stop = next((e for e in trial.events if e.get("type") == "error" and "child" not in e), None)
    return {"case": trial.case.name, "trial": trial.number, "passed": trial.score.passed, "scored": trial.score.scored,
            **{name: getattr(trial.score, name) for name in CRITERIA}, "finished": trial.score.finished,
            "problem": trial.score.problem, "ms": round(trial.ms, 1), "prompt_tokens": prompt,
            "completion_tokens": completion, "unreported_usage": unreported, "calls": calls,
            # what stopped a run that did not finish: the loop's guard, or the endpoint (its HTTP status, if it answered)
            "stopped_by": {"code": stop.get("code"), "status": stop.get("status")} if stop else None}


def report(state: Evaluation) -> dict:
    """The whole evaluation as JSON: the case set, and per model its totals, rows and runs."""
    models = []
    for contender in state.contenders:
        entry = {"label": contender.label, "settings": contender.settings.public(), "mistake": contender.mistake,
                 "price": contender.price, "error": state.failed.get(contender.label),
                 "not_run": state.not_run(contender.label), "why_not_run": state.why_not_run(contender.label) or None}
        if contender.label in state.trials and contender.label not in state.failed:
            total = state.totals(contender.label)
            entry["totals"] = {**dataclasses.asdict(total), "rate": total.rate,
                               "criteria": {k: list(v) for k, v in total.criteria.items()}}
            entry["cases"] = table(state.trials[contender.label])
            entry["runs"] = [run_record(trial) for trial in state.trials[contender.label]]
        models.append(entry)
    tool_count = len(state.tools)
    return {"ok": not state.problem, "problem": state.problem or None, "planned": state.planned, "done": state.done,
            "stopped": state.stopped,
            "cases": [{**case.to_json(), "category": category(case, tool_count)} for case in state.cases],
            "models": models}


def as_csv(state: Evaluation) -> str:
    """One row per run; and for a model whose runs did not all run, one more row saying how many and why
    (its `scored` empty, `not_run` the count), so a file opened on its own still says what is missing."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["model", "label", "case", "category", "trial", "scored", "passed", *CRITERIA, "finished", "ms",
                     "prompt_tokens", "completion_tokens", "not_run", "problem"])
    categories = {case.name: category(case, len(state.tools)) for case in state.cases}
    for contender in state.contenders:
        for trial in state.trials.get(contender.label, []):
            row = run_record(trial)
            writer.writerow([contender.name(), contender.label, row["case"], categories.get(row["case"], ""),
                             row["trial"], row["scored"], row["passed"], *(row[name] for name in CRITERIA),
                             row["finished"], row["ms"], row["prompt_tokens"], row["completion_tokens"], 0,
                             row["problem"]])
        if state.not_run(contender.label):
            writer.writerow([contender.name(), contender.label, *[""] * (9 + len(CRITERIA)),
                             state.not_run(contender.label), state.why_not_run(contender.label)])
    return out.getvalue()


def cases_json(cases_text: Any) -> str:
    """The case set as a file to hand out: {"cases": [...]}, checked first (raises CaseProblem)."""
    cases = read_cases(cases_text)
    return json.dumps({"cases": [case.to_json() for case in cases]}, ensure_ascii=False, indent=2)


IMPORT_LIMIT = 512 * 1024      # bytes of an imported case set: 50 cases are a few tens of KB


def written(text: str, name: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` in a fresh temporary file called `name` (an export to download); returns its path. Any
    of `secrets` (the keys typed for the models) is blanked, in case an endpoint's error echoed it."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    folder = tempfile.mkdtemp(prefix="tool-workshop-")
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def imported(path: str) -> str:
    """An uploaded case set file -> its text, tidied, once it passes read_cases (raises CaseProblem)."""
    if os.path.getsize(path) > IMPORT_LIMIT:
        raise CaseProblem(tr("文件太大（超过 {kb} KB），不像是一个用例集。", "The file is too big (over {kb} KB) for a case set.")
                          .format(kb=IMPORT_LIMIT // 1024))
    with open(path, encoding="utf-8", errors="replace") as handle:
        return cases_json(handle.read())
