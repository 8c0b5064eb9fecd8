"""循环 1/5：最小的工具调用循环。first_call.py 只问了一次，这里把那一次变成一个循环；后面的循环都是它长大以后的样子。

问模型 → 模型要工具就照做、把结果放回对话 → 再问，直到它不再要工具。工具名 -> 函数用一个 dict 查。
没有错误处理、没有截断、没有轮数上限：这些由 function_calling_loop.py 一条条补上。
"""
import json

from llm_clients import make_client

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "查询指定城市的当前天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
HANDLERS = {"get_weather": lambda city: f"{city}：晴，25℃"}     # 加一个工具 = 在 TOOLS 和这里各加一项


def agent_loop(client, question: str) -> str:
    messages = [{"role": "user", "content": question}]
    while True:
        message = client.complete(messages, tools=TOOLS).message
        messages.append(message)                 # 模型的回复（含 tool_calls）也要放回历史
        if not message.get("tool_calls"):
            return message["content"]
        for call in message["tool_calls"]:       # 一次可能要好几个工具
            arguments = json.loads(call["function"]["arguments"])
            result = HANDLERS[call["function"]["name"]](**arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})


if __name__ == "__main__":
    print(agent_loop(make_client("offline"), "北京和上海的天气怎么样？"))   # 换成 make_client("glm") 就是真模型
