"""What building a lesson tab hands back to app.py."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from lessons.editor_panel import EditorPanel
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel


@dataclasses.dataclass(frozen=True)
class LessonTab:
    """A built tab: its editor, its schema panel (app.py refreshes it when the page loads)
    and its run area."""
    name: str
    editor: EditorPanel
    schema: SchemaPanel
    run: RunPanel
    # More controls kept in the browser with the tab's source and question (browser_memory.py):
    # name -> component, any JSON value.
    kept: Mapping[str, Any] = dataclasses.field(default_factory=dict)
