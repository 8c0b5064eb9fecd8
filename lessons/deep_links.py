"""Links that open a scenario, and the 复制本页链接 button that writes one.

A link's query names a lesson and what to put on it:
  ?lesson=function_calling&example=天气&question=广州冷不冷？&tool_choice=auto&mistake=none&run=1
`lesson` is a tab id (LESSONS); `example` an example set of its editor (editor_panel.EXAMPLE_SETS);
`question` any text up to QUESTION_LIMIT; `mistake` a mistake of the offline model that the tab
offers (`none`: no mistake); `tool_choice` (Function Calling) auto / none / required or a tool of
the source; `approach` the tab's loop (ReAct: react / json; the workspace tabs: function_calling /
react); `run=1` starts the run once the page shows the link's values.

A link is anybody's text: every value is checked here, a value that is unknown, too long or not
for that lesson changes nothing and is named in a note on the page (escaped, shortened, never
rendered as HTML or Markdown). A run starts only when every value was accepted and the chosen
model is the offline one: a link must not spend a student's own key on a question someone else
wrote.

Order on load: browser_memory.py first puts back what this browser kept; the link is applied
after the restore of its own tab, so the link wins, and the page says it replaced what was kept.
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

from i18n import tr

from lessons.editor_panel import EXAMPLE_SETS
from serving.page_events import PRIVATE
from lessons.presets import mistake_choices

DEFAULT_LESSON = "react"


@dataclasses.dataclass(frozen=True)
class LessonSpec:
    title: str
    panel: str                       # the tab panel's elem_id
    editor: bool                     # has an example-set editor
    options: tuple[str, ...] = ()    # link parameters besides example/question
    approaches: tuple[str, ...] = ()


LESSONS = {
    "react": LessonSpec(tr("正则 ReAct", "Regex ReAct"), "tab-react", True, ("approach", "mistake"), ("react", "json")),
    "registry": LessonSpec(tr("工具注册", "Tool registry"), "tab-registry", True),
    "function_calling": LessonSpec(tr("Function Calling", "Function Calling"), "tab-function-calling", True,
                                   ("tool_choice", "mistake")),
    "workspace": LessonSpec(tr("原子工具", "Atomic tools"), "tab-workspace", False, ("approach",),
                            ("function_calling", "react")),
    "permissions": LessonSpec(tr("权限与确认", "Permissions"), "tab-permissions", False, ("approach",),
                              ("function_calling", "react")),
}
PARAMS = ("lesson", "example", "question", "approach", "tool_choice", "mistake", "run")
OPTION_PARAMS = ("approach", "tool_choice", "mistake")
# Added by Gradio itself or by a hosting page around the app: never the student's business.
FOREIGN = {"__theme", "deep_link", "view", "__sign", "logs", "write_token", "_target_url"}
# Read by the browser alone (projector.py): how this screen shows the page, not a scenario.
PAGE_ONLY = {"present"}
QUESTION_LIMIT = 300
VALUE_LIMIT = 80
NAME_LIMIT = 40
MAX_PARAMS = 20
NO_MISTAKE = "none"
TOOL_CHOICE_KEYWORDS = ("auto", "none", "required")
TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
OVERRIDDEN = "链接里的设置覆盖了浏览器保存的内容"
NOT_IN_LINK = ("你改过的源码不在链接里：打开链接的人看到的是示例「{example}」原来的源码。"
               "要连改过的源码一起分享，请在运行区用「导出本次运行」导出会话文件，对方用「导入」打开。")
COPIED = "✅ 已复制到剪贴板。"
COPY_REFUSED = "⚠️ 浏览器没有允许写入剪贴板：请手动选中上面的链接复制。"
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
    return "、".join(values)


def lesson_choices() -> str:
    return _choices(f"{name}（{spec.title}）" for name, spec in LESSONS.items())


@dataclasses.dataclass
class Plan:
    """What a link asks for, checked: `values` holds only accepted values (param -> value);
    `notes` tells, in Chinese, what was ignored and why."""
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


def parse(items: Iterable[tuple[str, str]]) -> Plan:
    """Checks a link's parameters (name, value pairs, as request.query_params.multi_items())
    without looking at the page: which lesson, and which values are acceptable at all."""
    pairs = list(items)
    plan = Plan(wanted=any(name in PARAMS for name, _ in pairs))
    if not plan.wanted:
        return plan
    if len(pairs) > MAX_PARAMS:
        plan.notes.append(f"链接里的参数太多（{len(pairs)} 个，最多 {MAX_PARAMS} 个），整个链接都没有用；页面按默认打开。")
        return plan
    seen: dict[str, str] = {}
    for name, value in pairs:
        if name in FOREIGN or name in PAGE_ONLY:
            continue
        if name not in PARAMS:
            if len(name) > NAME_LIMIT:
                plan.notes.append(f"链接里有一个名字太长的参数（{len(name)} 字），已忽略。")
            else:
                plan.notes.append(f"链接里的参数 {shown(name)}不认识，已忽略；可用的参数：{_choices(PARAMS)}。")
            continue
        if name in seen:
            if value != seen[name]:
                plan.notes.append(f"链接里的 {name} 出现了不止一次，只用了第一个。")
            continue
        seen[name] = value
    lesson = seen.pop("lesson", None)
    if lesson is None:
        plan.notes.append(f"链接里没有 lesson（打开哪一课），其余参数都没有用；可选：{lesson_choices()}。页面按默认打开。")
        return plan
    if lesson not in LESSONS:
        what = f"太长（{len(lesson)} 字）" if len(lesson) > VALUE_LIMIT else "不认识"
        plan.notes.append(f"链接里的 lesson={shown(lesson)}{what}，可选：{lesson_choices()}；其余按默认打开。")
        return plan
    plan.lesson = lesson
    spec = LESSONS[lesson]
    for name, value in seen.items():
        limit = QUESTION_LIMIT if name == "question" else VALUE_LIMIT
        if len(value) > limit:
            plan.notes.append(f"链接里的 {name} 太长（{len(value)} 字，最多 {limit} 字），已忽略。")
            continue
        if _has_control(value):
            plan.notes.append(f"链接里的 {name} 含有控制字符，已忽略。")
            continue
        problem = _check(name, value, spec)
        if problem:
            plan.notes.append(problem)
        elif name == "run":
            plan.run = value == "1"
        else:
            plan.values[name] = value.strip() if name == "question" else value
    return plan


def _check(name: str, value: str, spec: LessonSpec) -> str:
    """"" when the value can be used on this lesson, else what is wrong."""
    if name == "question":
        return "" if value.strip() else "链接里的 question 是空的，已忽略。"
    if name == "run":
        return "" if value in ("0", "1") else f"链接里的 run={shown(value)}不认识：只能是 1（打开后运行）或 0。"
    if name == "example":
        if not spec.editor:
            return f"「{spec.title}」这一课没有示例工具集，链接里的 example 已忽略。"
        return "" if value in EXAMPLE_SETS else (f"链接里的 example={shown(value)}不认识，已忽略；"
                                                f"可选：{_choices(EXAMPLE_SETS)}。")
    if name not in spec.options:
        where = _choices(LESSONS[n].title for n, s in LESSONS.items() if name in s.options)
        return f"链接里的 {name} 不适用于「{spec.title}」这一课（只用于 {where}），已忽略。"
    if name == "approach":
        return "" if value in spec.approaches else (f"链接里的 approach={shown(value)}不认识，已忽略；"
                                                   f"「{spec.title}」可选：{_choices(spec.approaches)}。")
    if name == "mistake":
        known = _mistakes(None)
        return "" if value in (NO_MISTAKE, "") or value in known else (
            f"链接里的 mistake={shown(value)}不是离线模型会犯的失误，已忽略；可选：{NO_MISTAKE}、{_choices(known)}。")
    if name == "tool_choice":
        return "" if value in TOOL_CHOICE_KEYWORDS or TOOL_NAME.fullmatch(value) else (
            f"链接里的 tool_choice={shown(value)}不认识，已忽略；可选：auto、none、required，或源码里一个工具的名字。")
    return ""


def _mistakes(mode: str | None) -> list[str]:
    from offline import model as offline_model
    try:
        return list(offline_model.mistakes_for(mode) if mode else offline_model.MISTAKES)
    except ValueError:
        return []


def for_page(plan: Plan, source: str, approach: str | None) -> tuple[dict[str, str], list[str]]:
    """The checks that need the page: a mistake the tab's current loop can make, a forced tool
    that the source defines. `source` is what the editor will show (the link's example, or the
    page's source); `approach` the loop the tab will use. Returns (values to set, notes)."""
    values, notes = dict(plan.values), []
    mistake = values.get("mistake")
    if mistake is not None:
        if mistake in (NO_MISTAKE, ""):
            values["mistake"] = ""
        elif plan.lesson == "react":
            mode = "json" if (values.get("approach") or approach) == "json" else "react"
            if mistake not in _mistakes(mode):
                notes.append(f"链接里的 mistake={shown(mistake)}在「{'从文本中解析 JSON' if mode == 'json' else '正则 ReAct'}」"
                             "里不会出现，已忽略。")
                del values["mistake"]
        elif mistake not in _mistakes(plan.lesson):
            notes.append(f"链接里的 mistake={shown(mistake)}在「{LESSONS[plan.lesson].title}」里不会出现，已忽略。")
            del values["mistake"]
    choice = values.get("tool_choice")
    if choice is not None and choice not in TOOL_CHOICE_KEYWORDS:
        if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(choice)}(?![A-Za-z0-9_])", source or ""):
            notes.append(f"链接里的 tool_choice={shown(choice)}不是源码里的工具，已忽略；"
                         "可选：auto、none、required，或源码里一个工具的名字。")
            del values["tool_choice"]
    return values, notes


