"""`python app.py` serves with jemalloc when it is installed, so that memory comes back
after a class (benchmarks/classroom.py measures how much); without it, nothing changes."""
import inspect
import os
import subprocess
import sys
import time
import urllib.request

import pytest

import app
from tests.app.harness import free_port

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED = next((path for path in app.JEMALLOC if os.path.exists(path)), None)


def restarted_with(environ):
    calls = []
    app.restart_with_jemalloc(environ, execve=lambda *args: calls.append(args))
    return calls


@pytest.mark.skipif(INSTALLED is None, reason="libjemalloc2 is not installed (scripts/test.sh installs it)")
def test_the_server_starts_itself_again_with_jemalloc_once():
    (path, argv, env), = restarted_with({"PATH": "/usr/bin", "MALLOC_CONF": "narenas:1"})
    assert path == sys.executable and argv[0] == sys.executable
    assert env["LD_PRELOAD"] == INSTALLED and env["PYTHONMALLOC"] == "malloc"
    assert env["MALLOC_CONF"] == "narenas:1"                      # an instructor's own setting wins
    assert env["PATH"] == "/usr/bin"
    assert restarted_with(env) == []                               # once: it is preloaded now
    assert restarted_with({"TOOL_WORKSHOP_ALLOCATOR": "python"}) == []


def test_without_the_library_it_runs_as_it_is(monkeypatch):
    monkeypatch.setattr(app, "JEMALLOC", ("/nonexistent/libjemalloc.so.2",))
    assert restarted_with({"PATH": "/usr/bin"}) == []


@pytest.mark.skipif(INSTALLED is None, reason="libjemalloc2 is not installed (scripts/test.sh installs it)")
def test_python_app_py_serves_with_jemalloc():
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False")
    server = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, server.stderr.read().decode(errors="replace")[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, "the page did not come up"
                time.sleep(0.3)
        with open(f"/proc/{server.pid}/maps") as maps:
            assert INSTALLED in maps.read()                        # the same process, now with jemalloc
        with open(f"/proc/{server.pid}/environ", "rb") as environ:
            served_with = environ.read().split(b"\0")
        assert b"PYTHONMALLOC=malloc" in served_with
        if "MALLOC_CONF" not in os.environ:      # no per-thread caches, pages back within a second
            assert b"MALLOC_CONF=" + app.JEMALLOC_CONF.encode() in served_with
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.mark.skipif(INSTALLED is None, reason="libjemalloc2 is not installed (scripts/test.sh installs it)")
def test_the_main_thread_has_a_cache_only_while_it_builds():
    """JEMALLOC_CONF turns the threads' caches off; app.py turns the main thread's on for its start
    and off again in launch(), which leaves it off when it is done."""
    check = ("import threading, app\n"
             "assert app.thread_cache() is False\n"
             "assert app.thread_cache(True) is True and app.thread_cache() is True\n"
             "seen = []\n"
             "worker = threading.Thread(target=lambda: seen.append(app.thread_cache()))\n"
             "worker.start(); worker.join()\n"
             "assert seen == [False]\n"                     # other threads keep the configured default
             "assert app.thread_cache(False) is False\n"
             "print('ok')\n")
    env = dict(os.environ, LD_PRELOAD=INSTALLED, PYTHONMALLOC="malloc", MALLOC_CONF=app.JEMALLOC_CONF,
               GRADIO_ANALYTICS_ENABLED="False")
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
    assert app.thread_cache() is None                                # this process has no jemalloc


def test_launch_gives_the_main_threads_cache_back():
    source = inspect.getsource(app.launch)
    assert source.index("thread_cache(False)") > source.index("demo.launch(")
    assert "thread_cache(True)" in inspect.getsource(app)
