"""The registry's results are the shared tool outcome, and the sandbox ships every module the registry needs."""
import ast
import pathlib

import tool_registry

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"


def test_the_registry_hands_back_the_shared_tool_outcome():
    """One shape, one label table, one truncation: the registry's results are tool_outcome's."""
    import tool_outcome

    registry = tool_registry.ToolRegistry()

    @registry.tool("重复一个字")
    def repeat(count: int) -> str:
        return "字" * count

    long = registry.call("repeat", {"count": tool_outcome.RESULT_LIMIT + 1})
    assert type(long) is tool_outcome.ToolOutcome and long.ok
    assert (long.content, long.clipped_from) == tool_outcome.clip("字" * (tool_outcome.RESULT_LIMIT + 1))
    assert registry.call("repeat", {"count": 3}).clipped_from is None
    bad = registry.call("repeat", '{"count": ')
    assert bad.content.startswith(f"❌ [{tool_outcome.LABELS['invalid_json']}] ") and bad.error_code == "invalid_json"


def _sibling_imports(path: pathlib.Path) -> set[str]:
    """Course modules (files in code/) that a module imports at its top level."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return {name for name in names if (CODE / f"{name}.py").exists()}


def test_the_sandbox_worker_has_every_module_the_registry_imports_loaded_before_the_job():
    import json

    import sandbox

    needed, queue = set(), ["tool_registry", "tool_outcome"]
    while queue:                                 # follow imports between course modules
        name = queue.pop()
        if name not in needed:
            needed.add(name)
            queue.extend(_sibling_imports(CODE / f"{name}.py"))
    assert needed >= {"tool_registry", "type_schema", "tool_arguments", "tool_outcome"}
    names = sorted(needed)
    # The job's own module looks before it imports anything: what is in sys.modules then was
    # loaded by the worker in advance (before its limits); each must also import in the job.
    source = f"""import sys
LOADED = sorted(name for name in {names!r} if name in sys.modules)
import importlib
for name in {names!r}:
    importlib.import_module(name)
from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("报告工作进程预先导入的课程模块")
def loaded() -> list:
    return LOADED
"""
    result = sandbox.run_tool(source, "loaded", {})
    assert result["ok"], result
    assert json.loads(result["content"]) == names