def link_query(lesson: str, example: str | None, source: str | None, example_source: str | None,
               question: str | None, options: Mapping[str, Any]) -> tuple[str, list[str]]:
    """("?lesson=…", notes) for what a tab shows. Only the lesson, example set, question and the
    tab's link options go in: never a key, a setting or source text."""
    spec = LESSONS[lesson]
    params: list[tuple[str, str]] = [("lesson", lesson)]
    notes: list[str] = []
    if spec.editor and example in EXAMPLE_SETS:
        params.append(("example", example))
        if example_source is not None and (source or "").replace("\r\n", "\n").rstrip() != example_source.rstrip():
            notes.append(NOT_IN_LINK.format(example=example))
    text = (question or "").strip()
    if len(text) > QUESTION_LIMIT:
        notes.append(f"问题太长（{len(text)} 字，链接最多带 {QUESTION_LIMIT} 字），没有放进链接。")
    elif text:
        params.append(("question", text))
    for name in spec.options:
        value = options.get(name)
        if name == "mistake":
            value = value or NO_MISTAKE
        if isinstance(value, str) and value and len(value) <= VALUE_LIMIT:
            params.append((name, value))
    return "?" + urlencode(params, quote_via=quote), notes


def _choice_values(dropdown: Any) -> list:
    return [c[1] if isinstance(c, (tuple, list)) else c for c in (getattr(dropdown, "choices", None) or [])]


