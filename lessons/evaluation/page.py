"""8.12 评估: a case set run against one or two models (code/evaluation.py through
runs/eval_backend.py), a table with a cell per criterion that opens its run, totals with bars,
exports, and the last evaluation beside this one, so a changed description shows its effect."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import time

import gradio as gr

from evaluation_cases import CASE_SETS
from i18n import tr
from provider_presets import PRESETS, settings_for

from catalogue import LESSONS
from lessons.editor_panel import EditorPanel, lesson_sets, lesson_text_box
from lessons.evaluation import evaluation_view
from lessons.evaluation.evaluation_view import (chosen_run, columns, comparison_html, opened_title, progress_html, table_rows,
                                     totals_html, widths)
from lessons.html_bits import esc
from lessons.lesson_page import LessonPage
from lessons.presets import mistake_choices
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import (NO_KEY_HINT, NO_PRESET, PROVIDERS, SettingsPanel, key_status,
                                     preset_choices)
from lessons.timeline import render_protocol
from memory.memory_format import storage_key
from runs import eval_backend
from access.clients import Settings
from runs.eval_backend import CaseProblem, Contender, Evaluation
from serving import expiry
from serving.page_events import PRIVATE, SILENT, on_choice, session_of

LESSON = LESSONS["evaluation"]
SETS = lesson_sets(LESSON)
REDRAW_S = 0.25           # while an evaluation runs, the table is redrawn at most this often
# The questions of each set's cases: the run panel below runs one of them on its own.
EXAMPLE_PRESETS = {name: [case["question"] for case in CASE_SETS.get(file, [])] for name, file in SETS.items()}
# The registry lesson's source, as the browser keeps it (memory/browser_memory.py); "" when it kept none.
REGISTRY_SOURCE_JS = """(kept, current) => {
  try {
    const record = JSON.parse(localStorage.getItem(%s) || "null");
    const source = record && record.fields && record.fields.source;
    return [typeof source === "string" && source ? source : "", current];
  } catch (e) { return ["", current]; }
}""" % json.dumps(storage_key("lesson:registry"))


def cases_text(example: str) -> str:
    return json.dumps({"cases": CASE_SETS.get(SETS.get(example, ""), [])}, ensure_ascii=False, indent=2)


def model_b(a_settings: Settings, provider: str | None, model: str | None, base_url: str | None,
            preset: str | None) -> Settings:
    """B's settings: its own provider, model, address and preset (a local preset's placeholder key comes
    with it, as for A); the loop's settings (temperature, rounds, per-round limits) are A's."""
    return dataclasses.replace(a_settings, provider=provider or "offline", model=(model or "").strip(),
                               base_url=(base_url or "").strip(), preset=preset or NO_PRESET)


def same_endpoint(one: Settings, other: Settings) -> bool:
    return one.provider == other.provider and one.base_url.rstrip("/") == other.base_url.rstrip("/")


def b_session_key(b_settings: Settings, b_typed: str, a_settings: Settings, a_key: str) -> str:
    """The key typed for B; else A's typed key when B asks the same endpoint (never A's key to another
    address); else none, and access/clients.py decides (a server key, a local preset's placeholder)."""
    if b_typed:
        return b_typed
    return a_key if a_key and same_endpoint(b_settings, a_settings) else ""


def b_key_line(provider: str, base_url: str, b_typed: str, preset: str, a_provider: str, a_base_url: str,
               a_key: str, secrets=None) -> str:
    """The line beside B's key box: which key B's runs would use."""
    b_settings = Settings(provider=provider or "offline", base_url=(base_url or "").strip(), preset=preset or "")
    a_settings = Settings(provider=a_provider or "offline", base_url=(a_base_url or "").strip())
    if provider != "offline" and not b_typed and b_session_key(b_settings, "", a_settings, a_key):
        return tr("🔑 用 A 的密钥：B 和 A 是同一个提供方、同一个地址。", "🔑 A's key: B has A's provider and address.")
    return key_status(b_settings.provider, b_typed, secrets or {}, b_settings.base_url, b_settings.preset)


def wire_model_b(settings: SettingsPanel, preset, provider, model, base_url, key, key_state, status) -> None:
    """B's preset fills its provider, address and model (no key moves, as for A); a provider picked by hand
    leaves the preset; a typed key goes to the session's state and the box is emptied."""
    secrets = settings.secrets
    status_inputs = [provider, base_url, key_state, preset, settings.provider, settings.base_url, settings.key_state]

    def line(b_provider, b_base_url, b_typed, b_preset, a_provider, a_base_url, a_key):
        return b_key_line(b_provider, b_base_url, b_typed, b_preset, a_provider, a_base_url, a_key, secrets)

    def on_preset(chosen: str):
        if chosen not in PRESETS:
            return {provider: gr.skip()}      # an empty dict would be taken for one value
        values = settings_for(chosen)
        return {provider: values["provider"], model: values["model"], base_url: values["base_url"]}

    on_choice(preset, on_preset, [], [provider, model, base_url])
    on_choice(provider, lambda _: NO_PRESET, [], [preset])

    def store(typed: str, kept: str):
        return "", (typed or "").strip() or kept

    # Queued: a state's change is told to the page by the queue's answer.
    for event in (key.submit, key.blur):
        event(store, [key, key_state], [key, key_state], api_visibility=PRIVATE, show_progress="hidden")
    # One writer of the line, run again after a run in progress: written by several, a line computed
    # from older settings could finish last and stay on screen. B's address may change with its
    # preset alone (two presets of one provider and model).
    gr.on([preset.change, provider.change, base_url.change, key_state.change, settings.provider.change,
           settings.preset_card.change, settings.base_url.submit, settings.base_url.blur, settings.key_state.change],
          line, status_inputs, [status], trigger_mode="always_last", api_visibility=PRIVATE, show_progress="hidden")


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                editor = EditorPanel(LESSON, presets=EXAMPLE_PRESETS)
                from_registry = gr.Button(tr("⇦ 用「工具注册」一课里保存的源码", "⇦ Use the source kept by the «Tool registry» lesson"),
                                          size="sm", elem_classes=["tw-from-registry"])
                schema = SchemaPanel()
                cases = gr.Code(cases_text(LESSON.example), language="json", interactive=True, lines=14, max_lines=30,
                                label=tr("用例集（JSON，可编辑；写法见课文）", "Case set (JSON, editable; see the lesson)"),
                                elem_classes=["tw-eval-cases"])
                with gr.Row():
                    cases_reset = gr.Button(tr("↺ 换回这组示例的用例", "↺ This example's cases again"), size="sm",
                                            elem_classes=["tw-eval-cases-reset"])
                    cases_export = gr.Button(tr("导出用例集", "Export the case set"), size="sm",
                                             elem_classes=["tw-eval-cases-export"])
                cases_file = gr.File(label=tr("用例集文件", "Case set file"), interactive=False,
                                     elem_classes=["tw-eval-cases-file"])
                cases_import = gr.File(label=tr("导入用例集（.json）", "Import a case set (.json)"), file_types=[".json"],
                                       type="filepath", elem_classes=["tw-eval-cases-import"])
                cases_note = gr.Markdown(elem_classes=["tw-eval-cases-note"])
            with gr.Column(scale=7, min_width=320):
                gr.Markdown(tr("**模型 A** 是页面上方「模型设置」里选的模型。",
                               "**Model A** is the one chosen in «Model settings» above."))
                compare = gr.Checkbox(False, label=tr("再比一个模型 B（并排）", "Compare with a model B (side by side)"),
                                      elem_classes=["tw-eval-compare"])
                with gr.Group(visible=False) as second:
                    b_preset = gr.Dropdown(preset_choices(), value=NO_PRESET,
                                           label=tr("B 的预设（常用平台：填好提供方、地址和模型）",
                                                    "B's preset (common platforms: fills in provider, address and model)"),
                                           elem_classes=["tw-eval-b-preset"])
                    with gr.Row():
                        b_provider = gr.Dropdown(PROVIDERS, value="offline", label=tr("B 的提供方", "B's provider"),
                                                 elem_classes=["tw-eval-b-provider"])
                        b_model = gr.Textbox(label=tr("B 的模型（空着 = 默认）", "B's model (empty = default)"),
                                             elem_classes=["tw-eval-b-model"])
                    b_base_url = gr.Textbox(label=tr("B 的 Base URL（OpenAI 兼容接口，可不填）",
                                                     "B's base URL (OpenAI-compatible API, optional)"),
                                            elem_classes=["tw-eval-b-base-url"])
                    with gr.Row():
                        b_key = gr.Textbox(label=tr("B 的 API Key（可不填）", "B's API key (optional)"), type="password",
                                           placeholder=NO_KEY_HINT, elem_classes=["tw-eval-b-key"])
                        b_key_status = gr.Markdown(b_key_line("offline", "", "", NO_PRESET, "offline", "", ""),
                                                   elem_classes=["tw-eval-b-key-status"])
                    b_mistake = gr.Dropdown(mistake_choices("function_calling"), value="",
                                            label=tr("B 模拟的失误（只对离线模型）", "B's simulated mistake (offline model only)"),
                                            elem_classes=["tw-eval-b-mistake"])
                    gr.Markdown(tr("B 的密钥：B 填了就用 B 自己的；没填时，B 和 A 是同一个提供方、同一个地址就用 A 的，"
                                   "否则用服务器为它配置的密钥（如有）；本机的预设（llama.cpp、Ollama……）不需要密钥。"
                                   "temperature、轮数和每轮上限，B 和 A 一样（「模型设置」里的）。",
                                   "B's key: B's own when one is entered; otherwise A's when B has A's provider and "
                                   "address, else the key the server has for it, if any; a local preset (llama.cpp, "
                                   "Ollama…) needs none. Temperature, rounds and per-round limits are A's, from «Model "
                                   "settings»."))
                with gr.Row():
                    trials = gr.Slider(1, eval_backend.TRIALS_MAX, value=3, step=1,
                                       label=tr("每个用例跑几次", "Trials per case"), elem_classes=["tw-eval-trials"])
                    price_a = gr.Textbox(label=tr("A 的价格：输入, 输出（每百万 token，可不填）",
                                                  "A's price: input, output (per million tokens, optional)"),
                                         elem_classes=["tw-eval-price-a"])
                    price_b = gr.Textbox(label=tr("B 的价格（可不填）", "B's price (optional)"), elem_classes=["tw-eval-price-b"])
                gr.Markdown(eval_backend.cap_note(), elem_classes=["tw-eval-cap"])
                gr.Markdown(tr("评估的结果不存进浏览器：刷新页面后要重新运行（想留下，先导出 JSON）。",
                               "An evaluation's results are not kept in the browser: after a reload, run it again "
                               "(export the JSON to keep them)."), elem_classes=["tw-eval-not-kept"])
                with gr.Row():
                    run_btn = gr.Button(tr("▶ 运行评估", "▶ Run the evaluation"), variant="primary",
                                        elem_classes=["tw-eval-run"])
                    stop_btn = gr.Button(tr("⏹ 停止", "⏹ Stop"), elem_classes=["tw-eval-stop"])
                progress = gr.HTML(elem_classes=["tw-eval-progress-box"])
                totals = gr.HTML(css_template=evaluation_view.CSS, elem_classes=["tw-eval-summary"])
                moved = gr.HTML(elem_classes=["tw-eval-comparison"])
                results = gr.Dataframe(headers=columns(None), value=[], interactive=False, wrap=True,
                                       column_widths=widths(None),
                                       label=tr("每个用例一行：点一格，下面打开那次运行", "A row per case: click a cell to open "
                                                "that run below"), elem_classes=["tw-eval-table"])
                with gr.Row():
                    export_csv = gr.Button(tr("导出 CSV", "Export CSV"), size="sm", elem_classes=["tw-eval-csv"])
                    export_json = gr.Button(tr("导出 JSON", "Export JSON"), size="sm", elem_classes=["tw-eval-json"])
                download = gr.File(label=tr("下载", "Download"), interactive=False, elem_classes=["tw-eval-download"])
                export_note = gr.Markdown(elem_classes=["tw-eval-export-note"])
                opened = gr.Markdown(elem_classes=["tw-eval-opened-title"])
                opened_run = gr.HTML(elem_classes=["tw-eval-opened"])
        with gr.Accordion(tr("单独运行一个用例的问题（Function Calling）", "Run one case's question on its own (Function Calling)"),
                          open=False):
            run = RunPanel(LESSON, settings, editor.editor, EXAMPLE_PRESETS[LESSON.example])
        current = gr.State(None, time_to_live=expiry.session_ttl())
        before = gr.State(None, time_to_live=expiry.session_ttl())
        b_key_state = gr.State("")          # B's typed key: on the server, for this session only, never sent back
        schema.wire(editor.editor)
        editor.wire(run.presets, run.question)
        run.wire()

    on_choice(editor.example_set, cases_text, [], [cases])
    cases_reset.click(cases_text, [editor.example_set], [cases], **SILENT)
    compare.change(lambda on: gr.update(visible=bool(on)), [compare], [second], **SILENT)
    wire_model_b(settings, b_preset, b_provider, b_model, b_base_url, b_key, b_key_state, b_key_status)

    def registry_source(kept: str, current_source: str):
        if not kept:
            return current_source, tr("本浏览器里还没有「工具注册」一课保存的源码：先在那一课里改一改源码。",
                                      "This browser keeps no source of the «Tool registry» lesson yet: edit the source "
                                      "there first.")
        return kept, tr("⇦ 已换成「工具注册」一课里保存的源码。", "⇦ Now the source kept by the «Tool registry» lesson.")

    from_registry.click(registry_source, [editor.editor, editor.editor], [editor.editor, cases_note],
                        js=REGISTRY_SOURCE_JS, **SILENT)

    def export_cases(text: str):
        try:
            return eval_backend.written(eval_backend.cases_json(text), "cases.json"), tr(
                "📦 已导出用例集：点「用例集文件」框里的文件名保存。",
                "📦 Case set exported: click the file name in «Case set file».")
        except CaseProblem as problem:
            return None, "❌ " + str(problem)

    cases_export.click(export_cases, [cases], [cases_file, cases_note], api_visibility=PRIVATE)

    def import_cases(path: str | None, text: str):
        """The file's case set in the box (the file box is emptied, ready for the next file)."""
        if not path:
            return text, "", None
        try:
            return eval_backend.imported(path), tr("📥 已导入用例集。", "📥 Case set imported."), None
        except (CaseProblem, OSError) as problem:
            return text, tr("❌ 没有导入：{problem}", "❌ Not imported: {problem}").format(problem=problem), None

    cases_import.upload(import_cases, [cases_import, cases], [cases, cases_note, cases_import], api_visibility=PRIVATE)

    shown = [progress, totals, moved, results, current, before]

    def show(state: Evaluation | None, last: Evaluation | None, running: bool) -> dict:
        return {progress: progress_html(state, running), totals: totals_html(state),
                moved: comparison_html(last, state) if not running else "",
                results: gr.update(value=table_rows(state), headers=columns(state), column_widths=widths(state)),
                current: state, before: last}

    eval_inputs = {editor.editor, cases, trials, compare, b_preset, b_provider, b_model, b_base_url, b_key_state,
                   b_mistake, price_a, price_b, current, before, *settings.components}

    def evaluate(values: dict, request: gr.Request):
        now_shown = values[current]
        if now_shown is not None and now_shown.running:
            yield {progress: progress_html(now_shown, True) + tr(
                "<div>上一次评估还在跑：先点「⏹ 停止」，或等它跑完。</div>",
                "<div>The last evaluation is still running: click «⏹ Stop» first, or wait for it.</div>")}
            return
        last = now_shown if now_shown is not None and now_shown.ran else values[before]
        a_settings, key = settings.read(values)
        try:
            contenders = [Contender("A", a_settings, key, price=eval_backend.parse_price(values[price_a]))]
            if values[compare]:
                b_settings = model_b(a_settings, values[b_provider], values[b_model], values[b_base_url],
                                     values[b_preset])
                contenders.append(Contender("B", b_settings, b_session_key(b_settings, values[b_key_state],
                                                                           a_settings, key),
                                            mistake=(values[b_mistake] or None) if b_settings.provider == "offline"
                                            else None,
                                            price=eval_backend.parse_price(values[price_b]),
                                            key_box=tr("「B 的 API Key」", "«B's API key»")))
        except ValueError as problem:
            yield show(Evaluation(problem=str(problem)), last, False)
            return
        state, shown_at = None, 0.0
        steps = eval_backend.run_evaluation(values[editor.editor], values[cases], contenders, values[trials],
                                            secrets=settings.secrets, session_id=session_of(request), request=request)
        try:
            with contextlib.closing(steps):
                for state in steps:
                    state.running = True
                    if state.stopped:        # «⏹ 停止» marks it; the runs done so far stay and are scored
                        break
                    if time.monotonic() - shown_at > REDRAW_S:
                        shown_at = time.monotonic()
                        yield show(state, last, True)
        finally:
            if state is not None:
                state.running = False
        yield show(state, last, False)

    run_btn.click(evaluate, eval_inputs, shown, api_visibility=PRIVATE, concurrency_limit=4)

    def stop(state: Evaluation | None):
        if state is not None and state.done < state.planned:
            state.stopped = True
        return progress_html(state, False) if state is not None else ""

    stop_btn.click(stop, [current], [progress], **SILENT)

    def open_cell(state: Evaluation | None, event: gr.SelectData):
        row, column = (event.index if isinstance(event.index, (list, tuple)) else (event.index, 0))
        label, trial, count = chosen_run(state, row, column)
        if trial is None:
            return tr("这一格还没有运行。", "Nothing has run for this cell yet."), ""
        return esc(opened_title(label, trial, count)), render_protocol(trial.events)

    results.select(open_cell, [current], [opened, opened_run], api_visibility=PRIVATE)

    def export(state: Evaluation | None, kind: str):
        if state is None or not state.ran:
            return None, tr("还没有可以导出的评估。", "There is no evaluation to export yet.")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        text = (eval_backend.as_csv(state) if kind == "csv"
                else json.dumps(eval_backend.report(state), ensure_ascii=False, indent=2))
        keys = tuple(contender.session_key for contender in state.contenders)
        return eval_backend.written(text, f"evaluation-{stamp}.{kind}", keys), tr(
            "📦 已导出：点「下载」框里的文件名保存。", "📦 Exported: click the file name in «Download».")

    export_csv.click(lambda state: export(state, "csv"), [current], [download, export_note], api_visibility=PRIVATE)
    export_json.click(lambda state: export(state, "json"), [current], [download, export_note], api_visibility=PRIVATE)
    kept = {"cases": cases, "trials": trials, "compare": compare, "b_preset": b_preset, "b_provider": b_provider,
            "b_model": b_model, "b_base_url": b_base_url, "b_mistake": b_mistake, "price_a": price_a,
            "price_b": price_b}
    return LessonPage(LESSON.id, run, editor=editor, schema=schema, kept=kept)
