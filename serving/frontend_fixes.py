"""Fixes to Gradio 6.31's frontend, made to its script files as they are served.

This page has about 575 components and 200 events. Three places in Gradio's frontend did work
that grows with components × events, and they were most of what a student's browser did. Two
more did work for the whole page where only the lesson on screen needed it:

1. `find_attached_events`. When the page builds its tree of components, each
   component searched all 200 events for the ones it triggers, through Svelte's reactive
   proxies. The fix builds one map, from a component to its events, once per build.
2. `update_loading_stati_state`. On every change of any event's status (sent, each streamed
   update, done), it sent the loading status again to every component that any event had ever
   shown one on, and each send walked the whole tree to find its component. After the page's
   own events on load, that was about 200 walks of up to 575 nodes, several times per click.
   The fix sends only the statuses that changed since they were last sent. Where Gradio writes
   a component's status directly (a cleared status, a validation message, a rebuilt tree), the
   next round sends that component's status again, as before.
3. `set_event_args`. Each event's arguments were set on each of its components on every load
   and every click: the component was looked up (a walk of the tree) before finding that there
   was nothing to set, which is the case for almost every event. Now it is not looked up then.
4. The tree was built twice per load. `Blocks` builds it, and the event list, when it is made;
   then an effect that rebuilds both when the page's `reload_count` changes (a reload in
   development) ran once at mount as effects do, with the same config, and built both again.
   The rebuild now waits for a change of `reload_count`.
5. Every component's type was loaded while the tree was built, shown or not: each lesson's chat
   view brought the Chatbot with its image and markdown modules, the export tab the file upload,
   and so on, all before the first lesson could appear. Now the build leaves the types aside and,
   once it knows what is hidden (tabs not selected, closed accordions), loads those of the
   components shown; the others load when their tab is opened, which is Gradio's own path for
   components that become visible (`render_previously_invisible_children`).

And four defects. A status tracker counts the seconds of its component's pending event on every
animation frame, until the event's status changes. When the tracker was removed while its event
was pending (one is, after this page has loaded), nothing stopped it: an idle page drew
60 frames a second for as long as it stayed open, about 9 % of a core in Chromium (1 % now). The
fix stops the count when the tracker is removed.

The other: a trigger's handlers whose mode is "always_last" (the default of `.change`) are run
again, once the running one ends, when the trigger fired meanwhile. Gradio ran the whole
trigger again, every handler of it: two such handlers on one trigger then restarted each other
for as long as the page stayed open (after two quick edits of 权限与确认's rules, about four
events a second). The fix runs again only the handler that waited.

The third: a dropdown whose choices the server shrank while its list was open (a student
opening the model list just after choosing a preset, or the forced-tool list just after editing
the source) kept drawing the indices of the longer list: reading a name past the new end threw,
and the list went on showing the old choices beyond it (choosing one sent a value the dropdown no
longer has). The open list now draws only indices its choices still have; Gradio then recomputes
them as it does when the list is closed.

The fourth: the page's events come back over one stream of server-sent events, which the server
ends once none of the page's events is left. An event the page sent just as the last one ended
(the step after a run: the sessions page drawing its new branch) could be registered while the
closing stream still looked open: nothing opened another, and the event's answer never came,
with no error. A stream that ends while an event still waits is now opened again.

And the page's language. Gradio's own words (its footer, 加载中, the upload box, a status badge)
follow the browser's navigator.language, whatever language the page speaks: an English link opened
in a Chinese browser had a Chinese footer. They now follow the page's language (`page_lang` in its
config, which i18n decides from the link and the browser: gradio_patches.set_page_language), and
the heading of a toast, which Gradio writes in English whatever the locale ("Warning", "Error"),
is Chinese on a Chinese page.

Measured by benchmarks/frontend_fixes.py (stock and fixed pages alternating in one run, Chrome's
main-thread task time), in two runs: opening the page took the stock files 1.24-1.46x the time,
one Function Calling run 1.66-1.80x.

Each fix names its file (the file names carry a hash of Gradio's build, see PINNED_GRADIO),
the exact text it replaces, how many times it occurs, and the text it puts in its place. The
fixes of a file are made all together or not at all: when one of them does not fit (another
Gradio), the stock file is served and a warning logged, when the app starts and when the file
is asked for; tests/app/test_frontend_fixes.py fails then, so an upgrade shows at once.
"""
from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from starlette.datastructures import Headers, MutableHeaders

