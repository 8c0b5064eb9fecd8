"""What the evaluation page draws from a runs.eval_backend.Evaluation: the progress line, the
totals with their bars, the before / after comparison, the table (a row per case, per model a
cell per criterion) and the run a cell opens. Functions of the data only: no component here."""
from __future__ import annotations

from evaluation import CRITERIA, Trial, category, table

from i18n import now, tr
from lessons.html_bits import esc
from lessons.presets import MISTAKE_TEXTS
from runs.eval_backend import Contender, Evaluation

CRITERION_TITLES = {"tool": tr("工具", "tool"), "arguments": tr("参数", "arguments"), "answer": tr("回答", "answer")}
CATEGORY_TITLES = {"simple": tr("单个", "simple"), "multiple": tr("多选一", "multiple"),
                   "parallel": tr("并行", "parallel"), "parallel_multiple": tr("并行·多工具", "parallel multiple"),
                   "multi_step": tr("多次调用", "several calls"), "irrelevance": tr("不该调用", "irrelevance"),
                   "multi_turn": tr("多轮", "multi-turn")}
CSS = """
.tw-eval-bars { display: grid; grid-template-columns: max-content 1fr; gap: 4px 10px; align-items: center; }
.tw-eval-bar { height: 1.1em; background: var(--color-accent); border-radius: 3px; min-width: 2px; }
.tw-eval-bar.b { background: #e8912d; }
.tw-eval-totals { width: 100%; border-collapse: collapse; }
.tw-eval-totals td, .tw-eval-totals th { padding: 3px 10px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
.tw-eval-totals tr > th:first-child { white-space: nowrap; width: 1%; font-weight: normal; opacity: 0.8; }
.tw-eval-totals .tw-eval-notes td { font-size: 0.92em; }
.tw-eval-moved { margin: 0.3em 0; }
"""


def progress_html(state: Evaluation | None, running: bool = False) -> str:
    """The evaluation's headline: while it runs, how far; once it ends, each model's pass rate and what did
    not run. ✅ only when every model ran every run and every run passed."""
    if state is None:
        return ""
    if state.problem:
        return (f'<div class="tw-eval-progress tw-eval-problem" data-started="{state.started}">'
                f'❌ {esc(state.problem)}</div>')
    bar = f'<progress max="{state.planned}" value="{state.done}"></progress> '
    if running:
        share = state.done / state.planned if state.planned else 0
        said = now(tr("⏳ 已跑 {done} / {planned} 次", "⏳ {done} / {planned} runs done")).format(
            done=state.done, planned=state.planned) + f" ({share:.0%})"
        return f'<div class="tw-eval-progress" data-started="{state.started}">{bar}{esc(said)}</div>'
    notes = [state.why_not_run(c.label) for c in state.contenders]
    notes += [now(tr("模型 {label} 有 {n} 次没评分：运行不是因为模型停下的（网络、用量限额、沙箱没让工具运行……），"
                     "不算进它的通过率（原因见表里）",
                     "Model {label}: {n} runs not scored: they did not stop because of the model (the network, a "
                     "usage limit, the sandbox not running a tool…) and are left out of its pass rate (the table "
                     "says why)")).format(label=label, n=total.unscored)
              for label, total in measured(state).items() if total.unscored]
    details = "".join(f"<div>⚠️ {esc(note)}</div>" for note in notes if note)
    return (f'<div class="tw-eval-progress" data-started="{state.started}">{bar}{esc(headline(state))}'
            f"{details}</div>")


def measured(state: Evaluation) -> dict:
    """Each model that has run something -> its totals."""
    return {c.label: state.totals(c.label) for c in state.contenders if state.trials.get(c.label)}


