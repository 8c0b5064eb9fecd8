"""Keeping a student's work in the browser: each lesson's source, example set, question,
options and last run, and the model settings, are written to the browser's localStorage
and put back when the page loads (after F5, a restart of the server or an expired session).

The format (records, version, caps, checks) is memory_format.py; this module only wires
it to the page. Why localStorage through two small scripts rather than gr.BrowserState:
BrowserState draws a random storage key and secret per server process unless both are
fixed (a restart would then lose everything), its "encryption" key is sent to every
browser in the page config (a remembered API key would only look protected), it never
writes an empty value (clearing needs a stand-in) and it silently falls back to the
default on a value it cannot read (the student could not be told). Here the browser
holds plain JSON, every check runs in Python, and the page says what it ignored.

How it flows:
- page load: one script reads every key into hidden textboxes (plus this browser tab's
  id from sessionStorage and its time zone); each part's restore handler checks them and
  fills the controls and, in the same request, what the tab shows from them (its schema
  panel, its workspace's tree: LessonPage.on_load), so a tab is back in one round trip; what the
  person changed in those controls while the restore was on its way goes back over it (TRACK_JS);
- a change of a kept control: the part's save handler builds the record, a second script
  writes it (or removes the key) and reports a full or refused storage.

Parts: "settings" (模型设置 except keys), "key" (only when the student ticks
REMEMBER_LABEL), and per lesson "lesson:<name>" (its controls) and "run:<name>" (its
last run as a session document, replayed on load, never rerun). A run under way leaves only
a mark there (its question), and a paused run (a rule's "ask", a step) is kept as far as it
went, marked paused: a page left during either says on the next load that the run was
interrupted, and never shows the run before it as this one. Each lesson is its own page, and
every part is read by every page, so each lesson finds its own work and the settings wherever the
student goes; a key typed in one lesson reaches the others of the browser tab through a handle in
sessionStorage (access/typed_keys.py), never the key itself. The lesson a link sets up (deep_links.py) is not restored:
what was kept of it is deleted, and the link's banner says so.

Several tabs of one browser share one copy per part: the last to save wins, and a page that
loads a copy written by another tab (told apart by an id kept in sessionStorage) says so, with
the time of the save in the browser's own time zone. A save that would write the same fields
again writes nothing.

A tab keeps more of its own controls by listing them in LessonPage.kept (name -> component,
any JSON value up to memory_format.VALUE_LIMIT), or for a tab without the usual parts by
calling `BrowserMemory.keep_lesson(tab, extra=..., note=...)` before `wire`.

What lives on the server rather than in controls (the workspace's files, one copy for both
workspace tabs) is a shared part: `keep_shared(name, label, base, read, apply, triggers)` saves
`read(session id)` after each trigger event and, on load, hands the kept fields to
`apply(fields, session id)` before the lessons registered with `after=name` are restored,
one after the other (see workspace_memory.py). A kept run is replayed through the run panel's
`kept_run(document, request) -> (state, show)` into its `outputs`.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import re
import time
from typing import Any, Callable, Mapping

import gradio as gr

from i18n import found_in, now, tr

from access.clients import model_box
from access.typed_keys import TYPED_KEYS
from runs import session_io
from memory.memory_format import (NOT_KEPT_FIELD, NOT_KEPT_FILES, PREFIX, RUN_NOT_KEPT, SOURCE_LIMIT, TEXT_LIMIT, VALUE_LIMIT, FieldSpec, Record, decode,
                                   keep_fields, origin_notice, restore_fields, run_text, storage_key, when)
from serving.page_events import SILENT, joined, session_of, value_box

TAB_KEY = PREFIX + "tab"          # sessionStorage: this browser tab's id (survives F5, not shared)
LESSON_NOTE = tr("💾 源码、示例集、问题、选项和上次运行自动保存在**本浏览器**（刷新或服务器重启后恢复，密钥默认不保存）。"
                 "同一浏览器的多个标签页共用一份，后保存的为准。",
                 "💾 The source, example set, question, options and last run are saved in **this browser** "
                 "automatically (back after a reload or a server restart; keys are not saved unless you ask). All "
                 "tabs of one browser share one copy: the last saved wins.")
SETTINGS_NOTE = tr("💾 模型设置（不含密钥）自动保存在本浏览器。", "💾 The model settings (no keys) are saved in this browser.")
REMEMBER_LABEL = tr("在此浏览器记住我的密钥", "Remember my key in this browser")
REMEMBER_WARNING = tr("⚠️ 勾选后密钥以明文存在本浏览器（localStorage），用这台电脑、这个浏览器的人都能读到：公用电脑上不要勾选。",
                      "⚠️ Ticked, the key is stored as plain text in this browser (localStorage): anyone using this "
                      "computer and browser can read it. Never tick it on a shared computer.")
KEY_REMEMBERED = tr("🔑 已使用本浏览器记住的密钥（页面上不会显示）。",
                    "🔑 Using the key this browser remembered (never shown on the page).")
TYPED_ELSEWHERE = tr("🔑 用的是你在这个浏览器标签页里输入过的密钥（只在服务器端内存中，页面上不会显示）。",
                     "🔑 Using the key you entered in this browser tab (kept only in the server's memory, never shown "
                     "on the page).")
CLEAR_LABEL = tr("清除本页保存的内容", "Clear what this page saved")
NAMES = {"source": tr("源码", "the source"), "example_set": tr("示例工具集", "the example set"),
         "question": tr("问题", "the question"), "preset": tr("预设问题", "the preset question"),
         "strict": tr("strict 模式", "strict mode"), "option.approach": tr("循环", "the loop"),
         "rules": tr("权限规则", "the permission rules"), "rules_preset": tr("规则预设", "the rule preset"),
         "option.conversation": tr("对话", "the conversation")}
# The first words of the notes that say a tab shows what this browser kept.
RESTORED = tr("↩ 已恢复本浏览器保存的内容", "↩ Restored what this browser kept")
LAST_RUN = tr("↩ 这是上次的运行", "↩ This is the last run")
INTERRUPTED = tr("⚠️ 上次的运行被中断了", "⚠️ The last run was interrupted")
RESTORE_FAILED = tr("⚠️ 没能恢复本浏览器保存的这一课，页面显示的是示例；请刷新再试一次。继续编辑会重新保存。",
                    "⚠️ What this browser kept of this lesson could not be put back: the page shows the example. "
                    "Reload to try again; editing saves again.")
# A run part's fields besides the run: the question of a run under way (no run yet), or why a kept run paused.
RUNNING, PAUSED, PAUSED_ASK, PAUSED_STEP = "running", "paused", "ask", "step"
KEY_LIMIT = 1_000                 # characters of a remembered key
FORGOTTEN = tr("服务器已清理了这个页面的会话（闲置太久，或服务器重启过），{label}已回到初始状态，这次没有保存；"
               "本浏览器保存的{label}没有被覆盖，刷新页面即可恢复。",
               "The server has cleared this page's session (idle too long, or the server restarted): {label} is back "
               "to the start and was not saved this time; what this browser kept of {label} was not overwritten: "
               "reload the page to get it back.")

READ_JS = """(...ignored) => {
  const keys = %s;
  if (!window.twTouchWatch) {       // the person's own input from now on (TRACK_JS)
    window.twTouchWatch = true;
    for (const kind of ["keydown", "pointerdown", "input", "paste", "drop"])
      document.addEventListener(kind, (e) => { if (e.isTrusted) window.twTouched = true; }, true);
  }
  let tab = "", storage = true;
  try {
    tab = sessionStorage.getItem(%s) || "";
    if (!tab) {
      tab = Date.now().toString(36) + Math.random().toString(36).slice(2, 10);
      sessionStorage.setItem(%s, tab);
    }
  } catch (e) { storage = false; }
  const values = keys.map((key) => {
    try { return localStorage.getItem(key) || ""; } catch (e) { storage = false; return ""; }
  });
  let handle = "";
  try { handle = sessionStorage.getItem(%s) || ""; } catch (e) {}
  return [JSON.stringify({tab: tab, key_handle: handle, utc_offset_minutes: -new Date().getTimezoneOffset(),
                          storage: storage}), ...values];
}"""
# The parts of this page with a change the browser has not stored yet (name -> the change's mark): a
# lesson link waits for them (lesson_nav.py), so a setting changed just before the click is there on
# the next page. A change draws a new mark, which its part's save carries back to the write script:
# the write unmarks the part only if no change came after the one it stored.
UNSAVED = "window.twUnsaved"


# A restore never replaces what the person changed after the page loaded. Until the restore that writes a
# control has landed (its hidden `landed` box holds "1"), each change of that control the person made (once
# they have typed, clicked or pasted anything) is noted in the browser; once it has landed, what they changed
# goes back over what it wrote, and its note says so. The person's text wins, as a browser's autofill never
# overwrites a field typed into: a page kept read-only until its restore is back (seconds on a busy server)
# would hold back every student's first keystrokes.
TYPED = "window.twTyped"
TRACK_JS = """(value, landed) => {
  const active = window.twTouched || (navigator.userActivation && navigator.userActivation.hasBeenActive);
  if (!landed && active) (%s = %s || {})[%%s] = value;
  return [];
}""" % (TYPED, TYPED)
KEEP_TYPED_JS = """(note) => {
  const typed = %s || {}, keys = %%s, labels = %%s;
  const en = (document.documentElement.lang || "").startsWith("en"), kept = [];
  const out = keys.map((key, i) => {
    if (!(key in typed)) return undefined;          // undefined: the control keeps what the restore wrote
    const value = typed[key];
    delete typed[key];
    kept.push(labels[en ? "en" : "zh"][i]);
    return value;
  });
  if (!kept.length) return [...out, undefined];
  const said = en ? "✋ What you changed while the page was putting back what this browser kept stays as you left it: "
                    + kept.join(", ") + "."
                  : "✋ 页面恢复保存内容期间你改过的这几项保留了你的改动：" + kept.join("、") + "。";
  return [...out, (note || "") + "\\n\\n" + said];
}""" % TYPED


def mark_js(name: str, returned: bool = True) -> str:
    """A script that marks `name` as changed and not yet stored; it returns the mark (or nothing)."""
    return ("() => { const marks = %s = %s || {}; window.twMark = (window.twMark || 0) + 1;"
            " marks[%s] = window.twMark; return %s; }" % (UNSAVED, UNSAVED, json.dumps(name),
                                                           "String(window.twMark)" if returned else "[]"))


def unmark(name: str, mark: str = "Infinity") -> str:
    """A statement that unmarks `name` if its latest change is no newer than `mark` (a JS expression)."""
    return "{ const marks = %s || {}; if (marks[%s] <= Number(%s)) delete marks[%s]; }" % (
        UNSAVED, json.dumps(name), mark, json.dumps(name))


# sessionStorage: the handle of the key typed in this browser tab (access/typed_keys.py), which the
# tab's other lesson pages send back to use that key. Never the key itself.
KEY_HANDLE = PREFIX + "key-handle"
KEEP_HANDLE_JS = """(handle) => {
  %s
  try { if (handle) sessionStorage.setItem(%s, handle); else sessionStorage.removeItem(%s); } catch (e) {}
  return [];
}""" % (unmark(KEY_HANDLE), json.dumps(KEY_HANDLE), json.dumps(KEY_HANDLE))
# The handle is stored by the script that follows its change (KEEP_HANDLE_JS), in the same page: no
# save carries a mark back, so that script unmarks it whatever came between.
MARK_HANDLE_JS = mark_js(KEY_HANDLE, returned=False)
WRITE_JS = """(op, note) => {
  let o = {};
  try { o = op ? JSON.parse(op) : {}; } catch (e) {}
  %s
  if (!o.key) return ["", note];
  try {
    if (o.value === null) localStorage.removeItem(o.key); else localStorage.setItem(o.key, o.value);
    return ["", note];
  } catch (e) {
    return ["", (o.failed || "⚠️ {name}").replace("{name}", e.name)];
  }
}"""
# What the write script says when the browser refuses to store ({name}: the browser's reason).
NOT_SAVED = tr("⚠️ 本浏览器没能保存（{name}）：存储空间可能已满，或浏览器禁止了网页保存数据。",
               "⚠️ This browser could not save ({name}): its storage may be full, or it does not let pages keep data.")
# Resolves (with a fresh tick) once the browser has drawn the current frame: work it triggers does not delay what it shows.
AFTER_PAINT_JS = "() => new Promise(done => requestAnimationFrame(() => setTimeout(() => done(String(Date.now())), 0)))"
CLEAR_JS = """() => {
  try {
    for (const key of Object.keys(localStorage)) { if (key.startsWith(%s)) localStorage.removeItem(key); }
  } catch (e) {}
  return [];
}"""


def spec_for(component: Any, label: str = "") -> FieldSpec:
    """What a control's kept value may be, read from the control itself."""
    label = label or getattr(component, "label", "") or ""
    if isinstance(component, gr.Code):
        return FieldSpec("text", SOURCE_LIMIT, label=label)
    if isinstance(component, gr.Checkbox):
        return FieldSpec("bool", label=label)
    if isinstance(component, gr.Slider):
        return FieldSpec("number", minimum=component.minimum, maximum=component.maximum, label=label)
    if isinstance(component, (gr.Dropdown, gr.Radio)) and not getattr(component, "multiselect", False):
        free = getattr(component, "allow_custom_value", False)
        choices = None if free else tuple(value for _, value in component.choices or [])
        return FieldSpec("choice", TEXT_LIMIT, choices=choices, label=label)
    if isinstance(component, gr.Textbox):
        return FieldSpec("text", TEXT_LIMIT, label=label)
    return FieldSpec("json", VALUE_LIMIT, label=label)


