"""A real small model going round in circles until the conversation outgrows the server's context:
SmolLM2-135M-Instruct on its own llama-server (the lane's calling template chatml_json_calls.jinja,
a small context -c 1024, one thread, fresh: the same run each time), through the course's own loop
and client over HTTP.

Measured: asked 「北京明天会下雨吗？」, the model calls get_weather with the template example's Tokyo;
the tool has no Tokyo; in round 2 the model writes the same ```json call block over and over until
max_tokens (8 times in 256 tokens); llama-server parses each block into a tool_call, the loop runs
them all, and round 3's request (2005 tokens) is refused: 400 "request (2005 tokens) exceeds the
available context size (1024 tokens)". The instructor's run was the same shape with max_tokens 1024
and a larger context (29 calls, 5709 tokens). The verdict must say it: ❌ context_overflow, the
repeated call named with 🔁, the refused round counted, and neither GLM's advice on empty content nor
a larger max_tokens."""
from __future__ import annotations

import time

import pytest

from tests.real_model.conftest import CALLS_TEMPLATE, LlamaServer

pytestmark = pytest.mark.real_model

MAX_TOKENS = 256
CONTEXT = 1024
QUESTION = "北京明天会下雨吗？"


@pytest.fixture(scope="module")
def small_server(real_model_files):
    server = LlamaServer(*real_model_files, template=CALLS_TEMPLATE, context=CONTEXT, thread_count=1)
    yield server
    server.stop()


def test_a_call_repeated_until_the_context_overflows_is_named(small_server):
    import llm_clients
    from examples_weather import registry
    from function_calling_loop import run_function_calling
    from runs import headline, purposes

    client = llm_clients.make_client("openai", "smollm2-135m", api_key="sk-local-llama", base_url=small_server.url + "/v1",
                                      max_tokens=MAX_TOKENS, timeout=300)
    started = time.perf_counter()
    events = [purposes.event(purposes.purpose_for("function_calling", QUESTION)),
              *run_function_calling(client, QUESTION, registry.to_schemas(), registry)]
    calls = [e for e in events if e["type"] == "tool_call"]
    responses = [e for e in events if e["type"] == "response"]
    ended = events[-1]
    verdict = headline.verdict(events)
    print(f"\n{time.perf_counter() - started:.1f} s: {len(calls)} call(s) "
          f"{sorted({c['raw_arguments'] for c in calls})[:3]}, finish {[r['finish_reason'] for r in responses]}, "
          f"ended {ended['type']} {ended.get('code')}; {verdict['icon']} {verdict['state']}: {verdict['title'][:200]}")
    assert ended["type"] == "error" and ended["code"] == "context_exceeded" and ended["turn"] == 3, ended
    assert "exceeds the available context size" in ended["message"] and f"上下文只有 {CONTEXT} 个" in ended["message"]
    # What grew it: one call over and over in a reply cut at max_tokens, said without advising more tokens.
    cut = [r for r in responses if r["finish_reason"] == "length" and r["message"].get("tool_calls")]
    assert cut and "repeated_calls" in [a["code"] for a in cut[0]["accents"]], responses
    assert "调大 max_tokens 没有用" in " ".join(a["message"] for a in cut[0]["accents"])
    # The headline: the real cause, the refused round counted, the repeated call named once.
    assert verdict["state"] == "context_overflow" and verdict["icon"] == "❌"
    assert verdict["title"].startswith("对话超出了服务端的上下文长度，第 3 轮的请求被拒收了")
    assert verdict["title"].count("🔁") == 1 and "重复了" in verdict["title"]
    assert verdict["title"].endswith(f"：3 轮，{len(calls)} 次工具调用")
    for wrong in ("GLM", "content", "max_tokens"):
        assert wrong not in verdict["title"] + verdict["detail"], wrong
