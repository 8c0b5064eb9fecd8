"""Fixtures for the page's tests (helpers live in harness.py)."""
from tests.app.harness import app_url, browser, served  # noqa: F401  (the app once per run or per module, the browser per module)
