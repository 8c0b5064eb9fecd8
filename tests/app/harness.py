"""Helpers for the page tests: the app started in-process once per test run, a headless Debian chromium driven by
Playwright, and helpers to type into CodeMirror and watch every request the page makes.

One app serves every test that uses the default configuration: each page a test opens is a new
browser context, so a new Gradio session (its own state and workspace) and empty localStorage,
whatever other tests did before. Tests that need the server configured differently start their own
app with `start_app(secrets)`. The browser is started per module: Playwright's sync API keeps an
event loop running while it is open, and other tests call `asyncio.run`."""
from __future__ import annotations

import os
import socket
import weakref
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
# Debian's chromium-headless-shell when installed (the same engine without the browser's own UI, what
# Playwright itself runs headless), else Debian's chromium; TOOL_WORKSHOP_CHROMIUM names another.
CHROMIUM = next((path for path in (os.environ.get("TOOL_WORKSHOP_CHROMIUM"), "/usr/lib/chromium/chromium-headless-shell",
                                   "/usr/bin/chromium") if path and os.path.exists(path)), "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_app(secrets: dict | None = None):
    """(demo, url) of the real page served on a free loopback port."""
    import app
    from serving import gradio_patches

    demo = app.build_demo(secrets)
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    # While idle, Gradio's queue looks for new events every millisecond: about 7 % of a core for each
    # app a test run keeps open (one per worker the whole run), taken from the browser beside it.
    # Every 10 ms starts an event just as surely, at most 10 ms later.
    gradio_patches.poll_idle_queue_every(demo, 0.01)
    return demo, f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="session")
def app_url():
    """The app with the default configuration, shared by the whole run (of each worker)."""
    demo, url = start_app()
    yield url
    demo.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed (scripts/test.sh installs chromium-headless-shell)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


class Watched:
    """A page plus every URL it asked for and, when asked to keep them, every body the server
    answered (reading each body back from the browser costs about a second of CPU per page load,
    so only the tests that look at bodies pay for it)."""
    opened: weakref.WeakSet = weakref.WeakSet()    # the pages a failed test still holds (conftest.py)

    def __init__(self, context, page, keep_bodies: bool = False):
        Watched.opened.add(self)
        self.context, self.page = context, page
        self.requests: list[str] = []
        self.console: list[str] = []
        self._bodies: list[bytes] | None = [] if keep_bodies else None
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        if keep_bodies:
            page.on("response", self._keep_body)

    @property
    def bodies(self) -> list[bytes]:
        if self._bodies is None:
            raise AssertionError("this page was opened without keep_bodies=True: its bodies were not kept")
        return self._bodies

    def _keep_body(self, response):
        if STREAMS in response.url:   # read piece by piece as it arrives (record_streams)
            return
        try:
            self._bodies.append(response.body())
        except Exception:  # gone with its page, or a redirect: it has no body to keep
            pass

    def foreign_requests(self) -> list[str]:
        return [u for u in self.requests if urlparse(u).scheme in ("http", "https", "ws", "wss")
                and urlparse(u).hostname not in LOOPBACK]


@pytest.fixture(scope="module")
def served():
    """One app for a test module: (demo, url)."""
    demo, url = start_app()
    yield demo, url
    demo.close()


def api_tab(url: str):
    """A fresh browser tab as the named API sees it: its own session."""
    import ssl

    from gradio_client import Client
    return Client(url, verbose=False, ssl_verify=ssl.create_default_context())


STREAMS = "/gradio_api/queue/data"


def record_streams(context, page, bodies: list) -> None:
    """Keeps in `bodies` the text of each of the page's server-sent event streams, one growing entry
    per stream, as it arrives (Chrome's own Network.streamResourceContent). The page gets every
    message when the server sends it: a route that fetched the stream first would hold all of it
    back until the stream ended."""
    import base64

    from playwright.sync_api import Error as PlaywrightError

    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    streams: dict[str, bytearray] = {}

    def on_response(event):
        if STREAMS not in event["response"]["url"]:
            return
        stream = streams[event["requestId"]] = bytearray()
        bodies.append(stream)
        asked = {"requestId": event["requestId"]}
        try:
            stream += base64.b64decode(cdp.send("Network.streamResourceContent", asked)["bufferedData"])
            return
        except PlaywrightError:   # over already: then it is whole
            pass
        try:
            whole = cdp.send("Network.getResponseBody", asked)
        except PlaywrightError:   # the page is gone
            return
        stream += base64.b64decode(whole["body"]) if whole["base64Encoded"] else whole["body"].encode()

    def on_data(event):
        if event["requestId"] in streams and event.get("data"):
            streams[event["requestId"]] += base64.b64decode(event["data"])

    cdp.on("Network.responseReceived", on_response)
    cdp.on("Network.dataReceived", on_data)


