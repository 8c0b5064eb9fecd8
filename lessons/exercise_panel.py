"""The exercises at the end of a lesson's page, from the catalogue (catalogue/exercises.py): the task,
载入起始状态 (the page's inputs set to the exercise's start), 检查 (runs/exercises.py runs the lesson's
loop from what the page holds now), 提示 (offered after a failed check) and 看答案 (the reference
solution, only when asked). The verdict lists what each run did not do, each with that run's
timeline below it (the first failing one open). Results are kept in this browser
(memory/exercise_progress.py): the lesson list shows a ✓ per exercise solved, and 导出我的练习结果
downloads them as a JSON file for the teacher. A link with `?exercise=<id>` opens that exercise.

Every page gets its panel from app.py's build_page; a lesson without exercises gets none.
"""
from __future__ import annotations

import html
import json
from typing import Any

import gradio as gr

from i18n import now, tr

from catalogue import Lesson
from catalogue.exercises import Exercise
from lessons.lesson_page import LessonPage
from lessons.settings_panel import SettingsPanel
from lessons import timeline
from lessons.timeline import render_protocol
from memory import exercise_progress
from runs import exercises as checking
from serving.page_events import PRIVATE, SILENT, session_of, value_box

CSS = """
#exercise-panel .tw-verdict-pass { color: var(--color-green-600, #15803d); font-weight: 600; }
#exercise-panel .tw-verdict-fail { color: var(--color-red-600, #b91c1c); font-weight: 600; }
#exercise-panel .tw-failure .tw-en { color: var(--body-text-color-subdued); font-size: 0.9em; margin-left: 0.6em; }
#exercise-panel details.tw-exercise-run { margin: 4px 0 8px 1em; }
"""
# Opens the exercise a link names (?exercise=<id>): selects it and scrolls the panel into view.
# Also: a click on 看这次运行的时间线 opens that run's timeline (a <details> the link points at).
OPEN_FROM_LINK_JS = """(current) => {
  if (!window.twExerciseRunLinks) {
    window.twExerciseRunLinks = true;
    document.addEventListener("click", (event) => {
      const link = event.target.closest && event.target.closest('a[href^="#exercise-run-"]');
      const target = link && document.getElementById(link.getAttribute("href").slice(1));
      if (!target) return;
      // Opened and scrolled to here: followed as a link, the page's router would load the page afresh.
      event.preventDefault();
      event.stopPropagation();
      target.open = true;
      target.scrollIntoView({block: "start"});
    }, true);
  }
  const wanted = new URLSearchParams(location.search).get("exercise");
  if (!wanted) return [current, ""];
  const panel = document.getElementById("exercise-panel");
  if (panel) setTimeout(() => panel.scrollIntoView({block: "start"}), 300);
  return [current, wanted.slice(0, 60)];
}"""


def field_components(page: LessonPage) -> dict[str, Any]:
    """The page's inputs by a state's field name: its source, its question, its run options and the
    controls it keeps besides (the permission lesson's rules) or offers to exercises (the sessions lesson's fork)."""
    fields = {"question": page.run.question, **page.kept, **page.exercise_fields, **page.run.options}
    if page.run.editor is not None:
        fields["source"] = page.run.editor
    return fields


def task_text(exercise: Exercise) -> tr:
    """The task in both languages (the English page shows its English from the first frame)."""
    fields = ", ".join(f"`{name}`" for name in exercise.fields) or "—"
    return tr(f"### {exercise.title.zh}\n\n{exercise.task.zh}\n\n要改的地方：{fields}",
              f"### {exercise.title.en}\n\n{exercise.task.en}\n\nWhat to change: {fields}")


def said(sentence: dict) -> str:
    return (f'<li class="tw-failure">{html.escape(sentence["zh"])}'
            f'<span class="tw-en">{html.escape(sentence["en"])}</span></li>')


