"""8.7 钩子: the student's hooks (code/hooks.py) around every tool call of the Function Calling
loop. The tool source and the hooks source sit side by side; both are student code and both run
in the sandbox (runs/hooks_backend.py). The timeline shows, inside each call, each hook's input,
its answer (a replaced result as a diff), its error and what it printed."""
from __future__ import annotations

import gradio as gr
import hooks as hooks_module

from i18n import now, tr

from catalogue import LESSONS
from lessons.editor_panel import EditorPanel, lesson_text_box
from lessons.hooks.hook_sets import HOOK_NAMES_EN, HOOK_SETS, HOOK_SOURCES
from lessons.hooks.timeline import on_error
from lessons.lesson_page import LessonPage
from lessons.presets import PRESETS
from lessons.run_panel import RunPanel
from lessons.schema_panel import SchemaPanel
from lessons.settings_panel import SettingsPanel
from runs import hooks_backend
from serving.page_events import PRIVATE, on_choice, session_of

LESSON = LESSONS["hooks"]
FIRST_HOOKS = HOOK_SETS[0][0]


def hooks_status(source: str, session_id: str | None = None) -> str:
    """What the hooks source registers, in the order the hooks run, or why it cannot be used."""
    listing = hooks_backend.listed(source or "", session_id)
    if not listing["ok"]:
        error = listing["error"] or {}
        return tr("❌ 钩子源码用不了：{why}", "❌ The hooks source cannot be used: {why}").format(
            why=error.get("message") or tr("没有说明原因", "no reason given"))
    if not listing["hooks"]:
        return tr("✅ 还没有登记钩子：每次调用都照常执行。", "✅ No hook registered yet: every call runs as it is.")
    # The order they run in: every PreToolUse hook before the call, then the PostToolUse hooks (or, when
    # the call failed, the PostToolUseFailure ones), each kind in the order it was registered.
    ordered = sorted(listing["hooks"], key=lambda hook: list(hooks_module.ANSWERS).index(hook["event"]))
    lines = [tr("✅ 登记了 {n} 个钩子，每次调用按这个顺序运行（PostToolUseFailure 只在调用失败时运行，代替 PostToolUse）：",
                "✅ {n} hook(s) registered, run in this order around each call (PostToolUseFailure only when the call "
                "failed, instead of PostToolUse):").format(n=len(ordered))]
    lines += [f"{number}. `{hook['event']}` · `{hook['name']}` · fail {hook['fail']}"
              + tr("（{said}）", " ({said})").format(said=now(on_error(hook["fail"])))
              for number, hook in enumerate(ordered, 1)]
    return "\n".join(lines)


def build(settings: SettingsPanel) -> LessonPage:
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=320):
                editor = EditorPanel(LESSON, presets=PRESETS)
                schema = SchemaPanel()
            with gr.Column(scale=1, min_width=320):
                with gr.Row():
                    hook_set = gr.Dropdown([(tr(name, HOOK_NAMES_EN[name]), name) for name, _, _ in HOOK_SETS],
                                           value=FIRST_HOOKS, label=tr("示例钩子", "Example hooks"),
                                           elem_classes=["tw-hook-set"], min_width=160, scale=3)
                    reset = gr.Button(tr("↺ 重置钩子", "↺ Reset hooks"), size="sm", elem_classes=["tw-hooks-reset"],
                                      min_width=100, scale=1)
                hooks = gr.Code(HOOK_SOURCES[FIRST_HOOKS], language="python", interactive=True, lines=18, max_lines=40,
                                label=tr("钩子源码（可编辑，也在沙箱里运行）", "Hooks source (editable; it runs in the sandbox too)"),
                                elem_classes=["tw-hooks"])
                status = gr.Markdown(elem_classes=["tw-hooks-status"])
        # The example set is recorded with the run (its loop reads only the hooks), so an imported
        # session file puts it back with the hooks it names.
        run = RunPanel(LESSON, settings, editor.editor, PRESETS[LESSON.example], options={"hooks": hooks, "hook_set": hook_set},
                       ask=True)

        def shown_status(values: dict, request: gr.Request) -> dict:
            return {status: hooks_status(values[hooks], session_of(request))}

        def pick(name: str):
            return HOOK_SOURCES.get(name, "")

        on_choice(hook_set, pick, [], [hooks])
        reset.click(pick, [hook_set], [hooks], api_visibility=PRIVATE, show_progress="hidden")
        hooks.change(shown_status, {hooks}, [status], api_visibility=PRIVATE, show_progress="hidden")
        schema.wire(editor.editor)
        editor.wire(run.presets, run.question)
        run.wire()
    # The browser keeps the example set under the name it has always had there, not as a run option.
    return LessonPage(LESSON.id, run, editor=editor, schema=schema, kept={"hook_set": hook_set},
                      kept_elsewhere=frozenset({"hook_set"}),
                      also_on_load=(shown_status, {hooks}, [status]))
