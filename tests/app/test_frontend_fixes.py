"""The fixes to Gradio's frontend (serving/frontend_fixes.py): each applies to the installed
Gradio exactly once, the page is served the fixed files however the browser asks, the map of
events gives every component of the real page what Gradio's own search gave, the tree is built
once per load, a type shown only in a closed tab loads when that tab opens, an idle page draws
no frames, an event sent as its stream closes is answered and an idle page keeps no stream open,
and a file the fixes do not fit is served as Gradio made it."""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import threading
from pathlib import Path
from urllib.parse import urlparse

import gradio
import httpx
import pytest

from catalogue import LESSONS
from serving import frontend_fixes
from serving.frontend_fixes import FIXES, FrontendFixes, Fix, fixed

ASSETS = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"


def stock(asset: str) -> str:
    return (ASSETS / asset).read_text(encoding="utf-8")


def served(asset: str) -> str:
    """The file with its fixes made."""
    return fixed(stock(asset), [fix for fix in FIXES if fix.asset == asset])


@pytest.mark.parametrize("fix", FIXES, ids=lambda fix: fix.why)
def test_each_fix_fits_the_installed_gradio(fix):
    text = stock(fix.asset)
    assert text.count(fix.old) == fix.times, f"{fix.asset} changed: revisit this fix ({fix.why})"
    assert fix.new not in text


@pytest.mark.parametrize("accept", ["identity", "gzip", "br"])
def test_the_page_gets_the_fixed_files(app_url, accept):
    for asset in {fix.asset for fix in FIXES}:
        response = httpx.get(app_url + "assets/" + asset, headers={"Accept-Encoding": accept}, timeout=30)
        assert response.status_code == 200
        assert response.headers.get("content-encoding", "identity") == accept
        text = response.content.decode("utf-8")     # httpx decodes gzip and brotli
        assert "javascript" in response.headers["content-type"]
        for fix in (fix for fix in FIXES if fix.asset == asset):
            assert text.count(fix.new) == fix.times and fix.old not in text, (asset, accept, fix.why)
        # The rest of the file is Gradio's, unchanged.
        assert served(asset) == text
        assert "last-modified" not in response.headers


def test_a_browser_that_kept_the_stock_file_gets_the_fixed_one(app_url):
    for asset in {fix.asset for fix in FIXES}:
        url = app_url + "assets/" + asset
        fresh = httpx.get(url, timeout=30)
        ours = fresh.headers["etag"]
        assert httpx.get(url, headers={"If-None-Match": ours}, timeout=30).status_code == 304
        # The stock file's own ETag (Gradio's answer without the fixes): not ours, so the whole file.
        stock_etag = httpx.get(url, headers={"Range": "bytes=0-"}, timeout=30).headers.get("etag")
        assert stock_etag and stock_etag != ours
        again = httpx.get(url, headers={"If-None-Match": stock_etag}, timeout=30)
        assert again.status_code == 200 and again.content == fresh.content


@pytest.mark.browser
def test_the_map_of_events_matches_gradios_search_for_every_component(browser, app_url):
    # Every lesson's page (a config request names its page; without one it gets the first lesson's).
    config = {"components": {}, "dependencies": {}}
    for lesson in LESSONS.values():
        page_config = httpx.get(app_url + "config", params={"page": lesson.path}, timeout=30).json()
        config["components"].update({c["id"]: c for c in page_config["components"]})
        config["dependencies"].update({d["id"]: d for d in page_config["dependencies"]})
    config = {name: list(found.values()) for name, found in config.items()}
    search = re.search(r"find_attached_events\(e,t\)\{.*?return e\.props\.shared_props\.attached_events=n,e\}",
                       stock("core-Bdx9080F.js")).group(0)
    ids = [component["id"] for component in config["components"]]
    # And the cases the page may not have: one event triggered twice by one component, a trigger
    # with no event's name, a chained event (no component).
    first = ids[0]
    deps = config["dependencies"] + [{"targets": [[first, "click"], [first, "change"]]},
                                     {"targets": [[first, None], [None, "then"]]}]
    page = browser.new_page()
    try:
        differ = page.evaluate(
            """([deps, ids, search, build]) => {
                const gradio = eval("({" + search + "})");
                const events = eval(build)(deps);
                const theirs = id => gradio.find_attached_events({id, props: {shared_props: {}}}, deps)
                                          .props.shared_props.attached_events;
                return ids.filter(id => JSON.stringify(theirs(id)) !== JSON.stringify(events.get(id) || []))
                          .map(id => [id, theirs(id), events.get(id)]);
            }""", [deps, ids, search, frontend_fixes.EVENTS_BY_COMPONENT])
        attached = page.evaluate("([deps, build]) => eval(build)(deps).size",
                                 [config["dependencies"], frontend_fixes.EVENTS_BY_COMPONENT])
    finally:
        page.close()
    assert differ == []
    assert attached > 100     # the page's buttons, editors, uploads... do have events


