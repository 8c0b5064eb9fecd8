"""Links that open a scenario, and the 复制本页链接 button that writes one.

A lesson's link is its page's address, with what to put on it in the query:
  /function-calling?example=天气&question=广州冷不冷？&tool_choice=auto&mistake=none&run=1
The older links that name the lesson (`/?lesson=function_calling&…`, `lesson` a LESSONS id) are
sent on to that page's address (serving/lesson_addresses.py). `example` an example set of its editor (editor_panel.lesson_sets);
`question` any text up to QUESTION_LIMIT; `mistake` a mistake of the offline model that the tab
offers (`none`: no mistake); `tool_choice` (Function Calling) auto / none / required or a tool of
the source; `approach` the tab's loop (ReAct: react / json; the workspace tabs: function_calling /
react); `parallel` and `envelope` (0 / 1) the Function Calling tab's checkboxes (envelope: ReAct's too);
`stream` (0 / 1) the first call's stream=True checkbox;
`rules` (the permission lesson) its rules as compact JSON, checked like the rules box; `run=1`
starts the run once the page shows the link's values. `lang=en` / `lang=zh` is the page's
language (i18n): not a scenario, but a copied link keeps it. `exercise=<id>` opens one of the lesson's
exercises in its panel at the end of the page (exercise_panel.py reads it).

A link is anybody's text: every value is checked here, a value that is unknown, too long or not
for that lesson changes nothing and is named in a note on the page (escaped, shortened, never
rendered as HTML or Markdown). A run starts only when every value was accepted and the chosen
model is the offline one: a link must not spend a student's own key on a question someone else
wrote.

Order on load: browser_memory.py puts back what this browser kept, except on the lesson the link
sets up (`replaced_lesson`: an example set, a question, an option or a run, not a bare `lesson=`): that
one starts as a fresh browser would show it, and what was kept of it
is deleted, so that no kept run of another example comes back under the link's values later. The
link is applied after that lesson's turn in the restore, and the banner alone says what it replaced.
Loads without any of these parameters cost nothing: a script checks the address, and only a
page opened from such a link asks the server (a hidden button, once).

The button builds the link in Python from what is on screen (lesson, example set, question, the
tab's options): never a key or a setting, never source text. An edited source is not in a link;
the note says so and points to 导出 (the session file).
"""
from __future__ import annotations

import dataclasses
import json
import re
import uuid
from typing import Any, Iterable, Mapping
from urllib.parse import quote, urlencode

import gradio as gr

import i18n
from i18n import now, tr

from catalogue import LESSONS, ROOT, Lesson

from lessons.editor_panel import EXAMPLE_NAMES_EN, lesson_sets
from memory.browser_memory import Kept
from runs import context_backend
from serving.page_events import SILENT, value_box
import context
from tool_registry import TOOL_NAME
from lessons.presets import mistake_choices

DEFAULT_LESSON = ROOT      # the lesson of the page at /, where a link without a lesson opens


PARAMS = ("lesson", "example", "question", "approach", "tool_choice", "mistake", "parallel", "envelope", "stream",
          "rules", "strategy", "budget", "run")
OPTION_PARAMS = ("approach", "tool_choice", "mistake", "parallel", "envelope", "stream", "rules", "strategy", "budget")
FLAGS = ("parallel", "envelope", "stream")  # checkboxes: 1 or 0 in a link
# Where a link parameter lives on a tab: its run panel's option of that name, unless named here.
RUN_OPTION = {"parallel": "parallel_tool_calls"}
KEPT_CONTROL = {"rules"}                    # LessonPage.kept
# Added by Gradio itself or by a hosting page around the app: never the student's business.
FOREIGN = {"__theme", "deep_link", "view", "__sign", "logs", "write_token", "_target_url"}
# Read by the browser alone (projector.py): how this screen shows the page, not a scenario.
PAGE_ONLY = {"present", "lang"}
# Read by a panel of the page itself: `exercise=<id>` opens that exercise (exercise_panel.py says when it is not one).
PANEL_PARAMS = {"exercise"}
QUESTION_LIMIT = 300
RULES_LIMIT = 600
VALUE_LIMIT = 80
NAME_LIMIT = 40
# Run options a link never carries (too long for an address), but whose edits a copied link must own up to.
NOT_CARRIED = ("conversation",)
CONVERSATION_NOT_IN_LINK = tr(
    "你改过的对话不在链接里：打开链接的人看到的是示例对话。要连改过的对话一起分享，请在运行区用「导出本次运行」导出会话文件，"
    "对方用「导入」打开。",
    "Your edited conversation is not in the link: whoever opens it sees the example conversation. To share it with your "
    "edits, export the run (Export this run) and have them open the file with Import.")
