"""Every Gradio internal that serving/gradio_patches.py relies on, pinned against the real server:
when an upgrade of Gradio moves one of them, a test here fails (the version check says so first).
Functional checks; no timing asserts."""
from __future__ import annotations

import html
import importlib.util
import os
import re
import sys
import time
import warnings
from pathlib import Path

import gradio as gr
import pytest

import sandbox
from catalogue import LESSONS
from runs import backend
from serving import expiry, gradio_patches
from lessons.editor_panel import EXAMPLE_SETS, example_text
from runs.run_driver import RunState

from tests.app.harness import api_tab

ROOT = Path(__file__).resolve().parents[2]
APP_FOLDERS = ("lessons", "runs", "endpoints", "serving", "memory")      # the page's own code
WEATHER = example_text(EXAMPLE_SETS["天气"])


def test_the_installed_gradio_is_the_pinned_one():
    assert gradio_patches.PINNED_GRADIO and gradio_patches.PINNED_GRADIO == gradio_patches.pinned_version()
    import gradio

    assert gradio.__version__ == gradio_patches.PINNED_GRADIO == gradio_patches.installed_version()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradio_patches.check_version() is True


def test_another_gradio_is_named_in_chinese_and_english(monkeypatch):
    monkeypatch.delenv("TOOL_WORKSHOP_GRADIO_STRICT", raising=False)
    with pytest.warns(gradio_patches.GradioVersionMismatch) as caught:
        assert gradio_patches.check_version(installed="7.0.0", pinned="6.31.0") is False
    message = str(caught[0].message)
    assert "Gradio 版本不符" in message and "Gradio version mismatch" in message
    assert "7.0.0" in message and "6.31.0" in message and "test_gradio_patches.py" in message
    with pytest.raises(RuntimeError, match="version mismatch"):
        gradio_patches.check_version(installed="7.0.0", pinned="6.31.0", strict=True)
    monkeypatch.setenv("TOOL_WORKSHOP_GRADIO_STRICT", "1")
    with pytest.raises(RuntimeError, match="版本不符"):
        gradio_patches.check_version(installed="6.30.0", pinned="6.31.0")


def test_the_pin_is_read_from_requirements(tmp_path: Path):
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("# app\nopenai==3.57.0\ngradio==6.31.0  # the page\n", encoding="utf-8")
    assert gradio_patches.pinned_version(reqs) == "6.31.0"
    reqs.write_text("gradio_client==2.7.2\n", encoding="utf-8")
    assert gradio_patches.pinned_version(reqs) is None
    assert gradio_patches.pinned_version(tmp_path / "missing.txt") is None


def test_the_files_the_requirements_name_exist():
    """A note in a requirements file sends whoever changes a pin to a file: it must still be there."""
    named = [(reqs.name, path) for reqs in sorted(ROOT.glob("requirements*.txt"))
             for path in re.findall(r"[\w./]+/[\w.]+\.py", reqs.read_text(encoding="utf-8"))]
    assert ("requirements.txt", "serving/gradio_patches.py") in named
    assert [(reqs, path) for reqs, path in named if not (ROOT / path).is_file()] == []