from serving.page_compression import plain_answer

log = logging.getLogger(__name__)
ASSET_PREFIX = "/assets/"


@dataclass(frozen=True)
class Fix:
    asset: str      # the file's name under /assets/
    old: str        # the exact text replaced, found exactly `times` times
    new: str
    why: str
    times: int = 1


# A component's events, from the page's list of events: for each event, the first of its
# triggers on that component (what `find_attached_events` took), in the events' order.
EVENTS_BY_COMPONENT = ("(deps)=>{let m=new Map;for(let d of deps){let seen=new Set;for(let[id,name]of d.targets){"
                       "if(seen.has(id))continue;seen.add(id);if(name){let l=m.get(id);l?l.push(name):m.set(id,[name])}}}"
                       "return m}")



# The page's language as its config says it (gradio_patches.set_page_language), read by the fixes below.
PAGE_LANG = "window.gradio_config?.page_lang"
# A toast's heading on a Chinese page (Gradio shows its type, capitalised, in English).
TOAST_HEADINGS_ZH = {"error": "错误", "warning": "警告", "info": "提示", "success": "成功"}


def forget(component: str) -> str:
    """Script that drops what update_loading_stati_state last sent to `component` (a script
    expression): Gradio is about to write that component's status itself, so the next round
    sends its status again."""
    return f"this.sent_stati?.delete(String({component})),"


