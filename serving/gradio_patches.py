"""Every place the app reaches into Gradio's internals or sets one of its environment knobs.

They were all written against one Gradio version: the `gradio==` pin of requirements.txt
(PINNED_GRADIO reads it). `check_version()` runs when the app starts and says, in Chinese and
English, when the installed Gradio is another one (a warning; TOOL_WORKSHOP_GRADIO_STRICT=1
makes it an error): then each patch below has to be checked again, by
tests/app/test_gradio_patches.py, which pins every internal used here. An `install_*` function
that finds Gradio's internals changed leaves Gradio alone, warns the same way
(GradioPatchNotInstalled, naming the patch and what is lost) and returns False; that test fails then. Nothing outside this
module touches a private part of Gradio's Python; new patches belong here, with their test there.
The fixes to Gradio's frontend (its script files, as served) are in frontend_fixes.py.

What is here, what it is for, and what breaks without it:

- `set_environment()`, before `import gradio` (the knobs are read at import time):
  * GRADIO_ANALYTICS_ENABLED=False: no telemetry. Without it Gradio reports usage to its own
    servers when the page is launched: traffic the classroom never agreed to.
  * GRADIO_ANALYTICS_CACHE_FREQUENCY / GRADIO_ANALYTICS_MAX_EVENTS: the queue rebuilds a pandas
    table of its last 10 000 events after every event, for a monitoring page this app does not
    use. Under a classroom that was a tenth of the server's CPU and grew with the history; the
    history is also memory that outlives a class (a record per event, made amid the tabs' own
    objects, so a thousand of them held a thousand pages the tabs had freed). Without them:
    CPU and memory that grow with every event of the day.
  * matplotlib recorded as absent when it is not installed: Gradio tries `import matplotlib`
    twice per queued event, on its event loop, and each failed try searches every folder on
    sys.path. Without it: a search of sys.path per event, on the event loop all tabs share.
- `skip_stub_rewrite()`, before `import gradio`: when imported, each of Gradio's ~80 component
  classes reads and parses its own source file again to bring the type stub (.pyi) beside it up
  to date (gradio.component_meta.create_or_modify_pyi), for editors only: about 1.5 s of every
  process that imports gradio (`python -c "import gradio"`: 3.9-4.4 s, 2.4-2.6 s without). An
  import hook swaps that function for one that does nothing, once the module has run and before
  any component class is made. Without it: a slower start of the app and of each test process.
- `install_lean_session_records()`: Gradio keeps one record per browser tab
  (gradio.state_holder.SessionState) and fills it, the moment a tab first talks to the server,
  with the rendered settings of every component on the page: about 0.4 MB and a few ms of CPU
  per tab, fifty times over when a class opens the link. Nothing reads that table as a whole;
  Gradio adds or updates one entry at a time and builds a missing entry itself. So the table
  starts empty and fills only with what the tab's events touch. Without it: 0.4 MB per tab.
- `session_holder()`, `idle_sessions()`, `run_delete_callbacks()`, `drop_session_record()`,
  `drop_queue_mailboxes()`: what expiry.py needs to forget an idle tab. Gradio drops a tab's
  record only when 10 000 tabs are full and keeps the queue's message box of each tab for up
  to 2 000 tabs. Without them the server's memory grows with every class and never comes back.
- `install_page_config()`: Gradio inlines the whole page config into the HTML of `/` for each
  visitor. Each component's entry carries its API description three times (`api_info`,
  `api_info_as_input`, `api_info_as_output`) and its `example_inputs`: about 160 of the 550 KB,
  read by nothing in the page (the API page has its own description, inlined beside it and at
  /gradio_api/info; gradio_client reads /config, left whole). The hook drops those from the page's
  own copy and puts in the first values a page can show before it asks the server anything
  (`set_page_values`: e.g. the schema of an untouched example, known once the sandbox has made
  it) and any other first props (`set_page_props`: an English tab's labels), in the visitor's
  language, with the page's <html lang> and title in that language too (`set_page_language`;
  Gradio's template says lang="en" for every page). It wraps the
  template response of `/` (gradio.routes.templates), where the config is already a
  per-request copy. Without it: about 20 KB more over the wire per visitor, the first lesson
  waits for a round trip to show a schema the server already knew, an English tab waits for an
  event that rewrites ~280 labels, and a Chinese page says it is English.
  Why first props rather than events on load: Gradio 6.31's page, at every status change of any
  event, updates the loading status of every component any event has touched so far (its
  inputs, and its outputs or show_progress_on), each by a search of the whole component tree.
  One event that touches 280 components made every later event of the tab slower, for good.
- `install_range_messages()`: a number typed into a gr.Number or a slider's box outside its
  range made Gradio raise its own English error ("Value 0 is less than minimum value 50.") while
  preparing the event's inputs: a red toast, a red 错误 badge on the event's outputs, and the
  handler never ran, so a preview kept showing the previous value without a word. Now the handler
  runs with an `OutOfRange` number (the value the box shows once it loses focus: a slider's nearest
  end, a gr.Number's own value), and a warning toast names the box, the value and the range in
  the tab's language; a handler that wants to say more (the context lesson's preview) checks for
  it. For the toast and the language, Gradio's event context (LocalContext's request and event id,
  which Gradio sets only around the handler) is set for the whole event, its inputs' preparation
  included. Without it: Gradio's English error over a mistake the page could have explained.
- `page_blocks()` and `queue_without_app()`: Gradio builds a whole FastAPI app (about 80 routes)
  when a gr.Blocks is made (it queues itself), the page's whole config and an app again when the
  `with gr.Blocks()` block ends, again in `queue()`, and again in `launch()`, which is the one that
  serves: each is a few tenths of a second of `python app.py`'s start. These two skip all but
  launch's.
  Without them: a slower start, nothing else.
- `current_request()`: the gr.Request of the event being handled, which Gradio keeps in a
  context variable of its own (gradio.context.LocalContext.request) around every call of a
  handler, each step of a generator included. i18n reads the tab's language from it (the link's
  lang= and the browser's Accept-Language), so no handler has to pass a language along.
  Without it: every text the server writes in Chinese, whatever the tab asked for.
- `static_props()`: what a component was built with (Gradio's record of the constructor's
  arguments): the labels serving/page_language.py puts on screen in English. Without it: the page's labels
  in Chinese only.
- `poll_idle_queue_every()`: while idle, Gradio's queue looks for new events every
  millisecond (about 7 % of a core per open app); the tests' in-process apps (harness.py) poll
  every 10 ms. Without it: the test run's idle apps take CPU from the browser beside them.
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import inspect
import os
import re
import sys
import warnings
import weakref
from pathlib import Path
from typing import Any, Callable

import i18n

REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements.txt"


class GradioVersionMismatch(RuntimeWarning):
    """The installed Gradio is not the one the patches here were written against."""


class GradioPatchNotInstalled(RuntimeWarning):
    """An install_* function found Gradio's internals changed and left Gradio as it was."""


