"""示例工具：天气，但描述写得含糊（评估一课用它做对照）。

函数和数据照抄 examples_weather.py（工具源码要能单独运行），只有写给模型看的描述变了：两个工具都只说"天气"，参数也不说
该填什么。人读代码分得清哪个查今天、哪个查预报；模型只看得到描述，就分不清了。
在评估页上用同一组用例各跑一次，看通过率差多少；再把描述改回去，看它回来。

    python code/examples_weather_vague.py
"""
import json
from typing import Annotated, Literal

from tool_registry import ToolRegistry

registry = ToolRegistry()

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


@registry.tool("天气", read_only=True)
def get_weather(city: Annotated[str, "城市"], unit: Annotated[Literal["c", "f"], "单位"] = "c") -> str:
    sky, celsius, humidity = _lookup(city)
    return f"{city.strip()}今天{sky}，气温 {_temperature(celsius, unit)}，湿度 {humidity}%"


@registry.tool("天气", read_only=True)
def get_forecast(city: Annotated[str, "城市"], days: Annotated[int, "天数"] = 3,
                 unit: Annotated[Literal["c", "f"], "单位"] = "c") -> list[dict]:
    if not 1 <= days <= 7:
        raise ValueError("days 只能是 1~7")
    _, celsius, _ = _lookup(city)
    start = len(city) % len(FORECAST)
    return [{"第几天": i + 1, "天气": FORECAST[(start + i) % len(FORECAST)],
             "气温": _temperature(celsius + (i % 3) - 1, unit)} for i in range(days)]


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
