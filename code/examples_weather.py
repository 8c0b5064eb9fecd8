"""示例工具：天气。数据是写死的样例（不联网），够演示“模型选工具、填参数”。

    python code/examples_weather.py
"""
import json
from typing import Annotated, Literal

from tool_registry import ToolRegistry

registry = ToolRegistry()

# 样例数据：城市 -> (天气, 摄氏温度, 湿度%)。真实工具会去请求天气接口。
WEATHER = {
    "北京": ("晴", 25, 30), "上海": ("多云", 28, 65), "广州": ("雷阵雨", 31, 80),
    "深圳": ("阵雨", 30, 78), "杭州": ("小雨", 24, 85), "成都": ("阴", 22, 70),
}
FORECAST = ["晴", "多云", "小雨", "阴", "晴", "多云", "晴"]


def _temperature(celsius: float, unit: str) -> str:
    return f"{celsius}°C" if unit == "c" else f"{celsius * 9 / 5 + 32:.0f}°F"


def _lookup(city: str) -> tuple:
    city = city.strip().removesuffix("市")
    if city not in WEATHER:
        raise ValueError(f"没有 {city} 的天气数据，支持的城市：{'、'.join(WEATHER)}")
    return WEATHER[city]


@registry.tool("查询指定城市今天的天气（天气、气温、湿度）。用户问“某地天气怎么样”“冷不冷”时使用", read_only=True)
def get_weather(city: Annotated[str, "城市名，如 北京、上海"],
                unit: Annotated[Literal["c", "f"], "温度单位：c 摄氏度，f 华氏度"] = "c") -> str:
    sky, celsius, humidity = _lookup(city)
    return f"{city.strip()}今天{sky}，气温 {_temperature(celsius, unit)}，湿度 {humidity}%"


@registry.tool("查询指定城市未来几天的天气预报。用户问“明天”“这几天”“周末”的天气时使用", read_only=True)
def get_forecast(city: Annotated[str, "城市名，如 北京"],
                 days: Annotated[int, "预报天数，1~7"] = 3,
                 unit: Annotated[Literal["c", "f"], "温度单位：c 摄氏度，f 华氏度"] = "c") -> list[dict]:
    if not 1 <= days <= 7:
        raise ValueError("days 只能是 1~7")
    _, celsius, _ = _lookup(city)
    start = len(city) % len(FORECAST)      # 让不同城市的样例预报不一样
    return [{"第几天": i + 1, "天气": FORECAST[(start + i) % len(FORECAST)],
             "气温": _temperature(celsius + (i % 3) - 1, unit)} for i in range(days)]


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    print(registry.invoke("get_weather", {"city": "北京"}))
    print(registry.invoke("get_forecast", '{"city": "上海", "days": "2", "unit": "f"}'))