def test_gradio_internals_are_touched_only_in_gradio_patches():
    """The app's own code reaches Gradio's internals through gradio_patches only, and reads the
    tab's session and the page's api visibility through page_events only."""
    only_in = {r"\b_queue\b": "gradio_patches.py", r"\bstate_holder\b": "gradio_patches.py",
               r"\bimport gradio\.": "gradio_patches.py", r"\bGRADIO_ANALYTICS_": "gradio_patches.py",
               r"\bsession_hash\b": "page_events.py", r'api_visibility="private"': "page_events.py"}
    sources = [ROOT / "app.py", *sorted(path for folder in APP_FOLDERS for path in (ROOT / folder).rglob("*.py"))]
    found = [(path.name, pattern) for path in sources for pattern, home in only_in.items()
             if path.name != home and re.search(pattern, path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_environment_knobs():
    environ, modules = {"GRADIO_ANALYTICS_ENABLED": "True", "GRADIO_ANALYTICS_MAX_EVENTS": "7"}, {}
    gradio_patches.set_environment(environ, modules)
    assert environ == {"GRADIO_ANALYTICS_ENABLED": "False", "GRADIO_ANALYTICS_MAX_EVENTS": "7",
                       "GRADIO_ANALYTICS_CACHE_FREQUENCY": "1000"}
    if importlib.util.find_spec("matplotlib") is None:
        assert "matplotlib" in modules and modules["matplotlib"] is None
    import app  # noqa: F401  (the app sets the knobs when imported)

    assert os.environ["GRADIO_ANALYTICS_ENABLED"] == "False"
    if "matplotlib" in sys.modules and sys.modules["matplotlib"] is None:
        with pytest.raises(ImportError):
            import matplotlib  # noqa: F401


def test_the_lean_record_still_fits_this_gradio():
    import gradio.state_holder as state_holder

    assert gradio_patches.install_lean_session_records() is True
    assert state_holder.SessionState is gradio_patches.lean_session_state()


def test_every_install_takes_on_the_pinned_gradio(served):
    """The app (launched by `served`) has called every install_* function; against the pinned
    Gradio each one takes, without a warning (calling again is idempotent)."""
    installs = sorted(name for name in dir(gradio_patches) if name.startswith("install_"))
    assert {"install_lean_session_records", "install_page_config"} <= set(installs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert {name: getattr(gradio_patches, name)() for name in installs} == dict.fromkeys(installs, True)


def test_a_patch_that_no_longer_fits_warns_and_changes_nothing(monkeypatch):
    """What start shows when an upgrade moved an internal: the patch's name and what the app loses,
    in Chinese and English; Gradio is left as it was; TOOL_WORKSHOP_GRADIO_STRICT=1 stops the start."""
    import gradio.routes as routes
    import gradio.state_holder as state_holder

    class MovedRecord:                                   # a record whose __init__ reads other names
        def __init__(self, blocks):
            self.blocks = blocks

    monkeypatch.delenv("TOOL_WORKSHOP_GRADIO_STRICT", raising=False)
    monkeypatch.setattr(gradio_patches, "_lean_class", None)
    monkeypatch.setattr(state_holder, "SessionState", MovedRecord)
    with pytest.warns(gradio_patches.GradioPatchNotInstalled) as caught:
        assert gradio_patches.install_lean_session_records() is False
    message = str(caught[0].message)
    assert "install_lean_session_records" in message and "没有装上" in message and "was not installed" in message
    assert "0.4 MB" in message and "test_gradio_patches.py" in message
    assert state_holder.SessionState is MovedRecord

    page_response = getattr(routes.templates.TemplateResponse, "__wrapped__", routes.templates.TemplateResponse)
    monkeypatch.setattr(routes.templates, "TemplateResponse", page_response)
    monkeypatch.setattr(routes.App, "create_app", lambda *args, **kwargs: None)     # a page route written otherwise
    with pytest.warns(gradio_patches.GradioPatchNotInstalled, match="install_page_config"):
        assert gradio_patches.install_page_config() is False
    assert routes.templates.TemplateResponse is page_response
    monkeypatch.setenv("TOOL_WORKSHOP_GRADIO_STRICT", "1")
    with pytest.raises(RuntimeError, match="install_page_config"):
        gradio_patches.install_page_config()


def test_a_number_out_of_its_range_reaches_the_handler_with_the_page_s_own_words():
    """Gradio's Number and Slider raised their own English error for a number out of range, before the
    handler ran. Now the handler gets an OutOfRange: a slider's nearest end (where Gradio's slider goes
    when its box loses focus), a gr.Number's own value, with a message naming the box, the number and the
    range, in the tab's language (shown as a warning toast; outside an event Gradio only warns)."""
    import copy

    import gradio as gr

    import i18n
    from i18n import tr

    assert gradio_patches.install_range_messages() is True
    budget = gr.Slider(50, 8000, step=10, label=tr("token 预算（滑动窗口按它丢消息）", "Token budget (the windows drop by it)"))
    number = gr.Number(label=tr("第几条", "No."), precision=0, minimum=1)
    assert type(budget.preprocess(300)) is not gradio_patches.OutOfRange and number.preprocess(2) == 2
    with pytest.warns(UserWarning, match="超出范围"):
        low = budget.preprocess(0)
    assert isinstance(low, gradio_patches.OutOfRange) and low == 50 and low.typed == 0
    assert low.message == "「token 预算」填的 0 超出范围：应在 50 到 8000 之间；离开输入框时它回到 50。"
    with pytest.warns(UserWarning):
        high, typed = budget.preprocess(99999), number.preprocess(-5)
    assert high == 8000 and typed == -5 and int(typed) == -5          # a gr.Number keeps what was typed
    assert typed.message == "「第几条」填的 -5 太小：应不小于 1。"
    with i18n.using("en"):
        assert high.message == "«Token budget»: 99999 is out of range: it must be from 50 to 8000; leaving the box sets it to 8000."
        assert typed.message == "«No.»: -5 is too small: it must be at least 1."
    kept = copy.deepcopy(typed)                                        # as a gr.State keeps it
    assert isinstance(kept, gradio_patches.OutOfRange) and kept.message == typed.message


def test_the_queue_keeps_a_short_history_of_events(served):
    """Gradio records every event for a monitoring page the app does not serve; a long
    history is memory that outlives the class (records scattered among the tabs' freed pages)."""
    demo, url = served
    client = api_tab(url)
    for n in range(70):
        assert client.predict(str(n), api_name="/echo") == str(n)
    assert 0 < len(demo._queue.event_analytics) <= 50


def test_the_queue_read_the_knobs(served):
    """The names Gradio's queue reads its history settings under (set before gradio is imported)."""
    demo, _ = served
    assert demo._queue.ANALYTICS_MAX_EVENTS == int(gradio_patches.ANALYTICS_MAX_EVENTS)
    assert demo._queue.ANAYLTICS_CACHE_FREQUENCY == int(gradio_patches.ANALYTICS_CACHE_FREQUENCY)


def test_gradio_still_looks_for_matplotlib_per_event():
    """If this Gradio no longer imports matplotlib around each event, the knob can go."""
    import inspect

    import gradio.utils

    assert "import matplotlib" in inspect.getsource(gradio.utils.MatplotlibBackendMananger)


def test_the_tests_idle_queue_polls_less_often(served):
    demo, _ = served
    assert demo._queue.sleep_when_free >= 0.01


def test_idle_tabs_are_forgotten_with_their_state(served):
    demo, url = served
    client = api_tab(url)
    client.predict(WEATHER, "get_weather", '{"city": "北京"}', api_name="/try_call")
    sid = client.session_hash
    holder = demo.state_holder
    assert gradio_patches.session_holder(demo) is holder
    assert sid in holder.session_data and sandbox.session_usage(sid)["known"]
    assert isinstance(holder.session_data[sid], gradio_patches.lean_session_state())
    assert len(holder.session_data[sid].config_values) < len(demo.blocks) / 10   # not every component
    assert sid in demo._queue.pending_messages_per_session
    closed = []

    def paused():
        try:
            yield "tool_call"
        finally:
            closed.append(True)

    generator = paused()
    next(generator)
    run_state = next(block for block in demo.blocks.values()
                     if getattr(block, "delete_callback", None) is expiry.close_run)
    holder[sid][run_state._id] = RunState(run=backend.Run(loop=generator))   # a run paused in step mode
    assert expiry.forget_idle(holder, ttl=3600) == []                   # still fresh: kept
    gone = expiry.forget_idle(holder, ttl=3600, now=time.time() + 7200)
    assert sid in gone and sid not in holder.session_data and sid not in holder.time_last_used
    assert closed == [True] and not sandbox.session_usage(sid)["known"]
    assert sid not in demo._queue.pending_messages_per_session and sid not in demo._queue.pending_event_ids_session
    again = client.predict("还在吗", api_name="/echo")                   # the tab can come back as new
    assert again == "还在吗"


def page_html(url: str, language: str | None = None) -> str:
    import urllib.request

    headers = {"Accept-Language": language} if language else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as response:
        html = response.read().decode("utf-8")
        assert int(response.headers["content-length"]) == len(html.encode("utf-8"))
    return html


def page_config(url: str, language: str | None = None) -> dict:
    """The config the page at `url` inlines in its HTML (for a browser asking for `language`)."""
    import json

    return json.loads(re.search(r"window\.gradio_config = (.*?);</script>", page_html(url, language), re.S).group(1))


def code_of(drawn: str) -> str:
    """The code a read-only code box shows (lessons/code_box.py draws it as highlighted HTML)."""
    return html.unescape(re.sub(r"<[^>]+>", "", drawn.split("<code>", 1)[1].rsplit("</code>", 1)[0]))


def test_the_page_inlines_a_config_without_the_apis_descriptions_and_with_the_first_schema(served):
    """Gradio inlines the config into `/` through gradio.routes.templates; the hook drops what only
    the API reads and puts in the schema the sandbox made of each untouched example."""
    import json
    import urllib.request

    import app

    demo, url = served
    assert gradio_patches.install_page_config() is True          # installed by launch, idempotent
    panels = app.FIRST_SCHEMAS[demo]
    assert len(panels) >= 3                                     # every lesson with an editor
    deadline = time.monotonic() + 60
    while not all(panel.first for panel in panels) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(panel.first for panel in panels), "the sandbox did not make the examples' schemas"
    from catalogue import LESSONS

    # Each lesson's page carries its own panel: the pages, in the catalogue's order, of the lessons with one.
    addresses = [url + lesson.path for lesson in LESSONS.values() if lesson.editor]
    assert len(addresses) == len(panels)
    config = page_config(url)
    entries = {}
    for address in addresses:
        entries.update({entry["id"]: entry for entry in page_config(address)["components"]})
    assert not [key for entry in entries.values() for key in gradio_patches.API_ONLY_KEYS if key in entry]
    for panel in panels:
        status = entries[panel.status._id]["props"]["value"]
        assert status.startswith("✅ 已生成 ") and "个工具的 schema" in status
        # The schema box is drawn as highlighted HTML (lessons/code_box.py): its text is the code's.
        tools = json.loads(code_of(entries[panel.json._id]["props"]["value"]))
        assert tools and tools == backend.extract(panel.editor.value)["tools"]
        assert panel.status.value in ("", None)                # the component itself is not changed
    # An English browser's page: the same schema, its status in English, and the page says it is English.
    english = {}
    for address in addresses:
        english.update({entry["id"]: entry for entry in page_config(address, "en-US,en;q=0.9")["components"]})
    for panel in panels:
        assert english[panel.status._id]["props"]["value"].startswith("✅ Schema generated for ")
        assert code_of(english[panel.json._id]["props"]["value"]) == code_of(entries[panel.json._id]["props"]["value"])
    assert config["title"] == "工具调用教学工坊" and page_config(url, "en")["title"] == "Tool Use Workshop"
    assert '<html\n\tlang="zh-CN"' in page_html(url) and '<html\n\tlang="en"' in page_html(url + "?lang=en")
    # The /config an API client reads (the first lesson's) keeps the API's descriptions.
    with urllib.request.urlopen(url + "config", timeout=30) as response:
        whole = json.loads(response.read())
    assert any("api_info" in entry for entry in whole["components"])
    # The named endpoints' stand-ins (gr.api's) are the API's too: /config has them, the page does not,
    # nor their endpoints, nor any part of its layout (or of its entry in the map of pages).
    stand_ins = {entry["id"] for entry in whole["components"] if entry["type"] == "api"}
    endpoints = {dep["id"] for dep in whole["dependencies"] if dep["api_name"] == "schema"}
    assert stand_ins and endpoints
    carried = {entry["id"] for entry in config["components"]}
    assert not carried & stand_ins and not {dep["id"] for dep in config["dependencies"]} & endpoints

    def ids(layout: dict) -> set:
        return {layout["id"]}.union(*(ids(child) for child in layout.get("children", ())))

    page = config["page"][config["current_page"]]
    assert not ids(config["layout"]) & stand_ins and not ids(page["layout"]) & stand_ins
    assert not set(page["components"]) & stand_ins


def test_an_english_page_carries_its_labels_and_no_load_event_touches_the_whole_page(served):
    """An English tab's labels come in its page's config (set_page_props), not from an event on load:
    Gradio's page updates, at each status change of any event, every component any event has
    touched, so the events that run on load touch a lesson's worth of components, not the page."""
    demo, url = served
    english = {entry["id"]: entry["props"] for entry in page_config(url + "?lang=en")["components"]}
    config = page_config(url)                                   # a Chinese page served after an English one
    chinese = {entry["id"]: entry["props"] for entry in config["components"]}

    def texts(page: dict) -> set:
        return {props.get(key) for props in page.values() for key in ("label", "value")
                if isinstance(props.get(key), str)}

    assert {"▶ Run", "Timeline", "📖 Lesson: calling tools by a text convention"} <= texts(english)
    assert "▶ 运行" in texts(chinese) and not {"▶ Run", "Timeline"} & texts(chinese)
    assert any("</span> Tool registry</a>" in text for text in texts(english))       # the lesson list
    assert any("</span> 工具注册</a>" in text for text in texts(chinese)) and not any("Tool registry" in text
                                                                                for text in texts(chinese))
    run = next(i for i, props in english.items() if props.get("value") == "▶ Run")
    assert chinese[run]["value"] == "▶ 运行"                    # the same component, the built page unchanged
    # Choices change their words, not their values.
    examples = next(i for i, props in chinese.items() if ["天气", "天气"] in (props.get("choices") or []))
    assert ["Weather", "天气"] in english[examples]["choices"] and english[examples]["value"] == chinese[examples]["value"]
    deps = {dep["id"]: dep for dep in config["dependencies"]}
    on_load, grown = [d for d in deps.values() if any(t[1] == "load" for t in d["targets"])], True
    while grown:                                               # and everything that follows them
        more = [d for d in deps.values() if d.get("trigger_after") in {x["id"] for x in on_load} and d not in on_load]
        on_load += more
        grown = bool(more)
    touched = set().union(*(set(d.get("show_progress_on") or d["outputs"]) | set(d["inputs"])
                            for d in on_load if d.get("backend_fn")))
    # 75 today (the lessons' restores read their controls); the label event alone touched 281.
    assert 0 < len(touched) < 150, len(touched)


def test_the_config_and_the_app_are_made_once_by_launch(served, monkeypatch):
    """Gradio makes an app when a Blocks is made (it queues itself), the config and an app when its
    `with` ends, and again in queue(); launch() makes the ones that serve. page_blocks /
    queue_without_app skip all the others."""
    import inspect

    import gradio as gr
    import gradio.blocks
    import gradio.routes

    for method in (gradio.blocks.Blocks.__exit__, gradio.blocks.Blocks.queue):
        assert "App.create_app(self, mcp_server=False)" in inspect.getsource(method)
    assert "self.queue()" in inspect.getsource(gradio.blocks.Blocks.__init__)
    assert "self.config = self.get_config_file()" in inspect.getsource(gradio.blocks.Blocks.__exit__)
    made = []
    monkeypatch.setattr(gradio.routes.App, "create_app", staticmethod(lambda *args, **kwargs: made.append(args)))
    with gradio_patches.page_blocks(title="t") as page:
        box = gr.Textbox()
        page.load(lambda: "x", None, box)
    assert isinstance(page, gr.Blocks) and page.app is None and page.config is None
    assert "get_config_file" not in vars(page) and gradio.blocks.App is not gradio_patches._NoAppYet
    gradio_patches.queue_without_app(page, default_concurrency_limit=3)
    assert page.app is None and page._queue.default_concurrency_limit == 3
    assert made == []
    demo, _ = served      # the app's own page, built and queued this way, then launched
    assert isinstance(demo, gradio_patches._page_blocks_class) and demo.app is not None
    assert any(entry["type"] == "code" for entry in demo.config["components"])


def test_gradio_imports_without_rewriting_its_type_stubs():
    """In a process of its own (this one imported gradio long ago): the stub writer that the
    component classes call is the no-op, and the classes still have their events."""
    import subprocess

    script = ("from serving import gradio_patches\n"
              "assert gradio_patches.skip_stub_rewrite() is True\n"
              "import gradio as gr, gradio.component_meta as meta\n"
              "print(meta.create_or_modify_pyi is gradio_patches._no_stub, callable(gr.Textbox.change))\n"
              "print(gradio_patches.skip_stub_rewrite())\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "True", "False"], out.stderr


def test_gradio_still_calls_the_stub_writer_by_that_name():
    """If Gradio renamed it, the hook would silently save nothing."""
    import inspect

    import gradio.component_meta as meta

    assert f"{gradio_patches.STUB_WRITER}(component_class, name, events)" in inspect.getsource(meta.ComponentMeta.__new__)


def test_no_dropdown_listens_to_input():
    """Gradio's dropdown sends `input` again each time it loses focus: a listener on it would run
    when a box is only clicked into and left, and overwrite what was typed since (an edited source
    with the example's, a typed address with the preset's). Choices are wired to `select`
    (serving.page_events.on_choice); tests/app/test_dropdown_focus_browser.py shows it in chromium."""
    import app

    demo = app.build_demo({})
    wired = [(demo.blocks[target].label, event) for dependency in demo.fns.values()
             for target, event in dependency.targets
             if event == "input" and isinstance(demo.blocks.get(target), gr.Dropdown)]
    assert wired == []


def test_each_key_status_line_has_one_writer():
    """A key's status line follows the session's key and the settings. Written by several listeners
    (choosing a provider, storing the key, clearing it, restoring the page), one computed from the key
    before it was cleared could finish after the clearing: "🔑" over no key. One listener writes each
    line (and 清除本会话密钥 beside model A's), and the page runs it again after a run in progress."""
    import app

    demo = app.build_demo({})

    def writers(block_id):
        return [d for d in demo.fns.values() if block_id in [block._id for block in d.outputs]]

    lines = [block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "key-status"
             or "tw-eval-b-key-status" in (getattr(block, "elem_classes", None) or [])]
    statuses = [line for line in lines if line.elem_id == "key-status"]
    assert len(statuses) == len(LESSONS) and len(lines) == len(LESSONS) + 1     # each page's, and model B's
    for line in lines:
        assert len(writers(line._id)) == 1, [w.name for w in writers(line._id)]
        assert writers(line._id)[0].trigger_mode == "always_last"
    for status in statuses:
        clear = next(block for block in writers(status._id)[0].outputs if block is not status)
        assert isinstance(clear, gr.Button) and writers(clear._id) == writers(status._id)
