"""code/ is the course: every file in it runs on its own (`python code/NAME.py`, offline by default),
from any directory, and none of it is the offline model, which lives in offline/ and is loaded only
when make_client picks it."""
import ast
import json
import os
import pathlib
import re
import subprocess
import sys
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CODE = ROOT / "code"
SCRIPTS = sorted(path.name for path in CODE.glob("*.py"))
ARGS = {"offline_server.py": ["--help"], "mcp_server.py": ["--help"]}   # the servers would serve forever
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_course_file_runs_on_its_own(name, tmp_path):
    done = subprocess.run([sys.executable, str(CODE / name), *ARGS.get(name, [])], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=ENV, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_the_offline_server_entry_point_serves(tmp_path):
    server = subprocess.Popen([sys.executable, str(CODE / "offline_server.py"), "--port", "0"], stdout=subprocess.PIPE,
                              text=True, cwd=tmp_path, env=ENV)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+", server.stdout.readline()).group()
        request = urllib.request.Request(url + "/v1/chat/completions", method="POST",
                                         data=json.dumps({"model": "offline-rule-model", "messages": [
                                             {"role": "user", "content": "你好"}]}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.loads(response.read())
        assert body["object"] == "chat.completion" and body["choices"][0]["message"]["role"] == "assistant"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _top_level_imports(path):
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_code_holds_no_offline_model_files():
    for path in CODE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
        assert not classes & {"OfflineModel", "OfflineServer"}, path.name
    assert [p.name for p in CODE.glob("offline*")] == ["offline_server.py"]       # the server's entry point only
    assert len((CODE / "offline_server.py").read_text(encoding="utf-8").splitlines()) < 30
    assert {p.name for p in (ROOT / "offline").glob("*.py")} >= {
        "__init__.py", "model.py", "arguments.py", "workspace.py", "plans.py", "accents.py", "server.py"}
    importers = [p.name for p in CODE.glob("*.py") if "offline" in _top_level_imports(p)]
    assert importers == ["offline_server.py"]


def test_the_parsers_import_no_loop_and_accents_imports_no_loop():
    assert _top_level_imports(CODE / "text_parsers.py") <= {"__future__", "json", "re"}
    for name in ("accents.py", "react_loop.py", "json_loop.py"):
        assert "text_parsers" in _top_level_imports(CODE / name), name
    source = (CODE / "accents.py").read_text(encoding="utf-8")
    assert "import react_loop" not in source and "import json_loop" not in source


PROBE = """
import sys
import minimal_loop, llm_clients
for provider in ("openai", "glm"):
    llm_clients.make_client(provider, api_key="not-a-key", base_url="http://127.0.0.1:9/v1")
before = sorted(name for name in sys.modules if name == "offline" or name.startswith("offline."))
client = llm_clients.make_client("offline")
after = sorted(name for name in sys.modules if name == "offline" or name.startswith("offline."))
import offline.model
import json
print(json.dumps([before, after, client.model == offline.model.MODEL_NAME == llm_clients.OFFLINE_MODEL]))
"""


def test_make_client_loads_the_offline_model_only_when_it_is_chosen(tmp_path):
    done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(CODE)!r})\n" + PROBE],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    before, after, same_name = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == []                               # a real provider: the offline model is never imported
    assert after == ["offline", "offline.arguments", "offline.model", "offline.plans", "offline.workspace"] and same_name
