"""code/mcp_schema_diff.py: what FastMCP derives for the same function, against the registry."""
import pathlib
import subprocess
import sys

import mcp_schema_diff
from mcp_schema_diff import MISSING, both_schemas, differences, report, search_orders

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"


def _found():
    schemas = both_schemas(search_orders)
    return {(d.where, d.key): (d.registry, d.fastmcp) for d in
            differences(schemas["registry"]["parameters"], schemas["fastmcp"]["parameters"])}


def test_fastmcp_adds_title_keys_everywhere_and_the_registry_none():
    found = _found()
    assert found[("根", "title")] == (MISSING, "search_ordersArguments")
    for name, title in [("customer", "Customer"), ("status", "Status"), ("limit", "Limit"), ("within", "Within")]:
        assert found[(name, "title")] == (MISSING, title)


def test_descriptions_from_annotated_and_the_docstring_are_lost_by_fastmcp():
    found = _found()
    assert found[("customer", "description")] == ("客户姓名，如 张三", MISSING)
    assert found[("limit", "description")] == ("最多返回几条，不填就全部返回", MISSING)
    schemas = both_schemas(search_orders)
    assert schemas["registry"]["description"] == "按客户查询最近的订单。"
    assert "Args:" in schemas["fastmcp"]["description"]          # the whole docstring, verbatim


def test_defaults_and_types_that_differ():
    found = _found()
    assert found[("within", "default")] == (MISSING, "P7D")       # not JSON: the registry leaves it to the function
    assert found[("limit", "type")] == (["integer", "null"], "integer")   # = None but no Optional
    assert ("limit", "default") not in found and ("status", "default") not in found
    assert found[("根", "additionalProperties")] == (False, MISSING)


def test_identical_schemas_have_no_differences_and_the_report_says_so():
    schema = both_schemas(search_orders)["registry"]["parameters"]
    assert differences(schema, schema) == []
    text = report("search_orders", search_orders)
    assert "【title 键】5 处不同" in text and "【描述】3 处不同" in text and "【默认值】1 处不同" in text


def test_runs_alone_and_on_an_example_file():
    alone = subprocess.run([sys.executable, str(CODE / "mcp_schema_diff.py")], capture_output=True, text=True,
                           timeout=120)
    assert alone.returncode == 0 and "━━ search_orders ━━" in alone.stdout and "FastMCP" in alone.stdout
    weather = subprocess.run([sys.executable, str(CODE / "mcp_schema_diff.py"), str(CODE / "examples_weather.py")],
                             capture_output=True, text=True, timeout=120)
    assert weather.returncode == 0 and "━━ get_weather ━━" in weather.stdout and "━━ get_forecast ━━" in weather.stdout
    assert "【默认值】两边一样" in weather.stdout
    assert mcp_schema_diff.KINDS["title"] in weather.stdout
