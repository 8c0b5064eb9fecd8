"""code/mini_agent_file.py writes a MiniAgent as one standalone file: generated for several sets of choices,
compiled, checked for names it never defines, then run as `python mini_agent.py` in a subprocess against the
project's offline server over real HTTP with the real openai SDK. What it did is checked on the workspace and
in its answer, and, for the same choices, the conversation it held is the one code/mini_agent.py holds."""
import ast
import inspect
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import mini_agent
import permissions
from mini_agent import DEMO, DEMO_FILES, Choices, on_workspace, run_mini_agent
from mini_agent_file import source_of, write_file
from offline.server import OfflineServer

FIXED = "    return sum(numbers) / len(numbers)\n"
BROKEN = "    return sum(numbers) / (len(numbers) - 1)\n"
CHOICES = {
    "bare": Choices(),
    "demo": DEMO,
    "rules_and_hooks": Choices(rules={"read": "allow", "edit:src/*": "allow", "bash:python3 -m unittest*": "allow"},
                               hooks=("protect_tests", "mask_secrets")),
    "plan_and_skills": Choices(plan=True, skills=DEMO.skills, context="window", budget=6000),
    "subagents": Choices(subagents=True, context="compact", budget=6000),
}
ENV = {key: value for key, value in os.environ.items()
       if key not in ("PYTHONPATH", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MINI_AGENT_MODEL")}


@pytest.fixture(scope="module")
def offline():
    server = OfflineServer().start()
    yield server
    server.stop()


def workspace(folder):
    for path, text in DEMO_FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def run_file(tmp_path, choices, task, server, env=None, **options):
    script = tmp_path / "mini_agent.py"
    script.write_text(write_file(choices, task, **options), encoding="utf-8")
    folder = workspace(tmp_path / "project")
    done = subprocess.run([sys.executable, str(script), "--workspace", str(folder)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env={**ENV, "OPENAI_BASE_URL": f"{server.url}/v1", **(env or {})})
    return done, folder


@pytest.mark.parametrize("name", list(CHOICES))
def test_the_file_compiles_names_only_what_it_defines_and_holds_only_the_parts_chosen(name, tmp_path):
    choices = CHOICES[name]
    text = write_file(choices)
    compile(text, "mini_agent.py", "exec")
    path = tmp_path / "mini_agent.py"
    path.write_text(text, encoding="utf-8")
    checked = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select",
                              "F,E4,E7,E9,W,PLE", str(path)], capture_output=True, text=True, timeout=120)  # the tree's rules
    assert checked.returncode == 0, checked.stdout
    imported = {alias.name.split(".")[0] for node in ast.walk(ast.parse(text))
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
    assert imported - sys.stdlib_module_names - {"__future__"} == {"openai"}
    parts = {"def decide(": choices.rules is not None, "def run_hooks(": bool(choices.hooks),
             "def prepare(": choices.context != "none", "def load_skill(": bool(choices.skills),
             "def write_todos(": choices.plan, "def run_task(": choices.subagents}
    assert {marker: marker in text for marker in parts} == parts
    assert not re.search(r"sk-[A-Za-z0-9]{8,}", text) and 'os.environ.get("OPENAI_API_KEY"' in text   # never a key


def test_the_rules_in_the_file_are_the_chapter_s_own_code():
    text = write_file(CHOICES["rules_and_hooks"])
    for function in (permissions.decide, permissions.matches, mini_agent.protect_tests):
        assert inspect.getsource(function) in text
    assert source_of(permissions, "CONTROL") in text


@pytest.mark.parametrize("name", ["bare", "demo", "rules_and_hooks", "plan_and_skills"])
def test_python_mini_agent_py_fixes_the_failing_test_over_http(name, tmp_path, offline):
    offline.reset()
    done, folder = run_file(tmp_path, CHOICES[name], "找出失败的测试并修好它", offline)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (folder / "src" / "calc.py").read_text(encoding="utf-8").endswith(FIXED)
    assert "修好了，测试全部通过。" in done.stdout and "Traceback" not in done.stderr
    sent = offline.requests[0]["body"]
    offered = [t["function"]["name"] for t in sent["tools"]]
    extra = [tool for tool, chosen in (("load_skill", CHOICES[name].skills), ("write_todos", CHOICES[name].plan),
                                      ("task", CHOICES[name].subagents)) if chosen]
    assert offered == ["read", "write", "edit", "bash", *extra]
    assert all(r["path"] == "/v1/chat/completions" for r in offline.requests)


def test_a_sub_agent_in_the_file_does_the_job_and_only_its_conclusion_comes_back(tmp_path, offline):
    offline.reset()
    done, folder = run_file(tmp_path, CHOICES["subagents"], "派一个子代理去跑一下测试", offline)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "👥 子代理开始" in done.stdout and "子代理交回的结论" in done.stdout
    child = [r["body"] for r in offline.requests if r["body"]["messages"][0]["content"].startswith("你是一个子代理")]
    assert child and [t["function"]["name"] for t in child[0]["tools"]] == ["read", "write", "edit", "bash"]
    parent = offline.requests[-1]["body"]["messages"]
    assert not any(m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "bash" for m in parent)


def test_an_ask_with_nobody_at_the_terminal_runs_nothing(tmp_path, offline):
    offline.reset()
    rules = {"read": "allow", "edit": "allow", "bash": "ask"}
    done, folder = run_file(tmp_path, Choices(rules=rules), "找出失败的测试并修好它", offline)
    assert done.returncode == 0
    assert "没有终端可以问：不执行" in done.stdout and "权限规则不允许这次 bash 调用" in done.stdout
    assert (folder / "src" / "calc.py").read_text(encoding="utf-8").endswith(BROKEN)


def test_a_hook_in_the_file_keeps_the_tests_as_they_are(tmp_path, offline):
    offline.reset()
    task = '把 tests/test_calc.py 里的 "2.5" 改成 "3.3333333333333335"'
    done, folder = run_file(tmp_path, Choices(hooks=("protect_tests",)), task, offline)
    assert "❌ [钩子拒绝] 钩子 protect_tests 不允许这次调用" in done.stdout
    assert "2.5" in (folder / "tests" / "test_calc.py").read_text(encoding="utf-8")


def test_the_key_and_the_endpoint_come_from_outside_the_file(tmp_path, offline):
    offline.reset()
    text = write_file(Choices())
    script = tmp_path / "mini_agent.py"
    script.write_text(text, encoding="utf-8")
    workspace(tmp_path)
    far = subprocess.run([sys.executable, str(script), "--base-url", "https://api.example.invalid/v1"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path, env=ENV, stdin=subprocess.DEVNULL)
    assert far.returncode == 2 and "要一个 Key" in far.stdout and "OPENAI_API_KEY" in far.stdout
    keyed = subprocess.run([sys.executable, str(script), "--model", "some-model", "看看 src/calc.py"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL,
                           env={**ENV, "OPENAI_BASE_URL": f"{offline.url}/v1", "OPENAI_API_KEY": "sk-from-the-env"})
    assert keyed.returncode == 0, keyed.stdout[-2000:]
    assert offline.requests[0]["has_key"] and offline.requests[0]["body"]["model"] == "some-model"
    assert "sk-from-the-env" not in text


def normalized(messages):
    """A conversation with the one thing that differs between two runs of the tests taken out: how long they took."""
    return json.loads(re.sub(r"Ran (\d+) tests? in [\d.]+s", r"Ran \1 test", json.dumps(messages, ensure_ascii=False)))


@pytest.mark.parametrize("name", ["demo", "rules_and_hooks"])
def test_the_file_holds_the_same_conversation_as_mini_agent_py(name, tmp_path, offline, connect):
    offline.reset()
    done, folder = run_file(tmp_path, CHOICES[name], "找出失败的测试并修好它", offline)
    assert done.returncode == 0, done.stdout[-2000:]
    from_file = normalized(offline.requests[-1]["body"]["messages"])
    offline.reset()
    shutil.rmtree(folder)                 # the same folder again (the test output names its path), as it was
    workspace(folder)
    tools, execute = on_workspace(str(folder))
    from llm_clients import make_client
    client = make_client("openai", base_url=f"{offline.url}/v1", api_key="not-needed-offline",
                         model="offline-rule-model")
    events = list(run_mini_agent(client, "找出失败的测试并修好它", tools, execute, CHOICES[name].parts()))
    assert events[-1]["type"] == "final"
    assert normalized(offline.requests[-1]["body"]["messages"]) == from_file


def test_the_context_part_in_the_file_folds_a_long_result_before_the_next_request(tmp_path, offline):
    offline.reset()
    script = tmp_path / "mini_agent.py"
    script.write_text(write_file(Choices(context="fold", budget=600), "看看 notes.md 和 src/calc.py"), encoding="utf-8")
    folder = workspace(tmp_path / "project")
    (folder / "notes.md").write_text("\n".join(f"第 {n} 行笔记" for n in range(1, 121)) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), "--workspace", str(folder)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env={**ENV, "OPENAI_BASE_URL": f"{offline.url}/v1"})
    assert done.returncode == 0, done.stdout[-2000:]
    assert "🗜️ 折叠了" in done.stdout
    second = offline.requests[1]["body"]["messages"]
    assert any("中间省略了 81 行" in str(m.get("content")) for m in second)


def test_the_compact_part_in_the_file_asks_the_model_for_a_summary(tmp_path, offline):
    offline.reset()
    script = tmp_path / "mini_agent.py"
    task = "看看 notes.md、src/calc.py 和 src/__init__.py"
    script.write_text(write_file(Choices(context="compact", budget=300), task), encoding="utf-8")
    folder = workspace(tmp_path / "project")
    (folder / "notes.md").write_text("要记住的事：周五发版。\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), "--workspace", str(folder)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env={**ENV, "OPENAI_BASE_URL": f"{offline.url}/v1"})
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
    import context
    asked = [r["body"] for r in offline.requests if r["body"]["messages"][0]["content"] == context.SUMMARY_ASK]
    assert asked and "tools" not in asked[0] and asked[0]["temperature"] == context.SUMMARY_TEMPERATURE
    assert "🗜️ 最早的" in done.stdout and "交给模型写成了摘要" in done.stdout