def client_of(text: str | None) -> dict:
    """What the read script said about this browser tab: id, time zone, storage allowed."""
    try:
        client = json.loads(text or "{}")
    except ValueError:
        client = {}
    client = client if isinstance(client, dict) else {}
    offset = client.get("utc_offset_minutes")
    return {"tab": str(client.get("tab") or "")[:64], "key_handle": str(client.get("key_handle") or "")[:64],
            "utc_offset_minutes": offset if isinstance(offset, int) and abs(offset) <= 24 * 60 else 0,
            "storage": client.get("storage", True) is not False}


def put(part: str, record: Record | None = None, text: str | None = None) -> str:
    """The write script's instruction: store this record's text, or remove the key (None)."""
    value = text if text is not None else (record.to_json() if record is not None else None)
    return json.dumps({"key": storage_key(part), "value": value, "failed": now(NOT_SAVED)}, ensure_ascii=False)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def fields_digest(fields: dict) -> str:
    return hashlib.sha256(json.dumps(fields, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def events_digest(events: list | None) -> str:
    return hashlib.sha256(json.dumps(events or [], ensure_ascii=False, sort_keys=True).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Kept:
    """What a browser had kept of a lesson: when (HH:MM, its own time zone), an edited source, a last run."""
    when: str
    edited_source: bool
    run: bool


@dataclasses.dataclass
class Part:
    """One localStorage key: the hidden box its stored text arrives in, the one its write goes out through."""
    name: str
    inbox: Any = None
    outbox: Any = None
    written: Any = None     # gr.State: a hash of the fields this page last wrote (no rewrite of the same)
    mark: Any = None        # hidden box: the mark of the part's latest change (only where the page saves it)


class SettingsControls:
    """The rows this module adds to 模型设置 (built where SettingsPanel calls it)."""

    def __init__(self):
        with gr.Row():
            self.remember = gr.Checkbox(value=False, label=REMEMBER_LABEL, elem_id="remember-key", min_width=200)
            self.forget = gr.Button(tr("忘记", "Forget"), size="sm", elem_id="forget-key", min_width=80)
            gr.Markdown(REMEMBER_WARNING, elem_id="remember-warning")
        with gr.Row():
            self.clear = gr.Button("🗑 " + CLEAR_LABEL, size="sm", elem_id="clear-saved", min_width=160)
            self.note = gr.Markdown(SETTINGS_NOTE, elem_id="memory-note")


class BrowserMemory:
    """Build it inside the page's Blocks before the tabs; call keep_lesson (or let wire do it
    from the tabs) and then wire(demo, settings, tabs) once, after the tabs are built."""

    def __init__(self):
        self.client = value_box(elem_id="memory-client")
        self.silent = dict(SILENT, show_progress_on=[self.client])
        # A part's saves go one at a time, each with the page's values when it starts: the page runs
        # a queued event with trigger_mode="always_last" again once the running one is done (an
        # unqueued one would run beside it, and the older snapshot could be written last).
        self.one_at_a_time = dict(self.silent, queue=True, concurrency_limit=None, trigger_mode="always_last")
        self.parts: list[Part] = []
        self.lessons: dict[str, dict] = {}
        self.shared: dict[str, dict] = {}
        self.replaced: Callable[[gr.Request | None], str | None] | None = None
        self.names: dict[Any, Any] = {}      # control -> how a note names it, where its label says more
        self.demo: gr.Blocks | None = None

    def part(self, name: str) -> Part:
        part = Part(name, value_box(), value_box(), gr.State(None))
        self.parts.append(part)
        return part

    def keep_lesson(self, tab: Any, extra: Mapping[str, Any] | None = None, note: Any = None,
                    base: str = LESSON_NOTE, after: str | None = None) -> None:
        """Registers a lesson tab: its editor, example set, question, preset, strict box and
        options (from tab.run), its LessonPage.kept and `extra` (name -> component). `base` is
        what its note says when there is nothing to tell; `after` names a shared part that is
        put back before this tab is restored."""
        if tab.name in self.lessons:
            return
        editor, run = getattr(tab, "editor", None), getattr(tab, "run", None)
        fields: dict[str, Any] = {}
        if editor is not None:
            fields.update(source=editor.editor, example_set=editor.example_set)
        if run is not None:
            fields.update(question=run.question, preset=run.presets)
            if run.strict is not None:
                fields["strict"] = run.strict
            elsewhere = getattr(tab, "kept_elsewhere", frozenset())
            fields.update({f"option.{name}": component for name, component in run.options.items()
                           if name not in elsewhere})
        for name, component in {**dict(getattr(tab, "kept", None) or {}), **dict(extra or {})}.items():
            if name in fields:
                raise ValueError(f"kept field {name!r} of {tab.name!r} is registered twice")
            fields[name] = component
        specs = {name: spec_for(component, NAMES.get(name, "")) for name, component in fields.items()}
        self.names.update({component: specs[name].label or name.removeprefix("option.") for name, component in fields.items()})
        if "preset" in specs and editor is not None:  # its choices follow the example set
            every = tuple(q for questions in editor.presets.values() for q in questions)
            specs["preset"] = FieldSpec("choice", TEXT_LIMIT, choices=every or None, label=NAMES["preset"])
        note = note if note is not None else getattr(editor, "memory_note", None)
        if note is None:
            note = gr.Markdown(LESSON_NOTE, render=True)
        if after is not None and after not in self.shared:
            raise ValueError(f"{tab.name!r} is kept after {after!r}, which is not registered (keep_shared first)")
        self.lessons[tab.name] = {"tab": tab, "fields": fields, "specs": specs, "note": note, "base": base,
                                  "after": after,
                                  "work": self.part(f"lesson:{tab.name}"),
                                  "run": self.part(f"run:{tab.name}") if run is not None else None,
                                  "digest": gr.State(None), "edited_on_load": []}

    def keep_shared(self, name: str, label: str, base: str,
                    read: Callable[[str | None], tuple[dict | None, list[str]]],
                    apply: Callable[[dict, str | None], list[str]], triggers: list[tuple[Any, Any]],
                    after: str | None = None) -> None:
        """Registers a part kept once for several tabs, read from and put back into the server's
        state of the session by Python. read(session id) -> (fields to keep or None: nothing, notices);
        apply(kept fields, session id) -> notices. `triggers`: (event, note) pairs: after each event
        the part is saved, and that note tells what could not be kept. `label` names it in notices.
        `after` names a shared part put back before this one."""
        if name in self.shared:
            raise ValueError(f"shared part {name!r} is registered twice")
        if after is not None and after not in self.shared:
            raise ValueError(f"shared part {name!r} is kept after {after!r}, which is not registered")
        self.shared[name] = {"part": self.part(name), "label": label, "base": base, "read": read, "apply": apply,
                             "after": after,
                             "triggers": list(triggers), "said": gr.State(""),
                             # True once this page's session has been given what was kept: a page whose
                             # session the server has since forgotten (expired, restarted) must not save
                             # the fresh starter over the student's kept files.
                             "held": gr.State(None)}

    # ------------------------------------------------------------ wiring

    def wire(self, demo: gr.Blocks, settings: Any, tabs: list,
             replaced: Callable[[gr.Request | None], str | None] | None = None) -> dict[str, Any]:
        """Saves and restores everything registered. Returns {tab name: the event after which
        that tab's controls hold what was kept and it shows what follows from them}: a tab's
        `on_load()` (fn, inputs, outputs), when it has one, runs inside its restore.
        `replaced(request)` names the lesson whose scenario a link in the page's address sets up
        (deep_links.py), or None: that lesson is not restored, and what this browser kept of it is
        forgotten (a link that only opens a lesson replaces nothing)."""
        self.replaced, self.demo = replaced, demo
        for tab in tabs:
            self.keep_lesson(tab)
        settings_part, key_part = self.part("settings"), self.part("key")
        restore_settings = self._wire_settings(settings, settings_part, key_part)
        for lesson in self.lessons.values():
            self._wire_lesson(lesson, settings)
        keys = [storage_key(part.name) for part in self.parts]
        read_js = READ_JS % (json.dumps(keys), json.dumps(TAB_KEY), json.dumps(TAB_KEY), json.dumps(KEY_HANDLE))
        read = demo.load(None, None, [self.client] + [part.inbox for part in self.parts], js=read_js, **self.silent)
        # The settings come back in the first request after the read, with the shared part or the lesson
        # that comes first: a lesson is restored (its run button works) only once the model it runs on
        # is the kept one too, and no extra round trip delays it. A shared part is put back before the
        # lessons kept after it, which follow one by one in the order they were registered, so what they
        # show (a workspace's tree) is always the restored one.
        settings_pending = [restore_settings]
        settings_fields = list(settings.fields.values())

        def first_step(handler: tuple) -> tuple[tuple, list]:
            """The handler, with the settings' restore if none has taken it yet; the controls it writes
            that way (settings_fields)."""
            return (joined(handler, settings_pending.pop()), settings_fields) if settings_pending else (handler, [])

        chains: dict[str, Any] = {}
        for name, shared in self.shared.items():    # registered in order: a part's `after` is wired before it
            start = chains[shared["after"]] if shared["after"] else read
            handler, guarded = first_step(self._wire_shared(shared))
            chains[name], _ = self._restoring(start, handler, guarded, settings.memory.note)
        restored = {}
        for name, lesson in self.lessons.items():
            handler, guarded = (lesson["restore"], lesson["restore_inputs"], lesson["restore_outputs"]), []
            if not lesson["after"]:
                handler, guarded = first_step(handler)
            # The lesson's kept controls, and what a person edits among what its page shows once they are back.
            guarded = [*lesson["fields"].values(), *lesson["edited_on_load"], *guarded]
            event, restored[name] = self._restoring(chains[lesson["after"]] if lesson["after"] else read, handler,
                                                    guarded, lesson["note"])
            for part in (lesson["work"], lesson["run"]):   # a lesson a link opens forgets what was kept
                if part is not None:   # after the note says what was typed meanwhile: the write gives it back
                    self._writer(part, lesson["note"], restored[name])
            if lesson["after"]:
                chains[lesson["after"]] = event
        if settings_pending:                      # nothing else is kept: the settings on their own
            self._restoring(read, settings_pending.pop(), settings_fields, settings.memory.note)
        return restored

    def _restoring(self, start: Any, handler: tuple, guarded: list, note: Any) -> tuple[Any, Any]:
        """Runs `handler` (fn, inputs, outputs) after `start`, and then puts back over the controls in
        `guarded` it writes what the person changed in them while it was on its way (TRACK_JS), said in
        `note`. Returns (the restore's event, the event after which the controls hold what they keep)."""
        fn, inputs, outputs = handler
        guarded = [c for c in dict.fromkeys(guarded) if c in outputs]
        if not guarded:
            return (event := start.then(fn, inputs, outputs, **self.silent)), event
        landed = value_box()

        def restore(values: dict, request: gr.Request) -> dict:
            return {**fn(values, request), landed: "1"}

        # `landed` first: it holds "1" before the changes of what the restore writes are handled.
        event = start.then(restore, inputs, [landed, *outputs], **self.silent)
        keys = [str(c._id) for c in guarded]
        tracking = [component.change(None, [component, landed], None, js=TRACK_JS % json.dumps(key), **SILENT)
                    for component, key in zip(guarded, keys)]
        self._first_of_their_triggers(tracking)
        # A control's name without what its label adds after a colon or in brackets ("技能：…（可编辑；…）").
        full = [self.names.get(c) or getattr(c, "label", None) or "" for c in guarded]
        names = {"zh": [re.split(r"（| \(|：|: ", getattr(label, "zh", str(label)))[0] for label in full],
                 "en": [re.split(r"（| \(|：|: ", getattr(label, "en", str(label)))[0] for label in full]}
        kept = event.then(None, [note], [*guarded, note], js=KEEP_TYPED_JS % (json.dumps(keys), json.dumps(
            names, ensure_ascii=False)), **SILENT)
        return event, kept

    def kept_inputs(self, name: str) -> set:
        """What `kept_on_load` reads of lesson `name`: the stored texts the page found on load."""
        lesson = self.lessons[name]
        return {self.client, lesson["work"].inbox, *([lesson["run"].inbox] if lesson["run"] is not None else [])}

    def kept_on_load(self, values: dict, name: str) -> Kept | None:
        """What this browser had kept of lesson `name` when the page loaded (None: nothing usable),
        whether or not it was restored; `values` holds `kept_inputs(name)`."""
        lesson = self.lessons[name]
        work, _ = decode(values[lesson["work"].inbox], lesson["work"].name)
        run, _ = decode(values[lesson["run"].inbox], lesson["run"].name) if lesson["run"] is not None else (None, "")
        run = run if run is not None and run.run is not None else None
        if work is None and run is None:
            return None
        source, example = (work.fields.get("source"), work.fields.get("example_set")) if work is not None else (None, None)
        texts = getattr(getattr(lesson["tab"], "editor", None), "texts", {})
        edited = isinstance(source, str) and source.rstrip() != (texts.get(example) or "").rstrip()
        saved_at = max(r.saved_at for r in (work, run) if r is not None)
        return Kept(when(saved_at, client_of(values[self.client])["utc_offset_minutes"]), edited, run is not None)

    def _wire_shared(self, shared: dict) -> tuple:
        """Wires saving a shared part after each trigger; returns its restore handler, inputs and outputs."""
        part, base, said, held, client = shared["part"], shared["base"], shared["said"], shared["held"], self.client

        def saver(note: Any):
            def save(values: dict, request: gr.Request) -> dict:
                if not values[held]:
                    return {part.outbox: gr.skip(), note: now(base) + "\n\n⚠️ " + now(FORGOTTEN).format(label=now(shared["label"]))}
                fields, notices = shared["read"](session_of(request))
                if fields is None:
                    return {part.outbox: gr.skip()}
                current = values[note] or ""
                out: dict = {}
                if notices:
                    out[note] = now(base) + "\n\n⚠️ " + " ".join(notices)
                elif "⚠️" in current and found_in(NOT_KEPT_FILES, current):   # the read's notice, now stale
                    out[note] = now(base)
                if fields_digest(fields) == values[part.written]:
                    return {part.outbox: gr.skip(), **out}
                record = Record(part.name, fields, saved_at=time.time(), writer=client_of(values[client])["tab"])
                return {part.outbox: put(part.name, record), part.written: fields_digest(fields), **out}
            return save

        for event, note in shared["triggers"]:
            marking, save, inputs = self._marked(part, saver(note), {client, note, part.written, held}, after=event)
            self._writer(part, note, marking.then(save, inputs, [part.outbox, part.written, note], **self.silent))

        def restore(values: dict, request: gr.Request) -> dict:
            who, session_id = client_of(values[client]), session_of(request)
            out = {said: "", held: bool(session_id)}
            if not who["storage"]:
                return out
            record, why = decode(values[part.inbox], part.name)
            if why:
                return {**out, said: tr("⚠️ 本浏览器里保存的{what}{why}，已忽略。", "⚠️ What this browser kept of {what} {why}: ignored.").format(
                    what=now(shared["label"]), why=why)}
            if record is None:
                return out
            notes = shared["apply"](record.fields, session_id)
            notes.append(origin_notice(record, who["tab"], who["utc_offset_minutes"], now(shared["label"])))
            fields, _ = shared["read"](session_id)
            return {**out, said: "\n\n".join(n for n in notes if n),
                    part.written: fields_digest(fields) if fields is not None else None}

        return restore, {client, part.inbox}, [said, held, part.written]

    def _first_of_their_triggers(self, events: list) -> None:
        """Makes these handlers the first the page runs when their trigger fires. The page runs a
        trigger's handlers one after the other, each to its end (a save's round trip, however slow the
        server): a change noted after them could be noted only once the restore had already replaced it."""
        first = {event["id"] for event in events}
        fns = self.demo.fns                       # the page's handlers in the order the page gets them
        assert first <= set(fns), "handlers registered on another Blocks"
        for i in [i for i in fns if i not in first]:
            fns[i] = fns.pop(i)

    def _writer(self, part: Part, note: Any, trigger_event) -> None:
        trigger_event.then(None, [part.outbox, note], [part.outbox, note], js=WRITE_JS % unmark(part.name, "o.mark"),
                           **self.silent)

    def _marked(self, part: Part, save: Callable, inputs: set, triggers: list | None = None, after: Any = None):
        """Marks `part` unsaved, in the browser and at once, whenever one of `triggers` fires (or once
        `after` has run); returns `save` and its inputs so that its write script gets the mark back.
        Wire it before the save: the page starts a trigger's listeners one after the other."""
        part.mark = part.mark or value_box()
        js = dict(js=mark_js(part.name), **SILENT)
        marking = after.then(None, None, [part.mark], **js) if after is not None else gr.on(triggers, None, None, [part.mark], **js)

        @functools.wraps(save)
        def saved(values: dict, *rest):
            out = save(values, *rest)
            sent = out.get(part.outbox)
            op = json.loads(sent) if isinstance(sent, str) and sent else {}
            return {**out, part.outbox: json.dumps({**op, "mark": values[part.mark]}, ensure_ascii=False)}

        return marking, saved, {*inputs, part.mark}

    def _put_back_before(self, name: str | None) -> list[str]:
        """The shared parts put back before a lesson kept after `name`, first first."""
        chain = []
        while name is not None:
            chain.insert(0, name)
            name = self.shared[name]["after"]
        return chain

    def _wire_lesson(self, lesson: dict, settings: Any) -> None:
        tab, fields, specs, note, base = lesson["tab"], lesson["fields"], lesson["specs"], lesson["note"], lesson["base"]
        saids = [self.shared[name]["said"] for name in self._put_back_before(lesson["after"])]
        work, run_part, digest = lesson["work"], lesson["run"], lesson["digest"]
        run = getattr(tab, "run", None)
        editor = getattr(tab, "editor", None)
        client = self.client

        def save(values: dict) -> dict:
            kept, notices = keep_fields({name: values[c] for name, c in fields.items()}, specs)
            if fields_digest(kept) == values[work.written]:
                return {work.outbox: gr.skip()}    # a change event without a change: nothing to write
            record = Record(work.name, kept, saved_at=time.time(), writer=client_of(values[client])["tab"])
            out = {work.outbox: put(work.name, record), work.written: fields_digest(kept)}
            current = values[note] or ""
            if notices:
                out[note] = now(base) + "\n\n⚠️ " + " ".join(notices)
            elif "⚠️" in current and found_in(NOT_KEPT_FIELD, current):   # keep_fields' notice, now stale
                out[note] = now(base)
            return out

        save_inputs, save_outputs = {client, note, work.written, *fields.values()}, [work.outbox, work.written, note]
        # The source is saved after the schema panel's refresh, not beside it: fired together,
        # the save held the new schema back from the screen by about 0.3 s on every edit. The
        # refresh, once drawn, ticks a hidden field; its change is one more trigger of the same save.
        edited = getattr(getattr(tab, "schema", None), "edited", None)
        source = fields.get("source") if edited is not None else None
        triggers = [c.change for c in fields.values() if c is not source]
        if source is not None:
            tick = gr.Textbox(visible="hidden")
            edited.then(None, None, [tick], js=AFTER_PAINT_JS, **self.silent)
            triggers.append(tick.change)
        # The values go to `save` as the page sent them (preprocess=False): keep_fields checks each one
        # against its FieldSpec. Gradio's own check compares a dropdown's value with its choices on the
        # server at the moment the save runs, and a save fired by a new example set carries the preset
        # question the page showed before: if the example set's handler has already given the presets
        # the new set's choices, Gradio refused the save with a red "not in the list of choices" error.
        # The presets' own change saves again once the page shows the new set's questions.
        if triggers:
            # Marked on every change, the source's included: its save waits for the schema to be drawn.
            _, save, save_inputs = self._marked(work, save, save_inputs, [c.change for c in fields.values()])
            self._writer(work, note, gr.on(triggers, save, save_inputs, save_outputs, preprocess=False,
                                           **self.one_at_a_time))

        restore_inputs = {client, work.inbox, *fields.values(), *saids}
        restore_outputs = [*fields.values(), note, work.outbox, work.written]
        if run is not None:
            restore_inputs |= {run_part.inbox, run.state}
            restore_outputs += [c for c in run.outputs if c not in restore_outputs] + [digest, run_part.outbox]

            def keep_run(values: dict) -> dict:
                state = values[run.state]
                unchanged = {run_part.outbox: gr.skip()}
                if state is None:
                    return unchanged
                writer = client_of(values[client])["tab"]
                paused = (PAUSED_ASK if getattr(state, "asking", None) else PAUSED_STEP if state.pending else "")
                if state.run.running and not paused:
                    # Only a mark that a run is under way: a page left now (reloaded, closed) ends the run
                    # with it, and the next load says so instead of showing the run before as this one's.
                    fingerprint = f"running:{id(state.run)}"
                    if fingerprint == values[digest]:
                        return unchanged
                    record = Record(run_part.name, {RUNNING: state.question}, saved_at=time.time(), writer=writer)
                    return {run_part.outbox: put(run_part.name, record), digest: fingerprint}
                events = state.replay if state.replay is not None else state.run.events
                if not events:
                    return {run_part.outbox: put(run_part.name), digest: None} if values[digest] else unchanged
                fingerprint = events_digest(events) + paused
                if fingerprint == values[digest]:
                    return unchanged
                document = session_io.session_document(tab.name, state.source, state.run.tools, state.question,
                                                       events, state.settings, state.options)
                # A paused run is kept as far as it went; a page loaded later cannot go on with it.
                record = Record(run_part.name, {PAUSED: paused} if paused else {}, run=document,
                                saved_at=time.time(), writer=writer)
                text, notice = run_text(record, secret=values[settings.key_state] or "")
                if text is None:
                    return {run_part.outbox: put(run_part.name), digest: None, note: now(base) + "\n\n⚠️ " + notice}
                out = {run_part.outbox: put(run_part.name, text=text), digest: fingerprint}
                if "⚠️" in (values[note] or "") and found_in(RUN_NOT_KEPT, values[note] or ""):
                    out[note] = now(base)
                return out

            _, keep_run, inputs = self._marked(run_part, keep_run, {run.state, digest, client, note, settings.key_state},
                                               [run.views.raw.change])
            keeping = run.views.raw.change(keep_run, inputs, [run_part.outbox, digest, note], **self.one_at_a_time)
            self._writer(run_part, note, keeping)

        def restore(values: dict, request: gr.Request) -> dict:
            who = client_of(values[client])
            notes, out = [values[said] for said in saids], {}
            if not who["storage"]:
                return {note: now(base) + "\n\n" + tr(
                    "⚠️ 这个浏览器不允许网页保存数据（隐私模式或设置），刷新后改动会丢失。",
                    "⚠️ This browser does not let pages save data (private mode or a setting): changes are lost on "
                    "reload.")}
            if self.replaced is not None and self.replaced(request) == tab.name:
                # The link's scenario replaces this lesson whole (its banner says so): nothing kept is
                # shown, and nothing kept stays behind to come back on the next load under the link's
                # values (a last run of another example). The link's values are saved as it sets them.
                out.update({work.outbox: put(work.name), work.written: None})
                if run is not None:
                    out.update({run_part.outbox: put(run_part.name), digest: None})
                out[note] = now(base) + "".join("\n\n" + n for n in notes if n)
                return out
            record, why = decode(values[work.inbox], work.name)
            if why:
                notes.append(tr("⚠️ 本浏览器里保存的这一课内容{why}，已忽略：页面显示的是示例。继续编辑会重新保存。",
                                "⚠️ What this browser kept of this lesson {why}: ignored; the page shows the example. "
                                "Editing saves again.").format(why=why))
            if record is not None:
                good, bad = restore_fields(record.fields, specs)
                for name, value in good.items():
                    out[fields[name]] = value
                if "preset" in fields and editor is not None:
                    choices = editor.presets.get(good.get("example_set", values[editor.example_set])) or []
                    preset = good.get("preset")
                    out[fields["preset"]] = gr.update(choices=choices, value=preset if preset in choices
                                                      else (choices[0] if choices else None))
                notes.append(now(RESTORED) + tr("（{when} 保存）。", " (saved {when}).").format(
                    when=when(record.saved_at, who["utc_offset_minutes"]))
                             + (tr("想回到示例：点「↺ 重置源码」。", " To go back to the example: «↺ Reset source».")
                                if editor is not None else ""))
                if bad:
                    notes.append(tr("⚠️ 这几项保存的值不能用，保留了默认值：", "⚠️ These saved values could not be used; "
                                    "the defaults stay: ") + tr("、", ", ").join(str(now(b)) for b in bad) + tr("。", "."))
                notes.append(origin_notice(record, who["tab"], who["utc_offset_minutes"], tr("这份内容", "this content")))
                if getattr(tab, "adopt_kept", None) is not None:
                    notes += tab.adopt_kept(record.fields, session_of(request))
            if run is not None:
                notes.append(restore_run(values, out, request))
            out[note] = now(base) + "".join("\n\n" + n for n in notes if n)
            return out

        def restore_run(values: dict, out: dict, request: gr.Request) -> str:
            record, why = decode(values[run_part.inbox], run_part.name)
            if why:
                return tr("⚠️ 本浏览器里保存的上次运行{why}，已忽略。",
                          "⚠️ The last run this browser kept {why}: ignored.").format(why=why)
            if record is not None and record.run is None and isinstance(record.fields.get(RUNNING), str):
                saved = when(record.saved_at, client_of(values[client])["utc_offset_minutes"])
                lost = tr("这次运行的结果没有保存", "its result was not kept")
                if lesson["after"]:
                    lost = tr("这次运行的结果和它对工作区的改动都没有保存，工作区是运行之前保存的文件",
                              "neither its result nor its changes to the workspace were kept: the workspace holds "
                              "the files kept before the run")
                out[run.views.status] = now(INTERRUPTED) + tr(
                    "：{saved} 开始的运行（问题「{question}」）还没有结束，页面就被刷新或关闭了，服务器上的运行随之停止；"
                    "{lost}。要看结果，请再点「▶ 运行」。",
                    ": the run started at {saved} (question «{question}») had not ended when the page was reloaded or "
                    "closed, and the run on the server stopped with it; {lost}. To see a result, click «▶ Run» "
                    "again.").format(saved=saved, question=record.fields[RUNNING][:80], lost=lost)
                return ""
            if record is None or record.run is None:
                return ""
            try:
                state, show = run.kept_run(record.run, request)
            except session_io.ImportProblem as exc:
                return tr("⚠️ 本浏览器里保存的上次运行不能回放（{exc}），已忽略。",
                          "⚠️ The last run this browser kept cannot be replayed ({exc}): ignored.").format(exc=exc)
            state.pos = len(state.replay)
            old = values[run.state]
            if old is not None:
                old.close()
            saved = when(record.saved_at, client_of(values[client])["utc_offset_minutes"])
            paused = record.fields.get(PAUSED)
            if paused in (PAUSED_ASK, PAUSED_STEP):
                waited = (tr("等你确认一个调用", "waiting for you to approve a call") if paused == PAUSED_ASK
                          else tr("单步暂停在一个调用前", "paused by a step before a call"))
                told = now(INTERRUPTED) + tr(
                    "：这次运行（{saved}）在{waited}时，页面被刷新或关闭了；暂停的运行只在原来的页面里，不能接着做。"
                    "下面是它停下之前的步骤，按本浏览器保存的事件重新显示。要做完，请再点「▶ 运行」。",
                    ": this run ({saved}) was {waited} when the page was reloaded or closed; a paused run lives only "
                    "in the page it paused in and cannot go on. Below are its steps up to the pause, shown again from "
                    "the events this browser kept. To finish it, click «▶ Run» again.").format(saved=saved, waited=waited)
                shown = show(state, told)
            else:
                told = now(LAST_RUN) + tr("（{saved}），按本浏览器保存的事件重新显示，没有再调用模型。",
                                          " ({saved}), shown again from the events this browser kept, "
                                          "without calling the model.").format(saved=saved)
                # The note stays on top of the steps; the headline is the run's verdict, as it was.
                shown = {**show(state, told), run.views.status: run.views.verdict(state)}
            out.update(shown)
            out[digest] = events_digest(state.replay)
            return ""

        # What the tab shows once its controls are back (its schema, its workspace's tree) runs in the
        # same request, on the restored values: one round trip per tab on page load, not two.
        follow = tab.on_load() if callable(getattr(tab, "on_load", None)) else None
        if follow is not None:
            follow_fn, follow_inputs, follow_outputs = follow
            lesson["edited_on_load"] = [c for c in follow_outputs if getattr(c, "interactive", None) is True]
            restore_inputs |= set(follow_inputs)
            restore_outputs += [c for c in follow_outputs if c not in restore_outputs]
            restore_alone = restore

            def restore(values: dict, request: gr.Request) -> dict:
                # What follows still runs after a restore that failed: the tab keeps the page's
                # defaults, says so, and works (its run buttons come with what follows).
                try:
                    out = restore_alone(values, request)
                except Exception:
                    logging.getLogger(__name__).exception("restoring a lesson failed")
                    out = {note: now(base) + "\n\n" + now(RESTORE_FAILED)}
                current = {**values, **{c: v for c, v in out.items() if c in follow_inputs and not isinstance(v, dict)}}
                return {**out, **follow_fn({c: current[c] for c in follow_inputs}, request)}

        lesson.update(restore=restore, restore_inputs=restore_inputs, restore_outputs=restore_outputs)

    def _wire_settings(self, settings: Any, part: Part, key_part: Part) -> tuple:
        """Wires saving the settings and the key; returns the restore handler, its inputs and outputs."""
        controls: SettingsControls = settings.memory
        fields = dict(settings.fields)
        specs = {name: spec_for(component) for name, component in fields.items()}
        if "model" in specs:
            specs["model"] = FieldSpec("text", TEXT_LIMIT, label=tr("模型", "the model"))
        note, client, secrets = controls.note, self.client, settings.secrets

        def save(values: dict) -> dict:
            kept, notices = keep_fields({name: values[c] for name, c in fields.items()}, specs)
            if fields_digest(kept) == values[part.written]:
                return {part.outbox: gr.skip()}
            record = Record(part.name, kept, saved_at=time.time(), writer=client_of(values[client])["tab"])
            return {part.outbox: put(part.name, record), part.written: fields_digest(kept),
                    **({note: "⚠️ " + " ".join(notices)} if notices else {})}

        triggers = [c.change for c in fields.values()]
        _, save, inputs = self._marked(part, save, {client, part.written, *fields.values()}, triggers)
        saving = gr.on(triggers, save, inputs, [part.outbox, part.written, note], **self.one_at_a_time)
        self._writer(part, note, saving)

        # Which key the browser holds (a hash): the key is sent back to be stored only when it changed.
        key_kept = gr.State(None)

        def save_key(values: dict) -> dict:
            key = values[settings.key_state] or ""
            if values[controls.remember] and key and len(key) <= KEY_LIMIT:
                if values[key_kept] == key_digest(key):
                    return {key_part.outbox: gr.skip()}
                record = Record(key_part.name, {"key": key}, saved_at=time.time(),
                                writer=client_of(values[client])["tab"])
                return {key_part.outbox: put(key_part.name, record), key_kept: key_digest(key),
                        note: tr("🔑 你的密钥已记在本浏览器。", "🔑 Your key is remembered in this browser.")}
            forgotten = {key_part.outbox: put(key_part.name), key_kept: None}
            if values[controls.remember]:
                return {**forgotten, note: tr("🔑 输入密钥并按回车后，会记在本浏览器。",
                                              "🔑 Enter a key and press Enter: it will be remembered in this browser.")}
            return forgotten

        triggers = [settings.key_state.change, controls.remember.change]
        _, save_key, inputs = self._marked(key_part, save_key, {settings.key_state, controls.remember, client, key_kept},
                                           triggers)
        keying = gr.on(triggers, save_key, inputs, [key_part.outbox, key_kept, note], **self.one_at_a_time)
        self._writer(key_part, note, keying)

        def forget() -> dict:
            # The session's key stays, now held for this browser tab only.
            return {controls.remember: False, key_part.outbox: put(key_part.name), key_kept: None, settings.key_origin: "tab",
                    note: tr("🔑 已从本浏览器删除记住的密钥（本次会话里已输入的密钥仍可用，点「清除本会话密钥」可一并清除）。",
                             "🔑 The remembered key is deleted from this browser (the key entered in this session still "
                             "works; «Clear this session's key» clears it too).")}

        forgetting = controls.forget.click(forget, None, [controls.remember, key_part.outbox, key_kept, settings.key_origin,
                                                         note], **self.silent)
        self._writer(key_part, note, forgetting)
        controls.clear.click(None, None, None, js=CLEAR_JS % json.dumps(PREFIX), **self.silent).then(
            lambda: {controls.remember: False, key_kept: None,
                     note: tr("🗑 已清除本浏览器为本页保存的全部内容（源码、问题、选项、上次运行、工作区文件、设置和记住的密钥）。"
                              "页面上现在的内容不变；继续编辑会重新开始保存。",
                              "🗑 Everything this browser saved for this page is cleared (sources, questions, options, "
                              "last runs, workspace files, settings and the remembered key). What the page shows now "
                              "stays; editing starts saving again.")},
            None, [controls.remember, key_kept, note], **self.silent)

        def restore(values: dict, request: gr.Request) -> dict:
            who = client_of(values[client])
            # The tab's handle stays this page's: what is typed here is held with what was typed before.
            out: dict = {key_part.inbox: "", settings.key_handle: who["key_handle"]}
            settings.server_keys.join_tab(who["tab"], request)
            settings.server_keys.let_in(who["key_handle"], request)
            notes = []
            record, why = decode(values[part.inbox], part.name)
            if why:
                notes.append(tr("⚠️ 本浏览器里保存的模型设置{why}，已忽略。",
                                "⚠️ The model settings this browser kept {why}: ignored.").format(why=why))
            if record is not None:
                good, bad = restore_fields(record.fields, specs)
                for name, value in good.items():
                    out[fields[name]] = value
                # The provider's own change handler leaves the model alone: it is set here, the
                # saved one or, if that could not be used, the provider's default.
                chosen = good.get("provider", values[settings.provider])
                if "model" in good or chosen != values[settings.provider]:
                    out[settings.model] = gr.update(**model_box(chosen, secrets, good.get("model")))
                if bad:
                    notes.append(tr("⚠️ 这几项保存的设置不能用，保留了默认值：", "⚠️ These saved settings could not be "
                                    "used; the defaults stay: ") + tr("、", ", ").join(str(now(b)) for b in bad) + tr("。", "."))
                notes.append(origin_notice(record, who["tab"], who["utc_offset_minutes"], tr("模型设置", "the model settings")))
            remembered, why = decode(values[key_part.inbox], key_part.name)
            if why:
                notes.append(tr("⚠️ 本浏览器里记住的密钥{why}，已忽略。",
                                "⚠️ The key this browser remembered {why}: ignored.").format(why=why))
            key = (remembered.fields.get("key") if remembered is not None else None)
            typed = TYPED_KEYS.key(who["key_handle"])
            remembered_ok = isinstance(key, str) and bool(key) and len(key) <= KEY_LIMIT
            if typed and typed != key:
                # Typed in this browser tab (on another lesson's page, or before a reload): the server holds it.
                out.update({settings.key_state: typed, settings.key_origin: "tab"})
                if remembered_ok:     # an older remembered key: ticked still, and replaced by this one
                    out.update({controls.remember: True, key_kept: None})
            elif remembered_ok:
                out.update({settings.key_state: key, settings.key_origin: "remembered", controls.remember: True,
                            key_kept: key_digest(key)})
                notes.append(tr("🔑 用的是本浏览器记住的密钥；点「忘记」可删除。",
                                "🔑 This is the key this browser remembered; «Forget» deletes it."))
            if notes:
                out[note] = now(SETTINGS_NOTE) + "".join("\n\n" + n for n in notes if n)
            return out

        return (restore, {client, part.inbox, key_part.inbox, settings.provider},
                [*fields.values(), key_part.inbox, key_kept, settings.key_state, settings.key_handle,
                 settings.key_origin, controls.remember, note])