def banner(notes: list[str]) -> dict:
    if not notes:
        return gr.update(visible=False, value="")
    return gr.update(visible=True, value="🔗 **按链接打开**\n\n" + "\n".join(f"- {n}" for n in notes))


# ---------------------------------------------------------------- the page

PANELS_JS = json.dumps({name: spec.panel for name, spec in LESSONS.items()})
STATE_JS = "(window.__twDeepLink = window.__twDeepLink || {restored: [], fired: false})"
GATE_JS = """() => {
  const w = %(state)s, params = new URLSearchParams(location.search);
  w.wanted = %(params)s.some((name) => params.has(name));
  w.target = %(lessons)s.includes(params.get("lesson")) ? params.get("lesson") : %(default)s;
  w.go = () => {
    if (!w.wanted || w.fired || !w.restored.includes(w.target)) return;
    const button = document.querySelector("#deep-link-go");
    if (button) { w.fired = true; button.click(); }
  };
  w.go();
}""" % {"state": STATE_JS, "params": json.dumps(PARAMS), "lessons": json.dumps(list(LESSONS)),
        "default": json.dumps(DEFAULT_LESSON)}
RESTORED_JS = "() => { const w = %s; w.restored.push(%%s); if (w.go) w.go(); }" % STATE_JS
CLICK_RUN_JS = """(flag, provider) => {
  const name = (flag || "").split(":")[0], panels = %s;
  const panel = panels[name] && document.getElementById(panels[name]);
  if (!panel) return;
  const find = () => panel.querySelector("button.tw-run, .tw-run button, .tw-run");
  // The settings may have been restored after the link was checked: look again now.
  if (provider !== "offline") return;
  const press = () => { const button = find(); if (button) button.click(); };
  const button = find();
  if (button && button.offsetParent !== null) { press(); return; }
  // The run area sits in a closed accordion (工具注册): open it first.
  const opener = panel.querySelector(".tw-run-opener button");
  if (opener) opener.click();
  setTimeout(press, 400);
}""" % PANELS_JS
CURRENT_JS = """(...values) => {
  const panels = %s;
  const shown = Object.keys(panels).find((name) => {
    const panel = document.getElementById(panels[name]);
    return panel && panel.offsetParent !== null;
  });
  values[0] = shown || %s;
  return values;
}""" % (PANELS_JS, json.dumps(DEFAULT_LESSON))
WRITE_JS = """async (query, note) => {
  if (!query || !query.startsWith("?")) return [query, note];
  const url = location.origin + location.pathname + query;
  let told = %s;
  try { await navigator.clipboard.writeText(url); } catch (e) { told = %s; }
  return [url, (note ? note + "\\n\\n" : "") + told];
}""" % (json.dumps(COPIED), json.dumps(COPY_REFUSED))
_CHOICES = "choices"     # the key of plan_updates' first step
SILENT = dict(queue=False, show_progress="hidden", api_visibility=PRIVATE)


