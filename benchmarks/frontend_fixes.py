"""What the fixes to Gradio's frontend (serving/frontend_fixes.py) save a student's browser.

    /opt/tool-workshop-venv/bin/python benchmarks/frontend_fixes.py [--rounds 5]

One app, one headless chromium. Each round opens the page twice in fresh contexts, alternating:
once as served (with the fixes), once with Gradio's stock files put back in their place by the
browser itself (Playwright answers those two requests from the installed Gradio), so both pages
run against the same server in the same minute. For each it reads Chrome's own counters of the
page's main thread (task time and script time): from navigation until the first lesson is usable
plus 2 s, then one Function Calling run (its click until 6 s later). Prints the medians and the
ratio stock / fixed.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from import_paths import use_project_paths  # noqa: E402

use_project_paths()

from benchmarks.app_speed import APP_READY_JS, LESSON_READY  # noqa: E402
from serving.frontend_fixes import FIXES  # noqa: E402
from tests.app.harness import CHROMIUM, CHROMIUM_ARGS, start_app  # noqa: E402

COUNTERS = ("TaskDuration", "ScriptDuration")


def counters(cdp) -> dict[str, float]:
    values = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {name: values[name] * 1000 for name in COUNTERS}


def since(before: dict, after: dict) -> dict:
    return {name: after[name] - before[name] for name in COUNTERS}


def answer_with(body: bytes):
    return lambda route: route.fulfill(body=body, content_type="text/javascript; charset=utf-8")


def visit(browser, url: str, stock: bool) -> dict[str, dict]:
    """Main-thread ms of loading the page, and of one Function Calling run, in a fresh context."""
    import gradio

    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    try:
        page = context.new_page()
        if stock:
            assets = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"
            for name in {fix.asset for fix in FIXES}:
                page.route(f"**/assets/{name}", answer_with((assets / name).read_bytes()))
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        start = counters(cdp)
        page.goto(url, wait_until="commit", timeout=60_000)
        page.wait_for_function(APP_READY_JS, arg=LESSON_READY, polling="raf", timeout=60_000)
        page.wait_for_timeout(2000)
        loaded = counters(cdp)
        page.get_by_role("tab", name="Function Calling").first.click()
        page.wait_for_timeout(1500)
        before_run = counters(cdp)
        page.locator("#tab-function-calling .tw-run").first.click()
        page.wait_for_timeout(6000)
        return {"load": since(start, loaded), "run": since(before_run, counters(cdp))}
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    demo, url = start_app()
    results = {True: [], False: []}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            visit(browser, url, stock=False)                  # warm: the server's first page, compressed assets
            for round_ in range(args.rounds):
                for stock in (round_ % 2 == 0, round_ % 2 == 1):
                    results[stock].append(visit(browser, url, stock))
            browser.close()
    finally:
        demo.close()
    print(f"{args.rounds} fresh pages each, alternating; medians of the page's main-thread time (ms)")
    for part, what in (("load", "opening the page (until the first lesson is usable, +2 s)"),
                       ("run", "one Function Calling run (click, +6 s)")):
        for counter in COUNTERS:
            stock, fixed = (statistics.median(r[part][counter] for r in results[side]) for side in (True, False))
            print(f"{what}, {counter}: stock {stock:.0f}, fixed {fixed:.0f}: stock / fixed {stock / fixed:.2f}x")


if __name__ == "__main__":
    main()
