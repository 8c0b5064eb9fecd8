"""示例工具：异步工具（async def）。

真实的工具大多在等网络：查接口、查数据库。用 async def 写，等待的时候不占着线程。
注册表认得 async def（inspect.iscoroutinefunction），调用时在事件循环里等它跑完，对模型来说和普通工具一样。
模型一次要查好几个城市时，循环会同时执行这几个调用：每个等 0.3 秒，一起查总共也只要 0.3 秒左右，
看时间线里每个调用的起止时刻。

试着问：北京和上海的空气质量怎么样？

    python code/examples_async.py
"""
import asyncio
import json
from typing import Annotated, Literal

from tool_registry import ToolRegistry

registry = ToolRegistry()

# 样例数据：城市 -> (AQI, 首要污染物)。真实工具会 await 一个 HTTP 请求。
AIR = {"北京": (68, "PM2.5"), "上海": (45, "臭氧"), "广州": (52, "PM10"), "深圳": (31, "无"),
       "杭州": (58, "PM2.5"), "成都": (77, "PM2.5")}
RATES = {"usd": 7.12, "eur": 7.74, "jpy": 0.047, "gbp": 9.05}      # 1 单位外币 = 多少人民币（样例）
NETWORK_DELAY = 0.3                                                # 假装在等网络（秒）


def _level(aqi: int) -> str:
    return "优" if aqi <= 50 else "良" if aqi <= 100 else "轻度污染"


@registry.tool("查询指定城市当前的空气质量（AQI）。用户问“空气怎么样”“雾霾”“AQI”时使用", read_only=True)
async def get_air_quality(city: Annotated[str, "城市名，如 北京、上海"]) -> str:
    await asyncio.sleep(NETWORK_DELAY)        # 等待时事件循环可以去做别的事
    name = city.strip().removesuffix("市")
    if name not in AIR:
        raise ValueError(f"没有 {name} 的空气质量数据，支持的城市：{'、'.join(AIR)}")
    aqi, pollutant = AIR[name]
    return f"{name}当前 AQI {aqi}（{_level(aqi)}），首要污染物：{pollutant}"


@registry.tool("查询外币兑人民币的汇率。用户问“美元汇率”“欧元换人民币”时使用", read_only=True)
async def get_exchange_rate(currency: Annotated[Literal["usd", "eur", "jpy", "gbp"],
                                                "外币：usd 美元，eur 欧元，jpy 日元，gbp 英镑"]) -> str:
    await asyncio.sleep(NETWORK_DELAY)
    return f"1 {currency.upper()} = {RATES[currency]} 人民币（样例数据）"


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    print(registry.tools["get_air_quality"].is_async, registry.invoke("get_air_quality", {"city": "北京"}))
    print(registry.invoke("get_exchange_rate", {"currency": "usd"}))
