"""The registry lives in three course modules; everything students and the app import keeps working, and the
sandbox ships every module the registry needs."""
import ast
import os
import pathlib

import pytest

import tool_registry

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"


@pytest.mark.parametrize("name", [
    "ToolRegistry", "Tool", "ToolOutcome", "Validation", "build_tool", "error_text", "format_result",
    "MAX_RESULT_CHARS", "read_docstring", "strict_schema", "enum_schema", "json_type", "accepts_null", "or_null",
    "to_python",
])
def test_public_names_are_importable_from_tool_registry(name):
    assert hasattr(tool_registry, name)


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
