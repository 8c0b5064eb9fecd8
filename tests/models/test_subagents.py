"""code/subagents.py on the offline model: the parent delegates with task, the child starts from
nothing with the parent's tools less task, only its final text goes back, and a child out of rounds
or time is stopped (its generator closed: no model call after) and said to have failed."""
from __future__ import annotations

import json

import subagents
from examples_weather import registry
from llm_clients import make_client
from offline.server import OfflineServer

QUESTION = "派一个子代理去查北京今天的天气，告诉我结论"


class Counting:
    """The offline client, counting the model calls made through it."""

    def __init__(self):
        self.client, self.calls = make_client("offline"), 0

    def __getattr__(self, name):
        return getattr(self.client, name)

    def complete(self, *args, **kwargs):
        self.calls += 1
        return self.client.complete(*args, **kwargs)

    def stream(self, *args, **kwargs):
        self.calls += 1
        return self.client.stream(*args, **kwargs)


def run(question=QUESTION, client=None, **limits):
    return list(subagents.run_with_subagents(client or make_client("offline"), question, registry.to_schemas(),
                                             registry, **limits))


def test_the_child_starts_from_nothing_and_only_its_answer_goes_back():
    events = run()
    parent = [e for e in events if "child" not in e]
    child = [e for e in events if "child" in e]
    [task] = [e for e in parent if e["type"] == "tool_call"]
    assert task["name"] == "task" and task["arguments"]["prompt"] == "查北京今天的天气，告诉我结论"
    assert {e["child"] for e in child} == {task["id"]}
    first = next(e for e in child if e["type"] == "request")
    assert first["messages"] == [{"role": "system", "content": subagents.CHILD_SYSTEM},
                                 {"role": "user", "content": "查北京今天的天气，告诉我结论"}]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "get_forecast"]
    child_final = next(e for e in child if e["type"] == "final")
    [result] = [e for e in parent if e["type"] == "tool_result"]
    assert result["ok"] and result["content"] == child_final["content"]
    second = [e for e in parent if e["type"] == "request"][1]["messages"]
    assert "get_weather" not in str(second[:-1][-1]) and second[-1]["content"] == child_final["content"]
    assert "北京今天晴" in parent[-1]["content"]


def test_a_child_out_of_rounds_is_a_failed_result_not_an_answer():
    events = run("派一个子代理去查北京和上海今天的天气", child_turns=1)
    [result] = [e for e in events if e["type"] == "tool_result" and "child" not in e]
    assert not result["ok"] and result["error_code"] == "subagent_failed"
    assert result["content"].startswith("❌ [子代理没做完] 子代理没有做完（max_turns）")


def test_a_child_over_its_time_is_stopped_before_its_next_model_call():
    client = Counting()
    events = run(client=client, child_seconds=0)
    child = [e for e in events if "child" in e]
    assert [e["type"] for e in child] == ["request"]           # closed right after: it never asked the model
    [result] = [e for e in events if e["type"] == "tool_result"]
    assert not result["ok"] and result["error_code"] == "timeout" and "0 秒的时间预算" in result["content"]
    assert client.calls == 2                                   # the parent's two rounds, none of the child's


def test_closing_the_parent_closes_the_child():
    client = Counting()
    steps = subagents.run_with_subagents(client, QUESTION, registry.to_schemas(), registry)
    for event in steps:
        if "child" in event and event["type"] == "response":
            break
    asked = client.calls
    steps.close()
    assert asked == 2 and client.calls == 2                    # parent round 1, child round 1, then nothing


def test_a_child_cannot_delegate_again():
    events = run()
    child_requests = [e for e in events if "child" in e and e["type"] == "request"]
    assert all("task" not in [t["function"]["name"] for t in e["tools"]] for e in child_requests)
    parent_request = next(e for e in events if e["type"] == "request")
    assert [t["function"]["name"] for t in parent_request["tools"]][-1] == "task"


def test_without_being_asked_the_offline_model_does_the_work_itself():
    events = run("北京今天天气怎么样？")
    assert [e["name"] for e in events if e["type"] == "tool_call"] == ["get_weather"]
    assert not any("child" in e for e in events)


def task_call(call_id: str, arguments: dict | str) -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": "task", "arguments": text}}


def test_bad_task_calls_and_a_fourth_in_one_round_start_no_child():
    """Over HTTP through the openai SDK: the offline server sends a scripted first reply with six task
    calls, then the offline model answers each child and the parent as usual."""
    server = OfflineServer().start()
    try:
        job = {"description": "查天气", "prompt": "查北京今天的天气"}
        server.queue({"message": {"content": None, "tool_calls": [
            task_call("a", job), task_call("b", job), task_call("c", {"description": "x"}),
            task_call("d", "{broken"), task_call("e", job), task_call("f", job)]}})
        client = make_client("openai", api_key="sk-offline", base_url=server.url)
        events = run(client=client)
    finally:
        server.stop()
    results = {e["id"]: e for e in events if e["type"] == "tool_result" and "child" not in e}
    assert {e["child"] for e in events if "child" in e} == {"a", "b", "e"}
    assert results["c"]["error_code"] == "invalid_arguments" and "task 需要不空的文字参数 prompt" in results["c"]["content"]
    assert results["d"]["error_code"] == "invalid_json"
    assert results["f"]["error_code"] == "forbidden" and "这一轮已经派了 3 个子代理" in results["f"]["content"]
    assert all(results[i]["ok"] for i in "abe")


def test_the_runs_answer_is_the_parents_never_a_childs():
    from runs import headline

    events = run(max_turns=1)                  # the parent runs out of rounds after its child answered
    assert any(e["type"] == "final" and "child" in e for e in events)
    said = headline.summary(events)
    assert said["final"] == "" and said["error"]["code"] == "max_turns" and not said["ok"]


def test_a_students_own_tool_named_task_is_not_taken_for_the_sub_agent_tool():
    from function_calling_loop import run_function_calling
    from tool_registry import ToolRegistry

    own = ToolRegistry()

    @own.tool("查询指定城市今天的天气")
    def task(city: str) -> str:
        """查天气。

        Args:
            city: 城市名
        """
        return f"{city}：晴"

    events = list(run_function_calling(make_client("offline"), "北京今天天气怎么样？", own.to_schemas(), own))
    assert [e["arguments"] for e in events if e["type"] == "tool_call"] == [{"city": "北京"}]


def test_two_tasks_in_one_round_run_at_once_and_each_child_calls_one_at_a_time():
    import threading
    import time

    running, most = [0], [0]
    lock = threading.Lock()

    def slow(name, args):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return registry.call(name, args)
    slow.max_parallel = 2

    question = "派一个子代理去查北京今天的天气，再派一个子代理去查上海今天的天气"
    run = list(subagents.run_with_subagents(make_client("offline"), question, registry.to_schemas(), slow))
    tasks = [e for e in run if e["type"] == "tool_result" and "child" not in e]
    assert [e["name"] for e in tasks] == ["task", "task"] and all(e["ok"] for e in tasks)
    first, second = tasks
    assert second["started_ms"] < first["finished_ms"] and first["round_ms"] == second["round_ms"]
    assert most[0] == 2                  # the two children's tools ran at the same time, one call each
    children = {e["child"] for e in run if "child" in e}
    assert children == {first["id"], second["id"]}
    final = run[-1]
    assert final["type"] == "final" and "北京今天晴" in final["content"] and "上海今天多云" in final["content"]
