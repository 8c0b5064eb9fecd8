"""The layers point one way: the page (lessons/, app.py) builds on everything below it, and
nothing below it imports the page, not even inside a function. The course code in code/ stands
alone: students read and run it without gradio or the app's packages."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BELOW_THE_PAGE = ("runs", "endpoints", "memory", "access", "sandbox", "workspace", "offline", "catalogue", "serving",
                  "i18n")
APP_PACKAGES = ("lessons", "runs", "endpoints", "memory", "access", "sandbox", "workspace", "offline", "catalogue",
                "serving", "i18n", "gradio", "app")


def imported_modules(path: pathlib.Path) -> set[str]:
    """Every module a file imports, at its top or inside a function, by its full dotted name."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def top_names(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def files_of(folder: str) -> list[pathlib.Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", BELOW_THE_PAGE)
def test_nothing_below_the_page_imports_the_page(folder):
    offenders = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.split(".")[0] == "lessons")
                 for path in files_of(folder)}
    assert files_of(folder)
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_course_code_imports_none_of_the_app():
    offenders = {path.name: sorted(top_names(imported_modules(path)) & set(APP_PACKAGES)) for path in files_of("code")}
    # offline/ is the one exception: the offline model is not course code, and the course's entry points
    # load it only when it is chosen (llm_clients.load_offline_model) or served (offline_server.py).
    allowed = {"llm_clients.py": ["offline"], "offline_server.py": ["offline"]}
    assert {name: found for name, found in offenders.items() if found and found != allowed.get(name)} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def later():\n    from lessons.settings_panel import model_update\n    import lessons.timeline\n")
    assert {"lessons.settings_panel", "lessons.timeline"} <= imported_modules(sample)


def test_no_page_test_module_imports_another():
    """What the page tests share lives in tests/app/harness.py: a module that imports another's helpers
    also runs that module's module-level code, and a helper changed for one test breaks the other."""
    offenders = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path)
                                                     if m.startswith("tests.app.test_"))
                 for path in sorted((ROOT / "tests" / "app").glob("test_*.py"))}
    assert {path: names for path, names in offenders.items() if names} == {}
