"""@registry.tool(read_only=..., destructive=...) records MCP tool annotations and leaves the schema alone."""
import tool_registry


def _pair():
    plain, marked = tool_registry.ToolRegistry(), tool_registry.ToolRegistry()

    def lookup(city: str, days: int = 3) -> str:
        """查天气。

        Args:
            city: 城市
        """
        return city

    plain.tool("查询天气")(lookup)
    marked.tool("查询天气", read_only=True)(lookup)
    return plain, marked


def test_annotations_do_not_change_the_schema_and_are_kept_on_the_tool():
    plain, marked = _pair()
    assert plain.to_schemas() == marked.to_schemas()
    assert plain.to_schemas(strict=True) == marked.to_schemas(strict=True)
    assert (plain.tools["lookup"].read_only, plain.tools["lookup"].destructive) == (None, None)
    assert (marked.tools["lookup"].read_only, marked.tools["lookup"].destructive) == (True, None)
    assert plain.warnings() == marked.warnings()


def test_bare_decorator_and_docstring_description_still_work_with_annotations():
    registry = tool_registry.ToolRegistry()

    @registry.tool(destructive=True, read_only=False)
    def drop(table: str) -> str:
        """删除一张表。"""
        return table

    tool = registry.tools["drop"]
    assert tool.description == "删除一张表。" and (tool.read_only, tool.destructive) == (False, True)


def test_contradictory_annotations_are_a_warning_not_an_error():
    registry = tool_registry.ToolRegistry()

    @registry.tool("矛盾", read_only=True, destructive=True)
    def both(x: int) -> int:
        return x

    assert any("矛盾" in text for text in registry.warnings()["both"])
