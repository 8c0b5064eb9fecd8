"""code/permissions.py: precedence, the control-character rule, presets and rule validation."""
import pytest

from permissions import DEFAULT, PRESETS, READ_ONLY, TRUST_ALL, Decision, decide, validate_rules


def verdict(rules, name, **args):
    return decide(rules, name, args).verdict


def test_plain_tool_rule_applies_to_every_call_of_that_tool():
    rules = {"read": "allow", "bash": "deny"}
    assert verdict(rules, "read", path="notes.md") == "allow"
    assert verdict(rules, "bash", command="ls") == "deny"
    decision = decide(rules, "bash", {"command": "ls"})
    assert decision == Decision("deny", "bash", decision.reason) and "bash" in decision.reason


def test_no_rule_means_ask():
    decision = decide({"read": "allow"}, "write", {"path": "a.py", "content": ""})
    assert decision.verdict == "ask" and decision.rule == "" and "没有规则" in decision.reason
    assert verdict({}, "get_weather", city="北京") == "ask"


def test_pattern_rule_beats_plain_rule_both_ways():
    rules = {"write": "ask", "write:src/*": "allow", "bash": "allow", "bash:rm *": "deny"}
    assert decide(rules, "write", {"path": "src/calc.py"}).rule == "write:src/*"
    assert verdict(rules, "write", path="src/calc.py") == "allow"
    assert verdict(rules, "write", path="notes.md") == "ask"
    assert verdict(rules, "bash", command="rm -rf src") == "deny"
    assert verdict(rules, "bash", command="ls -la") == "allow"
    # a looser pattern rule wins over a stricter plain rule too: it is more specific
    assert verdict({"bash": "deny", "bash:ls*": "allow"}, "bash", command="ls src") == "allow"


def test_strictest_matching_rule_wins():
    rules = {"bash:git *": "allow", "bash:git push*": "deny", "bash:git p*": "ask"}
    decision = decide(rules, "bash", {"command": "git push origin main"})
    assert decision.verdict == "deny" and decision.rule == "bash:git push*" and "最严" in decision.reason
    assert verdict(rules, "bash", command="git pull") == "ask"
    assert verdict(rules, "bash", command="git status") == "allow"
    assert verdict({"edit:src/*": "allow", "edit:*.py": "ask"}, "edit", path="src/calc.py") == "ask"


def test_file_patterns_match_the_normalised_path():
    rules = {"write": "ask", "write:src/*": "allow"}
    assert verdict(rules, "write", path="./src/util.py") == "allow"
    assert verdict(rules, "write", path="src/../notes.md") == "ask"       # not inside src after all
    assert verdict(rules, "write", path="src/deep/er/x.py") == "allow"    # * crosses folders
    assert verdict({"read": "allow", "read:.env*": "deny"}, "read", path=".env") == "deny"


def test_pattern_on_a_missing_or_broken_argument_does_not_match():
    rules = {"bash": "ask", "bash:rm *": "deny"}
    assert verdict(rules, "bash") == "ask"
    assert decide(rules, "bash", "{not json").verdict == "ask"       # raw text when the JSON was broken
    assert verdict({"write:src/*": "allow"}, "write", path=3) == "ask"


@pytest.mark.parametrize("command", ["python3 x.py; rm -rf .", "python3 x.py && rm -rf .", "python3 x.py | sh",
                                     "python3 `rm -rf .`", "python3 $(rm -rf .)", "python3 x.py > src/calc.py",
                                     "python3 x.py\nrm -rf .", "python3 x.py & rm -rf ."])
def test_control_characters_turn_a_pattern_allow_into_ask(command):
    rules = {"bash": "ask", "bash:python3 *": "allow"}
    decision = decide(rules, "bash", {"command": command})
    assert decision.verdict == "ask" and "控制字符" in decision.reason
    assert verdict(rules, "bash", command="python3 x.py") == "allow"


def test_control_characters_fall_back_to_a_stricter_plain_rule():
    assert verdict({"bash": "deny", "bash:ls*": "allow"}, "bash", command="ls | sh") == "deny"
    assert verdict({"bash": "allow"}, "bash", command="ls | wc -l") == "allow"   # "any command" hides nothing


def test_deny_patterns_see_every_piece_of_a_compound_command():
    rules = {"bash": "allow", "bash:rm *": "deny"}
    for command in ["ls; rm -rf .", "ls && rm -rf .", "echo $(rm -rf .)", "true || rm x", "echo `rm x`"]:
        assert verdict(rules, "bash", command=command) == "deny", command
    assert verdict(rules, "bash", command="/bin/rm -rf .") == "allow"     # a blocklist is not a sandbox


def test_rules_for_other_tools_and_invalid_values():
    assert verdict({"bash:rm *": "deny", "read": "allow"}, "bash", command="ls") == "ask"
    assert verdict({"bash": "allwo"}, "bash", command="ls") == "ask"            # a typo never allows
    assert verdict({"bash": "Allow"}, "bash", command="ls") == "ask"


def test_presets():
    assert PRESETS == {"默认": DEFAULT, "只读": READ_ONLY, "全部信任": TRUST_ALL}
    for rules in PRESETS.values():
        assert validate_rules(rules) == []
    assert verdict(DEFAULT, "read", path="notes.md") == "allow"
    assert verdict(DEFAULT, "edit", path="src/calc.py", old="a", new="b") == "allow"
    assert verdict(DEFAULT, "write", path="hello.py", content="") == "ask"
    assert verdict(DEFAULT, "bash", command="python3 -m unittest") == "ask"
    assert verdict(DEFAULT, "bash", command="rm -rf src") == "deny"
    assert verdict(DEFAULT, "bash", command="git push origin main") == "deny"
    assert verdict(READ_ONLY, "read", path="src/calc.py") == "allow"
    assert verdict(READ_ONLY, "write", path="src/calc.py", content="") == "deny"
    assert verdict(READ_ONLY, "edit", path="notes.md", old="a", new="b") == "deny"
    assert verdict(READ_ONLY, "bash", command="ls src") == "allow"
    assert verdict(READ_ONLY, "bash", command="python3 -m unittest") == "deny"
    assert verdict(READ_ONLY, "bash", command="cat notes.md > src/calc.py") == "deny"
    for name, args in [("read", {"path": "a"}), ("write", {"path": "a", "content": ""}),
                       ("edit", {"path": "a", "old": "x", "new": "y"}), ("bash", {"command": "rm -rf ."})]:
        assert decide(TRUST_ALL, name, args).verdict == "allow"


def test_validate_rules_names_each_problem():
    assert validate_rules({"read": "allow", "bash:rm *": "deny"}) == []
    problems = validate_rules({"bash": "allwo", "get_weather:北京": "ask", "": "deny", "write:": "allow",
                               "edit": "never"})
    assert len(problems) == 5
    assert "allwo" in problems[0] and "allow" in problems[0] and "是不是想写 allow" in problems[0]
    assert "get_weather" in problems[1] and "模式" in problems[1]
    assert "键" in problems[2]
    assert "write:src/*" in problems[3]
    assert "never" in problems[4] and "是不是" not in problems[4]
    assert validate_rules(["read"]) and "字典" in validate_rules(["read"])[0]
    assert validate_rules({"bash": None}) and validate_rules({3: "allow"})
