"""/run_sessions through gradio_client against the real app: a session as JSONL passed back and forth,
a fork that runs on from an edited tool result, a branch asked on, and a hostile session refused."""
from __future__ import annotations

import json

import pytest
from gradio_client import Client

RAIN = "北京今天大雨，气温 18°C"
SUNNY = "北京今天晴"


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def requests(result) -> list[str]:
    """Each request the run sent, as the JSON text of its messages."""
    return [json.dumps(e["messages"], ensure_ascii=False) for e in result["events"] if e["type"] == "request"]


def test_the_inputs(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    parameters = endpoints["/run_sessions"]["parameters"]
    assert [p["parameter_name"] for p in parameters] == ["question", "session", "branch", "fork_entry", "fork_text",
                                                         "source", "provider", "model", "class_code", "max_tokens"]
    assert [p["parameter_name"] for p in parameters if not p["parameter_has_default"]] == ["question"]


def test_a_question_alone_starts_a_session_that_comes_back_as_jsonl(client):
    result = client.predict("北京今天天气怎么样？", api_name="/run_sessions")
    lines = [json.loads(line) for line in result["session"].splitlines()]
    assert result["ok"] and SUNNY in result["final"] and result["session_problem"] is None
    assert lines[0]["type"] == "session" and [line["message"]["role"] for line in lines[1:]] == [
        "user", "assistant", "tool", "assistant"]
    assert [row["number"] for row in result["branches"]] == [1] and result["branch"] == lines[1]["id"]


def test_a_fork_runs_on_from_the_edited_result_and_no_request_holds_the_other_branch(client):
    first = client.predict("北京今天天气怎么样？", api_name="/run_sessions")
    tool = next(json.loads(line) for line in first["session"].splitlines()[1:]
                if json.loads(line)["message"]["role"] == "tool")
    forked = client.predict("", first["session"], "", tool["id"], RAIN, api_name="/run_sessions")
    assert forked["verdict"]["state"] == "hand_written" and RAIN in forked["final"]
    assert [row["number"] for row in forked["branches"]] == [1, 2] and forked["branches"][1]["current"]
    assert forked["branches"][1]["change"]["before"].startswith(SUNNY)
    sent = requests(forked)
    assert sent and all(RAIN in body and SUNNY not in body for body in sent)

    # Branch 1 asked on: its history goes with the question, none of branch 2's.
    on = client.predict("广州冷不冷？", forked["session"], first["branch"], api_name="/run_sessions")
    sent = requests(on)
    assert sent and all(SUNNY in body and RAIN not in body and "广州冷不冷？" in body for body in sent)
    assert len(on["branches"]) == 2 and on["branch"] == first["branch"]


def test_a_hostile_session_is_refused_with_its_line_and_comes_back_as_it_was(client):
    hostile = ('{"type": "session", "format": "tool-workshop-session", "version": 1, "id": "s1", '
               '"time": "2025-01-01T08:00:00Z"}\n'
               '{"type": "message", "id": "a", "parent_id": "a", "time": "2025-01-01T08:00:00Z", '
               '"message": {"role": "user", "content": "hi"}}\n')
    result = client.predict("北京今天天气怎么样？", hostile, api_name="/run_sessions")
    assert not result["ok"] and result["session"] == hostile
    assert result["session_problem"]["line"] == 2 and "parent_id 是它自己" in result["session_problem"]["zh"]
    assert [e["type"] for e in result["events"]] == ["purpose", "error"]
    assert "parent_id 是它自己" in result["error"]["message"]


def test_a_fork_of_a_later_message_keeps_the_history_before_it(client):
    first = client.predict("北京今天天气怎么样？", api_name="/run_sessions")
    on = client.predict("广州冷不冷？", first["session"], api_name="/run_sessions")
    follow_up = [json.loads(line) for line in on["session"].splitlines()[1:]][4]
    assert follow_up["message"] == {"role": "user", "content": "广州冷不冷？"}
    forked = client.predict("", on["session"], "", follow_up["id"], "北京明天会下雨吗？", api_name="/run_sessions")
    assert forked["verdict"]["state"] == "answered" and len(forked["branches"]) == 2
    assert forked["branches"][1]["change"]["kind"] == "user" and forked["branches"][1]["fork_point"] == follow_up["parent_id"]
    sent = requests(forked)
    assert sent and all(SUNNY in body and "北京明天会下雨吗？" in body and "广州冷不冷？" not in body for body in sent)