def open_page(browser, url: str, width: int = 1280, height: int = 800, keep_bodies: bool = False,
              locale: str = "zh-CN") -> Watched:
    """A fresh context (a new session, empty storage) whose browser speaks `locale` (navigator.language
    and Accept-Language): Chinese unless a test asks for another. With `keep_bodies`, every body
    the server sends the page is kept, the event streams' included (`Watched.bodies`)."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale=locale)
    page = context.new_page()
    watched = Watched(context, page, keep_bodies)
    if keep_bodies:
        record_streams(context, page, watched.bodies)
    page.goto(url)
    page.wait_for_selector(".tw-lesson", timeout=30_000)
    return watched


def open_in(browser, url: str, lang: str, **kwargs) -> Watched:
    """A fresh page in `lang`: "en" through the link's lang=en (its labels come with the page),
    "zh" as the page is built."""
    watched = open_page(browser, url + ("?lang=en" if lang == "en" else ""), **kwargs)
    if lang == "en":
        watched.page.locator("#header").filter(has_text="Tool Use Workshop").wait_for(timeout=30_000)
    return watched


def lesson_titles() -> dict[str, str]:
    """Each lesson's title, Chinese -> English, as the page writes them."""
    from catalogue import LESSONS
    return {str(spec.title): spec.title.en for spec in LESSONS.values()}


def lesson_address(url: str, lesson: str, query: str = "") -> str:
    """The address of `lesson`'s page on the app that serves `url` (any of its pages), with `query`."""
    from urllib.parse import urljoin

    from catalogue import LESSONS
    return urljoin(url, "./" + LESSONS[lesson].path) + (("?" + query.lstrip("?")) if query else "")


def tab(page, title: str):
    """Goes to the page of the lesson titled `title` (in either language), as its link in the lesson
    list does, unless it is the page shown; returns the lesson's panel."""
    from catalogue import LESSONS

    spec = next(spec for spec in LESSONS.values() if title in (str(spec.title), spec.title.en))
    panel = page.locator("#" + spec.panel)
    if not panel.count():
        page.locator(f'#lesson-nav a[data-lesson="{spec.id}"]').click()
    panel.wait_for(state="visible", timeout=60_000)     # after a reload, behind the restore on a busy machine
    return panel


def set_code(page, editor, code: str):
    """Replaces a gr.Code's content the way a student would (no auto-indent surprises)."""
    content = editor.locator(".cm-content")
    content.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def paste_code(page, editor, code: str):
    """Replaces a gr.Code's content in one edit, as pasting over the whole selection does (set_code's
    clear-then-type is two edits in quick succession: test_workspace_browser.py checks that those
    send a bounded number of events)."""
    editor.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)


def code_text(editor) -> str:
    return editor.locator(".cm-content").inner_text()


# True once every opening or closing transition has finished (spinners loop forever and are not waited for).
TRANSITIONS_DONE = """() => document.getAnimations().every(a =>
    a.playState !== 'running' || (a.effect && a.effect.getTiming().iterations === Infinity))"""


def screenshot(page, name: str):
    """Saves what the page shows once its transitions (an accordion opening, a tab fading in) are over."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.wait_for_function(TRANSITIONS_DONE, timeout=5_000)
    except PlaywrightTimeout:
        pass  # a picture of something still moving is still a picture; it is no assertion
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)


def nav_link(page, title: str):
    """The link to the lesson titled `title` (either language) in the page's lesson list."""
    from catalogue import LESSONS

    spec = next(spec for spec in LESSONS.values() if title in (str(spec.title), spec.title.en))
    return page.locator(f'#lesson-nav a[data-lesson="{spec.id}"]')


# This run's headline once the run is over: its verdict's mark first, no ⏳ of a run under way, and
# either new words or a round that was not there before (the rounds before it are marked data-old).
HEADLINE_DONE = r"""([root, before]) => { const s = root.querySelector('.tw-status');
  const text = s ? s.innerText.trim() : '';
  const fresh = root.querySelector('.tw-protocol .tw-round:not([data-old])');
  return (text !== before || !!fresh) && /^[✅⚠️💬✂️🔁⏹🛑❌⏸✍️]/u.test(text) && !text.includes('⏳'); }"""


