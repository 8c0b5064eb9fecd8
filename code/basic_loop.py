"""循环 2：错误也是一种结果。比 minimal_loop.py 只多了一件事：模型写错的地方，循环不崩，而是告诉它。

minimal_loop.py 在三种情况下会抛异常、整个程序停下：
  - 模型点了一个不存在的工具（HANDLERS[name] 找不到）；
  - 参数不是合法的 JSON（json.loads 抛错）；
  - 工具自己抛了异常（参数不对、接口出错……）。
这里把这三种都写成一条 role "tool" 的结果放回对话：模型下一轮读到“错在哪、该怎么改”，通常自己就改对了。
还多了一个轮数上限 max_turns：错误会被反馈，模型就可能一直改不对，循环总得有个头。

其余什么都没加：没有事件、没有流式、没有并行、结果不截断。这些在 function_calling_loop.py 里一条条补上。
"""
import json

from llm_clients import make_client

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "查询指定城市的当前天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
HANDLERS = {"get_weather": lambda city: f"{city}：晴，25℃"}


def run_tool(name: str, raw_arguments: str) -> str:
    """执行一个调用，永远返回一段文字：成功是结果，失败是“错在哪、怎么改”。"""
    if name not in HANDLERS:
        return f"❌ 没有叫 {name} 的工具。可用的工具：{'、'.join(HANDLERS)}"
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError as error:
        return f"❌ 参数不是合法的 JSON（{error.msg}）。请重新输出一个 JSON 对象，如 {{\"city\": \"北京\"}}"
    try:
        return str(HANDLERS[name](**arguments))
    except Exception as error:               # 参数名不对、类型不对、工具自己出错……都告诉模型
        return f"❌ {name} 执行出错：{type(error).__name__}: {error}。请检查参数后重试"


def agent_loop(client, question: str, max_turns: int = 6, messages: list | None = None) -> str:
    messages = [] if messages is None else messages     # 传一个列表进来，跑完能看到整段对话
    messages.append({"role": "user", "content": question})
    for _ in range(max_turns):
        message = client.complete(messages, tools=TOOLS).message
        messages.append(message)
        if not message.get("tool_calls"):
            return message["content"]
        for call in message["tool_calls"]:
            result = run_tool(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return f"已经用完 {max_turns} 轮，还没有得到最终回答。"


if __name__ == "__main__":
    client = make_client("offline", mistake="bad_json")     # 离线模型第一轮故意写坏参数的 JSON
    conversation: list = []
    answer = agent_loop(client, "北京今天天气怎么样？", messages=conversation)
    for message in conversation:
        if message["role"] == "tool":
            print("工具结果：", message["content"])
    print("最终回答：", answer)
