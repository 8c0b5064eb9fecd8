"""The offline model driving the four atomic tools through the real loops, on a real session workspace
(real SDK -> local server -> offline model; the tools run by workspace.run_workspace_tool)."""
import json
import secrets

import pytest

from offline import workspace as offline_workspace
import permissions
import workspace
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from react_loop import run_react

TOOLS = workspace.tool_schemas()
LOOPS = {"native": run_function_calling, "react": run_react, "json": run_json_from_text}
BUG = "    return sum(numbers) / (len(numbers) - 1)"
FIXED = "    return sum(numbers) / len(numbers)"


@pytest.fixture
def session():
    session_id = "test-" + secrets.token_hex(8)
    yield session_id
    workspace.forget(session_id)


def run(connect, loop, session, question, decide=lambda event: None, **options):
    """Runs a loop to the end with the session's workspace as executor; decide(tool_call event) -> override."""
    steps = LOOPS[loop](connect("openai"), question, TOOLS,
                        lambda name, args: workspace.run_workspace_tool(session, name, args), **options)
    seen, event = [], next(steps)
    while True:
        seen.append(event)
        try:
            event = steps.send(decide(event)) if event["type"] == "tool_call" else next(steps)
        except StopIteration:
            json.dumps(seen, ensure_ascii=False)
            return seen


def calls(seen):
    return [(e["name"], e["arguments"]) for e in seen if e["type"] == "tool_call"]


def results(seen):
    return [e for e in seen if e["type"] == "tool_result"]


def final(seen):
    assert seen[-1]["type"] == "final", seen[-1]
    return seen[-1]["content"]


@pytest.mark.parametrize("loop", list(LOOPS))
def test_reads_a_named_file(connect, session, loop):
    seen = run(connect, loop, session, "看看 notes.md")
    assert calls(seen) == [("read", {"path": "notes.md"})]
    assert "# 练习：修一个 bug" in final(seen) and "离线规则模型" in final(seen)


@pytest.mark.parametrize("loop", list(LOOPS))
def test_changes_a_named_piece_of_text(connect, session, loop):
    seen = run(connect, loop, session, '把 src/calc.py 里的 "return a + b" 改成 "return b + a"')
    assert calls(seen) == [("edit", {"path": "src/calc.py", "old": "return a + b", "new": "return b + a"})]
    assert "    return b + a\n" in workspace.read_file(session, "src/calc.py")
    assert "+    return b + a" in final(seen) and "改好了" in final(seen)


def test_edit_that_does_not_match_is_reported_not_retried(connect, session):
    seen = run(connect, "native", session, "把 src/calc.py 里的「return a+b」改成「return b + a」")
    assert len(calls(seen)) == 1 and results(seen)[0]["error_code"] == "no_match"
    assert "没有改成" in final(seen) and "看看 src/calc.py" in final(seen)


@pytest.mark.parametrize("loop", list(LOOPS))
def test_creates_a_file_with_the_given_content_and_runs_it(connect, session, loop):
    seen = run(connect, loop, session, '新建 hello.py，内容是 print("hi")')
    assert calls(seen) == [("write", {"path": "hello.py", "content": 'print("hi")\n'})]
    assert workspace.read_file(session, "hello.py") == 'print("hi")\n' and "新文件" in final(seen)
    seen = run(connect, loop, session, "运行 `python3 hello.py`")
    assert calls(seen) == [("bash", {"command": "python3 hello.py"})]
    assert "[stdout]\nhi" in final(seen)


@pytest.mark.parametrize("loop", list(LOOPS))
def test_runs_the_tests_and_reports_the_failure(connect, session, loop):
    seen = run(connect, loop, session, "跑一下测试")
    assert calls(seen) == [("bash", {"command": "python3 -m unittest"})]
    answer = final(seen)
    assert "没有全部通过" in answer and "test_average" in answer and "3.3333333333333335 != 2.5" in answer


