"""Moves API keys out of the environment before anything else can copy them.

Child processes inherit os.environ, and any process of the same user can read
/proc/<pid>/environ and /proc/<pid>/mem of a dumpable process.  So the app reads its
keys into a plain dict, deletes them from the environment and marks itself
non-dumpable, before importing gradio (which starts threads and helpers).
"""
import ctypes
import os
import sys

# Every variable the server may be configured with that a student's code must never see: the
# providers' keys, addresses and models (access/clients.py), the hub's tokens, the class code
# (access/class_code.py). The one list: the app seals exactly these.
SECRET_NAMES = ("ZHIPUAI_API_KEY", "ZHIPUAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                "OPENAI_MODEL", "GLM_MODEL", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "TOOL_WORKSHOP_CLASS_CODE")
PR_SET_DUMPABLE = 4


def make_non_dumpable():
    """True when the kernel accepted it (Linux); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_DUMPABLE, ctypes.c_ulong(0), 0, 0, 0) == 0


def seal_secrets(names=SECRET_NAMES):
    """Returns {name: value} for the names that were set, and removes them from os.environ."""
    sealed = {}
    for name in names:
        value = os.environ.pop(name, None)
        if value is not None:
            sealed[name] = value
            try:
                os.unsetenv(name)  # os.environ.pop does this too; be explicit about intent
            except OSError:
                pass
    make_non_dumpable()
    return sealed
