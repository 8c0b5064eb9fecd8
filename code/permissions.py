"""权限：每次工具调用之前先问一句“这一步可以直接做吗？”——allow 直接做，ask 先问人，deny 不做。

一个合法的 schema 不等于一次授权：模型写出的调用格式再正确，也只说明“它想做”，不说明“它可以做”。
所以在“模型要调用”和“真的执行”之间加一道检查。规则是一个 dict，键说“哪一类调用”，值说“怎么办”：

    "read"              工具名：这个工具的所有调用
    "bash:rm *"         bash + 命令的通配模式（fnmatch：* 任意字符，? 一个字符）
    "write:src/*"       write / edit（read 也行）+ 路径的通配模式

    decide(DEFAULT, "bash", {"command": "rm -rf ."})   # -> Decision("deny", "bash:rm *", "…")

怎么定：
  1. 模式规则比工具名规则具体，只要有模式规则匹配上，就只看模式规则；
  2. 同一层有好几条匹配，最严的算（deny > ask > allow）：一条宽松的规则抵消不了一条严格的；
  3. 一条都没匹配 → ask。规则没想到的情况交给人，而不是默认放行（fail closed）；
  4. 靠模式规则放行的 bash 命令里要是有 shell 控制字符（; & | ` $( > < 换行），这条放行不算数：
     至少问人，工具规则更严（比如 deny）就听工具规则的（原因见 CONTROL）。

最后也最要紧的一句：这是“问不问人”的规则，不是围墙。模式挡得住 rm -rf，挡不住 /bin/rm、
python3 -c "import shutil; ..."，也挡不住一个先写脚本再运行它的模型。真正把 bash 关在里面的是沙箱
（应用里的 sandbox/shell.py）；这里的规则只决定什么时候停下来让人看一眼。
"""
from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal, Mapping

Verdict = Literal["allow", "ask", "deny"]
VERDICTS = ("allow", "ask", "deny")                      # 从宽到严：取最严的就是取下标最大的
NAMES = {"allow": "直接执行", "ask": "先问你", "deny": "拒绝"}

# 模式规则匹配的是哪个参数：bash 看命令，文件工具看路径。
PATTERN_ARGUMENT = {"bash": "command", "read": "path", "write": "path", "edit": "path"}

# shell 控制字符：有了它们，一条命令就能变成好几条。模式 "python3 *" 本意是“允许运行 Python”，
# 可 "python3 x.py; rm -rf ." 也以 python3 开头、也匹配这个模式——通配只看开头像不像，看不出后面还藏着什么。
# 所以靠模式放行的命令，只要含这些字符就改成问人。（> < 是重定向：cat a > b 会写文件。）
# 工具规则 "bash": "allow" 不受影响：它说的本来就是“什么命令都行”，没有什么能混过去。
CONTROL = (";", "&", "|", "`", "$(", ">", "<", "\n", "\r")
# 拆出复合命令里的每一段，让 deny / ask 模式也能认出 "ls; rm -rf ." 里的 rm。
# 这只是多挡一种写法，仍然是黑名单：黑名单永远列不全，挡不住的交给沙箱。
PIECES = re.compile(r"&&|\|\||\$\(|[;&|`()\n\r]")


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    rule: str          # 起决定作用的规则的键；没有规则匹配时是 ""
    reason: str        # 给人看的一句话：哪条规则、为什么


def decide(rules: Mapping[str, str], name: str, args: Mapping[str, Any]) -> Decision:
    """一次调用（工具名 + 参数）按规则该怎么办。值写错的规则（不是 allow/ask/deny）匹配上了按 ask 算。"""
    args = args if isinstance(args, Mapping) else {}           # 参数可能是模型写坏的 JSON 原文
    patterns, plain = [], []
    for key, value in rules.items():
        verdict = value if value in VERDICTS else "ask"
        tool, _, pattern = str(key).partition(":")
        if tool.strip() != name:
            continue
        if not pattern:
            plain.append((verdict, key))
        elif matches(name, pattern.strip(), args, verdict):
            patterns.append((verdict, key))
    found = patterns or plain
    if not found:
        return Decision("ask", "", f"没有规则管 {name} 的这次调用，默认先问你（规则没想到的情况交给人）")
    verdict, key = strictest(found)
    subject = described(name, args)
    kind = "模式规则" if patterns else "工具规则"
    others = f"（同时匹配了 {len(found)} 条，取最严的）" if len(found) > 1 else ""
    if verdict == "allow" and patterns and name == "bash" and has_control(str(args.get("command", ""))):
        # 这条放行不算数：至少问人；工具规则本来就更严（比如拒绝）时听工具规则的
        verdict, fallback = strictest([("ask", key), *plain])
        return Decision(verdict, fallback, f"{kind} {key} 放行{subject}，但命令里有 shell 控制字符（; & | ` $( > <），"
                                           f"一条命令里可能藏着好几条，这条放行不算数：{NAMES[verdict]}")
    return Decision(verdict, key, f"{kind} {key} 匹配{subject}{others}：{NAMES[verdict]}")


def strictest(found: list[tuple[str, str]]) -> tuple[str, str]:
    """[(结论, 规则键)] 里最严的一条；一样严时取先写的那条。"""
    return max(found, key=lambda pair: VERDICTS.index(pair[0]))