def headline(state: Evaluation) -> str:
    """The line over an evaluation that has ended: its mark, what it means, and each model's pass rate."""
    totals = measured(state)
    rates = now(tr("；", "; ")).join(
        now(tr("{label} 通过 {rate}{counted}", "{label} passed {rate}{counted}")).format(
            label=label, rate=percent(total.rate), counted=counted(total.passed, total.runs))
        for label, total in totals.items())
    failed = any(total.passed < total.runs for total in totals.values())
    if state.stopped:
        said = tr("⏹ 已停止：跑了 {done} / {planned} 次，下面只算跑完的", "⏹ Stopped: {done} / {planned} runs done; "
                  "below counts only those")
    elif not any(total.runs for total in totals.values()):
        said = (tr("❌ 没有模型运行起来", "❌ No model ran") if not totals else
                tr("⚠️ 评估结束了，可没有一次运行评了分", "⚠️ The evaluation ended, but no run was scored"))
    elif failed:
        said = tr("❌ 评估完成，有运行没通过", "❌ Evaluation done, some runs failed")
    elif any(state.why_not_run(c.label) for c in state.contenders) or any(t.unscored for t in totals.values()):
        said = tr("⚠️ 评估完成，评了分的都通过了，可不是每次都跑了、评了分",
                  "⚠️ Evaluation done, every scored run passed, but not every run ran and was scored")
    else:
        said = tr("✅ 评估完成，每次运行都通过了", "✅ Evaluation done, every run passed")
    said = now(said).format(done=state.done, planned=state.planned)
    return said + (now(tr("：", ": ")) + rates if rates else "")


def percent(share: float | None) -> str:
    """12.5% stays 12.5%: a rate is not rounded into another one."""
    if share is None:
        return "—"
    return f"{share:.0%}" if (share * 100).is_integer() else f"{share:.1%}"


def counted(passed: int, runs: int) -> str:
    return now(tr("（{passed}/{runs}）", " ({passed}/{runs})")).format(passed=passed, runs=runs)


def model_name(contender: Contender) -> str:
    """The model as the page names it: its provider and model, and the offline model's simulated mistake by name."""
    public = contender.settings.public()
    mistake = MISTAKE_TEXTS.get(contender.mistake or "")
    return f"{public['provider']} · {public['model']}" + (f" · {now(mistake[0])}" if mistake else "")


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} ms"


