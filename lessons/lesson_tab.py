"""What building a lesson tab hands back to app.py."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import gradio as gr

from lessons.editor_panel import EditorPanel
from serving.page_events import PRIVATE
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel


@dataclasses.dataclass(frozen=True)
class LessonTab:
    """A built tab: its run area, and its editor and schema panel when its tools come from a
    source (app.py refreshes the schema when the page loads), or a workspace in its run area
    (refreshed when the page loads and when the tab is selected: the other workspace lesson
    may have changed the files)."""
    name: str
    run: RunPanel
    tab: gr.Tab
    editor: EditorPanel | None = None
    schema: SchemaPanel | None = None
    # More controls kept in the browser with the tab's question and options (browser_memory.py):
    # name -> component, any JSON value.
    kept: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def wire_refresh(self, demo: gr.Blocks, after: Any = None) -> None:
        """`after`: the event after which the tab's kept controls (and a workspace's kept files) are back."""
        first = after.then if after is not None else demo.load
        if self.schema is not None:
            first(self.schema.refresh, self.schema.inputs, self.schema.outputs, api_visibility=PRIVATE,
                  show_progress="hidden")
        view = self.run.workspace
        if view is not None:
            for event in (first, self.tab.select):
                event(self.run.refresh, {view.tree}, view.outputs + [view.shell], api_visibility=PRIVATE,
                      show_progress="hidden")