MAX_PARAMS = 20
NO_MISTAKE = "none"
TOOL_CHOICE_KEYWORDS = ("auto", "none", "required")
OVERRIDDEN = tr("链接里的设置覆盖了浏览器保存的内容", "The link's settings replaced what this browser kept")
NOT_IN_LINK = tr("你改过的源码不在链接里：打开链接的人看到的是示例「{example}」原来的源码。"
                 "要连改过的源码一起分享，请在运行区用「导出本次运行」导出会话文件，对方用「导入」打开。",
                 "Your edited source is not in the link: whoever opens it sees the example «{example}» as it was. "
                 "To share the edited source too, export a session file with «Export this run» in the run area; "
                 "the other person opens it with «Import».")
COPIED = tr("✅ 已复制到剪贴板。", "✅ Copied to the clipboard.")
COPY_REFUSED = tr("⚠️ 浏览器没有允许写入剪贴板：请手动选中上面的链接复制。",
                  "⚠️ The browser did not allow writing to the clipboard: select the link above and copy it.")
MD_SPECIAL = set("\\`*_{}[]()#+-.!|~>")
HTML_ESCAPES = {"<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;"}


def shown(value: str, limit: int = 30) -> str:
    """A hostile value as inert text for a Markdown note: shortened, control characters
    replaced, every Markdown and HTML character escaped."""
    text = value if len(value) <= limit else value[:limit] + "…"
    out = []
    for char in text:
        if not char.isprintable():
            out.append("�")
        elif char in HTML_ESCAPES:
            out.append(HTML_ESCAPES[char])
        elif char in MD_SPECIAL:
            out.append("\\" + char)
        else:
            out.append(char)
    return "「" + "".join(out) + "」"


def _choices(values: Iterable[str]) -> str:
    return tr("、", ", ").join(str(v) for v in values)


def lesson_choices() -> str:
    return _choices(tr("{name}（{title}）", "{name} ({title})").format(name=name, title=now(spec.title))
                    for name, spec in LESSONS.items())


@dataclasses.dataclass
class Plan:
    """What a link asks for, checked: `values` holds only accepted values (param -> value);
    `notes` tells, in the page's language, what was ignored and why."""
    wanted: bool = False          # the link has at least one of PARAMS
    lesson: str | None = None
    values: dict[str, str] = dataclasses.field(default_factory=dict)
    run: bool = False
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def target(self) -> str:
        return self.lesson or DEFAULT_LESSON


def _has_control(text: str) -> bool:
    return any(not c.isprintable() and c not in "\n\t" for c in text)