@pytest.mark.browser
def test_only_changed_statuses_are_sent_and_a_cleared_one_again(browser):
    # The two fixed methods of Gradio's dependency manager, on a stand-in: four rounds of statuses.
    methods = ",".join(fix.new for fix in FIXES
                       if fix.new.startswith(("async update_loading_stati_state(", "clear_loading_status(")))
    page = browser.new_page()
    try:
        rounds = page.evaluate(
            """(methods) => {
                const manager = eval("({" + methods + "})");
                const sent = [];
                const current = {3: {status: "pending"}, 5: {status: "complete"}};
                Object.assign(manager, {loading_stati: {current, clear: id => { current[id] = {}; }},
                                        update_state_cb: (id, update) => sent.push([id, update.loading_status.status])});
                const round = async () => { sent.length = 0; await manager.update_loading_stati_state(); return [...sent]; };
                return (async () => {
                    const all = [await round(), await round()];
                    current[3] = {status: "complete"};
                    all.push(await round());
                    manager.clear_loading_status(5);
                    current[5] = {status: "complete"};
                    all.push(await round());
                    return all;
                })();
            }""", methods)
    finally:
        page.close()
    first, unchanged, one_changed, cleared = rounds
    assert sorted(first) == [[3, "pending"], [5, "complete"]]
    assert unchanged == []
    assert one_changed == [[3, "complete"]]
    assert cleared == [[5, "complete"]]


@pytest.mark.browser
def test_an_event_without_arguments_does_not_look_its_component_up(browser):
    text = served("Blocks-D1GWYZdr.js")                     # the whole method, as the page gets it
    method = text[text.index("async set_event_args("):text.index("async cancel(")]
    page = browser.new_page()
    try:
        looked_up, updates = page.evaluate(
            """(method) => {
                const manager = eval("({" + method + "})");
                const looked = [], updates = [];
                Object.assign(manager, {get_state_cb: async id => { looked.push(id); return {value: 1, label: "x"}; },
                                        update_state_cb: async (id, props) => { updates.push([id, props]); }});
                return (async () => {
                    const none = await manager.set_event_args(7, {});
                    none();
                    const undo = await manager.set_event_args(8, {label: "y"});
                    undo();
                    return [looked, updates];
                })();
            }""", method)
    finally:
        page.close()
    assert looked_up == [8]                                         # 7 had nothing to set
    assert updates == [[8, {"label": "y"}], [8, {"label": "x"}]]    # set, then put back as it was


REBUILD = next(fix for fix in FIXES if "O.reload(" in fix.old)


def reload_effect(text: str, start: str) -> str:
    """Blocks' effect that rebuilds the tree when reload_count changes: from `start` to its end."""
    begin = text.index(start)
    return text[begin:text.index("})});", begin) + len("})});")]


@pytest.mark.browser
def test_the_tree_is_built_once_at_mount_and_again_for_a_new_reload_count(browser):
    # The effect on a stand-in: Svelte runs an effect once at mount and again when what it read
    # (reload_count) changes; here each run is made by hand.
    page = browser.new_page()
    try:
        builds = [page.evaluate(
            """(effect) => {
                const runs = [];
                let reload_count = 0, built_trees = 0;
                const le = fn => { runs.push(fn); fn(); }, oe = fn => fn(), v = () => reload_count;
                const O = {reload: () => built_trees++, update_state() {}, get_state() {}, rerender() {}};
                const R = {reload() {}}, r = {app: {}};
                eval(effect);
                const at_mount = built_trees;
                reload_count = 1;
                runs.forEach(fn => fn());
                return [at_mount, built_trees];
            }""", effect) for effect in (reload_effect(stock(REBUILD.asset), REBUILD.old),
                                         reload_effect(served(REBUILD.asset), REBUILD.new))]
    finally:
        page.close()
    stock_builds, fixed_builds = builds
    assert stock_builds == [1, 2]     # Gradio's own effect rebuilt at mount what was just built
    assert fixed_builds == [0, 1]     # now only a new reload_count rebuilds


