"""One tab's run area: the views of run_views.py wired to the actions of run_driver.py.

Handlers receive their inputs by name: each event's inputs are a set of components,
so Gradio hands the handler one dict keyed by component, and `read()` turns it into a
RunInputs. Reordering or adding a control cannot shift another one's value.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any

import gradio as gr

from lessons import expiry, run_driver, session_io
from lessons.page_events import PRIVATE, session_of
from lessons.run_driver import Lesson, RunInputs, RunState
from lessons.run_views import RunViews
from lessons.settings_panel import SettingsPanel


class RunPanel:
    """`options` are the tab's own controls, by the name its loop reads them under;
    `strict` is the tab's strict checkbox, if it has one."""

    def __init__(self, lesson: Lesson, settings: SettingsPanel, editor: gr.Code, presets: list[str],
                 options: dict[str, gr.components.Component] | None = None, strict: gr.Checkbox | None = None):
        self.lesson, self.settings, self.editor = lesson, settings, editor
        self.options = MappingProxyType(dict(options or {}))
        self.strict = strict
        # Dropped (a paused loop closed) once the tab has been idle for the session TTL.
        self.state = gr.State(RunState(), time_to_live=expiry.session_ttl(), delete_callback=expiry.close_run)
        self.views = RunViews(lesson.name, presets)
        self.question = self.views.question
        self.presets = self.views.presets

    # ------------------------------------------------------------ reading and showing

    def read(self, values: dict) -> RunInputs:
        """The run's inputs from a handler's {component: value}."""
        settings, session_key = self.settings.read(values)
        return RunInputs(source=values[self.editor] or "", question=values[self.question] or "",
                         settings=settings, session_key=session_key,
                         strict=bool(values[self.strict]) if self.strict is not None else False,
                         options={name: values[component] for name, component in self.options.items()})

    def show(self, state: RunState, note: str = "") -> dict:
        return {**self.views.render(state, note), self.state: state}

    # ------------------------------------------------------------ wiring

    def wire(self):
        views, lesson, secrets = self.views, self.lesson, self.settings.secrets
        outputs = views.outputs + [self.state]
        run_inputs = {self.editor, self.question, self.state, *self.settings.components,
                      *self.options.values(), *([self.strict] if self.strict is not None else [])}

        def starter(step: bool):
            def start(values: dict, request: gr.Request):
                for state, note in run_driver.begin(lesson, self.read(values), values[self.state], secrets=secrets,
                                                    session_id=session_of(request), step=step, request=request):
                    yield self.show(state, note)
            return start

        views.run_btn.click(starter(False), run_inputs, outputs, api_visibility=PRIVATE)

        def retry(values: dict, request: gr.Request):
            for state, note in run_driver.retry(lesson, self.read(values), values[self.state], secrets=secrets,
                                                session_id=session_of(request), request=request):
                yield self.show(state, note)

        views.retry_btn.click(retry, run_inputs, outputs, api_visibility=PRIVATE)
        views.step_btn.click(starter(True), run_inputs, outputs, api_visibility=PRIVATE)
        views.presets.input(lambda q: q, [views.presets], [views.question], api_visibility=PRIVATE,
                            show_progress="hidden")

        def resumer(keep_stepping: bool):
            def resume(values: dict):
                for state, note in run_driver.resume(values[self.state], values[views.step_args],
                                                     values[views.step_result], keep_stepping):
                    yield self.show(state, note)
            return resume

        resume_inputs = {self.state, views.step_args, views.step_result}
        views.continue_btn.click(resumer(True), resume_inputs, outputs, api_visibility=PRIVATE)
        views.finish_btn.click(resumer(False), resume_inputs, outputs, api_visibility=PRIVATE)

        def export(values: dict):
            path, note = run_driver.export(lesson.name, values[self.state], values[self.settings.key_state])
            return {views.export_file: gr.update(value=path), views.status: note}

        views.export_btn.click(export, {self.state, self.settings.key_state}, [views.export_file, views.status],
                               api_visibility=PRIVATE)

        def load(values: dict):
            path, state = values[views.import_file], values[self.state] or RunState()
            if not path:
                return self.show(state)
            try:
                fresh, document, note = run_driver.load(lesson.name, path)
            except session_io.ImportProblem as exc:
                return self.show(state, f"❌ 导入失败：{exc}")
            state.close()
            return {self.editor: fresh.source, self.question: fresh.question,
                    views.views_tabs: gr.Tabs(selected="protocol"), **self.show(fresh, note)}

        views.import_file.upload(load, {views.import_file, self.state},
                                 [self.editor, self.question, views.views_tabs] + outputs, api_visibility=PRIVATE)

        def walker(to_end: bool):
            def walk(values: dict) -> dict[Any, Any]:
                return self.show(*run_driver.walk(values[self.state], to_end))
            return walk

        views.next_btn.click(walker(False), {self.state}, outputs, api_visibility=PRIVATE)
        views.all_btn.click(walker(True), {self.state}, outputs, api_visibility=PRIVATE)