def totals_html(state: Evaluation | None) -> str:
    """A column per model, a row per figure (pass rate with counts, each criterion, latency p50 / p95, tokens,
    cost, what else to know): narrow enough for the page's column with two models. Then bars."""
    if state is None or not state.ran:
        return ""
    totals = measured(state)
    contenders = [c for c in state.contenders if c.label in totals]
    slowest = max((t.p95_ms or 0 for t in totals.values()), default=0) or 1
    heaviest = max((t.tokens_per_run or 0 for t in totals.values()), default=0) or 1
    figures: dict[str, list[str]] = {name: [] for name in ("model", "rate", "criteria", "time", "token", "cost",
                                                            "notes")}
    bars = []
    for contender in contenders:
        total = totals[contender.label]
        tokens = total.prompt_tokens + total.completion_tokens
        token_text = f"{tokens:,}"
        if total.estimated:
            token_text += now(tr("（估算：离线模型按字数粗估）", " (estimated: the offline model counts characters)"))
        if total.unreported:
            token_text += now(tr("（另有 {n} 次请求服务端没报 usage，没算进去）",
                                 " ({n} more requests had no usage from the server: not counted)")).format(n=total.unreported)
        cost = (now(tr("未配置价格", "no price configured")) if total.cost is None and not contender.price
                else now(tr("无法计算（token 是估算或不全）", "not computable (tokens estimated or incomplete)"))
                if total.cost is None else f"{total.cost:.4f}")
        notes = []
        if total.invented_failures:
            notes.append(now(tr("工具在模型编的参数上失败了 {n} 次（参数值在发给它的内容里没出现过）：是模型的错",
                                "the tool failed {n} times on arguments the model made up (values found nowhere in "
                                "what it was sent): the model's fault")).format(n=total.invented_failures))
        if total.tool_failures:
            notes.append(now(tr("工具自己失败了 {n} 次（出错、超时、被规则拒绝），参数有来处：不算模型的错，可能是工具要修",
                                "the tool itself failed {n} times (error, timeout, refused by a rule) on arguments "
                                "that came from the conversation: not the model's fault; the tool may need fixing")
                             ).format(n=total.tool_failures))
        if total.unscored:
            notes.append(now(tr("另有 {n} 次没评分：运行不是因为模型停下的（见表里的原因）",
                                "{n} more not scored: the run did not stop because of the model (see the table)")
                             ).format(n=total.unscored))
        rate = percent(total.rate)
        figures["model"].append(esc(model_name(contender)))
        figures["rate"].append(f"<b>{rate}</b>{esc(counted(total.passed, total.runs))}")
        figures["criteria"].append(esc(" · ".join(f"{now(CRITERION_TITLES[name])} {ok}/{checked}"
                                                  for name, (ok, checked) in total.criteria.items() if checked)))
        figures["time"].append(f"{_ms(total.p50_ms)} / {_ms(total.p95_ms)}")
        figures["token"].append(esc(token_text))
        figures["cost"].append(esc(cost))
        figures["notes"].append("<br>".join(map(esc, notes)))
        css = "tw-eval-bar" + (" b" if contender.label == "B" else "")
        per_run = total.tokens_per_run or 0
        for title, value, top, shown in (
                (tr("通过率", "pass rate"), total.rate or 0, 1, rate),
                (tr("用时 p95", "time p95"), total.p95_ms or 0, slowest, _ms(total.p95_ms)),
                (tr("每次 token", "tokens per run"), per_run, heaviest, f"{per_run:,.0f}")):
            bars.append(f"<span>{esc(contender.label)} · {esc(now(title))}</span>"
                        f'<span><span class="{css}" style="display:inline-block;width:{80 * value / top:.1f}%">'
                        f"</span> {esc(shown)}</span>")
    titles = {"model": tr("模型", "model"), "rate": tr("通过率", "pass rate"), "criteria": tr("各项", "criteria"),
              "time": tr("用时 p50 / p95（本次量的）", "time p50 / p95 (measured now)"), "token": "token",
              "cost": tr("费用", "cost"), "notes": tr("说明", "notes")}
    head = "<tr><th></th>" + "".join(f"<th>{esc(c.label)}</th>" for c in contenders) + "</tr>"
    rows = "".join(f'<tr class="tw-eval-{name}"><th>{esc(now(titles[name]))}</th>'
                   + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"
                   for name, cells in figures.items() if name != "notes" or any(cells))
    return (f'<table class="tw-eval-totals">{head}{rows}</table>'
            f'<div class="tw-eval-bars">{"".join(bars)}</div>')


def comparison_html(before: Evaluation | None, after: Evaluation | None) -> str:
    """The last evaluation against this one, per model: pass rate, and each case whose passes moved."""
    if before is None or after is None or not before.ran or not after.ran:
        return ""
    title = f"<h4>{esc(now(tr('上一次 → 这一次', 'Last time → this time')))}</h4>"
    if [case.name for case in before.cases] != [case.name for case in after.cases]:
        return title + esc(now(tr("上一次用的是另一组用例，不比较。", "Last time used another case set: not compared.")))
    parts = []
    for label in after.trials:
        if not before.trials.get(label) or not after.trials.get(label):
            continue
        old, new = before.totals(label), after.totals(label)
        old_rows = {row["case"]: row for row in table(before.trials.get(label, []))}
        moved = [f"{esc(row['case'])}：{old_rows[row['case']]['passed']}/{old_rows[row['case']]['runs']} → "
                 f"{row['passed']}/{row['runs']}" for row in table(after.trials.get(label, []))
                 if row["case"] in old_rows and row["runs"] and old_rows[row["case"]]["runs"]
                 and old_rows[row["case"]]["passed"] / old_rows[row["case"]]["runs"] != row["passed"] / row["runs"]]
        parts.append(f'<div class="tw-eval-moved"><b>{esc(label)}</b> '
                     f"{esc(now(tr('通过率', 'pass rate')))} {percent(old.rate)}{counted(old.passed, old.runs)} → "
                     f"<b>{percent(new.rate)}</b>{counted(new.passed, new.runs)}"
                     + (f"<br>{esc(now(tr('变了的用例：', 'Cases that moved: ')))}{'；'.join(moved)}" if moved else
                        f"<br>{esc(now(tr('没有用例的结果变了。', 'No case moved.')))}") + "</div>")
    return title + "".join(parts) if parts else ""