FIXES = (
    Fix("core-Bdx9080F.js",
        old="postprocess(e){this.root=this.traverse(e,[e=>je(e,this.#r.api_url),e=>Me(e,this.components_to_register),"
            "e=>Pe(e,this.initial_tabs),e=>this.find_attached_events(e,this.#n),"
            "e=>Ne(e,this.components_to_register,this.#d)])}",
        new="postprocess(e){let events=(" + EVENTS_BY_COMPONENT + ")(this.#n);this.root=this.traverse(e,["
            "e=>Me(e,this.components_to_register),e=>Pe(e,this.initial_tabs),"
            "e=>(e.props.shared_props.attached_events=events.get(e.id)||[],e),"
            "e=>Ne(e,this.components_to_register,this.#d)]);this.building=!1;q(this.root,this.#r.api_url)}",
        why="each component's events from one map, not a search of every event per component; "
            "once the tree is built, the types of the components shown are loaded"),
    # create_node's third argument is true only for the root, which starts a build of the whole
    # tree (when the page is made, and on a reload); postprocess, which only ends such a build,
    # loads the types of what is shown (Gradio's `q`, instead of its `je`, which loaded every
    # type under a node before the tabs and accordions below had hidden their contents).
    Fix("core-Bdx9080F.js",
        old="s=a.shared_props.visible===!1?null:G(i.type,i.component_class_id,this.#r.api_url||``)",
        new="s=(n&&(this.building=!0),a.shared_props.visible===!1||this.building)?null:"
            "G(i.type,i.component_class_id,this.#r.api_url||``)",
        why="a node made while the tree is built waits to know whether it is shown before its type is loaded"),
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
        new="clear_loading_status(e){" + forget("e") + "this.loading_stati.clear(e)}",
        why="a status a component cleared is sent again"),
    Fix("Blocks-D1GWYZdr.js",
        old="r.inputs.forEach(e=>{this.update_state_cb(e,{loading_status:{validation_error:null}},!1)})",
        new="r.inputs.forEach(e=>{" + forget("e")
            + "this.update_state_cb(e,{loading_status:{validation_error:null}},!1)})",
        why="an input whose validation message was reset gets its status again"),
    Fix("Blocks-D1GWYZdr.js",
        old="s.message.forEach((e,t)=>{this.update_state_cb(r.inputs[t],{loading_status:{validation_error:"
            "e.is_valid?null:e.message,show_validation_error:!0}},!1)}),r.progress_targets.forEach(e=>{"
            "r.inputs.includes(e)||this.update_state_cb(e,{loading_status:{status:null}},!1)})",
        new="s.message.forEach((e,t)=>{" + forget("r.inputs[t]") + "this.update_state_cb("
            "r.inputs[t],{loading_status:{validation_error:e.is_valid?null:e.message,show_validation_error:!0}},!1)}),"
            "r.progress_targets.forEach(e=>{r.inputs.includes(e)||(" + forget("e")
            + "this.update_state_cb(e,{loading_status:{status:null}},!1))})",
        why="the components of a refused (invalid) event get their status again"),
    Fix("Blocks-D1GWYZdr.js",
        old="reload(e,t,n,r,i){let{by_id:a,by_event:o}=this.create(e);",
        new="reload(e,t,n,r,i){this.sent_stati=new Map;let{by_id:a,by_event:o}=this.create(e);",
        why="a rebuilt tree gets every status again"),
    Fix("Blocks-D1GWYZdr.js",
        old="this.queue.has(r.id)&&(this.queue.delete(r.id),this.dispatch(e))",
        new="this.queue.has(r.id)&&(this.queue.delete(r.id),"
            "this.dispatch({type:`fn`,fn_index:r.id,event_data:e.event_data,target_id:e.target_id}))",
        why="an 'always_last' handler that waited runs again alone, not its whole trigger", times=2),
    Fix("Blocks-D1GWYZdr.js",
        old="le(()=>{v(),oe(()=>{O.reload(r.components,",
        new="let built=!0;le(()=>{if(v(),built){built=!1;return}oe(()=>{O.reload(r.components,",
        why="the tree is built once per load: the rebuild waits for a new reload_count"),
    # Gradio picks its locale from the browser alone (`M()` is navigator.language): the page's own
    # language comes first; a language Gradio has no words for falls back as before.
    Fix("core-Bdx9080F.js",
        old="let r=null,i=M();",
        new="let r=null,i=" + PAGE_LANG + "||M();",
        why="Gradio's own words (footer, loading, upload box) in the page's language, not only the browser's"),
    Fix("statustracker-DQF-KcRT.js",
        old="S=n(()=>t.type.charAt(0).toUpperCase()+t.type.slice(1))",
        new="S=n(()=>(/^zh/.test(" + PAGE_LANG + "||``)&&" + json.dumps(TOAST_HEADINGS_ZH, ensure_ascii=False)
            + "[t.type])||t.type.charAt(0).toUpperCase()+t.type.slice(1))",
        why="a toast's heading in Chinese on a Chinese page"),
    Fix("Index-DAYzeNnX.js",
        old="n(te,17,()=>t.filtered_indices,ee,",
        new="n(te,17,()=>t.filtered_indices.filter(e=>e<t.choices.length),ee,",
        why="an open dropdown list whose choices shrank draws only the choices it still has"),
    Fix("statustracker-DQF-KcRT.js",
        old="W&&=!1}O(()=>{o.status===`pending`?Ve()",
        new="W&&=!1}O(()=>()=>{W=!1}),O(()=>{o.status===`pending`?Ve()",
        why="a status tracker removed while its event was pending stops its timer"),
    # The client's stream of server-sent events (`t`: the events it has sent and not yet seen end,
    # `r`: whether the stream is open). The server ends the stream once none of the page's events is
    # left; an event sent just then was registered while the stream still looked open, and waited
    # forever.
    Fix("index-DphvyggB.js",
        old="if(s.msg===`close_stream`){wt(r,o.abort_controller);return}",
        new="if(s.msg===`close_stream`){t.size?o.open_stream():wt(r,o.abort_controller);return}",
        why="a stream the server ends while an event still waits is opened again, not left closed"),
    # The messages of an event that came before its id are handed on once the id is known: an end
    # among them ends the event there too, so that the set above holds only events still waiting.
    Fix("index-DphvyggB.js",
        old="E in g&&(g[E].forEach(e=>t(e)),delete g[E]),v[E]=t,y.add(E),",
        new="y.add(E),E in g&&(g[E].forEach(e=>{e.msg===`process_completed`&&y.delete(E),t(e)}),delete g[E]),v[E]=t,",
        why="an event whose end came before its id is not counted as waiting"),
)


