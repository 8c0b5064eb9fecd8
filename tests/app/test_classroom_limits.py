"""What keeps one app serving a whole classroom: the cheap endpoints, per-tab limits seen
through the real API, and forgetting idle tabs (Gradio's record, State, sandbox ledger,
exported files). Functional checks against the real server; no timing asserts. What pins
Gradio's internals (the queue's history, its per-tab records) is in test_gradio_patches.py."""
from __future__ import annotations

import gc
import os
import time
import weakref

import pytest

import sandbox
from access import tab_lifetime
from access.typed_keys import TypedKeys
from runs import session_io
from serving import expiry
from lessons.editor_panel import EXAMPLE_SETS, example_text

from tests.app.harness import api_tab

WEATHER = example_text(EXAMPLE_SETS["天气"])
LOOPING = '''from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("查询指定城市今天的天气")
def get_weather(city: str) -> str:
    while True:
        pass
'''


def test_echo_status_and_export(served):
    _, url = served
    client = api_tab(url)
    assert client.predict("你好", api_name="/echo") == "你好"
    status = client.predict(api_name="/status")
    assert status["mode"] in ("sandboxed", "unsandboxed", "refused") and status["notice"]
    assert set(status["layers"]) <= {"seccomp", "landlock", "rlimits"}
    assert all(isinstance(v, bool) for v in status["layers"].values())
    run = client.predict(WEATHER, "北京今天天气怎么样？", api_name="/run_function_calling")
    document = client.predict(run, "function_calling", WEATHER, "北京今天天气怎么样？", api_name="/export")
    checked = session_io.load_document(document)
    assert checked["events"] == run["events"] and checked["source"] == WEATHER and checked["lesson"] == "function_calling"
    assert checked["messages"] and checked["raw_responses"]
    with pytest.raises(Exception, match="lesson"):
        client.predict(run, "nope", api_name="/export")
    with pytest.raises(Exception, match="events"):
        client.predict({"ok": True}, api_name="/export")


def test_start_up_objects_are_frozen_out_of_the_collector(served):
    # Once serving, a full collection walks only what requests made, not gradio and the page.
    assert gc.get_freeze_count() > 100_000


class Cycle:
    def __init__(self):
        self.me = self


def test_while_serving_python_starts_no_full_collection_but_the_sweep_does(served):
    seen = []

    def note(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        survivors = [Cycle() for _ in range(300_000)]   # enough to have started several by themselves
        del survivors
        assert seen and 2 not in seen
        # A cycle that is garbage only once it reached the oldest generation waits for a sweep.
        holder = [Cycle()]
        gc.collect(1)
        gc.collect(1)
        gone = []
        watch = weakref.ref(holder.pop(), lambda _: gone.append(True))
        gc.collect(1)
        assert watch() is not None and not gone
        keeper = expiry.Housekeeper(served[0], ttl=3600)
        keeper.sweep()                                  # nothing is due yet
        assert watch() is not None
        keeper.collected -= expiry.FULL_COLLECTION_SECONDS + 1
        keeper.sweep()
        assert gone and 2 in seen
    finally:
        gc.callbacks.remove(note)


def test_a_looping_tab_is_refused_while_another_tab_runs(served, request):
    _, url = served
    before = sandbox.configure(wall_seconds=0.4, refusal_pause_seconds=0.0,
                               tool={"probation_wall_seconds": 0.3, "seconds_per_minute": 0.6,
                                     "probation_seconds_per_minute": 0.6})
    request.addfinalizer(lambda: sandbox.configure(before))
    looping, calm = api_tab(url), api_tab(url)
    codes = [looping.predict(LOOPING, "get_weather", '{"city": "北京"}', api_name="/try_call")["error_code"]
             for _ in range(3)]
    assert codes[:2] == ["timeout", "timeout"] and codes[2] == "rate_limited"
    refused = looping.predict(LOOPING, "get_weather", '{"city": "北京"}', api_name="/try_call")
    assert "运行太频繁" in refused["content"] and "死循环" in refused["content"]
    # A source nobody has extracted yet (a known one is answered from the cache, running nothing).
    unseen = WEATHER + "\n# 这个版本还没有人抽取过\n"
    schema = looping.predict(unseen, False, "registry", api_name="/schema")
    assert schema["error"]["code"] == "rate_limited"                      # its schema runs are charged too
    run = calm.predict(WEATHER, "北京今天天气怎么样？", api_name="/run_function_calling")
    assert run["ok"] and all(e["ok"] for e in run["events"] if e["type"] == "tool_result")


def test_old_exported_files_are_removed(tmp_path):
    old = session_io.export_file({"lesson": "react", "events": []})
    new = session_io.export_file({"lesson": "react", "events": []})
    unrelated = tmp_path / "tool-workshop-runtime-x" / "worker.py"
    unrelated.parent.mkdir()
    unrelated.write_text("x")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    removed = expiry.remove_old_exports(3600)
    assert removed >= 1 and not os.path.exists(old) and not os.path.exists(os.path.dirname(old))
    assert os.path.exists(new)
    assert expiry.remove_old_exports(3600, folder=str(tmp_path)) == 0 and unrelated.exists()
    os.remove(new)


def test_session_lifetime_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TOOL_WORKSHOP_SESSION_TTL", "90")
    assert tab_lifetime.session_ttl() == 90
    assert TypedKeys().ttl == 90                  # a typed key lives as long as its tab
    for bad in ("0", "-5", "soon"):
        monkeypatch.setenv("TOOL_WORKSHOP_SESSION_TTL", bad)
        assert tab_lifetime.session_ttl() == tab_lifetime.DEFAULT_TTL_SECONDS
    monkeypatch.delenv("TOOL_WORKSHOP_SESSION_TTL")
    assert tab_lifetime.session_ttl() == tab_lifetime.DEFAULT_TTL_SECONDS
