"""示例工具：会超时的工具。

工具背后的接口可能很慢，甚至卡住不返回。不设上限，整个对话就跟着卡住。
ToolRegistry(timeout=秒) 给每次调用设一个上限：超过就不再等，交回
"❌ [超时] …超过 … 秒没有返回。…"，模型可以换个做法或如实告诉用户。
（Python 没法强行结束一个线程：超时后只是不再等它。真正能杀掉的硬上限在页面的沙箱里：
每次调用最多几秒，到时连进程一起结束。）

试着问：北京现在的路况怎么样？（北京的路况接口很慢，会超时）再问上海的（很快）。

    python code/examples_timeout.py
"""
import json
import time
from typing import Annotated

from tool_registry import ToolRegistry

registry = ToolRegistry(timeout=0.8)       # 每次调用最多等 0.8 秒

# 样例数据：城市 -> (拥堵指数, 接口要花几秒才返回)。北京的接口慢得超过了上限。
TRAFFIC = {"北京": (1.9, 5.0), "上海": (1.6, 0.05), "广州": (1.5, 0.05), "深圳": (1.4, 0.1), "杭州": (1.3, 0.05)}


@registry.tool("查询城市当前的道路拥堵情况（路况）。用户问“路况”“堵不堵”时使用", read_only=True)
def get_traffic(city: Annotated[str, "城市名，如 上海"]) -> str:
    name = city.strip().removesuffix("市")
    if name not in TRAFFIC:
        raise ValueError(f"没有 {name} 的路况数据，支持的城市：{'、'.join(TRAFFIC)}")
    index, seconds = TRAFFIC[name]
    time.sleep(seconds)                    # 假装在等一个很慢的接口
    return f"{name}当前拥堵指数 {index}（{'拥堵' if index >= 1.8 else '缓行' if index >= 1.5 else '畅通'}）"


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    for city in ("上海", "北京"):
        outcome = registry.call("get_traffic", {"city": city})
        print(f"{city} → [{outcome.error_code or 'ok'}] {outcome.content}（{outcome.duration_ms:.0f} ms）")