def fixed(text: str, fixes) -> str:
    """`text` with all of `fixes` made, or unchanged (and a warning logged) if one does not fit."""
    misfits = [fix for fix in fixes if text.count(fix.old) != fix.times]
    if misfits:
        log.warning("Gradio's %s is not the one these fixes were written for (%s): served unchanged",
                    misfits[0].asset, "; ".join(fix.why for fix in misfits))
        return text
    for fix in fixes:
        text = text.replace(fix.old, fix.new)
    return text


def installed(asset: str) -> str | None:
    """The text of one of the installed Gradio's frontend files, or None."""
    import gradio

    path = Path(gradio.__file__).parent / "templates" / "frontend" / "assets" / asset
    return path.read_text(encoding="utf-8") if path.exists() else None


class FrontendFixes:
    """ASGI middleware: serves the fixed text of each file named in `fixes`, with Gradio's own
    headers but an ETag of its own (a browser that kept the stock file, or an older fix, gets the
    new one) and no Last-Modified (which would let a browser keep it for days without asking).
    Partial and encoded answers pass as Gradio made them."""

    def __init__(self, app, fixes=FIXES):
        self.app = app
        self.fixes: dict[str, list[Fix]] = {}
        for fix in fixes:
            self.fixes.setdefault(ASSET_PREFIX + fix.asset, []).append(fix)
        self._answers: dict[str, tuple[bytes, str]] = {}     # path -> (fixed file, its ETag)
        for path, file_fixes in self.fixes.items():          # says at start when Gradio is another one
            text = installed(file_fixes[0].asset)
            if text is None:
                log.warning("Gradio's %s is missing: the fixes to it are not made", file_fixes[0].asset)
            else:
                fixed(text, file_fixes)

    async def __call__(self, scope, receive, send):
        fixes = self.fixes.get(scope.get("path", "")) if scope["type"] == "http" and scope["method"] == "GET" else None
        asked_headers = Headers(scope=scope) if fixes else None
        if not fixes or "range" in asked_headers:
            await self.app(scope, receive, send)
            return
        asked = asked_headers.get("if-none-match")
        # Gradio is always asked for the whole file: its 304 would be about its own file.
        plain_scope = {**scope, "headers": [(k, v) for k, v in scope["headers"]
                                            if k not in (b"if-none-match", b"if-modified-since")]}
        messages, start, stock = await plain_answer(self.app, plain_scope, receive)
        if start is None:
            for message in messages:
                await send(message)
            return
        path = scope["path"]
        if path not in self._answers:
            body = fixed(stock.decode("utf-8"), fixes).encode("utf-8")
            self._answers[path] = (body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
        body, etag = self._answers[path]
        headers = MutableHeaders(raw=list(start.get("headers", [])))
        del headers["last-modified"]
        headers["etag"] = etag
        if asked is not None and etag in [tag.strip().removeprefix("W/") for tag in asked.split(",")]:
            del headers["content-length"]
            del headers["content-type"]
            await send({**start, "status": 304, "headers": headers.raw})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        headers["content-length"] = str(len(body))
        await send({**start, "headers": headers.raw})
        await send({"type": "http.response.body", "body": body, "more_body": False})
