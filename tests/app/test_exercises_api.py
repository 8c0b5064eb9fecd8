"""/check_exercise through gradio_client against the real app: only what differs from the starting
state is sent; the verdict says what failed, in both languages, and the hint comes after a failure."""
from __future__ import annotations

import json

import pytest
from gradio_client import Client

from catalogue.exercises import BY_ID


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def check(client, lesson, exercise, state=None):
    return client.predict(lesson, exercise, json.dumps(state or {}, ensure_ascii=False), api_name="/check_exercise")


def test_the_inputs(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    names = [p["parameter_name"] for p in endpoints["/check_exercise"]["parameters"]]
    assert names == ["lesson", "exercise", "state", "provider", "model", "class_code", "max_tokens"]


def test_the_start_fails_with_a_hint_and_the_fix_passes(client):
    started = check(client, "context", "context_keep_name")
    assert started["ok"] and not started["passed"]
    assert any("小林" in f["zh"] for f in started["failures"]) and started["hint"]["en"]
    assert "solution" not in started     # the reference solution is only on the page, on request
    run = started["trials"][0]
    assert run["model"] == "offline" and any(e["type"] == "context" for e in run["events"])

    solved = check(client, "context", "context_keep_name", {"strategy": "compact"})
    assert solved["ok"] and solved["passed"] and solved["failures"] == [] and "hint" not in solved


def test_a_hook_typed_by_the_student(client):
    verdict = check(client, "hooks", "hooks_block_rm", dict(BY_ID["hooks_block_rm"].solution))
    assert verdict["passed"], verdict["failures"]
    assert [t["question"] for t in verdict["trials"]] == ["运行 `rm -rf build`", "运行 `ls`"]


def test_what_cannot_be_checked_is_said(client):
    wrong = check(client, "hooks", "context_keep_name")
    assert not wrong["ok"] and "hooks 没有练习 context_keep_name" in wrong["problem"]
    field = check(client, "context", "context_fit", {"rules": "{}"})
    assert not field["ok"] and "没有字段 rules" in field["problem"]
    broken = client.predict("context", "context_fit", "{not json", api_name="/check_exercise")
    assert not broken["ok"] and "JSON" in broken["problem"]


def test_a_fork_sent_by_name(client):
    """The sessions lesson's fork is two fields: the message's id (the session file's) and its new text."""
    from catalogue.exercises import RESULT_ID, STORM
    solved = check(client, "sessions", "sessions_fork_result", {"fork_entry": RESULT_ID, "fork_content": STORM})
    assert solved["passed"], solved["failures"]
    unknown = check(client, "sessions", "sessions_fork_result", {"fork_entry": "nope", "fork_content": STORM})
    assert not unknown["passed"] and any("nope" in f["zh"] for f in unknown["failures"]), unknown["failures"]
