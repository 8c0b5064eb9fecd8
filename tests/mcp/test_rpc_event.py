"""events.rpc: one JSON-RPC message, its kind read from its shape."""
import json

import events


def test_kinds_methods_and_a_copy_of_the_message():
    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_weather", "arguments": {}}}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    result = {"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": True}}
    failure = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}}
    made = [events.rpc(1, "send", request), events.rpc(1, "send", note),
            events.rpc(2, "receive", result, "tools/call", 12.34567), events.rpc(2, "receive", failure, "tools/list")]
    assert [(e["kind"], e["method"], e["id"]) for e in made] == [
        ("request", "tools/call", 3), ("notification", "notifications/initialized", None),
        ("result", "tools/call", 3), ("error", "tools/list", 4)]
    assert made[0]["params"]["name"] == "get_weather" and made[2]["result"]["isError"] is True
    assert made[3]["error"]["code"] == -32601 and made[2]["at_ms"] == 12.346
    request["params"]["name"] = "changed"                  # the event keeps what was on the wire
    assert made[0]["message"]["params"]["name"] == made[0]["params"]["name"] == "get_weather"
    json.dumps(made)                                       # events are plain JSON