def chatbot_module() -> str:
    """The file of Gradio's Chatbot, from the map of component types in the core script."""
    found = re.search(r"chatbot:\{component:\(\)=>v\(\(\)=>import\(`\./([\w-]+\.js)`", stock("core-Bdx9080F.js"))
    return found.group(1)


@pytest.mark.browser
def test_a_type_shown_only_in_a_closed_tab_loads_when_the_tab_opens(browser, app_url):
    from tests.app.harness import open_page, tab

    watched = open_page(browser, app_url)
    try:
        page = watched.page
        panel = tab(page, "正则 ReAct")
        panel.locator(".tw-schema-status").filter(has_text="已生成").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1000)    # the page's own events on load have run
        module = chatbot_module()
        assert not any(url.endswith("/" + module) for url in watched.requests)   # six chat views, none shown
        panel.get_by_role("tab", name="对话视图").click()
        panel.locator(".tw-chat").first.wait_for(timeout=30_000)
        assert any(url.endswith("/" + module) for url in watched.requests)
    finally:
        watched.context.close()


# Counts the page's requests for an animation frame (each one is a frame Chromium draws).
COUNT_FRAMES = """(() => { const ask = window.requestAnimationFrame.bind(window); window.frames_asked = 0;
    window.requestAnimationFrame = callback => { window.frames_asked++; return ask(callback); }; })()"""


@pytest.mark.browser
def test_an_idle_page_draws_no_frames(browser, app_url):
    from tests.app.harness import tab

    context = browser.new_context(locale="zh-CN")
    context.add_init_script(COUNT_FRAMES)
    try:
        page = context.new_page()
        page.goto(app_url)
        tab(page, "正则 ReAct").locator(".tw-schema-status").filter(has_text="已生成").first.wait_for(timeout=30_000)
        # While an event of the page is pending its tracker counts seconds, one frame each; a
        # fresh server's first events may take a few seconds. Then the page goes still.
        for _ in range(15):
            before = page.evaluate("window.frames_asked")
            page.wait_for_timeout(1000)
            asked = page.evaluate("window.frames_asked") - before
            if asked < 5:
                break
    finally:
        context.close()
    assert asked < 5, f"{asked} animation frames in a second of an idle page"