def parse(items: Iterable[tuple[str, str]], page: str = DEFAULT_LESSON) -> Plan:
    """Checks a link's parameters (name, value pairs, as request.query_params.multi_items())
    without looking at the page's controls: which lesson (the link's `lesson`, or else the lesson
    of the `page` it opens), and which values are acceptable at all."""
    pairs = list(items)
    plan = Plan(wanted=any(name in PARAMS for name, _ in pairs))
    if not plan.wanted:
        return plan
    if len(pairs) > MAX_PARAMS:
        plan.notes.append(tr("链接里的参数太多（{n} 个，最多 {most} 个），整个链接都没有用；页面按默认打开。",
                             "The link has too many parameters ({n}, at most {most}): none of it was used; the page "
                             "opens as usual.").format(n=len(pairs), most=MAX_PARAMS))
        return plan
    seen: dict[str, str] = {}
    for name, value in pairs:
        if name in FOREIGN or name in PAGE_ONLY or name in PANEL_PARAMS:
            continue
        if name not in PARAMS:
            if len(name) > NAME_LIMIT:
                plan.notes.append(tr("链接里有一个名字太长的参数（{n} 字），已忽略。",
                                     "The link has a parameter with too long a name ({n} characters): ignored."
                                     ).format(n=len(name)))
            else:
                plan.notes.append(tr("链接里的参数 {name}不认识，已忽略；可用的参数：{known}。",
                                     "The link's parameter {name} is unknown: ignored; the parameters are: {known}."
                                     ).format(name=shown(name), known=_choices(PARAMS)))
            continue
        if name in seen:
            if value != seen[name]:
                plan.notes.append(tr("链接里的 {name} 出现了不止一次，只用了第一个。",
                                     "The link's {name} appears more than once: only the first was used.").format(name=name))
            continue
        seen[name] = value
    lesson = seen.pop("lesson", page)
    if lesson not in LESSONS:
        what = (tr("太长（{n} 字）", " is too long ({n} characters)").format(n=len(lesson)) if len(lesson) > VALUE_LIMIT
                else tr("不认识", " is unknown"))
        plan.notes.append(tr("链接里的 lesson={value}{what}，可选：{known}；其余按默认打开。",
                             "The link's lesson={value}{what}; the lessons are: {known}; the rest opens as usual."
                             ).format(value=shown(lesson), what=what, known=lesson_choices()))
        return plan
    plan.lesson = lesson
    spec = LESSONS[lesson]
    for name, value in seen.items():
        limit = QUESTION_LIMIT if name == "question" else RULES_LIMIT if name == "rules" else VALUE_LIMIT
        if len(value) > limit:
            plan.notes.append(tr("链接里的 {name} 太长（{n} 字，最多 {limit} 字），已忽略。",
                                 "The link's {name} is too long ({n} characters, at most {limit}): ignored.").format(
                                     name=name, n=len(value), limit=limit))
            continue
        if _has_control(value):
            plan.notes.append(tr("链接里的 {name} 含有控制字符，已忽略。",
                                 "The link's {name} contains control characters: ignored.").format(name=name))
            continue
        problem = _check(name, value, spec)
        if problem:
            plan.notes.append(problem)
        elif name == "run":
            plan.run = value == "1"
        else:
            plan.values[name] = value.strip() if name == "question" else value
    return plan


def _check(name: str, value: str, spec: Lesson) -> str:
    """"" when the value can be used on this lesson, else what is wrong."""
    title = now(spec.title)
    if name == "question":
        return "" if value.strip() else tr("链接里的 question 是空的，已忽略。", "The link's question is empty: ignored.")
    if name == "run":
        return "" if value in ("0", "1") else tr(
            "链接里的 run={value}不认识：只能是 1（打开后运行）或 0。",
            "The link's run={value} is unknown: it can only be 1 (run once open) or 0.").format(value=shown(value))
    if name == "example":
        if not spec.editor:
            return tr("「{title}」这一课没有示例工具集，链接里的 example 已忽略。",
                      "The lesson «{title}» has no example sets: the link's example was ignored.").format(title=title)
        return "" if value in lesson_sets(spec) else tr(
            "链接里的 example={value}不认识，已忽略；可选：{known}。",
            "The link's example={value} is unknown: ignored; the example sets are: {known}.").format(
                value=shown(value), known=_choices(lesson_sets(spec)))
    if name not in spec.link_options:
        where = _choices(now(LESSONS[n].title) for n, s in LESSONS.items() if name in s.link_options)
        return tr("链接里的 {name} 不适用于「{title}」这一课（只用于 {where}），已忽略。",
                  "The link's {name} is not for the lesson «{title}» (only for {where}): ignored.").format(
                      name=name, title=title, where=where)
    if name == "approach":
        return "" if value in spec.approaches else tr(
            "链接里的 approach={value}不认识，已忽略；「{title}」可选：{known}。",
            "The link's approach={value} is unknown: ignored; «{title}» has: {known}.").format(
                value=shown(value), title=title, known=_choices(spec.approaches))
    if name == "mistake":
        known = _mistakes(spec.id)
        return "" if value in (NO_MISTAKE, "") or value in known else tr(
            "链接里的 mistake={value}不是「{title}」能选的失误，已忽略；可选：{none}、{known}。",
            "The link's mistake={value} is not one of the mistakes «{title}» offers: ignored; they are: "
            "{none}, {known}.").format(value=shown(value), title=title, none=NO_MISTAKE, known=_choices(known))
    if name == "tool_choice":
        return "" if value in TOOL_CHOICE_KEYWORDS or TOOL_NAME.fullmatch(value) else tr(
            "链接里的 tool_choice={value}不认识，已忽略；可选：auto、none、required，或源码里一个工具的名字。",
            "The link's tool_choice={value} is unknown: ignored; it can be auto, none, required or the name of a "
            "tool in the source.").format(value=shown(value))
    if name in FLAGS:
        return "" if value in ("0", "1") else tr(
            "链接里的 {name}={value}不认识：只能是 1（勾选）或 0（不勾选），已忽略。",
            "The link's {name}={value} is unknown: it can only be 1 (ticked) or 0 (not ticked); ignored.").format(
                name=name, value=shown(value))
    if name == "rules":
        return rules_problem(value)
    if name == "strategy":
        return "" if value in context.STRATEGIES else tr(
            "链接里的 strategy={value}不认识，已忽略；可选：{known}。",
            "The link's strategy={value} is unknown: ignored; the strategies are: {known}.").format(
                value=shown(value), known=_choices(context.STRATEGIES))
    if name == "budget":
        low, high = context_backend.BUDGET_RANGE
        return "" if value.isdigit() and low <= int(value) <= high else tr(
            "链接里的 budget={value}不是 {low} 到 {high} 之间的整数，已忽略。",
            "The link's budget={value} is not a whole number from {low} to {high}: ignored.").format(
                value=shown(value), low=low, high=high)
    return ""


