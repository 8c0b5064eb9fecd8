"""Where the project's modules are found: one rule for the app, the tests and the sandbox.

    from import_paths import use_project_paths
    use_project_paths()

code/ holds the course modules, imported by bare name (`import llm_clients`, `import events`);
it goes FIRST on sys.path, so a module of the same name installed in site-packages (or anywhere
else on the path) never shadows the course's own file. The project root follows it, for the
packages lessons/, sandbox/, access/, workspace/ and offline/. `code` itself is never imported
as a package: that name belongs to the standard library.

Calling it again changes nothing. pytest.ini's `pythonpath = code .` gives the tests the same
order before any conftest runs; tests/conftest.py calls this too.
"""
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
CODE_DIR = os.path.join(ROOT, "code")


def use_project_paths(path=None):
    """Puts CODE_DIR at path[0] and ROOT at path[1] (default: sys.path), removing their other
    entries. An empty entry (the current directory) is left where it is."""
    path = sys.path if path is None else path
    ours = {CODE_DIR, ROOT}
    path[:] = [entry for entry in path if not (entry and os.path.abspath(entry) in ours)]
    path[0:0] = [CODE_DIR, ROOT]
    return path
