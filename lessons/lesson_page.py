"""What building a lesson's page hands back to app.py."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import gradio as gr

from lessons.editor_panel import EditorPanel
from serving.page_events import PRIVATE, joined
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel


@dataclasses.dataclass(frozen=True)
class LessonPage:
    """A built lesson: its run area, and its editor and schema panel when its tools come from a
    source (the schema is refreshed when the page loads), or a workspace in its run area
    (refreshed when the page loads)."""
    name: str
    run: RunPanel
    editor: EditorPanel | None = None
    schema: SchemaPanel | None = None
    # More controls kept in the browser with the tab's question and options (browser_memory.py):
    # name -> component, any JSON value.
    kept: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # More that the page shows once its kept controls are back, as (fn, inputs, outputs) (the hooks
    # lesson's list of hooks); it joins on_load's step.
    also_on_load: tuple | None = None
    # What the browser keeps once for the lesson beside its controls, put back before them: called
    # with the page's BrowserMemory before it is wired (the skills lesson's memories).
    keep_shared: Callable[[Any], None] | None = None
    # Run options whose value the browser keeps elsewhere, not with the lesson (the skills lesson's
    # box shows the workspace's skills/ files, kept with the workspace).
    kept_elsewhere: frozenset[str] = frozenset()
    # Takes what a kept record holds from an older page (fields it no longer keeps): called with the
    # record's fields and the session id while the lesson is restored; returns notes for the student.
    adopt_kept: Callable[[dict, str | None], list[str]] | None = None
    # Controls an exercise may set and read that are neither run options nor kept: name -> component
    # (the sessions lesson's fork: which message, and what it becomes).
    exercise_fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def on_load(self) -> tuple:
        """What the tab shows once its kept controls are back, as (fn, inputs, outputs): its schema
        (a refresh that leaves alone what the page already shows) or its workspace's tree, and its
        run buttons, which work from then on. The browser memory runs it inside the tab's restore:
        one round trip, not two or three."""
        step = None
        if self.schema is not None:
            step = self.schema.load, self.schema.inputs | {self.schema.json, self.schema.status}, self.schema.outputs
        elif self.run.workspace is not None:
            view = self.run.workspace
            step = self.run.refresh, {view.tree}, view.outputs + [view.shell]
        views = self.run.views
        ready = lambda values, request: views.ready(), set(), [views.run_btn, views.step_btn]  # noqa: E731
        return joined(*[s for s in (step, self.also_on_load, ready) if s is not None])

    def wire_refresh(self, demo: gr.Blocks, restored: bool = False) -> None:
        """`restored`: the browser memory's restore of this tab already runs `on_load`; otherwise it
        runs on page load."""
        if not restored:
            demo.load(*self.on_load(), api_visibility=PRIVATE, show_progress="hidden")