def pinned_version(requirements: Path = REQUIREMENTS) -> str | None:
    """The `gradio==X` pin of requirements.txt (None without one)."""
    try:
        text = requirements.read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r"^\s*gradio\s*==\s*([^\s;#]+)", text, re.MULTILINE | re.IGNORECASE)
    return match.group(1) if match else None


PINNED_GRADIO = pinned_version()


def installed_version() -> str | None:
    try:
        return importlib.metadata.version("gradio")
    except importlib.metadata.PackageNotFoundError:
        return None


def mismatch_message(installed: str | None, pinned: str | None) -> str:
    return (f"Gradio 版本不符：已安装 {installed}，requirements.txt 固定的是 {pinned}。"
            f"serving/gradio_patches.py 的补丁是照 {pinned} 写的，请先跑 tests/app/test_gradio_patches.py 再用。 / "
            f"Gradio version mismatch: {installed} is installed, requirements.txt pins {pinned}. "
            f"The patches in serving/gradio_patches.py were written against {pinned}; "
            f"run tests/app/test_gradio_patches.py before relying on them.")


def check_version(installed: str | None = None, pinned: str | None = None, strict: bool | None = None) -> bool:
    """True when the installed Gradio is the pinned one. Otherwise warns (GradioVersionMismatch),
    or raises RuntimeError when `strict` (default: TOOL_WORKSHOP_GRADIO_STRICT=1)."""
    installed = installed_version() if installed is None else installed
    pinned = PINNED_GRADIO if pinned is None else pinned
    if installed == pinned:
        return True
    if strict is None:
        strict = os.environ.get("TOOL_WORKSHOP_GRADIO_STRICT", "") == "1"
    message = mismatch_message(installed, pinned)
    if strict:
        raise RuntimeError(message)
    warnings.warn(message, GradioVersionMismatch, stacklevel=2)
    return False