def verdict_html(verdict: dict, lesson: str) -> str:
    passed = verdict["passed"]
    head = (f'<p class="{"tw-verdict-pass" if passed else "tw-verdict-fail"}" id="exercise-summary">'
            f'{html.escape(verdict["summary"]["zh"])}<span class="tw-en"> · {html.escape(verdict["summary"]["en"])}'
            "</span></p>")
    own = verdict.get("own")
    if own:
        head += "<p>" + html.escape(now(tr(
            "你的模型 {model}：{passed}/{trials} 次运行做到了（真实模型每次可能不同；通过与否以离线模型为准）。",
            "Your model {model}: {passed} of {trials} runs did it (a real model varies from run to run; the offline "
            "model decides pass or fail).")).format(**own)) + "</p>"
    rows, opened = [], False
    for number, trial in enumerate(verdict["trials"]):
        anchor = f"exercise-run-{number}"
        mark = "✓" if trial["passed"] else "✗"
        who = now(tr("离线模型", "offline model")) if trial["model"] == "offline" else trial["model"]
        title = f'{mark} {html.escape(trial["question"])} · {html.escape(who)} · #{trial["trial"]}'
        failures = "".join(said(f) for f in trial["failures"])
        link = (f' <a href="#{anchor}">' + html.escape(now(tr("看这次运行的时间线", "see this run's timeline")))
                + "</a>") if not trial["passed"] else ""
        rows.append(f'<li>{title}{link}<ul>{failures}</ul></li>')
        open_it = " open" if not trial["passed"] and not opened else ""
        opened = opened or bool(open_it)
        rows.append(f'<details class="tw-exercise-run" id="{anchor}"{open_it}><summary>'
                    + html.escape(now(tr("时间线", "Timeline"))) + f" — {title}</summary>"
                    + render_protocol(trial["events"], lesson) + "</details>")
    return head + "<ul>" + "".join(rows) + "</ul>"


def solution_text(exercise: Exercise) -> str:
    parts = [now(tr("参考答案（只列出和起始状态不同的地方）：", "A reference solution (only what differs from the start):"))]
    for name, value in checking.solution(exercise).items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        fence = "python" if name in ("source", "hooks") else ""
        parts.append(f"**{name}**\n\n```{fence}\n{shown}\n```" if "\n" in shown else f"**{name}**: `{shown}`")
    return "\n\n".join(parts)


