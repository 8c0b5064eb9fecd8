"""Settings every test shares: nothing may phone home, and local traffic bypasses proxies."""
import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
os.environ.setdefault("no_proxy", "127.0.0.1,localhost")