def test_a_command_in_backticks_runs_exactly_as_written(connect, session):
    command = "echo 你好 && ls src | sort -r"
    seen = run(connect, "react", session, f"帮我运行 `{command}`，再运行 `pwd`")
    assert calls(seen) == [("bash", {"command": command}), ("bash", {"command": "pwd"})]
    assert "你好\ncalc.py\n__init__.py" in results(seen)[0]["content"]
    assert f"$ {command}" in final(seen) and "$ pwd" in final(seen)


@pytest.mark.parametrize("loop, stream", [("native", False), ("native", True), ("react", False), ("react", True),
                                          ("json", False)])
def test_finds_and_fixes_the_failing_test(connect, session, loop, stream):
    seen = run(connect, loop, session, "找出失败的测试并修好它", stream=stream)   # within the default max_turns
    assert [name for name, _ in calls(seen)] == ["bash", "read", "read", "edit", "bash"]
    assert calls(seen)[1:4] == [("read", {"path": "tests/test_calc.py"}), ("read", {"path": "src/calc.py"}),
                                ("edit", {"path": "src/calc.py", "old": BUG, "new": FIXED})]
    first, last = results(seen)[0], results(seen)[-1]
    assert "FAILED (failures=1)" in first["content"] and "\nOK" in last["content"] and "退出码：0" in last["content"]
    assert f"{FIXED}\n" in workspace.read_file(session, "src/calc.py")
    answer = final(seen)
    assert "修好了，测试全部通过" in answer and "写死的规则" in answer and "除数差一" in answer
    assert "test_average" in answer and "3.3333333333333335 != 2.5" in answer
    again = run(connect, loop, session, "修一下失败的测试")
    assert calls(again) == [("bash", {"command": "python3 -m unittest"})] and "没有需要修的" in final(again)


def test_fixes_an_error_raised_inside_the_source_from_the_traceback(connect, session):
    workspace.import_files(session, {
        "stats/mean.py": "def mean(values):\n    return sum(values) / (len(values) - 1)\n",
        "tests/__init__.py": "",
        "tests/test_mean.py": ("import unittest\n\nfrom stats import mean as m\n\n\nclass MeanTest(unittest.TestCase):\n"
                               "    def test_one(self):\n        self.assertEqual(m.mean([5]), 5)\n"),
        "stats/__init__.py": ""})
    seen = run(connect, "native", session, "测试有错误，帮我修复")
    assert calls(seen) == [("bash", {"command": "python3 -m unittest"}), ("read", {"path": "stats/mean.py"}),
                           ("edit", {"path": "stats/mean.py", "old": "    return sum(values) / (len(values) - 1)",
                                     "new": "    return sum(values) / len(values)"}),
                           ("bash", {"command": "python3 -m unittest"})]
    assert "ZeroDivisionError" in final(seen) and "修好了" in final(seen)


def test_a_bug_no_rule_knows_is_admitted(connect, session):
    workspace.import_files(session, {
        "src/__init__.py": "", "src/calc.py": "def add(a, b):\n    return a * b\n", "tests/__init__.py": "",
        "tests/test_calc.py": ("import unittest\nfrom src.calc import add\n\n\nclass T(unittest.TestCase):\n"
                               "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n")})
    seen = run(connect, "react", session, "找出失败的测试并修好它")
    assert [name for name, _ in calls(seen)] == ["bash", "read", "read"]
    assert "认不出" in final(seen) and "6 != 5" in final(seen)
    assert workspace.read_file(session, "src/calc.py") == "def add(a, b):\n    return a * b\n"


@pytest.mark.parametrize("loop", list(LOOPS))
def test_after_a_denied_edit_it_shows_the_diff_and_does_not_retry(connect, session, loop):
    deny_edits = lambda event: {"deny": "我想自己改"} if event["name"] == "edit" else None
    seen = run(connect, loop, session, "找出失败的测试并修好它", decide=deny_edits)
    assert [name for name, _ in calls(seen)] == ["bash", "read", "read", "edit"]
    assert results(seen)[-1]["error_code"] == "denied"
    answer = final(seen)
    assert "拒绝" in answer and "我想自己改" in answer and "不会原样再试" in answer
    assert f"-{BUG}\n+{FIXED}" in answer
    assert BUG in workspace.read_file(session, "src/calc.py")