def matches(name: str, pattern: str, args: Mapping[str, Any], verdict: str) -> bool:
    """模式规则是否匹配这次调用。路径先规范化（src/../x 不算在 src 里）；
    deny / ask 的 bash 模式还要看复合命令的每一段，allow 只看整条命令。"""
    value = args.get(PATTERN_ARGUMENT.get(name, ""))
    if not isinstance(value, str):
        return False
    if name != "bash":
        return fnmatchcase(posixpath.normpath(value.strip()), pattern)
    command = value.strip()
    pieces = [command] if verdict == "allow" else [command, *(p.strip() for p in PIECES.split(command))]
    return any(fnmatchcase(piece, pattern) for piece in pieces if piece)


def has_control(command: str) -> bool:
    return any(mark in command for mark in CONTROL)


def described(name: str, args: Mapping[str, Any]) -> str:
    value = args.get(PATTERN_ARGUMENT.get(name, ""))
    if not isinstance(value, str):
        return f"工具 {name}"
    shown = value if len(value) <= 60 else value[:57] + "…"
    return f"{'命令' if name == 'bash' else '路径'} {shown}"


def validate_rules(rules: Any) -> list[str]:
    """规则里写错的地方，每条一句中文；没有问题返回 []。界面和接口在使用规则之前先调用它。"""
    if not isinstance(rules, Mapping):
        return [f"规则应该是 {{键: 值}} 的字典，收到的是 {type(rules).__name__}"]
    problems = []
    for key, value in rules.items():
        if not isinstance(key, str) or not key.strip():
            problems.append(f"规则的键 {key!r} 无效：应该是工具名（如 bash）或 工具名:模式（如 bash:rm *）")
            continue
        tool, colon, pattern = key.partition(":")
        if colon and tool.strip() not in PATTERN_ARGUMENT:
            problems.append(f"规则 {key} 无效：只有 bash（按命令）和 read、write、edit（按路径）可以带模式，"
                            f"{tool.strip() or '（空）'} 只能写工具名")
        elif colon and not pattern.strip():
            problems.append(f"规则 {key} 的冒号后面没有模式，例如 {tool.strip()}:{'rm *' if tool.strip() == 'bash' else 'src/*'}")
        if value not in VERDICTS:
            guess = difflib.get_close_matches(str(value).strip().lower(), VERDICTS, n=1)
            tip = f"，是不是想写 {guess[0]}？" if guess else ""
            problems.append(f"规则 {key} 的值 {value!r} 无效：应为 allow、ask 或 deny{tip}")
    return problems


# ── 预设

# 只读：可以看，不能改。bash 一律拒绝，只放行几个只读的命令（带控制字符的照样会先问你）。
READ_ONLY = {"read": "allow", "write": "deny", "edit": "deny", "bash": "deny",
             "bash:ls*": "allow", "bash:cat *": "allow", "bash:grep *": "allow",
             "bash:head *": "allow", "bash:tail *": "allow", "bash:wc *": "allow"}

# 全部信任：什么都直接做。只在有沙箱兜底的地方用。
TRUST_ALL = {"read": "allow", "write": "allow", "edit": "allow", "bash": "allow"}

# 默认：读随便读，src/ 里的改动直接做，别处的改动和所有命令先问你；删除和推送一律拒绝。
# 为什么不放行 "python3 -m unittest"：测试运行的是 src/ 里的代码，而 src/ 的改动是直接放行的——
# 两样都放行，模型就能不经你同意运行任何它写的代码。两条单看都无害的规则，合起来就是一个洞。
DEFAULT = {"read": "allow",
           "write": "ask", "edit": "ask", "write:src/*": "allow", "edit:src/*": "allow",
           "bash": "ask", "bash:rm *": "deny", "bash:git push*": "deny"}

PRESETS = {"默认": DEFAULT, "只读": READ_ONLY, "全部信任": TRUST_ALL}


# ── MCP 的工具注解当默认规则

def annotation_rules(tools: list[Mapping[str, Any]]) -> dict[str, str]:
    """MCP 服务器 tools/list 里的工具 -> 默认规则：readOnlyHint → allow，destructiveHint → ask。
    两样都没说的工具不写规则，按第 3 条先问你。只读优先：MCP 规定 destructiveHint 只在“不是只读”时才有意义。
    注解是服务器对自己的描述，是提示，不是保证：一个服务器完全可以把删库的工具标成只读。
    所以它们只当默认值，你自己写的规则放在后面、覆盖它们：{**annotation_rules(tools), **rules}。"""
    rules = {}
    for tool in tools:
        hints = tool.get("annotations") or {}
        if hints.get("readOnlyHint") is True:
            rules[str(tool.get("name"))] = "allow"
        elif hints.get("destructiveHint") is True:
            rules[str(tool.get("name"))] = "ask"
    return rules


if __name__ == "__main__":
    calls = [("read", {"path": "notes.md"}),
             ("edit", {"path": "src/calc.py", "old": "- 1", "new": ""}),
             ("write", {"path": "hello.py", "content": "print('hi')"}),
             ("write", {"path": "src/../hello.py", "content": "print('hi')"}),
             ("bash", {"command": "python3 -m unittest"}),
             ("bash", {"command": "rm -rf src"}),
             ("bash", {"command": "ls; rm -rf src"}),
             ("get_weather", {"city": "北京"})]
    for preset, rules in PRESETS.items():
        print(f"── {preset}")
        for name, arguments in calls:
            decision = decide(rules, name, arguments)
            print(f"  {decision.verdict:5}  {name}({arguments})\n         {decision.reason}")
    mine = {"bash:python3 *": "allow", "bash": "ask"}
    print("── 只放行 python3 *：", decide(mine, "bash", {"command": "python3 x.py; rm -rf ."}).reason)
    print("── 写错的规则：", validate_rules({"bash": "allwo", "weather:x": "ask", "": "deny", "write:": "allow"}))