def columns(state: Evaluation | None) -> list[str]:
    if state is None:       # the page's first table, built once for both languages
        return ["用例 / case", "类别 / category"]
    heads = [now(tr("用例", "case")), now(tr("类别", "category"))]
    for contender in (state.contenders if state is not None else []):
        heads += [f"{contender.label} {now(tr('通过', 'passed'))}",
                  *(f"{contender.label} {now(CRITERION_TITLES[name])}" for name in CRITERIA)]
    return heads


def widths(state: Evaluation | None) -> list[str]:
    """Column widths as shares of the table's width, so that a case's row fits the page's column with two
    models side by side (at 1280 px the column is about 650 px wide): the case name gets the most room
    and wraps, the cells of counts ("✓ 3/3") share the rest."""
    models = len(state.contenders) if state is not None else 0
    if not models:
        return ["70%", "30%"]
    case, kind = (18, 10) if models > 1 else (30, 14)
    each = (100 - case - kind) / (models * (1 + len(CRITERIA)))
    return [f"{case}%", f"{kind}%", *[f"{each:.2f}%"] * (models * (1 + len(CRITERIA)))]


def cell(trials: list[Trial], name: str) -> str:
    checked = [t for t in trials if t.score.scored and getattr(t.score, name) is not None]
    if not checked:
        return "—"
    ok = sum(getattr(t.score, name) is True for t in checked)
    return f"{'✓' if ok == len(checked) else '✗'} {ok}/{len(checked)}"


def table_rows(state: Evaluation | None) -> list[list[str]]:
    """A row per case; per model: passed k/n, then ✓ / ✗ with counts per criterion."""
    if state is None or not state.cases:
        return []
    rows = []
    for case in state.cases:
        row = [case.name, now(CATEGORY_TITLES[category(case, len(state.tools))])]
        for contender in state.contenders:
            trials = [t for t in state.trials.get(contender.label, []) if t.case.name == case.name]
            if not trials:
                row += ["…" if contender.label not in state.failed else "—"] * (1 + len(CRITERIA))
                continue
            scored = [t for t in trials if t.score.scored]
            passed = sum(t.score.passed for t in scored)
            unscored = now(tr("{n} 次未评分", "{n} not scored")).format(n=len(trials) - len(scored))
            said = f"{'✓' if passed == len(scored) else '✗'} {passed}/{len(scored)}" if scored else "⚠️"
            row.append(said + (f" · {unscored}" if len(scored) < len(trials) else ""))
            row += [cell(trials, name) for name in CRITERIA]
        rows.append(row)
    return rows


def chosen_run(state: Evaluation | None, row: int, column: int) -> tuple[str | None, Trial | None, int]:
    """The run a click on table cell (row, column) opens: that model's first failing trial of the
    case, or its first trial. -> (model label, trial, how many trials the case had)."""
    if state is None or not 0 <= row < len(state.cases):
        return None, None, 0
    per_model = 1 + len(CRITERIA)
    index = (column - 2) // per_model if column >= 2 else 0
    if not 0 <= index < len(state.contenders):
        return None, None, 0
    label = state.contenders[index].label
    trials = [t for t in state.trials.get(label, []) if t.case.name == state.cases[row].name]
    if not trials:
        return label, None, 0
    return label, next((t for t in trials if not t.score.passed), trials[0]), len(trials)


def opened_title(label: str, trial: Trial, count: int) -> str:
    verdict = (tr("✅ 通过", "✅ passed") if trial.score.passed
               else tr("❌ 没通过：{problem}", "❌ failed: {problem}") if trial.score.scored
               else "⚠️ {problem}")          # its problem says 没有评分 and why: not a failure of the model's
    return (now(tr("模型 {label} · 用例「{case}」· 第 {n} 次（这个用例跑了 {count} 次）· {ms:,.0f} ms",
                   "Model {label} · case «{case}» · trial {n} ({count} run for this case) · {ms:,.0f} ms")).format(
        label=label, case=trial.case.name, n=trial.number, count=count, ms=trial.ms)
        + " — " + now(verdict).format(problem=trial.score.problem))