class DeepLinks:
    """Build it inside the page's Blocks where the banner and the copy button belong; call
    wire(...) once after the tabs and browser memory are wired."""

    def __init__(self):
        self.banner = gr.Markdown(visible=False, elem_id="deep-link-note")
        with gr.Row(equal_height=False):
            self.copy_btn = gr.Button("🔗 复制本页链接", size="sm", elem_id="copy-page-link", scale=0, min_width=150)
            self.link = gr.Textbox(label="本页链接（课、示例集、问题和选项；不含密钥和源码）", visible=False,
                                   interactive=False, elem_id="page-link", scale=4)
        self.link_note = gr.Markdown(visible=False, elem_id="page-link-note")
        self.go = gr.Button("open link", visible="hidden", elem_id="deep-link-go")
        self.current = gr.Textbox(visible="hidden", elem_id="deep-link-current")
        self.run_flag = gr.Textbox(visible="hidden", elem_id="deep-link-run")

    def wire(self, demo: gr.Blocks, lesson_tabs: gr.Tabs, tabs: list, restored: Mapping[str, Any],
             settings: Any, memory: Any = None) -> None:
        tabs = {tab.name: tab for tab in tabs if tab.name in LESSONS}
        notes = {name: (memory.lessons.get(name) or {}).get("note") if memory is not None else None
                 for name in tabs}
        demo.load(None, None, None, js=GATE_JS, **SILENT)
        for name in tabs:
            after = restored.get(name)
            (after.then if after is not None else demo.load)(None, None, None, js=RESTORED_JS % json.dumps(name),
                                                             **SILENT)
        self._wire_open(lesson_tabs, tabs, notes, settings)
        self._wire_copy(tabs)

    # ------------------------------------------------------------ opening a link

    def _wire_open(self, lesson_tabs: gr.Tabs, tabs: dict, notes: dict, settings: Any) -> None:
        inputs, outputs = {settings.provider}, [lesson_tabs, self.banner, self.run_flag]
        for name, tab in tabs.items():
            editor, run = getattr(tab, "editor", None), tab.run
            if editor is not None:
                inputs |= {editor.editor, editor.example_set}
                outputs += [editor.example_set, editor.editor]
            inputs |= {run.options[o] for o in ("approach",) if o in run.options}
            outputs += [run.presets, run.question] + [run.options[o] for o in OPTION_PARAMS if o in run.options]
            if notes[name] is not None:
                inputs.add(notes[name])

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
            plan = parse(request.query_params.multi_items() if request is not None else [])
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
            note_text = (values.get(notes[plan.lesson]) or "") if notes[plan.lesson] is not None else ""
            kept = "↩ 已恢复本浏览器保存的内容" in note_text or "↩ 这是上次的运行" in note_text
            if editor is not None and example:
                if kept and (values[editor.editor] or "").rstrip() != (
                        editor.texts.get(values[editor.example_set], "") or "").rstrip():
                    told.append(f"本浏览器保存的、你改过的源码已换成示例「{example}」的源码（链接不带源码）。")
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
                if option in accepted and option in run.options:
                    out[run.options[option]] = accepted[option]
            if plan.lesson == "react" and "mistake" in run.options:
                mode = "json" if (accepted.get("approach") or approach) == "json" else "react"
                out.setdefault(_CHOICES, {})[run.options["mistake"]] = gr.update(choices=mistake_choices(mode))
            if kept and out:
                told.insert(0, OVERRIDDEN + "。")
            if plan.run:
                if problems:
                    told.append("链接里有没用上的值，为免跑成别的场景，没有自动运行：检查后点「▶ 运行」。")
                elif values[settings.provider] != "offline":
                    told.append("链接要求打开后就运行，但模型设置里选的不是离线演示模型：为免花掉你的额度，"
                                "没有自动运行。看过问题后点「▶ 运行」。")
                else:
                    out[self.run_flag] = f"{plan.lesson}:{uuid.uuid4().hex[:8]}"
            out[lesson_tabs] = gr.Tabs(selected=plan.lesson)
            out[self.banner] = banner(problems + told)
            return out

        opened = self.go.click(choices, inputs, outputs, **SILENT).then(open_link, inputs, outputs, **SILENT)
        opened.then(None, [self.run_flag, settings.provider], None, js=CLICK_RUN_JS, **SILENT)

    # ------------------------------------------------------------ copying a link

    def _wire_copy(self, tabs: dict) -> None:
        inputs = {self.current}
        for tab in tabs.values():
            editor, run = getattr(tab, "editor", None), tab.run
            if editor is not None:
                inputs |= {editor.editor, editor.example_set}
            inputs |= {run.question, *[run.options[o] for o in OPTION_PARAMS if o in run.options]}
        ordered = [self.current] + [c for c in inputs if c is not self.current]

        def copy(*args) -> dict:
            values = dict(zip(ordered, args))
            lesson = values[self.current] if values[self.current] in tabs else DEFAULT_LESSON
            tab = tabs[lesson]
            editor, run = getattr(tab, "editor", None), tab.run
            example = values[editor.example_set] if editor is not None else None
            query, notes = link_query(
                lesson, example, values[editor.editor] if editor is not None else None,
                editor.texts.get(example) if editor is not None else None, values[run.question],
                {o: values[run.options[o]] for o in OPTION_PARAMS if o in run.options})
            note = "\n\n".join(f"⚠️ {n}" for n in notes)
            return {self.link: gr.update(visible=True, value=query), self.link_note: gr.update(visible=True, value=note)}

        self.copy_btn.click(copy, ordered, [self.link, self.link_note], js=CURRENT_JS, **SILENT).then(
            None, [self.link, self.link_note], [self.link, self.link_note], js=WRITE_JS, **SILENT)