@pytest.mark.parametrize("question, kind", [("跑一下测试", "bash"), ("看看 notes.md", "read"),
                                            ('新建 a.py，内容是 x = 1', "write")])
def test_any_denied_call_ends_with_a_question_to_the_user(connect, session, question, kind):
    seen = run(connect, "native", session, question, decide=lambda event: {"deny": "不行"})
    assert [name for name, _ in calls(seen)] == [kind]
    assert "不会原样再试" in final(seen) and "请你决定" in final(seen)
    assert "a.py" not in {entry["path"] for entry in workspace.tree(session)}


def test_permission_rules_decide_and_the_model_respects_a_denial(connect, session):
    """The driver asks permissions.decide before every call: read-only denies running the tests."""
    def by_rules(event):
        decision = permissions.decide(permissions.READ_ONLY, event["name"], event["arguments"])
        return {"deny": decision.reason} if decision.verdict != "allow" else None
    seen = run(connect, "react", session, "找出失败的测试并修好它", decide=by_rules)
    assert calls(seen) == [("bash", {"command": "python3 -m unittest"})]
    assert "工具规则 bash" in results(seen)[0]["content"] and "python3 -m unittest" in final(seen)


def test_a_denial_reason_with_a_full_stop_is_quoted_whole(connect, session):
    seen = run(connect, "native", session, "跑一下测试", decide=lambda event: {"deny": "先别跑。我要先看代码"})
    assert "理由：先别跑。我要先看代码" in final(seen)


def test_reads_every_named_file_and_is_not_fooled_by_version_numbers(connect, session):
    seen = run(connect, "react", session, "看看 notes.md 和 src/calc.py，我用的是 Python 3.11")
    assert calls(seen) == [("read", {"path": "notes.md"}), ("read", {"path": "src/calc.py"})]
    assert "练习" in final(seen) and "def average" in final(seen)


def test_an_unknown_request_lists_what_it_understands(connect, session):
    seen = run(connect, "native", session, "今天过得怎么样？")
    assert calls(seen) == [] and "跑一下测试" in final(seen) and "反引号" in final(seen)


def test_other_tools_still_get_the_keyword_model(connect):
    import examples_weather
    seen = list(run_function_calling(connect("openai"), "北京天气怎么样？", examples_weather.registry.to_schemas(),
                                     lambda n, a: examples_weather.registry.call(n, a)))
    assert [e["name"] for e in seen if e["type"] == "tool_call"] == ["get_weather"]


@pytest.mark.parametrize("question, name, args", [
    ("把 src/calc.py 里的“a + b”改成“b + a”", "edit", {"path": "src/calc.py", "old": "a + b", "new": "b + a"}),
    ("在 src/calc.py 里把「a + b」替换为「a - b」。", "edit", {"path": "src/calc.py", "old": "a + b", "new": "a - b"}),
    ('把 a.py 里的 "print("x")" 改成 "print("y")"', "edit", {"path": "a.py", "old": 'print("x")', "new": 'print("y")'}),
    ("把 a.py 中的 `x = 1` 修改为 `x = 2`", "edit", {"path": "a.py", "old": "x = 1", "new": "x = 2"}),
    ("新建 hello.py，内容是 print('hi')", "write", {"path": "hello.py", "content": "print('hi')\n"}),
    ("创建文件 src/util.py，内容：\n```python\ndef one():\n    return 1\n```", "write",
     {"path": "src/util.py", "content": "def one():\n    return 1\n"}),
    ('写一个 a.txt，内容为 "你好"', "write", {"path": "a.txt", "content": "你好\n"}),
    ("新建 run.sh，内容是 `ls`", "write", {"path": "run.sh", "content": "ls\n"}),
    ("run the tests", "bash", {"command": "python3 -m unittest"}),
    ("read notes.md please", "read", {"path": "notes.md"}),
])
def test_phrasings_it_understands(question, name, args):
    step = offline_workspace.next_step(question, [])
    assert (step.name, step.args) == (name, args) and step.thought
