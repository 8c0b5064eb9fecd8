"""How long the server remembers a browser tab, and the housekeeping that makes it forget.

A day of classes brings hundreds of tabs. Each one costs the server memory in four
places: the tab's gr.State values (runs, a paused loop, a typed key), Gradio's own
per-tab record (kept even for API clients and only dropped when 10 000 tabs are full;
gradio_patches.py keeps it small), the queue's message box of the tab, the
sandbox's usage ledger, and the tab's workspace folder on disk (workspace/).
Exported session files and workspace zips also stay in the temp folder.
Everything here is dropped once a tab has been idle for TOOL_WORKSHOP_SESSION_TTL
seconds (default 2 hours; access/tab_lifetime.py), so memory returns to where it started after each class.
"""
from __future__ import annotations

import ctypes
import gc
import glob
import logging
import os
import tempfile
import threading
import time

import workspace

from access.tab_lifetime import session_ttl
from runs import backend, skills_backend
from serving import gradio_patches

EXPORT_PATTERN = os.path.join("tool-workshop-*", "session-*.json")   # what session_io.export_file writes
ZIP_PATTERN = os.path.join("tool-workshop-*", "workspace-*.zip")     # what workspace_panel.write_zip writes
EVALUATION_PATTERNS = (os.path.join("tool-workshop-*", "evaluation-*.*"),   # what eval_backend.written writes
                       os.path.join("tool-workshop-*", "cases.json"))
EXPORTS_EVERY_SECONDS = 600
FULL_COLLECTION_SECONDS = 300
NEVER_BY_ITSELF = 1 << 30          # collections of the middle generation before Python starts a full one
log = logging.getLogger(__name__)


def close_run(state) -> None:
    """gr.State delete callback of a run panel (a run_driver.RunState): a paused loop is
    closed, not left to the collector."""
    close = getattr(state, "close", None)
    if close is not None:
        close()


def remove_old_exports(age_seconds: float, now: float | None = None, folder: str | None = None) -> int:
    """Deletes exported session files (and their folders) older than `age_seconds`."""
    now = time.time() if now is None else now
    removed = 0
    base = folder or tempfile.gettempdir()
    patterns = (EXPORT_PATTERN, ZIP_PATTERN, *EVALUATION_PATTERNS)
    for path in [found for pattern in patterns for found in glob.glob(os.path.join(base, pattern))]:
        try:
            if now - os.path.getmtime(path) > age_seconds:
                os.remove(path)
                removed += 1
                os.rmdir(os.path.dirname(path))  # only succeeds when the folder held just this file
        except OSError:
            pass
    return removed


def forget_idle(holder, ttl: float, now: float | None = None) -> list[str]:
    """Drops Gradio's record of every tab idle for more than `ttl` seconds (its State
    delete callbacks run first), the sandbox's ledger of it and its workspace. Returns their ids."""
    idle = gradio_patches.idle_sessions(holder, ttl, now)
    for sid in idle:
        try:
            gradio_patches.run_delete_callbacks(holder, sid)
        except Exception:  # a failing delete callback must not keep the rest alive
            log.exception("delete callback failed")
        gradio_patches.drop_session_record(holder, sid)
        backend.forget_session(sid)
        skills_backend.forget_memories(sid)
        forget_workspace(sid)
    # The queue's message box of each tab (kept for up to 2 000 tabs); none of these
    # tabs has an event pending after this long.
    gradio_patches.drop_queue_mailboxes(holder, idle)
    return idle


def forget_workspace(session_id: str) -> None:
    """The tab's workspace folder goes with it (the workspace lessons' files)."""
    try:
        workspace.forget(session_id)
    except Exception:  # a folder that cannot be removed must not keep the sweep from the rest
        log.exception("workspace of an expired session not removed")


def leave_full_collections_to_the_sweeps() -> None:
    """A full collection walks every live object while holding the interpreter lock: with 200
    tabs open that is 0.1-0.2 s in which no request moves, and Python started one every 15-20 s
    of a lecture (about one student action in twenty waited for it). From now on only the sweeps
    start them: when tabs have gone, and every FULL_COLLECTION_SECONDS otherwise, so cyclic
    garbage old enough to reach the oldest generation waits at most that long. The young
    generations are collected as before."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NEVER_BY_ITSELF)


def _return_memory_to_the_system() -> None:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class Housekeeper(threading.Thread):
    """Sweeps now and then while the page is served."""

    def __init__(self, demo, ttl: float | None = None):
        super().__init__(name="session-expiry", daemon=True)
        self.demo = demo
        self.ttl = session_ttl() if ttl is None else ttl
        self.every = max(1.0, min(60.0, self.ttl / 4))
        self.stopped = threading.Event()
        self.exports_checked = self.collected = time.monotonic()

    def sweep(self) -> list[str]:
        holder = gradio_patches.session_holder(self.demo)
        gone = forget_idle(holder, self.ttl) if holder is not None else []
        if time.monotonic() - self.exports_checked > EXPORTS_EVERY_SECONDS:
            self.exports_checked = time.monotonic()
            remove_old_exports(max(self.ttl, 3600))
        if gone or time.monotonic() - self.collected > FULL_COLLECTION_SECONDS:
            self.collected = time.monotonic()
            _return_memory_to_the_system()
        return gone

    def run(self):
        while not self.stopped.wait(self.every):
            if not getattr(self.demo, "is_running", True):
                return
            try:
                self.sweep()
            except Exception:  # housekeeping must never take the server down
                log.exception("session sweep failed")


def start(demo) -> Housekeeper:
    keeper = Housekeeper(demo)
    keeper.start()
    return keeper
