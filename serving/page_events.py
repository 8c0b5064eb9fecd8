"""What every event handler of the page shares.

PRIVATE: the api_visibility of the page's own events. The named endpoints a script may call
are api.py's (and workspace_api.py's); every other event (a button, a dropdown, the browser's
memory) exists for the page alone, so it stays out of "Use via API" and gradio_client, and its
name cannot take one of the named endpoints'.

SILENT: the settings of a page event that only moves data in the page (a script, a mark, a
write to the browser's storage): private, not queued behind runs, with no progress drawn.

session_of: the browser tab's session id (Gradio's session_hash), None when the request has
none (a direct call in a test, an API client without a session).

value_box: a text box the page never shows, that only carries a value between events and scripts.

joined: several steps (fn, inputs, outputs), whose handlers take their inputs as one dict, as one
step: one request instead of several, when they write different components.
"""
from __future__ import annotations

import logging
from typing import Any

import gradio as gr

PRIVATE = "private"
SILENT = dict(queue=False, show_progress="hidden", api_visibility=PRIVATE)


def session_of(request: Any) -> str | None:
    return getattr(request, "session_hash", None) or None


def joined(*steps: tuple) -> tuple:
    """One step (fn, inputs, outputs) doing each of `steps` in turn, in one request. They must write
    different components: one answer would hide the other's."""
    outputs = [output for _, _, outs in steps for output in outs]
    assert len(set(outputs)) == len(outputs), "two joined steps write one component"

    def all_of(values: dict, request: gr.Request) -> dict:
        out: dict = {}
        failed = None
        for fn, _, _ in steps:
            try:
                out.update(fn(values, request))
            except Exception as exc:   # the others' answers still count (the settings when a lesson's restore fails)
                logging.getLogger(__name__).exception("a joined page step failed")
                failed = failed or exc
        if failed is not None and not out:
            raise failed
        return out

    return all_of, set().union(*(set(inputs) for _, inputs, _ in steps)), outputs


def value_box(**kwargs) -> gr.Textbox:
    """A text box that only carries a value from one event or script to another. Never drawn
    (visible=False): the page keeps its value all the same, and an event reads and writes it, but a
    drawn one (visible="hidden") cost the first lesson's page a mounted text box each, about twenty.
    Not for a box whose own change must fire an event: only a drawn box reports its changes."""
    return gr.Textbox(visible=False, **kwargs)


def on_choice(dropdown: gr.Dropdown, fn, inputs: list, outputs: list):
    """Wires `fn(value, *inputs)` to a person choosing an option in `dropdown`; returns the event.

    Not `input`: Gradio's dropdown sends `input` again whenever the box loses focus, so a box only
    clicked into and left would run the listener once more, and a late fill put a preset's address
    back over the one typed since, or an example's source over the student's edits. `select` is
    sent once per option chosen (tests/app/test_gradio_patches.py checks that no dropdown listens
    to `input`)."""
    return dropdown.select(fn, [dropdown, *inputs], outputs, api_visibility=PRIVATE, show_progress="hidden")
