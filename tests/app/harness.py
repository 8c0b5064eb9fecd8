"""Helpers for the page tests: the app started in-process once per test run, a headless Debian chromium driven by
Playwright, and helpers to type into CodeMirror and watch every request the page makes. What several test
modules do alike (run a lesson and wait for its headline, pick from a dropdown, read localStorage, ask a
workspace lesson) is here too, once: no page test module imports another (tests/test_layers.py).

One app serves every test that uses the default configuration: each page a test opens is a new
browser context, so a new Gradio session (its own state and workspace) and empty localStorage,
whatever other tests did before. Tests that need the server configured differently start their own
app with `start_app(secrets)`. The browser is started per module: Playwright's sync API keeps an
event loop running while it is open, and other tests call `asyncio.run`."""
from __future__ import annotations

import json
import os
import socket
import weakref
from pathlib import Path
from urllib.parse import quote, urlencode, urlparse

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


def stream_answered(page, bodies: list, event_ids: list[str], timeout: int = 60_000) -> None:
    """Waits until the page's event streams (kept in `bodies` by record_streams) carried the end of each
    of `event_ids`: the page has been sent their answers, whatever it shows of them."""
    def answered(event_id: str) -> bool:
        for body in list(bodies):
            for line in bytes(body).decode("utf-8", "replace").splitlines():
                if line.startswith("data:") and event_id in line:
                    message = json.loads(line[5:])
                    if message.get("event_id") == event_id and message.get("msg") == "process_completed":
                        return True
        return False

    for _ in range(max(1, timeout // 50)):
        if all(answered(event_id) for event_id in event_ids):
            return
        page.wait_for_timeout(50)
    missing = [event_id for event_id in event_ids if not answered(event_id)]
    assert not missing, f"no answer to events {missing} on the page's event streams within {timeout} ms"


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


def titled(title: str):
    """The catalogue's lesson titled `title` (in either language)."""
    from catalogue import LESSONS

    return next(spec for spec in LESSONS.values() if title in (str(spec.title), spec.title.en))


def titled_address(url: str, title: str) -> str:
    """The address of the page of the lesson titled `title` (either language) on the app that serves `url`:
    a test about that lesson opens it there, one page load, not the first lesson's and then this one's."""
    return lesson_address(url, titled(title).id)


def tab(page, title: str):
    """Goes to the page of the lesson titled `title` (in either language), as its link in the lesson
    list does, unless it is the page shown; returns the lesson's panel."""
    spec = titled(title)
    panel = page.locator("#" + spec.panel)
    if not panel.count():
        page.locator(f'#lesson-nav a[data-lesson="{spec.id}"]').click()
    panel.wait_for(state="visible", timeout=60_000)     # after a reload, behind the restore on a busy machine
    return panel


# The lesson's run button works: what the browser kept is back (LessonPage.on_load). A run area in a tab
# not shown (the evaluation lesson's) is not drawn: that page is taken as it is.
READY = "root => { const b = root.querySelector('button.tw-run, .tw-run button'); return !b || !b.disabled; }"


def ready(panel, timeout: int = 60_000):
    """Waits, as a student does before reading or using a lesson's page, until it has put back what the
    browser kept and shows what follows from it (its run button works: READY); returns the panel."""
    panel.page.wait_for_function(READY, arg=panel.element_handle(), timeout=timeout)
    return panel


def set_number(box, value: str, timeout: int = 60_000) -> None:
    """Types `value` into a number box (a slider's too) and presses Enter, then waits, as a student
    looks before going on, until the box shows it: a run started before reads the value the box holds."""
    from playwright.sync_api import expect

    box.fill(value)
    box.press("Enter")
    expect(box).to_have_value(value, timeout=timeout)


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


# The code a read-only box shows (lessons/code_box.py): its <pre>, whose text is the code itself.
CODE_SHOWN = ".tw-codebox-code"


def code_text(box) -> str:
    """The code in a box: a read-only box's <pre>, or the text of a gr.Code editor."""
    shown = box.locator(CODE_SHOWN)
    if shown.count():
        return shown.first.text_content()
    return box.locator(".cm-content").inner_text()


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


# Each link of the lesson list as its lesson's label: the section and the title, without the row of exercise
# marks (✓ / ·) the page draws after it when it has loaded (memory/exercise_progress.py).
LESSON_LABELS = """els => els.map(a => { const c = a.cloneNode(true);
  c.querySelectorAll('.tw-exercise-marks').forEach(m => m.remove());
  return c.textContent.replace(/\\s+/g, ' ').trim(); })"""


def lesson_labels(page) -> list[str]:
    """The lesson list's labels, in order (LESSON_LABELS)."""
    return page.locator("#lesson-nav a").evaluate_all(LESSON_LABELS)


def nav_link(page, title: str):
    """The link to the lesson titled `title` (either language) in the page's lesson list."""
    spec = titled(title)
    return page.locator(f'#lesson-nav a[data-lesson="{spec.id}"]')


# The run area's mark (lessons/run_views.py: every drawing of the run changes it): a drawing since `before`.
RUN_MARK = "root => { const m = root.querySelector('.tw-run-mark'); return m ? m.textContent.trim() : null; }"
# This run's headline once the run is over: the run area drawn since the click (its mark is not the one
# before it: a headline that reads as the last run's is this run's all the same), its verdict's mark
# first, no ⏳ of a run under way. A run that fails ends so too: with its ❌ headline.
HEADLINE_DONE = r"""([root, before]) => { const m = root.querySelector('.tw-run-mark');
  const s = root.querySelector('.tw-status'); const text = s ? s.innerText.trim() : '';
  return !!m && m.textContent.trim() !== before && /^[✅⚠️💬✂️🔁⏹🛑❌⏸✍️📨]/u.test(text) && !text.includes('⏳'); }"""


def run_panel(panel, question: str | None = None, timeout: int = 60_000, button=None) -> str:
    """Types `question` into the lesson `panel` (if given), clicks its 运行 (or `button`) and waits for this run's
    headline, as a student waits for the verdict; returns the headline. A run that shows none in time
    fails with what the page did show, so a failure on a busy machine says where the run stood."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # As a student does: the lesson ready first (its restore, which may put back a kept question, is done and
    # the run button works), however long a busy machine takes, not a click's 30 s on a disabled button.
    ready(panel, timeout)
    if question is not None:
        panel.locator(".tw-question textarea").fill(question)
    status = panel.locator(".tw-status").first
    before = status.inner_text().strip() if status.count() else ""
    mark = panel.evaluate(RUN_MARK)
    assert mark is not None, "this panel has no run area (no .tw-run-mark)"
    (button or panel.locator(".tw-run")).click()
    try:
        panel.page.wait_for_function(HEADLINE_DONE, arg=[panel.element_handle(), mark], timeout=timeout)
    except PlaywrightTimeout:
        shown = status.inner_text().strip() if status.count() else "(no headline)"
        protocol = panel.locator(".tw-protocol").first
        tail = protocol.inner_text()[-600:] if protocol.count() else "(no timeline)"
        drawn = "drawn since the click" if panel.evaluate(RUN_MARK) != mark else "not drawn since the click"
        raise AssertionError(f"no headline for this run within {timeout} ms (the run area was {drawn}); before it: "
                             f"{before!r}; the headline now: {shown!r}; the timeline ends with: {tail!r}") from None
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
        self.wait_restored()

    def wait_restored(self) -> None:
        """Waits until the page has put back what the browser kept (its run button works from then
        on): a question typed earlier would be replaced by the kept one, and the kept last run's
        steps would appear after a test had marked the steps on screen as old."""
        self.panel.wait_for(state="visible", timeout=self.WAIT)
        ready(self.panel, self.WAIT)

    def __enter__(self) -> "LessonPage":
        return self

    def __exit__(self, *exc) -> None:
        self.watched.context.close()

    def text(self, zh: str, en: str) -> str:
        return en if self.lang == "en" else zh

    def choose_example(self, name: str, tool: str, timeout: int | None = None) -> None:
        """Picks the example set `name` (its Chinese name): `use_examples` on this page, in its language."""
        from lessons.editor_panel import EXAMPLE_NAMES_EN

        pick_example(self.page, self.panel, self.text(name, EXAMPLE_NAMES_EN.get(name, name)), tool,
                     timeout or self.WAIT)

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
        self.wait_restored()


# ---------------------------------------------------------------- shared by several test modules

WAIT = 60_000


class Language:
    """The language of the page the running class uses (set when its page opens)."""
    lang = "zh"


LANGUAGE = Language()


# Each claim is performed in Chinese; its English is checked as text (test_english_claims.py).
PERFORMED = ["zh"]


def T(zh: str, en: str) -> str:
    """What the page shows: the Chinese text, or its English on an English page."""
    return en if LANGUAGE.lang == "en" else zh


def choose(page, dropdown, name):
    dropdown.locator("input").blur()
    dropdown.locator("input").click()
    option = page.get_by_role("option", name=name).first
    option.wait_for(timeout=WAIT)
    option.dispatch_event("mousedown")   # Gradio's dropdown picks on mousedown; the list may still be moving
    page.get_by_role("option").first.wait_for(state="detached", timeout=WAIT)


def pick_fork_point(page, panel, number: int):
    """Picks message `number` of the sessions page to fork from and waits for its text to fill the box (the
    server's reply to the pick), as a person would before typing over it; returns the box."""
    box = panel.locator(".tw-fork-text textarea")
    box.fill("")
    choose(page, panel.locator(".tw-fork-entry"), f"{number}. ")
    page.wait_for_function("(box) => box.value.trim() !== ''", arg=box.element_handle(), timeout=WAIT)
    return box


def wait_branch(panel, number: int, timeout: int = WAIT) -> None:
    """Waits until the sessions page's panel shows branch `number`; a timeout says what it showed instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        panel.locator(f".tw-session-tree .tw-branch[data-number='{number}']").wait_for(timeout=timeout)
    except PlaywrightTimeout:
        tree = panel.locator("div.prose.tw-session-tree").inner_text()[:600]
        note = panel.locator(".prose.tw-session-note").inner_text()
        headline = panel.locator(".tw-status").first.inner_text()
        raise AssertionError(f"branch {number} not shown within {timeout} ms; the panel shows {tree!r}, its note "
                             f"{note!r}, the headline {headline!r}") from None


def storage(page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")


def wait_stored(page, text: str, present: bool = True, key: str = ""):
    """Waits until some localStorage value (or the one under `key`) does, or does not, contain `text`."""
    page.wait_for_function(
        "([t, present, key]) => Object.entries(localStorage).some(([k, v]) => (!key || k === key) && v.includes(t))"
        " === present", arg=[text, present, key], timeout=WAIT)


PROVIDER_LABELS = {"offline": "离线演示模型", "glm": "智谱 GLM", "openai": "OpenAI 兼容接口"}
# The key line when a run would have no key (lessons/settings_panel.key_status). Not «需要密钥» alone: the
# offline model's and a local service's lines say «不需要密钥», and a fresh page shows the offline one.
KEY_NEEDED = "需要密钥：在上面的框里输入后按回车"


def pick_provider(page, provider: str, secrets: dict | None = None):
    """Picks a provider by hand in the open 模型设置 and waits, as a student does, until the model box
    shows that provider's default: a model typed before would be replaced by it."""
    from playwright.sync_api import expect

    from access.clients import default_model

    page.locator("#provider input").click()
    page.get_by_role("option", name=PROVIDER_LABELS[provider]).click()
    expect(page.locator("#model input")).to_have_value(default_model(provider, secrets), timeout=WAIT)


def choose_openai(page, base_url: str):
    page.get_by_text("⚙️ 模型设置").click()
    pick_provider(page, "openai")
    page.locator("#base-url textarea, #base-url input").first.fill(base_url)
    model = page.locator("#model input")
    model.fill("offline-rule-model")
    model.press("Enter")
    page.locator("#key-status").filter(has_text=KEY_NEEDED).wait_for(timeout=WAIT)


def type_key(page, key: str):
    box = page.locator("#api-key input")
    box.fill(key)
    box.press("Enter")
    page.locator("#key-status").filter(has_text="已保存你输入的密钥").wait_for(timeout=WAIT)


# Records the text of every toast the page shows, however briefly.
WATCH_TOASTS = """() => {
  window.__toasts = [];
  const seen = new WeakSet();
  const look = () => document.querySelectorAll('[data-testid="toast-body"]').forEach((toast) => {
    if (!seen.has(toast)) { seen.add(toast); window.__toasts.push(toast.innerText); }
  });
  new MutationObserver(look).observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


def watch_toasts(context) -> None:
    """Records the toasts of every page the context opens from now on."""
    context.add_init_script("document.addEventListener('DOMContentLoaded', () => (" + WATCH_TOASTS + ")())")


def toasts(page) -> list[str]:
    return page.evaluate("() => window.__toasts")


def link(app_url: str, lesson: str | None = None, **params) -> str:
    """A lesson's link: its page's address with the scenario's parameters. A lesson that is not in the
    catalogue is written the older way (`/?lesson=…`), where the first page says it is unknown."""
    from catalogue import LESSONS

    if lesson in LESSONS:
        return lesson_address(app_url, lesson, urlencode(params, quote_via=quote))
    params = {"lesson": lesson, **params} if lesson is not None else params
    return app_url + "?" + urlencode(params, quote_via=quote)


def banner(page):
    return page.locator("#deep-link-note")


def visible_panel(page) -> str:
    return page.evaluate("""() => ["tab-react", "tab-registry", "tab-function-calling", "tab-workspace",
        "tab-permissions"].find((id) => { const p = document.getElementById(id); return p && p.offsetParent !== null; })""")


def lesson(page, title: str):
    """Goes to the lesson titled `title` (its Chinese title) as the page writes it."""
    return tab(page, title_shown(title))


def title_shown(title: str) -> str:
    """The lesson's tab title as the page writes it (`title` is the Chinese one)."""
    return T(title, lesson_titles()[title])


def workspace_lesson(page, title: str):
    """A workspace lesson's page (`title` is its Chinese title), once its workspace is shown."""
    panel = tab(page, title_shown(title))
    panel.locator(".tw-ws-tree").filter(has_text="notes.md").first.wait_for(timeout=WAIT)
    return panel


def ask(panel, question: str):
    panel.get_by_role("tab", name=T("协议时间线", "Timeline")).click()
    panel.locator(".tw-question textarea").fill(question)
    panel.locator(".tw-protocol .tw-final").evaluate_all("els => els.forEach(el => el.dataset.old = '1')")
    panel.locator(".tw-run").click()


def wait_final(panel) -> str:
    final = panel.locator(".tw-protocol .tw-final:not([data-old])").first
    final.first.wait_for(timeout=WAIT)
    return final.inner_text()


def show_file(panel, path: str, expected: str) -> None:
    """Selects a file in the tree and waits for `expected` in the content shown."""
    panel.locator(".tw-ws-tree label").filter(has_text=path).first.click()
    panel.locator(f".tw-ws-file {CODE_SHOWN}").filter(has_text=expected).first.wait_for(timeout=WAIT)


def calls(panel) -> list[str]:
    """The name of each tool call in the timeline (earlier rounds are folded: text_content)."""
    return [c.locator("b").first.text_content() for c in panel.locator(".tw-protocol .tw-call").all()]


def wait_ask(panel) -> str:
    box = panel.locator(".tw-ask").first
    box.wait_for(state="visible", timeout=WAIT)
    return code_text(panel.locator(".tw-ask-preview"))


def rounds(panel) -> list[str]:
    """Every round's text, folded ones included."""
    return panel.locator(".tw-protocol details.tw-round").all_text_contents()


def example_name(name: str) -> str:
    """An example set's name as the page writes it (`name` is the Chinese one)."""
    from lessons.editor_panel import EXAMPLE_NAMES_EN

    return T(name, EXAMPLE_NAMES_EN[name])


def use_examples(page, panel, name: str, tool: str, timeout: int = WAIT):
    """Picks the example set `name` (its Chinese name) in the editor: see `pick_example`."""
    pick_example(page, panel, example_name(name), tool, timeout)


def pick_example(page, panel, shown: str, tool: str, timeout: int = WAIT):
    """Picks the example set the dropdown shows as `shown`, and returns once the schema drawn from its
    source is on screen, with its tool `tool`: the page's editor then holds that source. Picking the set
    already shown would still reset the question, and that reply may land after the next fill."""
    from playwright.sync_api import expect

    dropdown = panel.locator(".tw-example-set")
    code = panel.locator(f".tw-schema-json {CODE_SHOWN}").first
    if dropdown.locator("input").input_value() != shown:
        before = code.text_content()
        choose(page, dropdown, shown)
        # `tool` may be in the set shown before too (天气 and its vaguely described twin): the schema
        # must change first, compared as text content, which is what the expectation reads.
        expect(code).not_to_have_text(before, timeout=timeout)
    panel.locator(".tw-schema-json").filter(has_text=tool).first.wait_for(timeout=timeout)