def run_panel(panel, question: str | None = None, timeout: int = 60_000, button=None) -> str:
    """Types `question` into the lesson `panel` (if given), clicks its 运行 (or `button`) and waits for this run's
    headline, as a student waits for the verdict; returns the headline. A run that shows none in time
    fails with what the page did show, so a failure on a busy machine says where the run stood."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if question is not None:
        panel.locator(".tw-question textarea").fill(question)
    status = panel.locator(".tw-status").first
    before = status.inner_text().strip() if status.count() else ""
    panel.locator(".tw-protocol .tw-round").evaluate_all("els => els.forEach(e => e.dataset.old = '1')")
    (button or panel.locator(".tw-run")).click()
    try:
        panel.page.wait_for_function(HEADLINE_DONE, arg=[panel.element_handle(), before], timeout=timeout)
    except PlaywrightTimeout:
        shown = status.inner_text().strip() if status.count() else "(no headline)"
        protocol = panel.locator(".tw-protocol").first
        tail = protocol.inner_text()[-600:] if protocol.count() else "(no timeline)"
        raise AssertionError(f"no headline for this run within {timeout} ms; before it: {before!r}; "
                             f"the headline now: {shown!r}; the timeline ends with: {tail!r}") from None
    return status.inner_text().strip()


class LessonPage:
    """A lesson's page in a fresh browser context, as a student has it: opened at its address in a
    language, with an example set, a question and a run, and what the page then says (its headline,
    its rounds, the protocol's text). Use it as a context manager: the context closes after."""

    WAIT = 60_000

    def __init__(self, browser, app_url: str, lesson: str, lang: str = "zh", query: str = "", **open_kwargs):
        from catalogue import LESSONS

        self.spec = LESSONS[lesson]
        params = "&".join(p for p in (query.lstrip("?"), "lang=en" if lang == "en" else "") if p)
        self.watched = open_page(browser, lesson_address(app_url, lesson, params),
                                 locale="en-US" if lang == "en" else "zh-CN", **open_kwargs)
        self.page, self.lang = self.watched.page, lang
        self.panel = self.page.locator("#" + self.spec.panel)
        self.panel.wait_for(state="visible", timeout=self.WAIT)

    def __enter__(self) -> "LessonPage":
        return self

    def __exit__(self, *exc) -> None:
        self.watched.context.close()

    def text(self, zh: str, en: str) -> str:
        return en if self.lang == "en" else zh

    def choose_example(self, name: str, tool: str) -> None:
        """Picks the example set `name` (its Chinese name) and waits for its tool `tool` in the schema."""
        from lessons.editor_panel import EXAMPLE_NAMES_EN

        shown = self.text(name, EXAMPLE_NAMES_EN.get(name, name))
        dropdown = self.panel.locator(".tw-example-set")
        if dropdown.locator("input").input_value() != shown:
            dropdown.locator("input").blur()
            dropdown.locator("input").click()
            option = self.page.get_by_role("option", name=shown).first
            option.wait_for(timeout=self.WAIT)
            option.dispatch_event("mousedown")       # Gradio's dropdown picks on mousedown
            self.page.get_by_role("option").first.wait_for(state="detached", timeout=self.WAIT)
        self.panel.locator(".tw-schema-json").filter(has_text=tool).first.wait_for(timeout=self.WAIT)

    def run(self, question: str | None = None) -> str:
        """Types `question` (if given), runs, waits for this run's headline and returns it."""
        return run_panel(self.panel, question, timeout=self.WAIT)

    def headline(self) -> str:
        return self.panel.locator(".tw-status").first.inner_text().strip()

    def rounds(self) -> list[str]:
        """Every round's text, folded ones included."""
        return self.panel.locator(".tw-protocol details.tw-round").all_text_contents()

    def protocol(self) -> str:
        return self.panel.locator(".tw-protocol").text_content()

    def go(self, lesson: str) -> None:
        """Follows the lesson list's link to `lesson` (a catalogue id), as a student moves on."""
        from catalogue import LESSONS

        self.spec = LESSONS[lesson]
        self.page.locator(f'#lesson-nav a[data-lesson="{lesson}"]').click()
        self.panel = self.page.locator("#" + self.spec.panel)
        self.panel.wait_for(state="visible", timeout=self.WAIT)
