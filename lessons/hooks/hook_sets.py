"""The hooks lesson's example hook sources (code/hooks.py's Hooks), each a file a student edits in
the page; the sandbox runs them like tool sources. Each one's docstring says what to ask."""
from __future__ import annotations

import inspect

import hooks as course_hooks

# The hook itself is code/hooks.py's mask_secrets, word for word: the rule lives in the course's file
# and the example shows it registered on both events.
MASKING = '''"""结果交给模型之前，遮住密钥和密码。工具失败时交给模型的是报错，报错里一样可能有密钥：
PostToolUse 只在成功之后运行，失败之后运行的是 PostToolUseFailure，所以两种都登记。
试：读一下 payments 服务的配置，再试 读一下 billing 服务的配置（它会报错）"""
from hooks import FAILED, POST, Hooks, mask

hooks = Hooks()


@hooks.on(POST)          # fail 默认是 closed：脱敏钩子坏了，结果就不交给模型
@hooks.on(FAILED)        # 失败之后也运行：报错交给模型之前同样遮住
''' + inspect.getsource(course_hooks.mask_secrets)

DENY_SQL = '''"""PreToolUse：删数据的 SQL 不执行，理由作为工具结果交给模型；改数据的先问人。
试：执行 SQL `DROP TABLE orders`，再试 执行 SQL `UPDATE orders SET paid = 1`"""
import re

from hooks import PRE, Hooks

hooks = Hooks()

DELETES = re.compile(r"\\b(drop|delete|truncate)\\b", re.IGNORECASE)
CHANGES = re.compile(r"\\b(update|insert)\\b", re.IGNORECASE)


@hooks.on(PRE)
def read_only_sql(call):
    if call["tool_name"] != "run_sql":
        return None
    query = call["tool_input"].get("query", "")
    if found := DELETES.search(query):
        return {"permissionDecision": "deny",
                "permissionDecisionReason": f"{found.group(0).upper()} 会删数据，这个库不许删"}
    if found := CHANGES.search(query):
        return {"permissionDecision": "ask",
                "permissionDecisionReason": f"{found.group(0).upper()} 会改数据，要你点头"}
    return None
'''

NORMALISE = '''"""PreToolUse：服务名统一成小写再执行（updatedInput）。试：读一下 Payments 服务的配置"""
from hooks import PRE, Hooks

hooks = Hooks()


@hooks.on(PRE)
def lowercase_service(call):
    service = call["tool_input"].get("service")
    if call["tool_name"] == "fetch_config" and isinstance(service, str) and service != service.strip().lower():
        return {"updatedInput": {**call["tool_input"], "service": service.strip().lower()}}
    return None
'''

AUDIT = '''"""审计和计时：每次调用前后各 print 一行，时间线里每个钩子下面就是它打印的内容。
每个钩子每次都在一个新进程里运行，两次调用之间不留任何变量：下面的 calls_seen 每次都从 0 数起，
开始的时刻也存不到调用之后，所以计时也靠 print，前后两行一减就是这次调用用了多久。
试：读一下 payments 和 search 服务的配置"""
import time

from hooks import POST, PRE, Hooks

hooks = Hooks()

calls_seen = 0


@hooks.on(PRE, fail="open")       # 记日志出了错，不该拦下调用：fail open
def audit_before(call):
    global calls_seen
    calls_seen += 1
    print(f"[审计] {time.time():.3f} 开始 {call['tool_name']} {call['tool_input']}（calls_seen = {calls_seen}）")


@hooks.on(POST, fail="open")
def audit_after(call):
    print(f"[审计] {time.time():.3f} 结束 {call['tool_name']}，结果 {len(call['tool_response'])} 个字")
'''

ORDER = '''"""顺序的坑：同一种钩子按登记的顺序运行，后面的看到前面改过的结果。审计排在脱敏前面，
它打印的日志里就是没遮住的密钥（模型收到的仍然是遮住的）。把下面两行 hooks.add 换个顺序再运行一次。
试：读一下 payments 服务的配置"""
from hooks import POST, Hooks, mask_secrets

hooks = Hooks()


def audit(call):
    print(f"[审计] {call['tool_name']} 返回：{call['tool_response']}")


hooks.add(POST, audit, fail="open")
hooks.add(POST, mask_secrets)      # code/hooks.py 里的脱敏钩子
'''

RAISES = '''"""钩子自己出错：这个检查读了一个不存在的参数 region，每次都抛 KeyError。
fail="closed"：一道没运行成功的安全检查不算通过，调用被拦下；改成 fail="open" 再运行：
调用照常执行，时间线里记着它的错。试：读一下 payments 服务的配置"""
from hooks import PRE, Hooks

hooks = Hooks()


@hooks.on(PRE, fail="closed")
def region_check(call):
    if call["tool_input"]["region"] != "cn":
        return {"permissionDecision": "deny", "permissionDecisionReason": "只允许访问国内的服务"}
    return None
'''

NO_RETURN = '''"""忘了写 return 的后置钩子：它算出了大写的结果，却没有交回来。
课程仓库的 HookManager 会把结果换成它返回的 None；这里返回 None 就是没意见，结果原样交给模型，
改动手里的 dict 也不算数（钩子拿到的是一份拷贝）。试：执行 SQL `SELECT * FROM orders`"""
from hooks import POST, Hooks

hooks = Hooks()


@hooks.on(POST)
def shout(call):
    call["tool_response"] = call["tool_response"].upper()     # 改的是拷贝；又没有 return
'''

PERMISSIONS = '''"""上一课的权限规则，就是一个 PreToolUse 钩子：同样的规则，同样的 deny，同样的理由。
试：运行 `rm notes.md`，再去「权限与确认」一课用「默认」规则问同一句，比一比两边的理由"""
from hooks import PRE, Hooks, permission_hook

hooks = Hooks()

RULES = {"fetch_config": "allow", "run_sql": "allow", "bash": "allow", "bash:rm *": "deny"}

hooks.add(PRE, permission_hook(RULES))
'''

# (name, its English, source): the name is what links and the browser's memory hold.
HOOK_SETS = [
    ("脱敏", "Masking secrets", MASKING),
    ("拦下危险的 SQL", "Stopping dangerous SQL", DENY_SQL),
    ("改写参数", "Rewriting an argument", NORMALISE),
    ("审计与计时", "Audit log and timing", AUDIT),
    ("顺序的坑", "Order matters", ORDER),
    ("钩子出错", "A hook that raises", RAISES),
    ("忘了 return", "A hook without return", NO_RETURN),
    ("权限规则也是钩子", "A permission rule is a hook", PERMISSIONS),
]
HOOK_SOURCES = {name: source for name, _, source in HOOK_SETS}
HOOK_NAMES_EN = {name: english for name, english, _ in HOOK_SETS}
