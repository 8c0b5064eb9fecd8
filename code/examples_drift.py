"""漂移示例：函数改了，手写的 schema 没改。

get_weather 的参数原来叫 city，后来改名为 location（好让人写“北京朝阳区”这样更细的地点）。
HAND_WRITTEN_SCHEMA 是当初照着旧函数手写的，改函数时忘了改它，它仍然告诉模型“参数叫 city”。
没有任何东西会发现这件事，直到模型照着它调用：

    get_weather(**{"city": "北京"})  ->  TypeError: get_weather() got an unexpected keyword argument 'city'

错误只在运行时出现，而且是一句写给程序员的 Python 异常。
ToolRegistry 的 schema 从签名推出来，函数改了它就跟着变；万一还有人拿着旧参数来调用，
注册表在执行之前就说清楚：未知参数 city（是不是想用 location？）。

    python code/examples_drift.py
"""
import json
from typing import Annotated, Literal

from tool_registry import ToolRegistry

registry = ToolRegistry()

WEATHER = {"北京": ("晴", 25), "上海": ("多云", 28), "广州": ("雷阵雨", 31)}   # 写死的样例数据，不联网

# 当初照着旧函数 get_weather(city, unit) 手写的 schema。函数改了参数名，这里没人改。
HAND_WRITTEN_SCHEMA = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "查询指定城市今天的天气",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "城市名，如 北京"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
}


@registry.tool("查询指定地点今天的天气。用户问“某地天气怎么样”时使用", read_only=True)
def get_weather(location: Annotated[str, "地点，如 北京"],
                unit: Annotated[Literal["c", "f"], "温度单位：c 摄氏度，f 华氏度"] = "c") -> str:
    city = next((name for name in WEATHER if location.strip().startswith(name)), None)
    if city is None:
        raise ValueError(f"没有 {location} 的天气数据，支持的城市：{'、'.join(WEATHER)}")
    sky, celsius = WEATHER[city]
    temperature = f"{celsius}°C" if unit == "c" else f"{celsius * 9 / 5 + 32:.0f}°F"
    return f"{location.strip()}今天{sky}，气温 {temperature}"


if __name__ == "__main__":
    old_call = {"city": "北京"}        # 模型照着手写的 schema 写出的参数
    hand = HAND_WRITTEN_SCHEMA["function"]["parameters"]["properties"]
    derived = registry.to_schemas()[0]["function"]["parameters"]["properties"]
    print("手写的 schema 说参数是：", json.dumps(list(hand), ensure_ascii=False))
    print("注册表从签名推出的是：  ", json.dumps(list(derived), ensure_ascii=False))
    try:
        get_weather(**old_call)
    except TypeError as exc:
        print("旧参数直接调用函数：", f"{type(exc).__name__}: {exc}")
    print("旧参数经过注册表：  ", registry.invoke("get_weather", old_call))
    print("新参数经过注册表：  ", registry.invoke("get_weather", {"location": "北京"}))
