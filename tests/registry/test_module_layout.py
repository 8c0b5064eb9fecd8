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


def test_the_sandbox_copies_and_preloads_every_module_the_registry_imports():
    from sandbox import pool

    needed, queue = set(), ["tool_registry"]
    while queue:                                 # follow imports between course modules
        name = queue.pop()
        if name not in needed:
            needed.add(name)
            queue.extend(_sibling_imports(CODE / f"{name}.py"))
    assert needed >= {"tool_registry", "type_schema", "tool_arguments"}
    copied = {target for _, target in pool.RUNTIME_FILES}
    assert {f"{name}.py" for name in needed} <= copied
    for source, _ in pool.RUNTIME_FILES:
        assert os.path.exists(source), source
    worker = (pathlib.Path(pool.HERE) / "worker.py").read_text(encoding="utf-8")
    preload = worker[worker.index("def preload"):worker.index("def _warm_registry")]
    for name in needed:
        assert f"import {name}" in preload, f"worker.preload() does not import {name}"
