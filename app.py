"""工具调用教学工坊: assembles the lessons' pages and launches them.

Order matters. Served with `python app.py`, the process first starts itself again once
with jemalloc, when installed (see `restart_with_jemalloc`). API keys are then moved out
of the environment (and the process is made non-dumpable) before gradio is imported, so
no thread, helper or child process that gradio starts can ever see them. Only then is
gradio imported, with telemetry off.
"""
import dataclasses
import gc
import importlib
import os
import sys
import threading
import weakref

JEMALLOC = ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2")
# Freed pages go back to the system within a second, from jemalloc's own thread. No
# per-thread caches: a cache keeps freed objects for its thread, and each one pins the page
# it sits on; the queue's idle worker threads kept several MB that way after a class. All
# Python allocations hold the GIL anyway, so the caches saved little.
JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,tcache:false"


def restart_with_jemalloc(environ=os.environ, execve=os.execve):
    """A server that lives through a day of classes must give back what each class used.
    Python's own allocator keeps a 1 MiB arena as long as one object in it lives: after 200
    tabs had expired the server stayed about 30% above its start, whatever was freed. With
    every allocation in jemalloc (PYTHONMALLOC=malloc) freed pages are returned: about +10%,
    and the same level after each further class. Set TOOL_WORKSHOP_ALLOCATOR=python to
    keep Python's allocator; without the library (packages.txt) nothing changes."""
    if environ.get("TOOL_WORKSHOP_ALLOCATOR", "jemalloc") != "jemalloc" or "jemalloc" in environ.get("LD_PRELOAD", ""):
        return
    library = next((path for path in JEMALLOC if os.path.exists(path)), None)
    if library is None:
        return
    env = dict(environ, LD_PRELOAD=library, PYTHONMALLOC="malloc",
               MALLOC_CONF=environ.get("MALLOC_CONF", JEMALLOC_CONF))
    execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def thread_cache(enabled: bool | None = None) -> bool | None:
    """jemalloc's cache of freed objects for the calling thread: turned on or off when `enabled`
    is given; returns whether it is on (None without jemalloc). JEMALLOC_CONF turns the caches
    off for the server's threads; the main thread has one while it imports and builds the page
    (millions of small objects: about a second less of `python app.py`'s start) and gives it
    back before the page is served."""
    import ctypes

    mallctl = getattr(ctypes.CDLL(None), "mallctl", None)    # only when jemalloc is loaded
    if mallctl is None:
        return None
    if enabled is not None:
        value = ctypes.c_bool(enabled)
        mallctl(b"thread.tcache.enabled", None, None, ctypes.byref(value), ctypes.c_size_t(ctypes.sizeof(value)))
    state, size = ctypes.c_bool(), ctypes.c_size_t(ctypes.sizeof(ctypes.c_bool))
    if mallctl(b"thread.tcache.enabled", ctypes.byref(state), ctypes.byref(size), None, ctypes.c_size_t(0)) != 0:
        return None
    return state.value


if __name__ == "__main__":
    restart_with_jemalloc()
    thread_cache(True)

from import_paths import use_project_paths  # noqa: E402

use_project_paths()      # code/ first: `import events` is the course's file, whatever else is installed

import sandbox  # noqa: E402

SERVER_SECRETS = sandbox.seal_secrets()    # sandbox.sealing.SECRET_NAMES
from serving import gradio_patches  # noqa: E402

# Gradio's environment knobs (telemetry off, a short event history, no matplotlib search) are
# read when gradio is imported, and its import skips rewriting its own type stubs;
# gradio_patches says what each one is for.
gradio_patches.set_environment()
gradio_patches.skip_stub_rewrite()
gradio_patches.check_version()

from types import MappingProxyType  # noqa: E402

import gradio as gr  # noqa: E402

from endpoints import api  # noqa: E402
from lessons import code_box, projector  # noqa: E402
from runs import backend  # noqa: E402
from serving import expiry  # noqa: E402
from access import tab_lifetime  # noqa: E402
from catalogue import LESSONS, ROOT  # noqa: E402
from memory import workspace_memory  # noqa: E402
from serving import page_compression  # noqa: E402
from memory.browser_memory import BrowserMemory  # noqa: E402
from lessons import deep_links  # noqa: E402
from lessons.deep_links import DeepLinks  # noqa: E402
from lessons import lesson_nav  # noqa: E402
from lessons.lesson_nav import LessonNav  # noqa: E402
from lessons import exercise_panel  # noqa: E402
from lessons.exercise_panel import ExercisePanel  # noqa: E402
from lessons.projector import Projector  # noqa: E402
from serving.page_events import SILENT, joined  # noqa: E402
from lessons.settings_panel import SettingsPanel  # noqa: E402
import i18n  # noqa: E402
from i18n import tr  # noqa: E402
from serving import page_language  # noqa: E402