def not_installed(patch: str, without: str) -> bool:
    """What an install_* function returns when Gradio's internals do not look as expected: False,
    after a warning at start naming the patch and what the app does without it (an error with
    TOOL_WORKSHOP_GRADIO_STRICT=1, as for the version check)."""
    message = (f"Gradio 补丁 {patch} 没有装上：这个 Gradio {installed_version()} 的内部和补丁写的不一样"
               f"（requirements.txt 固定的是 {PINNED_GRADIO}），应用照常运行，只是{without[0]}。"
               f"请跑 tests/app/test_gradio_patches.py。 / "
               f"Gradio patch {patch} was not installed: the internals of this Gradio {installed_version()} "
               f"are not the ones it was written for (requirements.txt pins {PINNED_GRADIO}). The app runs, "
               f"but {without[1]}. Run tests/app/test_gradio_patches.py.")
    if os.environ.get("TOOL_WORKSHOP_GRADIO_STRICT", "") == "1":
        raise RuntimeError(message)
    warnings.warn(message, GradioPatchNotInstalled, stacklevel=3)
    return False


# --- environment knobs: before `import gradio` ---------------------------------------------

ANALYTICS_CACHE_FREQUENCY = "1000"
ANALYTICS_MAX_EVENTS = "50"


def set_environment(environ=os.environ, modules=sys.modules) -> None:
    """The knobs Gradio reads when imported (see the module docstring). Set values win, except
    telemetry, which is always off."""
    environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", ANALYTICS_CACHE_FREQUENCY)
    environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", ANALYTICS_MAX_EVENTS)
    if importlib.util.find_spec("matplotlib") is None:
        modules.setdefault("matplotlib", None)


# --- Gradio's import, without rewriting its type stubs --------------------------------------

STUB_WRITER_MODULE, STUB_WRITER = "gradio.component_meta", "create_or_modify_pyi"


def _no_stub(component_class, class_name, events) -> None:
    """Stands in for gradio.component_meta.create_or_modify_pyi: the stubs are for editors."""


class _StubRewriteSkipper(importlib.abc.MetaPathFinder):
    """Finds gradio.component_meta as usual; once the module has run, its stub writer does nothing."""

    def find_spec(self, name, path, target=None):
        if name != STUB_WRITER_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            setattr(module, STUB_WRITER, _no_stub)
        spec.loader.exec_module = exec_module
        return spec


def skip_stub_rewrite(meta_path: list = sys.meta_path, modules=sys.modules) -> bool:
    """Makes the coming `import gradio` skip its stub rewrite (see the module docstring). False
    when gradio's component classes are already made (then it is too late to save anything)."""
    if STUB_WRITER_MODULE in modules:
        setattr(modules[STUB_WRITER_MODULE], STUB_WRITER, _no_stub)
        return False
    if not any(isinstance(finder, _StubRewriteSkipper) for finder in meta_path):
        meta_path.insert(0, _StubRewriteSkipper())
    return True


# --- a lighter per-tab record (gradio.state_holder.SessionState) ---------------------------

_lean_class = None


def lean_session_state():
    """The class LeanSessionState, made once: it subclasses Gradio's record, so gradio is
    imported here and not when this module is (set_environment must come first)."""
    global _lean_class
    if _lean_class is None:
        import gradio.state_holder as state_holder

        original = state_holder.SessionState

        class _PageSettingsOnly:
            """What SessionState.__init__ reads from the Blocks, minus the components to copy."""

            def __init__(self, blocks):
                self.default_config = blocks.default_config
                self.blocks = {}

        class LeanSessionState(original):
            def __init__(self, blocks):
                super().__init__(_PageSettingsOnly(blocks))

        _lean_class = LeanSessionState
    return _lean_class


