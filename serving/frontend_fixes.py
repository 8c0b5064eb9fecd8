"""Fixes to Gradio 6.31's frontend, made to its script files as they are served.

This page has about 575 components and 200 events. Three places in Gradio's frontend did work
that grows with components × events, and they were most of what a student's browser did:

1. `find_attached_events`. When the page builds its tree of components (twice per load), each
   component searched all 200 events for the ones it triggers, through Svelte's reactive
   proxies. The fix builds one map, from a component to its events, once per build.
2. `update_loading_stati_state`. On every change of any event's status (sent, each streamed
   update, done), it sent the loading status again to every component that any event had ever
   shown one on, and each send walked the whole tree to find its component. After the page's
   own events on load, that was about 200 walks of up to 575 nodes, several times per click.
   The fix sends only the statuses that changed since they were last sent (a status cleared by
   a component, or a rebuilt tree, is sent again).
3. `set_event_args`. Each event's arguments were set on each of its components on every load
   and every click: the component was looked up (a walk of the tree) before finding that there
   was nothing to set, which is the case for almost every event. Now it is not looked up then.

Measured with Chrome's own counters (main-thread task time, one fresh page, nothing else
running): loading the page 3.55 s -> 2.26 s; one Function Calling run 1.39 s -> 0.57 s.

Each fix names its file (the file names carry a hash of Gradio's build, see PINNED_GRADIO),
the exact text it replaces and the text it puts in its place. A fix whose text is not found
exactly once is not made: the stock file is served, and a warning logged. The tests
(tests/app/test_frontend_fixes.py) fail then, so an upgrade of Gradio shows at once.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from starlette.datastructures import Headers, MutableHeaders

log = logging.getLogger(__name__)
ASSET_PREFIX = "/assets/"


@dataclass(frozen=True)
class Fix:
    asset: str      # the file's name under /assets/
    old: str        # the exact text replaced: found exactly once, or the fix is not made
    new: str
    why: str


# A component's events, from the page's list of events: for each event, the first of its
# triggers on that component (what `find_attached_events` took), in the events' order.
EVENTS_BY_COMPONENT = ("(deps)=>{let m=new Map;for(let d of deps){let seen=new Set;for(let[id,name]of d.targets){"
                       "if(seen.has(id))continue;seen.add(id);if(name){let l=m.get(id);l?l.push(name):m.set(id,[name])}}}"
                       "return m}")

FIXES = (
    Fix("core-Bdx9080F.js",
        old="postprocess(e){this.root=this.traverse(e,[e=>je(e,this.#r.api_url),e=>Me(e,this.components_to_register),"
            "e=>Pe(e,this.initial_tabs),e=>this.find_attached_events(e,this.#n),"
            "e=>Ne(e,this.components_to_register,this.#d)])}",
        new="postprocess(e){let events=(" + EVENTS_BY_COMPONENT + ")(this.#n);this.root=this.traverse(e,["
            "e=>je(e,this.#r.api_url),e=>Me(e,this.components_to_register),e=>Pe(e,this.initial_tabs),"
            "e=>(e.props.shared_props.attached_events=events.get(e.id)||[],e),"
            "e=>Ne(e,this.components_to_register,this.#d)])}",
        why="each component's events from one map, not a search of every event per component"),
    Fix("Blocks-D1GWYZdr.js",
        old="async update_loading_stati_state(){await Promise.all(Object.entries(this.loading_stati.current)"
            ".map(([e,t])=>this.update_state_cb(Number(e),{loading_status:t},!1)))}",
        new="async update_loading_stati_state(){let sent=this.sent_stati||(this.sent_stati=new Map);"
            "await Promise.all(Object.entries(this.loading_stati.current).map(([e,t])=>{let k=JSON.stringify(t);"
            "if(sent.get(e)===k)return;sent.set(e,k);return this.update_state_cb(Number(e),{loading_status:t},!1)}))}",
        why="only the loading statuses that changed are sent to their components"),
    Fix("Blocks-D1GWYZdr.js",
        old="async set_event_args(e,t){let n={},r=await this.get_state_cb?.(e);",
        new="async set_event_args(e,t){if(Object.keys(t).length===0)return()=>{};let n={},r=await this.get_state_cb?.(e);",
        why="an event without arguments does not look its component up (it then did nothing with it)"),
    Fix("Blocks-D1GWYZdr.js",
        old="clear_loading_status(e){this.loading_stati.clear(e)}",
        new="clear_loading_status(e){this.sent_stati?.delete(String(e)),this.loading_stati.clear(e)}",
        why="a status a component cleared is sent again"),
    Fix("Blocks-D1GWYZdr.js",
        old="reload(e,t,n,r,i){let{by_id:a,by_event:o}=this.create(e);",
        new="reload(e,t,n,r,i){this.sent_stati=new Map;let{by_id:a,by_event:o}=this.create(e);",
        why="a rebuilt tree gets every status again"),
)


def fixed(text: str, fixes) -> str:
    """`text` with each fix made whose old text it holds exactly once; the others are logged."""
    for fix in fixes:
        if text.count(fix.old) != 1:
            log.warning("Gradio's %s is not the one this fix was written for (%s): served unchanged",
                        fix.asset, fix.why)
            continue
        text = text.replace(fix.old, fix.new)
    return text


class FrontendFixes:
    """ASGI middleware: serves the fixed text of each file named in FIXES, with Gradio's own
    headers. Conditional, partial and encoded answers pass as Gradio made them."""

    def __init__(self, app, fixes=FIXES):
        self.app = app
        self.fixes: dict[str, list[Fix]] = {}
        for fix in fixes:
            self.fixes.setdefault(ASSET_PREFIX + fix.asset, []).append(fix)
        self._bodies: dict[str, bytes] = {}      # path -> fixed file (the files never change while serving)

    async def __call__(self, scope, receive, send):
        fixes = self.fixes.get(scope.get("path", "")) if scope["type"] == "http" and scope["method"] == "GET" else None
        if not fixes:
            await self.app(scope, receive, send)
            return
        messages = []

        async def keep(message):
            messages.append(message)

        await self.app(scope, receive, keep)
        start = messages[0] if messages and messages[0]["type"] == "http.response.start" else None
        plain = (start is not None and start["status"] == 200
                 and "content-encoding" not in Headers(raw=start.get("headers", []))
                 and all(m["type"] == "http.response.body" for m in messages[1:]))
        if not plain:
            for message in messages:
                await send(message)
            return
        path = scope["path"]
        body = self._bodies.get(path)
        if body is None:
            stock = b"".join(m.get("body", b"") for m in messages[1:]).decode("utf-8")
            body = self._bodies[path] = fixed(stock, fixes).encode("utf-8")
        headers = MutableHeaders(raw=list(start.get("headers", [])))
        headers["content-length"] = str(len(body))
        await send({**start, "headers": headers.raw})
        await send({"type": "http.response.body", "body": body, "more_body": False})