def rules_problem(value: str) -> str:
    """"" when a link's rules are a JSON object the permission gate accepts, else what is wrong."""
    import permissions

    try:
        rules = json.loads(value)
    except ValueError:
        return tr("链接里的 rules 不是合法的 JSON，已忽略。", "The link's rules are not valid JSON: ignored.")
    problems = permissions.validate_rules(rules)
    if problems:
        return tr("链接里的 rules 有问题（{what}），已忽略。", "The link's rules have a problem ({what}): ignored.").format(
            what=shown(tr("；", "; ").join(problems), 120))
    return ""


def rule_presets() -> dict:
    import permissions
    return dict(permissions.PRESETS)


def control(tab: Any, name: str) -> Any:
    """The component behind a link parameter on `tab`, or None when the tab has none."""
    if name in KEPT_CONTROL:
        return tab.kept.get(name)
    return tab.run.options.get(RUN_OPTION.get(name, name))


def link_value(name: str, value: Any) -> str | None:
    """What a link carries for the control's value on screen (None: nothing to carry)."""
    if name in FLAGS:
        return "1" if value else "0"
    if name == "budget":
        return str(int(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if name == "rules":
        try:
            return json.dumps(json.loads(value or ""), ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            return None
    return value if isinstance(value, str) and value else None


def page_value(name: str, value: str) -> Any:
    """A checked link value as the control on screen takes it."""
    if name in FLAGS:
        return value == "1"
    if name == "rules":
        return json.dumps(json.loads(value), ensure_ascii=False, indent=2)
    if name == "budget":
        return int(value)
    return value


def _mistakes(lesson: str, approach: str | None = None) -> list[str]:
    """The mistakes the lesson's selector offers (presets.mistake_choices): those of its loop, the
    `approach` given, or of any of its loops when the approach is not known yet. A lesson with one
    loop runs Function Calling."""
    from offline import model as offline_model
    modes = [mode for mode in LESSONS[lesson].approaches if mode in offline_model.EVERY_MODE] or ["function_calling"]
    if approach in modes:
        modes = [approach]
    offered = {name for mode in modes for name in offline_model.mistakes_for(mode)}
    return [name for name in offline_model.MISTAKES if name in offered]


def for_page(plan: Plan, source: str, approach: str | None) -> tuple[dict[str, str], list[str]]:
    """The checks that need the page: a mistake the tab's current loop can make, a forced tool
    that the source defines. `source` is what the editor will show (the link's example, or the
    page's source); `approach` the loop the tab will use. Returns (values to set, notes)."""
    values, notes = dict(plan.values), []
    mistake = values.get("mistake")
    if mistake is not None:
        if mistake in (NO_MISTAKE, ""):
            values["mistake"] = ""
        else:
            mode = None     # ReAct's selector offers the mistakes of the loop the tab will run
            if plan.lesson == "react":
                mode = "json" if (values.get("approach") or approach) == "json" else "react"
            known = _mistakes(plan.lesson, mode)
            if mistake not in known:
                where = tr("从文本中解析 JSON", "Parse JSON from text") if mode == "json" else now(LESSONS[plan.lesson].title)
                notes.append(tr("链接里的 mistake={value}在「{where}」里不会出现，已忽略；可选：{none}、{known}。",
                                "The link's mistake={value} cannot happen in «{where}»: ignored; the mistakes there "
                                "are: {none}, {known}.").format(value=shown(mistake), where=where, none=NO_MISTAKE,
                                                                known=_choices(known)))
                del values["mistake"]
    choice = values.get("tool_choice")
    if choice is not None and choice not in TOOL_CHOICE_KEYWORDS:
        if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(choice)}(?![A-Za-z0-9_])", source or ""):
            notes.append(tr("链接里的 tool_choice={value}不是源码里的工具，已忽略；可选：auto、none、required，或源码里一个工具的名字。",
                            "The link's tool_choice={value} is not a tool of the source: ignored; it can be auto, "
                            "none, required or the name of a tool in the source.").format(value=shown(choice)))
            del values["tool_choice"]
    return values, notes


def link_query(lesson: str, example: str | None, source: str | None, example_source: str | None,
               question: str | None, options: Mapping[str, Any]) -> tuple[str, list[str]]:
    """("./function-calling?example=…", notes) for what a lesson's page shows: its address relative
    to the app's root (every page sits right under it), then only the example set, question and
    the lesson's link options: never a key, a setting or source text."""
    spec = LESSONS[lesson]
    params: list[tuple[str, str]] = []
    notes: list[str] = []
    if example in lesson_sets(spec):
        params.append(("example", example))
        if example_source is not None and (source or "").replace("\r\n", "\n").rstrip() != example_source.rstrip():
            notes.append(now(NOT_IN_LINK).format(example=tr(example, EXAMPLE_NAMES_EN.get(example, example))))
    text = (question or "").strip()
    if len(text) > QUESTION_LIMIT:
        notes.append(tr("问题太长（{n} 字，链接最多带 {limit} 字），没有放进链接。",
                        "The question is too long ({n} characters; a link carries at most {limit}): it is not in the "
                        "link.").format(n=len(text), limit=QUESTION_LIMIT))
    elif text:
        params.append(("question", text))
    for name in spec.link_options:
        if name not in options:
            continue
        value = link_value(name, options.get(name))
        if name == "mistake":
            value = value or NO_MISTAKE
        if name == "rules" and (value is None or rules_problem(value)):
            notes.append(tr("规则框里的规则有问题，没有放进链接：打开链接的人看到的是默认规则。",
                            "The rules in the rules box have a problem, so they are not in the link: whoever opens "
                            "it sees the default rules."))
        elif name == "rules" and len(value) > RULES_LIMIT:
            notes.append(tr("规则太长（{n} 字，链接最多带 {limit} 字），没有放进链接：打开链接的人看到的是默认规则。",
                            "The rules are too long ({n} characters; a link carries at most {limit}): not in the link, "
                            "so whoever opens it sees the default rules.").format(n=len(value), limit=RULES_LIMIT))
        elif value is not None and len(value) <= (RULES_LIMIT if name == "rules" else VALUE_LIMIT):
            params.append((name, value))
    if "conversation" in options and not context_backend.is_example(options["conversation"]):
        notes.append(now(CONVERSATION_NOT_IN_LINK))
    lang = i18n.link_language()
    if lang is not None:
        params.append((i18n.PARAM, lang))
    return "./" + spec.path + ("?" + urlencode(params, quote_via=quote) if params else ""), notes


def _choice_values(dropdown: Any) -> list:
    return [c[1] if isinstance(c, (tuple, list)) else c for c in (getattr(dropdown, "choices", None) or [])]


def sets_scenario(plan: Plan) -> bool:
    """Whether a link sets up its lesson (an example set, a question, an option or a run), not only opens it."""
    return bool(plan.values or plan.run)


def replaced_lesson(request: Any, page: str = DEFAULT_LESSON) -> str | None:
    """The lesson whose scenario a link in the address of `page` sets up: what the browser kept of it
    gives way to the link. A link that only opens a lesson replaces nothing."""
    plan = parse(request.query_params.multi_items(), page) if request is not None else None
    return plan.lesson if plan is not None and sets_scenario(plan) else None


def replaced_note(kept: Kept) -> str:
    """What the banner says when the browser had kept work on the linked lesson: it is gone."""
    what = (tr("你改过的源码、", "your edited source, ") if kept.edited_source else "") + (
        tr("问题、选项和上次运行", "the question, the options and the last run") if kept.run
        else tr("问题和选项", "the question and the options"))
    return now(OVERRIDDEN) + tr("：这一课显示的是链接里的场景，本浏览器 {when} 为这一课保存的{what}已删除{why}。",
                                ": this lesson shows the link's scenario; {what} this browser kept of it at {when} "
                                "were deleted{why}.").format(
        when=kept.when, what=what, why=tr("（链接不带源码）", " (links carry no source)") if kept.edited_source else "")


def banner(notes: list[str]) -> dict:
    if not notes:
        return gr.update(visible=False, value="")
    return gr.update(visible=True, value=tr("🔗 **按链接打开**", "🔗 **Opened from a link**") + "\n\n"
                     + "\n".join(f"- {n}" for n in notes))


# ---------------------------------------------------------------- the page

PANELS_JS = json.dumps({name: spec.panel for name, spec in LESSONS.items()})
STATE_JS = "(window.__twDeepLink = window.__twDeepLink || {restored: [], fired: false})"
GATE_JS = """() => {
  const w = %(state)s, params = new URLSearchParams(location.search);
  w.wanted = %(params)s.some((name) => params.has(name));
  w.target = %(lessons)s.includes(params.get("lesson")) ? params.get("lesson") : %(page)s;
  w.go = () => {
    if (!w.wanted || w.fired || !w.restored.includes(w.target)) return;
    const button = document.querySelector("#deep-link-go");
    if (button) { w.fired = true; button.click(); }
  };
  w.go();
}"""     # % {"page": the page's lesson} (DeepLinks.wire)
GATE_JS = GATE_JS % {"state": STATE_JS, "params": json.dumps(PARAMS), "lessons": json.dumps(list(LESSONS)),
                     "page": "%(page)s"}
RESTORED_JS = "() => { const w = %s; w.restored.push(%%s); if (w.go) w.go(); }" % STATE_JS
CLICK_RUN_JS = """(flag, provider) => {
  const name = (flag || "").split(":")[0], panels = %s;
  const panel = panels[name] && document.getElementById(panels[name]);
  if (!panel) return;
  const find = () => panel.querySelector("button.tw-run, .tw-run button, .tw-run");
  // The settings may have been restored after the link was checked: look again now.
  if (provider !== "offline") return;
  // 运行 works once the page's kept settings are back (run_views.ready): wait for it, up to 10 s.
  let tries = 100;
  const press = () => {
    const button = find();
    if (button && !button.disabled) button.click();
    else if (button && tries-- > 0) setTimeout(press, 100);
  };
  const button = find();
  if (button && button.offsetParent !== null) { press(); return; }
  // The run area sits in a closed accordion (工具注册): open it first.
  const opener = panel.querySelector(".tw-run-opener button");
  if (opener) opener.click();
  setTimeout(press, 400);
}""" % PANELS_JS
# `said` holds what to tell, in the tab's language: ["copied", "refused"] as JSON, from the server.
WRITE_JS = """async (query, note, said) => {
  if (!query || !query.startsWith("./")) return [query, note];
  const url = new URL(query, location.href).href;
  const [copied, refused] = JSON.parse(said || "[]");
  let told = copied;
  try { await navigator.clipboard.writeText(url); } catch (e) { told = refused; }
  return [url, (note ? note + "\\n\\n" : "") + told];
}"""
_CHOICES = "choices"     # the key of plan_updates' first step


class DeepLinks:
    """Build it inside the page's Blocks where the banner and the copy button belong; call
    wire(...) once after the tabs and browser memory are wired."""

    def __init__(self):
        self.banner = gr.Markdown(visible=False, elem_id="deep-link-note")
        with gr.Row(equal_height=False):
            self.copy_btn = gr.Button(tr("🔗 复制本页链接", "🔗 Copy this page's link"), size="sm", elem_id="copy-page-link", scale=0, min_width=150)
            self.link = gr.Textbox(label=tr("本页链接（课、示例集、问题和选项；不含密钥和源码）",
                                            "This page's link (lesson, example set, question and options; no keys, no "
                                            "source)"), visible=False,
                                   interactive=False, elem_id="page-link", scale=4)
        self.link_note = gr.Markdown(visible=False, elem_id="page-link-note")
        self.go = gr.Button("open link", visible="hidden", elem_id="deep-link-go")
        self.run_flag = value_box(elem_id="deep-link-run")
        self.said = value_box(elem_id="page-link-said")

    def wire(self, demo: gr.Blocks, page: Any, restored: Mapping[str, Any], settings: Any, memory: Any = None) -> None:
        """`page`: the lesson this page shows (a LessonPage), the one its links set up."""
        tabs = {page.name: page}
        demo.load(None, None, None, js=GATE_JS % {"page": json.dumps(page.name)}, **SILENT)
        for name in tabs:
            after = restored.get(name)
            (after.then if after is not None else demo.load)(None, None, None, js=RESTORED_JS % json.dumps(name),
                                                             **SILENT)
        self._wire_open(tabs, settings, memory)
        self._wire_copy(tabs)

    # ------------------------------------------------------------ opening a link

    def _wire_open(self, tabs: dict, settings: Any, memory: Any) -> None:
        kept_by = {name: memory for name in tabs if memory is not None and name in memory.lessons}
        page = next(iter(tabs))
        inputs, outputs = {settings.provider}, [self.banner, self.run_flag]
        for name, tab in tabs.items():
            editor, run = getattr(tab, "editor", None), tab.run
            if editor is not None:
                inputs |= {editor.editor, editor.example_set}
                outputs += [editor.example_set, editor.editor]
            inputs |= {run.options[o] for o in ("approach",) if o in run.options}
            outputs += [run.presets, run.question] + [c for c in (control(tab, o) for o in OPTION_PARAMS) if c is not None]
            if tab.kept.get("rules_preset") is not None:
                outputs.append(tab.kept["rules_preset"])
            if name in kept_by:
                inputs |= memory.kept_inputs(name)

        def open_link(values: dict, request: gr.Request) -> dict:
            """Everything the link sets, except the choices it changes (set first, by `choices`)."""
            out = plan_updates(values, request)
            out.pop(_CHOICES, None)
            return out or {self.banner: gr.skip()}   # an empty dict would be taken for one value

        def choices(values: dict, request: gr.Request) -> dict:
            """First the choices of the dropdowns whose choices follow another control (the preset
            questions follow the example set, ReAct's mistakes the loop): each change of a kept
            control sends the page's values to the server, and a value that is not among the server's
            choices of that moment is refused."""
            return plan_updates(values, request).get(_CHOICES) or {self.banner: gr.skip()}

        def plan_updates(values: dict, request: gr.Request) -> dict:
            plan = parse(request.query_params.multi_items() if request is not None else [], page)
            if not plan.wanted:
                return {}
            out: dict = {}
            if plan.lesson is None or plan.lesson not in tabs:
                return {self.banner: banner(plan.notes)}
            tab = tabs[plan.lesson]
            editor, run = getattr(tab, "editor", None), tab.run
            example = plan.values.get("example")
            source = editor.texts.get(example) if editor is not None and example else (
                values[editor.editor] if editor is not None else "")
            approach = values[run.options["approach"]] if "approach" in run.options else None
            accepted, more = for_page(plan, source, approach)
            problems, told = plan.notes + more, []
            # The lesson was not restored (browser_memory.py forgets what it kept of a linked lesson).
            kept = kept_by[plan.lesson].kept_on_load(values, plan.lesson) if plan.lesson in kept_by else None
            if kept is not None and sets_scenario(plan):
                told.append(replaced_note(kept))
            if editor is not None and example:
                out[editor.example_set] = example
                out[editor.editor] = source
                choices = editor.presets.get(example) or []
                question = accepted.get("question", choices[0] if choices else "")
                out.setdefault(_CHOICES, {})[run.presets] = gr.update(
                    choices=choices, value=question if question in choices else None)
                out[run.question] = question
            elif "question" in accepted:
                question = accepted["question"]
                out[run.question] = question
                out[run.presets] = gr.update(value=question if question in _choice_values(run.presets) else None)
            for option in OPTION_PARAMS:
                component = control(tab, option)
                if option in accepted and component is not None:
                    out[component] = page_value(option, accepted[option])
            if "rules" in accepted and tab.kept.get("rules_preset") is not None:
                # The preset whose rules these are, or none: the radio must not claim another set.
                rules = json.loads(accepted["rules"])
                out[tab.kept["rules_preset"]] = next((name for name, preset in rule_presets().items()
                                                      if preset == rules), None)
            if plan.lesson == "react" and "mistake" in run.options:
                mode = "json" if (accepted.get("approach") or approach) == "json" else "react"
                out.setdefault(_CHOICES, {})[run.options["mistake"]] = gr.update(choices=mistake_choices(mode))
            if plan.run:
                if problems:
                    told.append(tr("链接里有没用上的值，为免跑成别的场景，没有自动运行：检查后点「▶ 运行」。",
                                   "Some of the link's values were not used, so it did not run by itself (it could "
                                   "have run another scenario): check, then click «▶ Run»."))
                elif values[settings.provider] != "offline":
                    told.append(tr("链接要求打开后就运行，但模型设置里选的不是离线演示模型：为免花掉你的额度，"
                                   "没有自动运行。看过问题后点「▶ 运行」。",
                                   "The link asks to run once open, but the model settings do not choose the offline "
                                   "demo model: so as not to spend your quota it did not run. Read the question, then "
                                   "click «▶ Run»."))
                else:
                    out[self.run_flag] = f"{plan.lesson}:{uuid.uuid4().hex[:8]}"
            out[self.banner] = banner(problems + told)
            return out

        opened = self.go.click(choices, inputs, outputs, **SILENT).then(open_link, inputs, outputs, **SILENT)
        opened.then(None, [self.run_flag, settings.provider], None, js=CLICK_RUN_JS, **SILENT)

    # ------------------------------------------------------------ copying a link

    def _wire_copy(self, tabs: dict) -> None:
        lesson = next(iter(tabs))
        inputs = set()
        for tab in tabs.values():
            editor, run = getattr(tab, "editor", None), tab.run
            if editor is not None:
                inputs |= {editor.editor, editor.example_set}
            inputs |= {run.question, *[c for c in (control(tab, o) for o in OPTION_PARAMS) if c is not None]}
            inputs |= {c for c in (run.options.get(o) for o in NOT_CARRIED) if c is not None}
        ordered = list(inputs)

        def copy(*args) -> dict:
            values = dict(zip(ordered, args))
            tab = tabs[lesson]
            editor, run = getattr(tab, "editor", None), tab.run
            example = values[editor.example_set] if editor is not None else None
            query, notes = link_query(
                lesson, example, values[editor.editor] if editor is not None else None,
                editor.texts.get(example) if editor is not None else None, values[run.question],
                {**{o: values[control(tab, o)] for o in OPTION_PARAMS if control(tab, o) is not None},
                 **{o: values[run.options[o]] for o in NOT_CARRIED if o in run.options}})
            note = "\n\n".join(f"⚠️ {n}" for n in notes)
            return {self.link: gr.update(visible=True, value=query), self.link_note: gr.update(visible=True, value=note),
                    self.said: json.dumps([now(COPIED), now(COPY_REFUSED)], ensure_ascii=False)}

        self.copy_btn.click(copy, ordered, [self.link, self.link_note, self.said], **SILENT).then(
            None, [self.link, self.link_note, self.said], [self.link, self.link_note], js=WRITE_JS, **SILENT)
