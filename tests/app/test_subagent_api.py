"""/run_subagent through gradio_client against the real app: the parent delegates with task, the
child runs the same sandboxed tools from nothing, and the verdict looks inside the child."""
from __future__ import annotations

import pytest
from gradio_client import Client

from lessons.editor_panel import EXAMPLE_SETS, example_text

WEATHER = example_text(EXAMPLE_SETS["天气"])


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def run(client, question, **limits):
    return client.predict(WEATHER, question, limits.get("child_turns", 4), limits.get("child_seconds", 60),
                          api_name="/run_subagent")


def test_the_inputs(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    names = [p["parameter_name"] for p in endpoints["/run_subagent"]["parameters"]]
    assert names == ["source", "question", "child_turns", "child_seconds", "provider", "model", "class_code",
                     "max_tokens"]


def test_a_child_that_answered_from_a_tool_makes_a_plain_success(client):
    result = run(client, "派一个子代理去查北京今天的天气，告诉我结论")
    child = [e for e in result["events"] if "child" in e]
    [task] = [e for e in result["events"] if e["type"] == "tool_call" and "child" not in e]
    assert task["name"] == "task" and {e["child"] for e in child} == {task["id"]}
    assert [e["name"] for e in child if e["type"] == "tool_call"] == ["get_weather"]
    assert result["ok"] and result["verdict"]["state"] == "answered" and "北京今天晴" in result["final"]
    assert result["verdict"]["title"] == "2 轮，1 次工具调用"          # the parent's rounds and calls only


def test_a_child_that_answered_without_a_tool_is_named_over_the_parents_success(client):
    result = run(client, "派一个子代理去打个招呼")
    assert not result["ok"] and result["verdict"]["state"] == "child_failed" and result["verdict"]["icon"] == "⚠️"
    assert result["verdict"]["title"].startswith("子代理「打个招呼」：💬 模型没有调用任何工具就直接回答了")


def test_a_child_stopped_by_its_time_is_named_and_not_blamed_on_the_model(client):
    result = run(client, "派一个子代理去查北京今天的天气，告诉我结论", child_seconds=0)
    title = result["verdict"]["title"]
    assert not result["ok"] and result["verdict"]["state"] == "stopped"
    assert title.startswith("子代理「查北京今天的天气，告诉我」用完了给它的时间预算就被停下了，没有做完"
                            "（预算是这次运行的设置「子代理的时间预算」，不是沙箱的限额）")
    assert "模型放弃" not in title and "限额（时间、内存" not in title and title.count("子代理「") == 1
