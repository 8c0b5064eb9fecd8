"""A lighter per-tab record in Gradio.

Gradio keeps one record per browser tab (gradio.state_holder.SessionState). Gradio 6 fills
it, the moment a tab first talks to the server, with the rendered settings of every
component on the page: for this page about 0.4 MB and a few milliseconds of CPU per tab,
fifty times over when a class opens the link. Nothing reads that table as a whole; Gradio
adds or updates one entry at a time when an event changes a component, and builds a missing
entry itself when it needs one. So the table starts empty here and fills only with what the
tab's events touch. The rest of the record is Gradio's own, unchanged.
"""
from __future__ import annotations

import gradio.state_holder as state_holder

_Original = state_holder.SessionState


class _PageSettingsOnly:
    """What SessionState.__init__ reads from the Blocks, minus the components to copy."""

    def __init__(self, blocks):
        self.default_config = blocks.default_config
        self.blocks = {}


class LeanSessionState(_Original):
    def __init__(self, blocks):
        super().__init__(_PageSettingsOnly(blocks))


def install() -> bool:
    """Makes new tabs use the lighter record; False (nothing changed) if this Gradio's
    record does not look as expected."""
    if state_holder.SessionState is LeanSessionState:
        return True
    probe = _Original.__init__.__code__
    if "config_values" not in probe.co_names or "default_config" not in probe.co_names:
        return False
    state_holder.SessionState = LeanSessionState
    return True