async def serve(middleware, path: str, body: bytes, status: int = 200, headers=None):
    """What the middleware sends for a GET of `path` when the app behind it answers `body`."""
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": status,
                    "headers": headers or [(b"content-type", b"text/javascript; charset=utf-8"),
                                           (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    sent = []

    async def send(message):
        sent.append(message)

    await middleware(app)({"type": "http", "method": "GET", "path": path, "headers": []}, None, send)
    return sent


def run(coroutine):
    """Runs `coroutine` on a thread of its own (the browser's event loop runs on this one)."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


FAKE = Fix("x.js", old="slow()", new="fast()", why="a test")


ALSO = Fix("x.js", old="late()", new="soon()", why="a second test")


def test_a_file_the_fixes_do_not_all_fit_is_served_as_it_came(caplog):
    with caplog.at_level(logging.WARNING, logger="serving.frontend_fixes"):
        sent = run(serve(lambda app: FrontendFixes(app, [FAKE, ALSO]), "/assets/x.js", b"slow();other();"))
    assert sent[-1]["body"] == b"slow();other();"       # one fits, one does not: neither is made
    assert "served unchanged" in caplog.text and "a second test" in caplog.text
    sent = run(serve(lambda app: FrontendFixes(app, [FAKE, ALSO]), "/assets/x.js", b"a();slow();late();"))
    assert sent[-1]["body"] == b"a();fast();soon();"
    assert dict(sent[0]["headers"])[b"content-length"] == b"18"


def test_the_app_says_at_start_when_a_file_is_missing(caplog):
    with caplog.at_level(logging.WARNING, logger="serving.frontend_fixes"):
        FrontendFixes(lambda scope, receive, send: None, [FAKE])
    assert "x.js is missing" in caplog.text


def test_other_files_and_other_answers_pass_untouched():
    other = run(serve(lambda app: FrontendFixes(app, [FAKE]), "/assets/y.js", b"slow();"))
    assert other[-1]["body"] == b"slow();"
    missing = run(serve(lambda app: FrontendFixes(app, [FAKE]), "/assets/x.js", b"slow();", status=404))
    assert missing[0]["status"] == 404 and missing[-1]["body"] == b"slow();"
    encoded = run(serve(lambda app: FrontendFixes(app, [FAKE]), "/assets/x.js", b"slow();",
                        headers=[(b"content-encoding", b"br")]))
    assert encoded[-1]["body"] == b"slow();"


class LateCloseProxy:
    """A loopback proxy in front of the app that hands on the end of each of the page's event streams
    (the server's close_stream message) `delay` seconds late, as a busy machine may: an event the
    page sends just as another ends is then answered while its stream still looks open."""

    def __init__(self, app_url: str, delay: float):
        self.target = urlparse(app_url).port
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> "LateCloseProxy":
        self.thread.start()
        server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self.connect, "127.0.0.1", 0), self.loop)
        self.server = server.result(timeout=10)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/"
        return self

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    async def stop(self) -> None:
        self.server.close()
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    async def connect(self, reader, writer) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)
        await asyncio.gather(self.pump(reader, upstream_writer, late=False),
                             self.pump(upstream_reader, writer, late=True), return_exceptions=True)

    async def pump(self, source, sink, late: bool) -> None:
        try:
            while data := await source.read(65536):
                end = data.find(b'"close_stream"') if late else -1
                if end >= 0:
                    cut = max(data.rfind(b"data:", 0, end), 0)    # what came before the message goes on now
                    sink.write(data[:cut])
                    await sink.drain()
                    await asyncio.sleep(self.delay)
                    data = data[cut:]
                sink.write(data)
                await sink.drain()
        finally:
            sink.close()


@pytest.mark.browser
def test_an_event_sent_as_its_stream_closes_gets_its_answer(browser, app_url):
    """The step after a fork draws the new branch: sent just as the fork's stream closes, it is
    answered all the same (without the fix the page waited for it forever, with no error)."""
    from tests.app.harness import LessonPage, pick_fork_point, run_panel, wait_branch

    with LateCloseProxy(app_url, delay=0.5) as proxy, LessonPage(browser, proxy.url, "sessions", height=2600) as lesson:
        lesson.panel.locator(".tw-schema-json").filter(has_text="get_weather").first.wait_for(timeout=60_000)
        assert lesson.run("北京今天天气怎么样？").startswith("✅")
        wait_branch(lesson.panel, 1)
        pick_fork_point(lesson.page, lesson.panel, 3).fill("北京今天大雨，气温 18°C")
        assert run_panel(lesson.panel, button=lesson.panel.locator(".tw-fork"), timeout=60_000).startswith("✍️")
        wait_branch(lesson.panel, 2)


@pytest.mark.browser
def test_an_event_whose_end_came_before_its_id_is_not_counted_as_waiting(browser):
    # The client's code that hands on such an event's messages once its id is known, on stand-ins.
    fix = next(fix for fix in FIXES if fix.why == "an event whose end came before its id is not counted as waiting")
    page = browser.new_page()
    try:
        counted = [page.evaluate("""(code) => {
            const E = 'e1', y = new Set(), v = {}, handed = [];
            const g = {e1: [{msg: 'process_starts'}, {msg: 'process_completed'}]};
            const t = (message) => handed.push(message.msg);
            eval(code.replace(/,$/, ''));
            return [y.size, handed, E in g, typeof v[E]];
        }""", code) for code in (fix.old, fix.new)]
    finally:
        page.close()
    messages = ["process_starts", "process_completed"]
    assert counted == [[1, messages, False, "function"], [0, messages, False, "function"]]


@pytest.mark.browser
def test_an_idle_page_keeps_no_event_stream_open(browser, app_url):
    """Once the page's events are answered the server ends their stream, and the page opens no
    other: an event whose end came before its id counts as answered."""
    from tests.app.harness import LessonPage, STREAMS

    with LessonPage(browser, app_url, "function_calling") as lesson:
        open_streams = set()
        lesson.page.on("request", lambda r: open_streams.add(r) if STREAMS in r.url else None)
        for ended in ("requestfinished", "requestfailed"):
            lesson.page.on(ended, lambda r: open_streams.discard(r))
        assert lesson.run("北京今天天气怎么样？").startswith("✅")
        for _ in range(300):
            lesson.page.wait_for_timeout(100)
            if not open_streams:
                break
        assert not open_streams, [r.url for r in open_streams]