SERVER_SECRETS = MappingProxyType(dict(SERVER_SECRETS))
PORT = int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
# Events of one kind that may run at once (a classroom of ~40 clicking now and then).
CONCURRENCY_LIMIT = int(os.environ.get("TOOL_WORKSHOP_CONCURRENCY", "12"))
# Hardened workers kept ready: a classroom's burst of runs must not wait for forks. With 200
# students (about 20 tool runs a second) four ran out now and then, and a run then waited
# for a fork on a busy machine (up to 0.4 s).
SANDBOX_POOL_SIZE = int(os.environ.get("TOOL_WORKSHOP_POOL_SIZE", "6"))
MAX_UPLOAD = "8mb"
# Gradio's copies of exported and uploaded files: checked hourly, removed after two hours.
DELETE_CACHE = (3600, 7200)

# System fonts only: the page loads nothing from the internet.
THEME = gr.themes.Default(
    primary_hue="indigo",
    font=["system-ui", "-apple-system", "Segoe UI", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei",
          "Noto Sans CJK SC", "Noto Sans", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono", "Noto Sans Mono CJK SC",
               "DejaVu Sans Mono", "monospace"],
)
CSS = """
.gradio-container { max-width: 1440px !important; }
#header h1 { margin-bottom: 0.1em; }
#sandbox-notice { font-size: 0.85em; color: var(--body-text-color-subdued); }
.tw-status p { margin: 0.2em 0; }
/* A label over a code box wraps before the box's icons (copy, download) instead of running under them. */
.block:has(> .icon-button-wrapper.top-panel) > label[data-testid="block-label"] { margin-right: 5.5em; }
/* A dropdown's arrow is drawn over the right end of its text box: the text stops before it (with …). */
.secondary-wrap:has(> .icon-wrap) > input { padding-right: calc(var(--size-5) * 2); text-overflow: ellipsis; }
.tw-ws-tree .wrap { flex-direction: column; align-items: stretch; gap: 2px !important; }
.tw-ws-tree label { font-family: var(--font-mono); font-size: 0.88em; padding: 3px 8px !important; }
@media (max-width: 640px) {
  .gradio-container { padding: 4px !important; }
  #header h1 { font-size: 1.4em; }
  button[role=tab] { padding-left: 6px !important; padding-right: 6px !important; font-size: 0.88em !important; }
}
""" + projector.CSS + lesson_nav.CSS + exercise_panel.CSS + code_box.CSS
# Per page: the schema panels whose untouched example's schema comes with the page (see launch).
FIRST_SCHEMAS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# Per language: the page's <html lang> and its title (the browser's tab).
PAGE_LANGUAGE = {"zh": ("zh-CN", "工具调用教学工坊"), "en": ("en", "Tool Use Workshop")}
# Names no lesson: the catalogue is the list, and a lesson added there needs no edit here.
HEADER = tr("# 🧰 工具调用教学工坊\n"
            "每一课一页，按课程的顺序：改动工具或问题，一步一步看清模型和工具之间到底传了什么。",
            "# 🧰 Tool Use Workshop\n"
            "One page per lesson, in the course's order: change the tools or the question and see, step by step, "
            "exactly what passes between the model and the tools. The course is Chinese: the offline model and the "
            "course's tools answer in Chinese.")


def sandbox_notice() -> str:
    """Whether student code runs sandboxed, in the tab's language."""
    status = backend.sandbox_status()
    return i18n.pick(status["notice"], status.get("notice_en") or status["notice"])


def build_demo(secrets=None) -> gr.Blocks:
    """Every lesson's page: the catalogue's ROOT lesson at /, each other one at its own address (catalogue `path`).
    A page carries only its own lesson, with the chrome every page has (header, lesson list,
    projector mode, the link banner, browser memory, model settings)."""
    secrets = SERVER_SECRETS if secrets is None else MappingProxyType(dict(secrets))
    gradio_patches.install_lean_session_records()   # each tab's record in Gradio: 0.4 MB less
    gradio_patches.install_range_messages()         # a number out of its box's range: the page says so
    pages = []
    # Its config and app are made once, by launch (gradio_patches.page_blocks).
    with gradio_patches.page_blocks(title=PAGE_LANGUAGE["zh"][1], delete_cache=DELETE_CACHE) as demo:
        # Named endpoints first: their names must not be taken by the page's own handlers
        # (three lessons each have a private `export`).
        api.register(secrets)
        pages.append(build_page(demo, LESSONS[ROOT], secrets))
    for lesson in LESSONS.values():
        if lesson.id != ROOT:
            with demo.route(lesson.label(), lesson.path, show_in_navbar=False):
                pages.append(build_page(demo, lesson, secrets))
    page_language.wire(demo)   # last: every label of every page is built
    # A lesson works as soon as its page is drawn: its schema arrives with the page.
    panels = FIRST_SCHEMAS[demo] = [page.schema for page in pages if page.schema is not None]
    gradio_patches.set_page_values(demo, lambda request: {
        c: v for panel in panels for c, v in panel.first.get(i18n.of_request(request), {}).items()})
    gradio_patches.set_page_language(demo, lambda request: PAGE_LANGUAGE[i18n.of_request(request)])
    return demo


