"""One tab's run area: the views of run_views.py wired to the actions of run_driver.py.
A lesson with a workspace adds its optional part (workspace_panel.py): the session's
workspace (tree, file, diff), redrawn with every run, and the permission lesson's box
where a rule's "ask" waits; everything else (run, step, export, import, replay) is wired
the same for every lesson.

Handlers receive their inputs by name: each event's inputs are a set of components,
so Gradio hands the handler one dict keyed by component, and `read()` turns it into a
RunInputs. Reordering or adding a control cannot shift another one's value.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable

import gradio as gr

from i18n import tr

from lessons import workspace_panel
from runs import run_driver, session_io
from serving import expiry
from serving.page_events import PRIVATE, on_choice, session_of
from runs.run_driver import RunInputs, RunState
from catalogue import Lesson
from lessons.run_views import RunViews
from lessons.settings_panel import SettingsPanel
from lessons.workspace_panel import AskBox, WorkspaceView


class RunPanel:
    """`editor` is the tab's tool source (None for a workspace lesson); `options` are the tab's own
    controls, by the name its loop reads them under; `strict` is the tab's strict checkbox, if it has one.
    A workspace lesson passes its `workspace` view; `rules` reads its rules from the inputs
    ((rules, problem); None: no gate) and `ask` adds the box where a rule's "ask" waits."""

    def __init__(self, lesson: Lesson, settings: SettingsPanel, editor: gr.Code | None, presets: list[str],
                 options: dict[str, gr.components.Component] | None = None, strict: gr.Checkbox | None = None, *,
                 workspace: WorkspaceView | None = None, rules: Callable[[dict], tuple[dict | None, str]] | None = None,
                 rule_inputs: list | None = None, ask: bool = False):
        self.lesson, self.settings, self.editor = lesson, settings, editor
        self.options = MappingProxyType(dict(options or {}))
        self.strict = strict
        self.workspace, self.rules, self.rule_inputs = workspace, rules, list(rule_inputs or [])
        # Dropped (a paused loop closed) once the tab has been idle for the session TTL.
        self.state = gr.State(RunState(), time_to_live=expiry.session_ttl(), delete_callback=expiry.close_run)
        self.views = RunViews(lesson.id, presets, below_buttons=AskBox if ask else None,
                              check_arguments=not lesson.workspace)
        self.ask: AskBox | None = self.views.below_buttons
        self.question = self.views.question
        self.presets = self.views.presets
        if workspace is not None:
            workspace_panel.adapt_views(self.views)
        # Everything show() returns; what browser_memory.py restores a kept run into.
        self.outputs = (self.views.outputs + [self.state] + (workspace.outputs if workspace is not None else [])
                        + (self.ask.outputs if self.ask is not None else []))
        # The events after which the workspace's files (or the memories a run keeps) may differ: every
        # event that may run a tool, and an import.
        self.changed_files: list = []
        self.imported = None    # the import of a session file, once wired

    # ------------------------------------------------------------ reading and showing

    def read(self, values: dict) -> RunInputs:
        """The run's inputs from a handler's {component: value}."""
        settings, session_key = self.settings.read(values)
        rules, problem = self.rules(values) if self.rules is not None else (None, "")
        return RunInputs(source=(values[self.editor] or "") if self.editor is not None else "",
                         question=values[self.question] or "", settings=settings, session_key=session_key,
                         strict=bool(values[self.strict]) if self.strict is not None else False,
                         options={name: values[component] for name, component in self.options.items()},
                         rules=rules, rules_problem=problem)

    def show(self, state: RunState, note: str = "", session_id: str | None = None, selected: str | None = None) -> dict:
        """{component: value} of the run; a workspace lesson's workspace too (`selected`: the file shown)."""
        shown = {**self.views.render(state, note), self.state: state}
        if self.workspace is not None:
            shown.update(workspace_panel.run_shown(self.views, state, note))
            shown.update(self.workspace.render(session_id, selected, state.shown_events))
        if self.ask is not None:
            shown.update(self.ask.render(state))
        return shown

    def shower(self, values: dict, request: gr.Request | None) -> Callable[..., dict]:
        """show() for a handler: with the handler's session and the file selected in its tree."""
        selected = values.get(self.workspace.tree) if self.workspace is not None else None
        session_id = session_of(request)
        return lambda state, note="": self.show(state, note, session_id, selected)

    def kept_run(self, document: dict, request: gr.Request | None) -> tuple[RunState, Callable]:
        """A run kept in the browser, replayed (browser_memory.py): the state, and how to show it.
        Raises session_io.ImportProblem."""
        session_id = session_of(request)
        return run_driver.replay(self.lesson, document), lambda state, note: self.show(state, note, session_id)

    def refresh(self, values: dict, request: gr.Request) -> dict:
        """A workspace lesson's workspace as it is now (page load, tab selected), and bash's layers."""
        view = self.workspace
        return {**view.render(session_of(request), values[view.tree]), view.shell: workspace_panel.shell_note()}

    # ------------------------------------------------------------ wiring

    def wire(self):
        views, lesson, secrets, view = self.views, self.lesson, self.settings.secrets, self.workspace
        outputs = self.outputs
        editor = [self.editor] if self.editor is not None else []
        tree = {view.tree} if view is not None else set()   # the file shown stays selected
        run_inputs = {*editor, self.question, self.state, *self.settings.components, *self.options.values(),
                      *([self.strict] if self.strict is not None else []), *tree, *self.rule_inputs}

        def starter(step: bool):
            def start(values: dict, request: gr.Request):
                show = self.shower(values, request)
                for state, note in run_driver.begin(lesson, self.read(values), values[self.state], secrets=secrets,
                                                    session_id=session_of(request), step=step, request=request):
                    yield show(state, note)
            return start

        self.changed_files.append(views.run_btn.click(starter(False), run_inputs, outputs, api_visibility=PRIVATE))
        self.changed_files.append(views.step_btn.click(starter(True), run_inputs, outputs, api_visibility=PRIVATE))
        if not lesson.workspace:   # the workspace's loops leave no parameter out: nothing to retry without

            def retry(values: dict, request: gr.Request):
                for state, note in run_driver.retry(lesson, self.read(values), values[self.state], secrets=secrets,
                                                    session_id=session_of(request), request=request):
                    yield self.show(state, note)

            self.changed_files.append(views.retry_btn.click(retry, run_inputs, outputs, api_visibility=PRIVATE))
        on_choice(views.presets, lambda q: q, [], [views.question])

        def resumer(keep_stepping: bool):
            def resume(values: dict, request: gr.Request):
                show = self.shower(values, request)
                for state, note in run_driver.resume(values[self.state], values[views.step_args],
                                                     values[views.step_result], keep_stepping):
                    yield show(state, note)
            return resume

        resume_inputs = {self.state, views.step_args, views.step_result, *tree}
        self.changed_files += [views.continue_btn.click(resumer(True), resume_inputs, outputs, api_visibility=PRIVATE),
                               views.finish_btn.click(resumer(False), resume_inputs, outputs, api_visibility=PRIVATE)]

        if self.ask is not None:
            ask = self.ask

            def answerer(choice: str):
                def answer(values: dict, request: gr.Request):
                    show = self.shower(values, request)
                    for state, note in run_driver.answer(values[self.state], choice, values[ask.args],
                                                         values[ask.reason]):
                        yield show(state, note)
                return answer

            for button, choice in ((ask.approve, run_driver.APPROVE), (ask.approve_edited, run_driver.EDIT),
                                   (ask.deny, run_driver.DENY)):
                self.changed_files.append(button.click(answerer(choice), {self.state, ask.args, ask.reason, *tree},
                                                       outputs, api_visibility=PRIVATE))

        def export(values: dict, request: gr.Request):
            path, note = run_driver.export(lesson, values[self.state], values[self.settings.key_state],
                                           session_of(request))
            return {views.export_file: gr.update(value=path), views.export_note: note}

        views.export_btn.click(export, {self.state, self.settings.key_state}, [views.export_file, views.export_note],
                               api_visibility=PRIVATE)

        def load(values: dict, request: gr.Request):
            path, state, show = values[views.import_file], values[self.state] or RunState(), self.shower(values, request)
            if not path:
                return show(state)
            try:
                fresh, note = run_driver.load(lesson, path, session_of(request))
            except session_io.ImportProblem as exc:
                return show(state, tr("❌ 导入失败：", "❌ Import failed: ") + str(exc))
            state.close()
            # The recorded run's options too (envelope, loop, mistake…): the page then shows how it was run.
            # A value this page's control cannot hold (the file is anyone's) is left out, and said.
            options = {component: fresh.options[name] for name, component in self.options.items()
                       if name in fresh.options and holds(component, fresh.options[name])}
            refused = [name for name, component in self.options.items()
                       if name in fresh.options and not holds(component, fresh.options[name])]
            if refused:
                note += tr("（文件里这些选项的值这一页用不了，页面上的这些选项没有改：{names}）",
                           " (the file's values of these options do not fit this page, so the page's own were kept: "
                           "{names})").format(names=", ".join(refused))
            return {**({self.editor: fresh.source} if self.editor is not None else {}), self.question: fresh.question,
                    **options, views.views_tabs: gr.Tabs(selected="protocol"),
                    **self.show(fresh, note, session_of(request))}

        self.imported = views.import_file.upload(load, {views.import_file, self.state, *tree},
                                                 editor + [self.question, views.views_tabs]
                                                 + list(self.options.values()) + outputs, api_visibility=PRIVATE)
        self.changed_files.append(self.imported)

        def walker(to_end: bool):
            def walk(values: dict, request: gr.Request) -> dict[Any, Any]:
                return self.shower(values, request)(*run_driver.walk(values[self.state], to_end))
            return walk

        views.next_btn.click(walker(False), {self.state, *tree}, outputs, api_visibility=PRIVATE)
        views.all_btn.click(walker(True), {self.state, *tree}, outputs, api_visibility=PRIVATE)

        if view is not None:
            # The workspace's files may have changed in the other tab, or been replaced here.
            view.wire(extra_outputs=[views.status], on_replace=lambda: {views.status: ""})
            self.changed_files += view.replaced


def holds(component: gr.components.Component, value: Any) -> bool:
    """Whether `component` can show `value` as one of its own: a choice it offers (or several, for a group
    of checkboxes), a number in its range, a checkbox's true or false, a code box's text."""
    if isinstance(component, gr.Checkbox):
        return isinstance(value, bool)
    if isinstance(component, gr.Slider):
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and component.minimum <= value <= component.maximum)
    if isinstance(component, gr.CheckboxGroup):     # some of its choices (MiniAgent's tools, hooks, skills)
        offered = [choice[1] if isinstance(choice, (tuple, list)) else choice for choice in component.choices or []]
        return isinstance(value, list) and all(isinstance(item, str) and item in offered for item in value)
    if isinstance(component, (gr.Dropdown, gr.Radio)):
        offered = [choice[1] if isinstance(choice, (tuple, list)) else choice for choice in component.choices or []]
        return isinstance(value, str) and (value in offered or bool(getattr(component, "allow_custom_value", False)))
    if isinstance(component, (gr.Code, gr.Textbox)):
        return isinstance(value, str)
    return False
