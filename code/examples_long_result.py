"""示例工具：结果太长。

工具结果会原样进入模型的上下文：上下文窗口很贵，太长的结果还会淹没关键信息。
注册表把超过 RESULT_LIMIT（4000 字）的结果截断，并在末尾写明"共多少字、只保留了前多少字"，
模型知道自己没看到全部，可以缩小范围再查（比如只要前 20 条、只看某一类）。
更好的做法是工具自己就支持分页或筛选：看 list_stores 的 limit 参数。

试着问：列出上海的全部门店（很长，被截断）；上海的前 5 家门店（很短）。

    python code/examples_long_result.py
"""
import json
from typing import Annotated

from tool_outcome import RESULT_LIMIT
from tool_registry import ToolRegistry

registry = ToolRegistry()

CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都"]
DISTRICTS = ["中心区", "东区", "西区", "南区", "北区", "新区", "开发区", "高新区"]


def _stores(city: str) -> list[dict]:
    """样例数据：每个城市 200 家门店。"""
    return [{"编号": f"{city[:1]}{i:03d}", "名称": f"{city}{DISTRICTS[i % len(DISTRICTS)]}第 {i} 号店",
             "营业时间": "09:00-21:00" if i % 3 else "10:00-22:00", "电话": f"400-800-{i:04d}"}
            for i in range(1, 201)]


@registry.tool("列出指定城市的门店（编号、名称、营业时间、电话）。limit 不填就列出全部", read_only=True)
def list_stores(city: Annotated[str, "城市名，如 上海"],
                limit: Annotated[int | None, "最多列出几家；不填表示全部"] = None) -> list[dict]:
    name = city.strip().removesuffix("市")
    if name not in CITIES:
        raise ValueError(f"没有 {name} 的门店数据，支持的城市：{'、'.join(CITIES)}")
    stores = _stores(name)
    return stores if limit is None else stores[:max(limit, 0)]


if __name__ == "__main__":
    print(json.dumps(registry.to_schemas(), ensure_ascii=False, indent=2))
    full = registry.call("list_stores", {"city": "上海"})
    print(f"全部：回填 {len(full.content)} 字，原来 {full.clipped_from} 字（上限 {RESULT_LIMIT}）")
    print(full.content[-60:])
    print(registry.invoke("list_stores", {"city": "上海", "limit": 2}))
