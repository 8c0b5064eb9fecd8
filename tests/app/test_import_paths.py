"""One path rule (import_paths.use_project_paths) for the app, the sandbox and the tests: a course
module's bare name (`events`, `permissions`...) is always code/'s file, even when a module of that
name is installed elsewhere and comes earlier on the path."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import import_paths

ROOT = pathlib.Path(__file__).resolve().parents[2]
CODE = ROOT / "code"
SHADOWED = ("events", "permissions", "tool_outcome", "tool_registry", "llm_clients", "loop_parts", "accents")

PROBE = """
import importlib, importlib.util, json, sys
sys.path.insert(0, sys.argv[1])          # a folder of look-alike modules, as if installed in site-packages
import {entry}
found = {{name: importlib.util.find_spec(name).origin for name in {names!r}}}
loaded = {{name: sys.modules[name].__file__ for name in {names!r} if name in sys.modules}}
print(json.dumps({{"found": found, "loaded": loaded, "head": sys.path[:2]}}))
"""


@pytest.fixture
def look_alikes(tmp_path):
    for name in SHADOWED:
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('the installed {name}, not the course file')\n")
    return tmp_path


@pytest.mark.parametrize("entry", ["app", "sandbox", "lessons", "runs", "endpoints", "serving", "memory"])
def test_course_modules_resolve_to_code_even_behind_an_installed_module_of_the_same_name(entry, look_alikes):
    result = subprocess.run([sys.executable, "-c", PROBE.format(entry=entry, names=SHADOWED), str(look_alikes)],
                            capture_output=True, text=True, timeout=120, cwd=ROOT,
                            env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONPATH": ""})
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["head"] == [str(CODE), str(ROOT)]
    assert seen["found"] == {name: str(CODE / f"{name}.py") for name in SHADOWED}
    assert all(path == str(CODE / f"{name}.py") for name, path in seen["loaded"].items())
    if entry == "app":
        assert {"events", "tool_outcome", "llm_clients"} <= set(seen["loaded"])


def test_the_rule_is_idempotent_and_keeps_the_other_entries_in_order():
    start = ["", "/somewhere/site-packages", str(ROOT), "/other", str(CODE) + "/"]
    once = import_paths.use_project_paths(list(start))
    assert once == [str(CODE), str(ROOT), "", "/somewhere/site-packages", "/other"]
    assert import_paths.use_project_paths(list(once)) == once


def test_the_tests_run_under_the_same_order():
    assert sys.path[:2] == [str(CODE), str(ROOT)]
    import events
    assert pathlib.Path(events.__file__) == CODE / "events.py"


def test_course_files_leave_the_order_to_the_one_rule():
    """A code/ file run alone (`python code/NAME.py`) may put the project root on sys.path to find
    offline/ and import_paths.py; the order of code/ and the root is then import_paths.py's alone."""
    touching = [path.name for path in sorted(CODE.glob("*.py")) if "sys.path" in path.read_text(encoding="utf-8")]
    assert "offline_server.py" in touching and "llm_clients.py" in touching
    assert [name for name in touching if "use_project_paths()" not in (CODE / name).read_text(encoding="utf-8")] == []


def test_the_offline_model_loaded_from_a_course_file_keeps_the_order(look_alikes, tmp_path):
    probe = (f"import json, sys\nsys.path.insert(0, {str(CODE)!r})\nimport llm_clients\n"
             "llm_clients.load_offline_model()\nprint(json.dumps(sys.path))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(look_alikes)})
    assert result.returncode == 0, result.stderr[-2000:]
    path = json.loads(result.stdout)
    assert path[:2] == [str(CODE), str(ROOT)] and path.count(str(ROOT)) == path.count(str(CODE)) == 1
