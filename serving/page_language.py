"""The page's own labels in English for an English tab.

The page is built once, in Chinese, for every tab. Each label, info, placeholder, button and
Markdown text built with `tr(zh, en)` carries its English (i18n.Text); `english_updates(demo)`
collects them once when the page is built, and `wire(demo)` puts them into the page an English
tab loads (its config, per request: gradio_patches.set_page_props), so the tab is English from
its first frame and no event on load has to rewrite ~280 labels. A Chinese tab gets the page as
built.

A table's column headers built with tr() are put in English too, in its first value as well
(a gr.Dataframe's value carries its headers); a handler that updates the table gives its headers
in the tab's language with the rows.

Choices keep their values and change only the words shown: a value is what the handlers, the
browser's memory and the links read, in either language. A handler that sets a dropdown's choices
later (the forced tools of tool_choice) writes them in the tab's language too.

Only the page served at `/` carries the English: a frontend that reads `/config` instead (Gradio's
reload mode, an embedded <gradio-app>) gets the labels as built, in Chinese.
"""
from __future__ import annotations

from typing import Any

import gradio as gr

import i18n
from serving import gradio_patches

PROPS = ("label", "info", "placeholder", "value")


def _choices(choices: Any) -> list | None:
    if not isinstance(choices, (list, tuple)):
        return None
    shown, changed = [], False
    for choice in choices:
        label, value = (choice[0], choice[1]) if isinstance(choice, (list, tuple)) else (choice, choice)
        if isinstance(label, i18n.Text):
            shown.append((label.en, str(value) if isinstance(value, i18n.Text) else value))
            changed = True
        else:
            shown.append((label, value))
    return shown if changed else None


def _rows(value: Any) -> list:
    """A table's first rows as it was built with them (a list of rows, or a value with "data")."""
    rows = value.get("data") if isinstance(value, dict) else value
    return list(rows) if isinstance(rows, (list, tuple)) else []


def english_updates(demo: gr.Blocks) -> dict[Any, dict]:
    """{block: {prop: English}} for every block with a text built by tr()."""
    updates: dict[Any, dict] = {}
    for block in demo.blocks.values():
        props = gradio_patches.static_props(block)
        # A value set on the component after it was built (a panel adapting a shared view) counts too.
        props.update({name: getattr(block, name) for name in PROPS if isinstance(getattr(block, name, None), i18n.Text)})
        found = {name: props[name].en for name in PROPS if isinstance(props.get(name), i18n.Text)}
        choices = _choices(props.get("choices"))
        if choices is not None:
            found["choices"] = choices
        headers = props.get("headers")
        if isinstance(headers, (list, tuple)) and any(isinstance(header, i18n.Text) for header in headers):
            found["headers"] = [header.en if isinstance(header, i18n.Text) else header for header in headers]
            found.setdefault("value", {"headers": found["headers"], "data": _rows(props.get("value"))})
        if found:
            updates[block] = found
    return updates


def _as_built(block: Any, props: dict) -> dict:
    """The props as the page's config carries them: a value as the component's postprocess gives it.
    A value the block itself holds as a Text is that already (Gradio keeps the constructor's value
    postprocessed; a code box's postprocess draws both languages): drawn again, a code box would show
    its own HTML as code, under Chinese buttons, until an event replaced it."""
    held = getattr(block, "value", None)
    drawn = isinstance(held, i18n.Text) and props.get("value") == held.en
    if "value" in props and hasattr(block, "postprocess") and not drawn:
        shown = block.postprocess(props["value"])
        if hasattr(shown, "model_dump"):      # a table: Gradio's data model, as its config carries it
            shown = shown.model_dump()
        if isinstance(shown, (str, dict)):
            props = {**props, "value": shown}
    return props


def wire(demo: gr.Blocks) -> None:
    """Call once, after every component of every page is built."""
    english = {block: _as_built(block, props) for block, props in english_updates(demo).items()}
    if english:
        gradio_patches.set_page_props(demo, lambda request: english if i18n.of_request(request) == "en" else {})
