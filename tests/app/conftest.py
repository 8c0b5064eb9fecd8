"""Fixtures for the page's tests (helpers live in harness.py), and what a failed page test leaves
behind: a picture of every page still open and the console lines of the pages the harness opened,
in test-artifacts/failures/ (a timeout says only what did not appear; these show what did)."""
import re

import pytest

from tests.app.harness import ROOT, Watched, app_url, browser, served  # noqa: F401  (the app once per run or per module, the browser per module)

FAILURES = ROOT / "test-artifacts" / "failures"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    chromium = getattr(item, "funcargs", {}).get("browser")
    if report.when != "call" or not report.failed or chromium is None:
        return
    FAILURES.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", item.nodeid)[-150:]
    console = [line for watched in Watched.opened for line in watched.console]
    (FAILURES / f"{name}.console.txt").write_text("\n".join(console), encoding="utf-8")
    for number, page in enumerate(page for context in chromium.contexts for page in context.pages):
        try:
            page.screenshot(path=str(FAILURES / f"{name}-{number}.png"), timeout=10_000)
        except Exception as exc:   # a page that cannot be drawn any more says so in the report
            report.sections.append(("page picture", f"page {number}: {exc}"))
