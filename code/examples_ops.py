"""示例工具：运维的三个工具——读服务配置、查订单库、跑一条 shell 命令。钩子一课（8.7）用它们。

它们本身没有任何防护：配置原样交出密钥和密码，SQL 什么语句都“执行”，命令什么都“运行”。
billing 的配置读不出来：工具抛出的报错里带着密钥（真实的报错常常这样，把连接用的凭据一起打印出来）。
钩子就挂在这样的工具外面：结果（和报错）交给模型之前先脱敏，危险的参数在执行之前拦下，每次调用都记一笔。
数据都是虚构的；run_sql 和 bash 只说它们“会做什么”，不碰任何数据库和文件。

试着问：读一下 payments 服务的配置、读一下 billing 服务的配置、执行 SQL `SELECT * FROM orders`、
执行 SQL `DROP TABLE orders`、运行 `rm notes.md`。

    python code/examples_ops.py
"""
from tool_registry import ToolRegistry

registry = ToolRegistry()

CONFIGS = {
    "payments": "endpoint=https://pay.example.com api_key=sk-live9f3b2c7d1e8a4b6c password=hunter2",
    "search": "endpoint=https://search.example.com timeout=3",
}
# 服务 -> 读它的配置时配置中心的报错
UNREACHABLE = {"billing": "配置中心 https://cfg.example.com 拒绝了请求：api_key=sk-cfg0a1b2c3d4e5f6 已过期"}


@registry.tool("读取一个服务的配置（地址、密钥、密码）")
def fetch_config(service: str) -> str:
    """读取服务配置。

    Args:
        service: 服务名，如 payments、search
    """
    if service in UNREACHABLE:
        raise ConnectionError(UNREACHABLE[service])
    if service not in CONFIGS:
        raise ValueError(f"没有服务 {service}，可选：{'、'.join([*CONFIGS, *UNREACHABLE])}")
    return f"服务 {service} 的配置：{CONFIGS[service]}"


@registry.tool("在订单库上执行一条 SQL 语句")
def run_sql(query: str) -> str:
    """执行 SQL。

    Args:
        query: SQL 语句，如 SELECT * FROM orders
    """
    return f"（演示）已执行：{query}。示例订单库返回 3 行。"


@registry.tool("运行一条 shell 命令")
def bash(command: str) -> str:
    """运行命令。

    Args:
        command: 要运行的命令，如 ls
    """
    return f"（演示）已运行：{command}。这个演示工具不碰任何文件。"


if __name__ == "__main__":
    print(registry.call("fetch_config", {"service": "payments"}).content)
    print(registry.call("run_sql", {"query": "SELECT * FROM orders"}).content)
    print(registry.call("bash", {"command": "ls"}).content)
