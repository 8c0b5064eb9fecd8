"""Settings every test shares: nothing may phone home, and local traffic bypasses proxies."""
import os

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
