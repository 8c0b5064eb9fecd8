"""The layers point one way. Every top-level folder (and module) of the app has a rank, and a
file imports only what ranks below its own folder, at its top or inside a function. A folder
that holds Python and has no rank fails here: a new folder is placed in the order on purpose.

From the bottom up, what each layer is for:
  import_paths.py  the one sys.path rule
  code/            the course's own code: students read it and run it alone (`python code/NAME.py`)
  offline/         the offline rule model the course code runs against without a key
  i18n/            which language the page speaks, and texts in both
  sandbox/         running untrusted code in hardened workers
  workspace/       a session's files for the atomic tools
  access/          who may reach what: keys, class codes, addresses, a tab's lifetime
  catalogue/       the lessons, named (their page and their starter by name, importing neither)
  runs/            a run on the server: starting, stepping, judging, its record
  serving/         serving many tabs: Gradio's patches, page events, forgetting idle tabs
  memory/          what outlives a page load: the browser's storage
  endpoints/       the named API
  lessons/         the pages
  app.py           the app that puts them together
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ORDER = ("import_paths", "code", "offline", "i18n", "sandbox", "workspace", "access", "catalogue", "runs",
         "serving", "memory", "endpoints", "lessons", "app")
RANKS = {name: rank for rank, name in enumerate(ORDER)}
# Folders that are no layer of the app: they may import any layer, and none imports them.
NOT_LAYERS = {"tests", "benchmarks", "scripts", "docs"}
# The course code's one way up. Run alone, the course code talks to the offline model without a key,
# and the offline model parses the replies with the course's own functions (loop_parts, accents,
# skills, context): it sits above the course code it reads. The two files below load it only when it
# is chosen (llm_clients.load_offline_model, inside a function) or served (offline_server.py, a script);
# nothing at the top of any other course file reaches it.
UPWARD_ALLOWED = {("code/llm_clients.py", "offline"), ("code/offline_server.py", "offline")}
COURSE_MODULES = {path.stem for path in (ROOT / "code").glob("*.py")}


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


def layer_of(module: str) -> str | None:
    """The layer a module belongs to: a course module is imported by its bare name (`import events`)."""
    top = module.split(".")[0]
    if top in COURSE_MODULES:
        return "code"
    return top if top in RANKS else None


def layers() -> list[str]:
    """Every top-level folder with Python in it, and every top-level module, by name."""
    folders = [path.name for path in ROOT.iterdir() if path.is_dir() and not path.name.startswith(".")
               and path.name not in NOT_LAYERS and any(path.rglob("*.py"))]
    return sorted(folders + [path.stem for path in ROOT.glob("*.py")])


def files_of(layer: str) -> list[pathlib.Path]:
    folder = ROOT / layer
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [ROOT / f"{layer}.py"]


def test_every_folder_has_a_rank():
    assert [layer for layer in layers() if layer not in RANKS] == []
    assert sorted(RANKS) == layers()          # and no rank is left for a folder that is gone


@pytest.mark.parametrize("layer", ORDER)
def test_a_layer_imports_only_layers_below_it(layer):
    assert files_of(layer)
    upward = {}
    for path in files_of(layer):
        name = str(path.relative_to(ROOT))
        above = sorted({found for module in imported_modules(path) if (found := layer_of(module)) is not None
                        and RANKS[found] > RANKS[layer] and (name, found) not in UPWARD_ALLOWED})
        if above:
            upward[name] = above
    assert upward == {}


def test_the_allowed_way_up_is_still_taken():
    """An exception nobody needs any more goes: the course code would then stand alone without it."""
    for name, layer in UPWARD_ALLOWED:
        assert any(layer_of(module) == layer for module in imported_modules(ROOT / name)), name


@pytest.mark.parametrize("layer", ("code", "offline"))
def test_the_course_code_and_the_offline_model_need_no_gradio(layer):
    """Students run them with the course's requirements only."""
    found = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.split(".")[0] == "gradio")
             for path in files_of(layer)}
    assert {path: names for path, names in found.items() if names} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def later():\n    from lessons.settings_panel import model_update\n    import lessons.timeline\n")
    assert {"lessons.settings_panel", "lessons.timeline"} <= imported_modules(sample)


def test_a_course_module_counts_as_the_course_code_and_an_unknown_one_as_none():
    assert layer_of("events") == "code" and layer_of("serving.expiry") == "serving" and layer_of("gradio") is None


def test_no_page_test_module_imports_another():
    """What the page tests share lives in tests/app/harness.py: a module that imports another's helpers
    also runs that module's module-level code, and a helper changed for one test breaks the other."""
    offenders = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path)
                                                     if m.startswith("tests.app.test_"))
                 for path in sorted((ROOT / "tests" / "app").glob("test_*.py"))}
    assert {path: names for path, names in offenders.items() if names} == {}


def folder_graph() -> dict[str, set[str]]:
    """{layer: the layers it imports}, lazy imports included."""
    return {layer: {found for path in files_of(layer) for module in imported_modules(path)
                    if (found := layer_of(module)) not in (None, layer)} for layer in ORDER}


if __name__ == "__main__":      # python tests/test_layers.py: the folder-level import graph, lowest first
    for layer, imported in folder_graph().items():
        upward = sorted(name for name in imported if RANKS[name] > RANKS[layer])
        print(f"{RANKS[layer]:>2} {layer} -> {', '.join(sorted(imported, key=RANKS.get)) or '-'}"
              + (f"   (upward: {', '.join(upward)})" if upward else ""))


def test_a_lesson_s_folder_imports_no_other_lesson_s_folder():
    """What two lessons share lives beside the shared panels in lessons/, not in one of the two folders:
    a lesson's folder can then be read, changed or removed alone."""
    from catalogue import LESSONS

    crossing = {}
    for lesson in LESSONS:
        for path in sorted((ROOT / "lessons" / lesson).rglob("*.py")):
            others = sorted({parts[1] for module in imported_modules(path) if len(parts := module.split(".")) > 1
                             and parts[0] == "lessons" and parts[1] in LESSONS and parts[1] != lesson})
            if others:
                crossing[str(path.relative_to(ROOT))] = others
    assert crossing == {}


def test_the_shared_panels_import_no_lesson_s_folder():
    """What lessons/ shares draws a lesson's own kinds through the registries they fill (lessons/timeline.py),
    so removing a lesson's folder leaves every shared panel importable."""
    from catalogue import LESSONS

    reaching = {path.name: sorted({parts[1] for module in imported_modules(path) if len(parts := module.split(".")) > 1
                                   and parts[0] == "lessons" and parts[1] in LESSONS})
                for path in sorted((ROOT / "lessons").glob("*.py"))}
    assert {name: lessons for name, lessons in reaching.items() if lessons} == {}
