"""A permission rule's reason (code/permissions.py decide(), Chinese like all the course's code) in
English, for an English page: the ask box of the workspace lessons and the timeline's rule decisions."""
from __future__ import annotations

import re


# The permission rules' reasons (code/permissions.py decide(), Chinese like all the course's code) as
# sentences with their parts, so an English page says the same facts in English. A test walks every
# branch of decide() through reason_in_english: a changed sentence there fails it, not the page.
NO_RULE = re.compile(r"没有规则管 (?P<name>.+) 的这次调用，默认先问你（规则没想到的情况交给人）", re.S)
CONTROL_ALLOW = re.compile(r"(?P<kind>模式规则|工具规则) (?P<key>.+?) 放行(?P<what>工具|命令|路径) (?P<value>.*)，"
                           r"但命令里有 shell 控制字符（(?P<marks>.+?)），一条命令里可能藏着好几条，这条放行不算数："
                           r"(?P<verdict>直接执行|先问你|拒绝)", re.S)
MATCHED = re.compile(r"(?P<kind>模式规则|工具规则) (?P<key>.+?) 匹配(?P<what>工具|命令|路径) (?P<value>.*?)"
                     r"(?:（同时匹配了 (?P<n>\d+) 条，取最严的）)?：(?P<verdict>直接执行|先问你|拒绝)", re.S)
REASON_WORDS = {"模式规则": "pattern rule", "工具规则": "tool rule", "工具": "tool", "命令": "command", "路径": "path",
                "直接执行": "run it", "先问你": "ask you first", "拒绝": "deny"}


def reason_in_english(reason: str) -> str:
    """A permission rule's reason in English (the course's own sentence when it is not one of decide()'s)."""
    words = REASON_WORDS
    if found := NO_RULE.fullmatch(reason):
        return (f"no rule covers this call of {found['name']}, so it asks you first (what the rules did not foresee "
                "goes to a person)")
    if found := CONTROL_ALLOW.fullmatch(reason):
        return (f"the {words[found['kind']]} {found['key']} allows the {words[found['what']]} {found['value']}, but "
                f"the command holds shell control characters ({found['marks']}) and may hide several commands, so "
                f"this allow does not count: {words[found['verdict']]}")
    if found := MATCHED.fullmatch(reason):
        several = f" ({found['n']} rules match, the strictest wins)" if found["n"] else ""
        return (f"the {words[found['kind']]} {found['key']} matches the {words[found['what']]} {found['value']}"
                f"{several}: {words[found['verdict']]}")
    return reason