def install_lean_session_records() -> bool:
    """Makes new tabs use the lighter record; False (nothing changed) if this Gradio's record
    does not look as expected."""
    import gradio.state_holder as state_holder

    lean = lean_session_state()
    if state_holder.SessionState is lean:
        return True
    probe = lean.__mro__[1].__init__.__code__
    if "config_values" not in probe.co_names or "default_config" not in probe.co_names:
        return not_installed("install_lean_session_records",
                             ("每个标签页在服务器上多占约 0.4 MB", "each browser tab takes about 0.4 MB more on the server"))
    state_holder.SessionState = lean
    return True


# --- forgetting an idle tab (expiry.py) ----------------------------------------------------

def session_holder(demo):
    """Gradio's table of per-tab records (gradio.state_holder.StateHolder) of a launched Blocks."""
    return getattr(demo, "state_holder", None)


def idle_sessions(holder, ttl: float, now: float | None = None) -> list[str]:
    """Ids of the tabs whose last event is more than `ttl` seconds old."""
    now_dt = datetime.datetime.now() if now is None else datetime.datetime.fromtimestamp(now)
    with holder.lock:
        return [sid for sid, last in holder.time_last_used.items() if (now_dt - last).total_seconds() > ttl]


def run_delete_callbacks(holder, session_id: str) -> None:
    """The tab's gr.State delete callbacks (Gradio's own delete_state)."""
    holder.delete_state(session_id)


def drop_session_record(holder, session_id: str) -> None:
    """Gradio's record of the tab and its last-used time."""
    with holder.lock:
        holder.session_data.pop(session_id, None)
        holder.time_last_used.pop(session_id, None)


def drop_queue_mailboxes(holder, session_ids: list[str]) -> None:
    """The queue's message box of each tab that has no event pending."""
    queue = getattr(getattr(holder, "blocks", None), "_queue", None)
    if queue is None or not session_ids:
        return
    waiting = queue.pending_event_ids_session
    for sid in session_ids:
        if not waiting.get(sid):
            waiting.pop(sid, None)
            queue.pending_messages_per_session.pop(sid, None)


# --- a number outside its box's range (gr.Number, gr.Slider) ------------------------------

class OutOfRange(float):
    """A number given to a box outside the box's range, as the event's handler gets it (instead of
    Gradio's English error). Its value is what the box shows once it loses focus: a slider moves to
    the nearest end of its range, a gr.Number keeps what was typed. `typed` is the number given,
    `low` / `high` the range (None: open on that side), `box` the box's label, `slider` which of
    the two it is; `message` says it all in the tab's language."""

    typed: float
    low: float | None
    high: float | None
    box: Any
    slider: bool

    def __new__(cls, value: float, typed: float, low: float | None, high: float | None, box: Any, slider: bool):
        number = super().__new__(cls, value)
        number.typed, number.low, number.high, number.box, number.slider = typed, low, high, box, slider
        return number

    def __reduce__(self):   # copied or pickled (Gradio deep-copies a gr.State's value)
        return (OutOfRange, (float(self), self.typed, self.low, self.high, self.box, self.slider))

    @property
    def message(self) -> str:
        from i18n import now, tr

        shown = {"box": box_name(self.box), "typed": plain_number(self.typed), "value": plain_number(self),
                 "low": plain_number(self.low), "high": plain_number(self.high)}
        if self.low is not None and self.high is not None:
            said = tr("「{box}」填的 {typed} 超出范围：应在 {low} 到 {high} 之间",
                      "«{box}»: {typed} is out of range: it must be from {low} to {high}")
        elif self.low is not None:
            said = tr("「{box}」填的 {typed} 太小：应不小于 {low}", "«{box}»: {typed} is too small: it must be at least {low}")
        else:
            said = tr("「{box}」填的 {typed} 太大：应不大于 {high}", "«{box}»: {typed} is too large: it must be at most {high}")
        if self.slider:
            said += tr("；离开输入框时它回到 {value}", "; leaving the box sets it to {value}")
        return now(said + tr("。", ".")).format(**shown)