class ExercisePanel:
    """Built inside the page, after the lesson's own parts; nothing at all for a lesson without exercises."""

    def __init__(self, lesson: Lesson, page: LessonPage, settings: SettingsPanel):
        self.lesson, self.page, self.settings = lesson, page, settings
        self.exercises = {exercise.id: exercise for exercise in lesson.exercises}
        if not self.exercises:
            return
        first = next(iter(self.exercises.values()))
        with gr.Accordion(tr("练习", "Exercises"), open=True, elem_id="exercise-panel"):
            self.choice = gr.Radio([(exercise.title, exercise.id) for exercise in self.exercises.values()],
                                   value=first.id, label=tr("选一个练习", "Pick an exercise"), elem_id="exercise-choice")
            self.task = gr.Markdown(task_text(first), elem_id="exercise-task")
            with gr.Row():
                self.load = gr.Button(tr("载入起始状态", "Load the starting state"), elem_id="exercise-load", size="sm")
                self.check = gr.Button(tr("检查", "Check"), variant="primary", elem_id="exercise-check", size="sm")
                self.hint = gr.Button(tr("提示", "Hint"), elem_id="exercise-hint", size="sm", visible=False)
                self.answer = gr.Button(tr("看答案", "Show the answer"), elem_id="exercise-answer", size="sm")
            self.note = gr.Markdown(elem_id="exercise-note")
            self.verdict = gr.HTML(elem_id="exercise-verdict", css_template=timeline.css())   # the run panel's timeline styles
            self.shown = gr.Markdown(elem_id="exercise-shown")
            with gr.Row():
                self.student = gr.Textbox(label=tr("你的名字（只写进导出的文件）", "Your name (only written into the file)"),
                                          max_length=100, elem_id="exercise-student", scale=3)
                self.export = gr.Button(tr("导出我的练习结果", "Export my results"), elem_id="exercise-export",
                                        size="sm", scale=1)
            # The check's record for this browser's memory (memory/exercise_progress.RECORD_JS).
            self.record = value_box(elem_id="exercise-record")
            self.linked = gr.Textbox(visible="hidden", elem_id="exercise-linked")

    def wire(self, demo: gr.Blocks) -> None:
        if not self.exercises:
            return
        fields = field_components(self.page)
        used = {name for exercise in self.exercises.values() for name in exercise.start}
        missing = used - set(fields)
        if missing:
            raise LookupError(f"课程 {self.lesson.id} 的练习用到页面上没有的字段：{', '.join(sorted(missing))}")
        targets = [fields[name] for name in sorted(used)]

        def pick(exercise_id: str):
            exercise = self.exercises.get(exercise_id)
            if exercise is None:
                return {self.note: ""}
            return {self.task: now(task_text(exercise)), self.verdict: "", self.shown: "", self.note: "",
                    self.hint: gr.update(visible=False)}

        def load(exercise_id: str):
            exercise = self.exercises[exercise_id]
            return {**{fields[name]: value for name, value in exercise.start.items()},
                    self.note: now(tr("已载入起始状态：改好后按「检查」。", "The starting state is loaded: change it, then "
                                      "press «Check».")), self.verdict: "", self.shown: ""}

        def check(values: dict, request: gr.Request):
            exercise = self.exercises[values[self.choice]]
            state = {name: values[fields[name]] for name in exercise.start}
            settings, session_key = self.settings.read(values)
            try:
                verdict = checking.check(exercise, state, settings, session_key=session_key,
                                         secrets=self.settings.secrets, session_id=session_of(request),
                                         request=request)
            except checking.ExerciseProblem as problem:
                return {self.note: f"⚠️ {problem}", self.verdict: "", self.record: ""}
            record = json.dumps({"exercise": exercise.id, "lesson": exercise.lesson, "passed": verdict["passed"]})
            return {self.verdict: verdict_html(verdict, self.lesson.id), self.record: record, self.note: "",
                    self.hint: gr.update(visible=not verdict["passed"]), self.shown: ""}

        def hint(exercise_id: str):
            exercise = self.exercises[exercise_id]
            return {self.shown: "💡 " + now(exercise.hint)}

        def answer(exercise_id: str):
            return {self.shown: solution_text(self.exercises[exercise_id])}

        def linked(exercise_id: str, shown_id: str):
            if exercise_id == shown_id:
                # Already on screen: a start loaded or a check pressed before the link was read stays.
                return gr.skip()
            if exercise_id in self.exercises:
                return {self.choice: exercise_id, **pick(exercise_id)}
            known = ", ".join(self.exercises)
            return {self.note: now(tr("链接里的练习 {id} 不是这一课的（这一课有：{known}）。",
                                      "The link's exercise {id} is not one of this lesson's (it has: {known}).")).format(
                id=json.dumps(exercise_id[:60], ensure_ascii=False), known=known)}

        outputs = [self.task, self.verdict, self.shown, self.note, self.hint]
        self.choice.input(pick, [self.choice], outputs, api_visibility=PRIVATE, show_progress="hidden")
        self.load.click(load, [self.choice], [*targets, self.note, self.verdict, self.shown], api_visibility=PRIVATE)
        check_inputs = {self.choice, *targets, *self.settings.components}
        # A second 检查 while one is under way is not dropped (a click's default): it runs after it, on what
        # the page holds then.
        checked = self.check.click(check, check_inputs, [self.verdict, self.record, self.note, self.hint, self.shown],
                                   api_visibility=PRIVATE, trigger_mode="always_last")
        checked.then(None, [self.record], None, js=exercise_progress.RECORD_JS, **SILENT)
        self.hint.click(hint, [self.choice], [self.shown], api_visibility=PRIVATE, show_progress="hidden")
        self.answer.click(answer, [self.choice], [self.shown], api_visibility=PRIVATE, show_progress="hidden")
        self.export.click(None, [self.student], [self.student], js=exercise_progress.EXPORT_JS, **SILENT)
        # The link's exercise arrives in a hidden box, which the server then checks and opens.
        demo.load(None, [self.choice], [self.choice, self.linked], js=OPEN_FROM_LINK_JS, **SILENT)
        self.linked.change(linked, [self.linked, self.choice], [self.choice, *outputs], api_visibility=PRIVATE,
                           show_progress="hidden")