def build_page(demo: gr.Blocks, lesson, secrets):
    """One lesson's page, inside its route of `demo`; returns the built lesson (a LessonPage)."""
    gr.Markdown(HEADER, elem_id="header")
    nav = LessonNav(lesson)
    present = Projector()
    notice = gr.Markdown(elem_id="sandbox-notice")
    links = DeepLinks()   # the banner of a link's notes and the 复制本页链接 button
    memory = BrowserMemory()
    settings = SettingsPanel(secrets)
    page = importlib.import_module(lesson.page).build(settings)
    # The notice comes back with the lesson's own first round trip (on_load) instead of one of its
    # own: a second request at that moment made the server answer both later.
    shown = (lambda values, request: {notice: sandbox_notice()}, set(), [notice])
    page = dataclasses.replace(page, also_on_load=joined(page.also_on_load, shown) if page.also_on_load else shown)
    exercises = ExercisePanel(lesson, page, settings)     # at the end of the page: its catalogue's exercises
    # What the browser kept is put back first, so the schema panel shows the student's source and
    # a workspace lesson's tree the student's files (kept once for the lessons with a workspace).
    if page.run.workspace is not None:
        workspace_memory.keep(memory, [page])
    elif page.keep_shared is not None:
        page.keep_shared(memory)
    restored = memory.wire(demo, settings, [page], replaced=lambda request: deep_links.replaced_lesson(request, lesson.id))
    settings.wire_status()
    page.wire_refresh(demo, restored=page.name in restored)     # its run buttons work from then on
    # A link's scenario is applied after the lesson's restore: the link wins.
    links.wire(demo, page, restored, settings, memory)
    present.wire(demo)
    nav.wire(demo)
    exercises.wire(demo)
    demo.load(None, None, None, js=gradio_patches.PAGE_LANG_JS, **SILENT)
    return page


def warm_up(demo: gr.Blocks, done: threading.Event | None = None) -> None:
    """Starts the sandbox's worker pool, then has it make the schema of each untouched example
    (charged to nobody), which every page then shows from the start. Sets `done` after: from then
    on the page is the same for every visitor of a language, and kept (serving/page_cache.py)."""
    try:
        sandbox.start()
        for panel in FIRST_SCHEMAS.get(demo, ()):
            panel.prepare()
    finally:
        if done is not None:
            done.set()


def default_host(environ=os.environ) -> str:
    """0.0.0.0 on a Hugging Face Space (SPACE_ID) or a ModelScope 创空间 (MODELSCOPE_ENVIRONMENT=studio)."""
    hosted = environ.get("SPACE_ID") or environ.get("MODELSCOPE_ENVIRONMENT") == "studio"
    return "0.0.0.0" if hosted else "127.0.0.1"


def launch(demo=None, *, server_name=None, server_port=PORT, prevent_thread_lock=False, quiet=False):
    """Serves the page: loopback locally, 0.0.0.0 on a Hugging Face Space or a ModelScope 创空间."""
    host = server_name or default_host()
    sandbox.configure(server_name=host, pool_size=SANDBOX_POOL_SIZE,
                      schema_methods={"naive": "naive_schema:naive_function_schema",
                                      "mcp": "mcp_schema_diff:mcp_views"})
    demo = demo or build_demo()
    gradio_patches.queue_without_app(demo, default_concurrency_limit=CONCURRENCY_LIMIT)
    gradio_patches.install_page_config()   # the page's config without the API's descriptions, with first values
    # Everything built so far (gradio, the SDKs, the page's components) lives as long as the
    # server. Frozen, it is out of the collector's sight: a full collection then walks only
    # what requests created, instead of pausing every request for ~250 ms every half minute.
    # Collected before the server starts: afterwards the collection (0.2-0.9 s on a busy machine)
    # held back the first pages.
    gc.collect()
    gc.freeze()
    # Warm the sandbox's worker pool while the server starts, so the first schema is quick.
    warmed = threading.Event()
    threading.Thread(target=warm_up, args=(demo, warmed), name="sandbox-warmup", daemon=True).start()
    demo.launch(server_name=host, server_port=server_port, ssr_mode=False, share=False, theme=THEME, css=CSS,
                prevent_thread_lock=True, quiet=quiet, max_file_size=MAX_UPLOAD, show_error=True,
                state_session_capacity=tab_lifetime.max_sessions(),
                app_kwargs=page_compression.app_kwargs(keep_pages_when=warmed.is_set))
    gc.freeze()     # what launch made (the app and its routes) lives as long, too
    if threading.current_thread() is threading.main_thread():
        thread_cache(False)
    # Forget idle tabs (their state, Gradio's record of them, old exports) after the session TTL.
    expiry.start(demo)
    expiry.leave_full_collections_to_the_sweeps()
    if not prevent_thread_lock:
        demo.block_thread()
    return demo


def main():
    launch()


if __name__ == "__main__":
    main()