def plain_number(value: Any) -> str:
    """50.0 as "50", 0.5 as "0.5"."""
    if value is None:
        return ""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def box_name(label: Any) -> str:
    """A box's label up to its first bracket or colon: 「每轮时限（秒）：超过就停止等待」 is 「每轮时限」."""
    from i18n import now, tr

    text = str(now(label)) if label else str(tr("这个数", "this number"))
    return re.split(r"[（(：:]", text, maxsplit=1)[0].strip() or text


def _range_checked(preprocess: Callable, slider: bool) -> Callable:
    @functools.wraps(preprocess)
    def checked(self, payload):
        low, high = self.minimum, self.maximum
        if (not isinstance(payload, (int, float)) or isinstance(payload, bool)
                or ((low is None or payload >= low) and (high is None or payload <= high))):
            return preprocess(self, payload)
        if slider:
            nearest = low if low is not None and payload < low else high
            shown = preprocess(self, nearest)
        else:
            shown = self.round_to_precision(payload, self.precision)
        number = OutOfRange(shown, payload, low, high, self.label, slider)
        import gradio as gr

        gr.Warning(number.message)
        return number
    checked.tw_range_checked = True
    return checked


def install_range_messages() -> bool:
    """Numbers out of their box's range reach the handler as OutOfRange, with a warning toast in
    the tab's language (see the module docstring); False (nothing changed) if this Gradio's
    Number, Slider or Blocks.process_api do not look as expected. Idempotent."""
    import gradio.blocks as blocks_module
    from gradio.components import Number, Slider
    from gradio.context import LocalContext

    without = ("数字框超出范围时，页面显示 Gradio 自己的英文错误", "a number out of its box's range shows Gradio's own English error")
    process_api = blocks_module.Blocks.process_api
    try:
        checks = [inspect.getsource(Number.preprocess), inspect.getsource(Slider.preprocess)]
        parameters = inspect.signature(process_api).parameters
    except (OSError, TypeError, ValueError):
        return not_installed("install_range_messages", without)
    done = [getattr(cls.preprocess, "tw_range_checked", False) for cls in (Number, Slider)]
    if not all(done) and (not all("raise_if_out_of_bounds" in source for source in checks)
                          or "request" not in parameters or "event_id" not in parameters
                          or not hasattr(LocalContext, "event_id") or not hasattr(LocalContext, "request")):
        return not_installed("install_range_messages", without)
    if all(done):
        return True
    signature = inspect.signature(process_api)

    @functools.wraps(process_api)
    async def with_event_context(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        tokens = (LocalContext.request.set(arguments.get("request")), LocalContext.event_id.set(arguments.get("event_id")))
        try:
            return await process_api(*args, **kwargs)
        finally:
            LocalContext.event_id.reset(tokens[1])
            LocalContext.request.reset(tokens[0])

    blocks_module.Blocks.process_api = with_event_context
    Number.preprocess = _range_checked(Number.preprocess, slider=False)
    Slider.preprocess = _range_checked(Slider.preprocess, slider=True)
    return True


# --- the page's inlined config (the HTML of `/`) -----------------------------------------

PAGE_TEMPLATE = "frontend/index.html"
# Keys of a component's entry that only describe the API; the page never reads them.
API_ONLY_KEYS = ("api_info", "api_info_as_input", "api_info_as_output", "example_inputs")
# Per launched Blocks: (request) -> {component: {prop: first value}}, asked for each page.
_page_props: "weakref.WeakKeyDictionary[Any, list[Callable[[Any], dict]]]" = weakref.WeakKeyDictionary()
# Per launched Blocks: (request) -> (the <html lang>, the page's title), asked for each page.
_page_language: "weakref.WeakKeyDictionary[Any, Callable[[Any], tuple[str, str]]]" = weakref.WeakKeyDictionary()
HTML_LANG = b'<html\n\tlang="en"'       # how Gradio's index.html opens: English, whatever the page says


def set_page_props(blocks, props: Callable[[Any], dict]) -> None:
    """`props(request)` -> {component: {prop: value}} is asked each time `blocks` serves its page;
    each prop found replaces what that component was built with, in this page only (a component or
    prop it leaves out keeps its own). A value is given as the component's postprocess returns it."""
    _page_props.setdefault(blocks, []).append(props)


def set_page_values(blocks, values: Callable[[Any], dict]) -> None:
    """`values(request)` -> {component: value}: first values, as set_page_props's "value"."""
    set_page_props(blocks, lambda request: {c: {"value": v} for c, v in values(request).items()})


def set_page_language(blocks, language: Callable[[Any], tuple[str, str]]) -> None:
    """`language(request)` -> (lang, title): the page's <html lang> (a screen reader and the fonts
    chosen for Chinese text read it) and its title. Gradio's template writes lang="en" for every
    page and its script sets it again from the browser's language once it starts: the page's
    config carries the right one ("page_lang"), which PAGE_LANG_JS, run on load, puts back."""
    _page_language[blocks] = language


PAGE_LANG_JS = """() => {
  const lang = window.gradio_config && window.gradio_config.page_lang;
  if (lang) document.documentElement.lang = lang;
}"""


def shape_page_config(blocks, config: dict, request=None) -> dict:
    """The page's own copy of the config, without the API-only keys and with the page props. Of
    Gradio's map of every page (which components and layout each has), only this page's entry
    is kept: another page is a page load of its own, and the whole map grows with each lesson."""
    pages = config.get("page")
    if isinstance(pages, dict) and config.get("current_page") in pages:
        config["page"] = {config["current_page"]: pages[config["current_page"]]}
    props: dict = {}
    for provider in _page_props.get(blocks, ()):
        for component, changes in provider(request).items():
            props.setdefault(getattr(component, "_id", component), {}).update(changes)
    without_api_blocks(config)
    for entry in config.get("components", ()):
        for key in API_ONLY_KEYS:
            entry.pop(key, None)
        if entry.get("id") in props and isinstance(entry.get("props"), dict):
            entry["props"].update(props[entry["id"]])
    if blocks in _page_language:
        config["page_lang"], config["title"] = _page_language[blocks](request)
    return config


def without_api_blocks(config: dict) -> None:
    """Drops the named endpoints' stand-in components (gr.api makes one per parameter and result,
    and puts them in the page's layout) and those endpoints from the page's config, and from its
    entry in the map of pages: the page never calls them (a script does, through /config and
    gradio_client), yet the frontend mounted every one of them before the first lesson was drawn."""
    components = config.get("components")
    if not isinstance(components, list):
        return
    stand_ins = {entry.get("id") for entry in components if entry.get("type") == "api"}
    if not stand_ins:
        return

    def endpoint(dep: dict) -> bool:
        used = set(dep.get("inputs", ())) | set(dep.get("outputs", ()))
        return not dep.get("targets") and bool(used) and used <= stand_ins

    def pruned(layout):
        if isinstance(layout, dict) and isinstance(layout.get("children"), list):
            layout = dict(layout, children=[pruned(child) for child in layout["children"]
                                            if not (isinstance(child, dict) and child.get("id") in stand_ins)])
        return layout

    config["components"] = [entry for entry in components if entry.get("id") not in stand_ins]
    dropped = {dep.get("id") for dep in config.get("dependencies", ()) if endpoint(dep)}
    config["dependencies"] = [dep for dep in config.get("dependencies", ()) if dep.get("id") not in dropped]
    config["layout"] = pruned(config.get("layout"))
    for page in (config.get("page") or {}).values():
        if isinstance(page, dict):
            page["layout"] = pruned(page.get("layout"))
            page["components"] = [i for i in page.get("components", ()) if i not in stand_ins]
            page["dependencies"] = [i for i in page.get("dependencies", ()) if i not in dropped]


def _with_language(blocks, response, request):
    language = _page_language.get(blocks)
    body = getattr(response, "body", None)
    if language is None or not isinstance(body, bytes) or HTML_LANG not in body:
        return response
    lang = language(request)[0].encode("ascii", "replace")
    response.body = body.replace(HTML_LANG, HTML_LANG.replace(b'"en"', b'"' + lang + b'"'), 1)
    response.headers["content-length"] = str(len(response.body))
    return response


def install_page_config() -> bool:
    """Makes `/` serve the shaped config (idempotent); False if Gradio's page route no longer
    renders PAGE_TEMPLATE through gradio.routes.templates with a `config` in its context."""
    import gradio.routes as routes

    templates = routes.templates
    original = templates.TemplateResponse
    if getattr(original, "tw_shaped", False):
        return True
    without = ("页面带着只给 API 用的描述（每位访客多约 20 KB），第一课要等一次往返才显示 schema，英文页面的标签要等一个事件",
               "the page carries the API's descriptions (about 20 KB more per visitor), the first lesson waits a "
               "round trip for its schema and an English tab waits for an event to relabel it")
    try:
        import inspect

        page_route = inspect.getsource(routes.App.create_app)
    except (OSError, TypeError):
        return not_installed("install_page_config", without)
    if PAGE_TEMPLATE not in page_route or '"config": config' not in page_route:
        return not_installed("install_page_config", without)

    @functools.wraps(original)
    def shaped(*args, **kwargs):
        name, context, request = kwargs.get("name"), kwargs.get("context"), kwargs.get("request")
        get_blocks = getattr(getattr(request, "app", None), "get_blocks", None)
        if name == PAGE_TEMPLATE and isinstance(context, dict) and isinstance(context.get("config"), dict) \
                and get_blocks is not None:
            blocks = get_blocks()
            context["config"] = shape_page_config(blocks, context["config"], request)
            return _with_language(blocks, original(*args, **kwargs), request)
        return original(*args, **kwargs)

    shaped.tw_shaped = True
    templates.TemplateResponse = shaped
    return True


# --- one config and one app, made by launch() ----------------------------------------------

class _NoAppYet:
    """Stands in for gradio.routes.App while a page is built and queued: launch() makes the app."""

    @staticmethod
    def create_app(*args, **kwargs):
        return None


@contextlib.contextmanager
def _without_app(blocks=None):
    import gradio.blocks as blocks_module

    app_class = blocks_module.App
    blocks_module.App = _NoAppYet
    if blocks is not None:
        blocks.get_config_file = lambda: None
    try:
        yield
    finally:
        blocks_module.App = app_class
        if blocks is not None:
            del blocks.get_config_file


_page_blocks_class = None


def page_blocks(**kwargs):
    """A gr.Blocks(**kwargs) that, when its `with` block ends, makes neither its config nor an app."""
    global _page_blocks_class
    if _page_blocks_class is None:
        import gradio as gr

        class PageBlocks(gr.Blocks):
            def __init__(self, *args, **kwargs):
                with _without_app():          # Blocks() queues itself, and queue() makes an app
                    super().__init__(*args, **kwargs)

            def __exit__(self, exc_type=None, *args):
                with _without_app(self):
                    return super().__exit__(exc_type, *args)

        _page_blocks_class = PageBlocks
    return _page_blocks_class(**kwargs)


def queue_without_app(demo, **kwargs):
    """demo.queue(**kwargs), without the app it would make and launch() makes again."""
    with _without_app():
        return demo.queue(**kwargs)
# --- the tab's language (i18n) -------------------------------------------------------------

def current_request():
    """The gr.Request of the event being handled in this thread or task, None outside one."""
    from gradio.context import LocalContext
    return LocalContext.request.get(None)


i18n.read_requests_with(current_request)     # i18n sits below this layer and cannot import it


def static_props(block) -> dict:
    """The keyword arguments `block` was built with (positional ones by name)."""
    return dict(getattr(block, "constructor_args", None) or {})


# --- the tests' in-process apps ------------------------------------------------------------

def poll_idle_queue_every(demo, seconds: float) -> None:
    """An idle queue looks for new events every `seconds` at most as often (Gradio: 1 ms)."""
    demo._queue.sleep_when_free = max(demo._queue.sleep_when_free, seconds)
