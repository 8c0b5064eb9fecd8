"""The registry's results are the shared tool outcome, and the sandbox ships every module the registry needs."""
import ast
import os
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
