"""Settings every test shares: nothing may phone home, and local traffic bypasses proxies."""
import os

import pytest

from import_paths import use_project_paths

use_project_paths()      # the app's and the sandbox's path rule (pytest.ini already gives this order)

from serving import gradio_patches  # noqa: E402

gradio_patches.skip_stub_rewrite()   # as the app does: each process that imports gradio starts 1.5 s sooner
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
os.environ.setdefault("no_proxy", "127.0.0.1,localhost")

# Property tests explore freely on a developer's machine; in CI they replay a fixed
# set of examples, so a run's verdict never depends on the draw.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    if os.environ.get("CI"):
        _hypothesis_settings.load_profile("ci")
except ImportError:  # hypothesis is a test dependency; without it those tests fail on import anyway
    pass


@pytest.fixture(scope="session")
def nice_at_least():
    """nice_at_least(n): the nice value a sandboxed job asking for `n` really gets. Never lower than
    the test run's own (an unprivileged worker cannot raise its priority back): under
    `nice -n 19 pytest` every job, normal or on probation, runs at 19, and only the scheduling
    policy tells them apart."""
    inherited = os.getpriority(os.PRIO_PROCESS, 0)
    return lambda nice: max(nice, inherited)


def pytest_collection_modifyitems(items):
    """Page tests first. Run two at a time, each test file (or class) stays on one worker and
    the next file goes to whichever worker is free: the long page-test files are handed out
    first and the many short files even out the end, instead of one long file starting last
    while the other worker idles."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is None)


@pytest.fixture
def busy_loops(request):
    """busy_loops(per_cpu, nice=0): that many busy loops per CPU, at the test run's priority
    lowered by `nice`, stopped when the test ends: a machine a whole class keeps busy."""
    import subprocess
    import sys
    import time

    loops = []
    request.addfinalizer(lambda: [loop.kill() or loop.wait() for loop in loops])

    def start(per_cpu, nice=0):
        loops.extend(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                      preexec_fn=(lambda: os.nice(nice)) if nice else None)
                     for _ in range(per_cpu * (os.cpu_count() or 1)))
        time.sleep(0.2)
    return start
