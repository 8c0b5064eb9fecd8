"""The server's side of what a student typed in one lesson's page (a key, the class code) and the
tab's other pages use."""
from __future__ import annotations

from access.typed_keys import CLASS_CODE, HANDLE_LENGTH, TypedKeys


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_handle_gives_back_its_key_and_nothing_else_does():
    keys = TypedKeys(ttl=60)
    handle = keys.hold("sk-student-1")
    assert len(handle) == HANDLE_LENGTH and "sk-student-1" not in handle
    assert keys.key(handle) == "sk-student-1"
    assert keys.key(handle[:-1] + ("A" if handle[-1] != "A" else "B")) == ""
    assert keys.key("") == "" and keys.key(None) == "" and keys.key("x" * 500) == ""


def test_one_handle_holds_the_tab_s_key_and_class_code_each_forgotten_alone():
    keys = TypedKeys(ttl=60)
    handle = keys.hold("sk-first")
    assert keys.hold("sk-second", handle) == handle and keys.key(handle) == "sk-second"
    assert keys.hold("code-42", handle, CLASS_CODE) == handle and keys.key(handle, CLASS_CODE) == "code-42"
    assert keys.hold("", handle) == handle
    assert keys.key(handle) == "" and keys.key(handle, CLASS_CODE) == "code-42" and len(keys) == 1
    assert keys.hold("", "") == "" and len(keys) == 1            # forgetting nothing makes no entry
    assert keys.hold("", handle, CLASS_CODE) == "" and len(keys) == 0   # nothing left: no handle either


def test_an_idle_handle_expires_and_each_use_keeps_it():
    clock = Clock()
    keys = TypedKeys(ttl=100, clock=clock)
    handle = keys.hold("sk-student")
    clock.now = 90
    assert keys.key(handle) == "sk-student"       # used: another 100 s from here
    clock.now = 180
    assert keys.key(handle) == "sk-student"
    clock.now = 281
    assert keys.key(handle) == "" and len(keys) == 0
    assert keys.hold("sk-again", handle) != handle   # an expired handle is not brought back


def test_dropped_handles_and_the_oldest_beyond_the_cap_are_gone():
    keys = TypedKeys(ttl=60, max_entries=2)
    first, second = keys.hold("a"), keys.hold("b")
    keys.drop(second)
    assert keys.key(second) == ""
    third, fourth = keys.hold("c"), keys.hold("d")
    assert keys.key(first) == "" and keys.key(third) == "c" and keys.key(fourth) == "d"
