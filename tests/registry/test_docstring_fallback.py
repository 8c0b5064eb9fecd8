"""A docstring whose parameter section docstring-parser cannot read must not break the import of the module."""
from tool_registry import ToolRegistry


def test_args_on_the_first_line_is_read_after_realigning():
    registry = ToolRegistry()

    @registry.tool("加法")
    def add(a: int, b: int = 1) -> int:
        """Args:
            a: 第一个加数
            b: 第二个加数
                可以换行
        """
        return a + b

    properties = registry.to_schemas()[0]["function"]["parameters"]["properties"]
    assert properties["a"]["description"] == "第一个加数"
    assert properties["b"]["description"] == "第二个加数 可以换行"
    assert registry.warnings()["add"] == []


def test_args_on_the_first_line_without_closing_line():
    registry = ToolRegistry()

    @registry.tool("加法")
    def add(a: int) -> int:
        """Args:
            a: 第一个加数"""
        return a

    assert registry.to_schemas()[0]["function"]["parameters"]["properties"]["a"]["description"] == "第一个加数"


def test_unreadable_parameter_section_becomes_a_warning():
    registry = ToolRegistry()

    @registry.tool("什么都不做")
    def nothing(a: int) -> int:
        """Args:
        """
        return a

    warnings = registry.warnings()["nothing"]
    assert any("文档字符串的参数段读不懂" in w for w in warnings)
    assert "description" not in registry.to_schemas()[0]["function"]["parameters"]["properties"]["a"]
    assert registry.invoke("nothing", {"a": 3}) == "3"
