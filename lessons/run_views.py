"""What a tab's run area shows: question + presets, 运行 / 单步, the pause box of step
mode, the replay buttons, and the views of the run (protocol, chat, raw JSON, code,
export/import). `render(state, note)` draws a RunState into all of them at once."""
from __future__ import annotations

import itertools
import json
from typing import Any, Callable

import gradio as gr

from catalogue import LESSONS
from i18n import tr

from lessons import code_view, cost_view, timeline
from lessons.code_box import CodeBox
from runs import headline, run_driver
from runs.run_driver import RunState


# Each drawing of a run area takes the next number (run_views.RunViews.mark).
DRAWINGS = itertools.count(1)


def summary(events: list[dict]) -> str:
    """The status line once a run has ended (runs/headline.py decides what it says)."""
    return headline.headline(events, timeline.esc)


class RunViews:
    """The components of one tab's run area (built where the constructor is called)."""

    def __init__(self, lesson: str, presets: list[str], below_buttons: Callable[[], Any] | None = None,
                 check_arguments: bool = True):
        """`below_buttons` builds a tab's own controls right under 运行 (a pause box); `check_arguments`
        off: the calls' notes on arguments nobody said are not drawn (timeline.render_protocol says why)."""
        self.lesson = lesson
        self.check_arguments = check_arguments
        with gr.Group():
            self.presets = gr.Dropdown(presets, value=presets[0] if presets else None, label=tr("预设问题", "Preset questions"),
                                       allow_custom_value=False, elem_classes=["tw-presets"])
            self.question = gr.Textbox(presets[0] if presets else "", label=tr("问题", "Question"), lines=2,
                                       elem_classes=["tw-question"])
        # Both work once the page's kept settings and lesson are back (`ready`): a click before
        # that would run the defaults, not what the student sees a moment later.
        with gr.Row():
            self.run_btn = gr.Button(tr("▶ 运行", "▶ Run"), variant="primary", elem_classes=["tw-run"], min_width=100,
                                     interactive=False)
            # A loop without step mode's edits (catalogue.Lesson.step) has no 单步: its pauses are its own.
            self.step_btn = gr.Button(tr("⏯ 单步", "⏯ Step"), elem_classes=["tw-step-btn"], min_width=100,
                                      interactive=False, visible=LESSONS[lesson].step if lesson in LESSONS else True)
        self.below_buttons = below_buttons() if below_buttons is not None else None
        self.status = gr.Markdown(elem_classes=["tw-status"])
        # Not seen, changed by every drawing of the run: a headline equal to the last run's (the same question
        # again) is still told apart from it, by whoever clicked and waits for this run's (a script, a test).
        self.mark = gr.HTML("", visible="hidden", elem_classes=["tw-run-mark"])
        self.retry_btn = gr.Button(tr("🔁 去掉参数重试", "🔁 Retry without the parameter"), visible=False, size="sm", elem_classes=["tw-retry"])
        with gr.Row(visible=False, elem_classes=["tw-replay"]) as self.replay_row:
            self.next_btn = gr.Button(tr("下一步 ⏭", "Next ⏭"), variant="primary", elem_classes=["tw-next"], min_width=100)
            self.all_btn = gr.Button(tr("全部显示", "Show all"), elem_classes=["tw-all"], min_width=100)
        with gr.Group(visible=False, elem_classes=["tw-stepbox"]) as self.step_box:
            gr.Markdown(tr("**⏸ 已暂停在工具执行之前。** 可以修改参数（JSON），或者直接手写工具结果（填了就不执行工具），然后继续。",
                           "**⏸ Paused before the tool runs.** Edit the arguments (JSON), or write the tool's result "
                           "yourself (then the tool does not run), and continue."))
            self.step_args = gr.Code(label=tr("将要执行的参数（可修改）", "Arguments about to run (editable)"), language="json", lines=4, interactive=True,
                                     elem_classes=["tw-step-args"])
            self.step_result = gr.Textbox(label=tr("手写工具结果（可选）", "Hand-written tool result (optional)"), lines=2, elem_classes=["tw-step-result"])
            with gr.Row():
                self.continue_btn = gr.Button(tr("继续 ▶", "Continue ▶"), variant="primary", elem_classes=["tw-continue"], min_width=100)
                self.finish_btn = gr.Button(tr("不再暂停，跑完", "Stop pausing, finish"), elem_classes=["tw-finish"], min_width=100)
        with gr.Tabs() as self.views_tabs:
            with gr.Tab(tr("协议时间线", "Timeline"), id="protocol"):
                self.protocol = gr.HTML(timeline.render_protocol([], lesson), css_template=timeline.css(),
                                        elem_classes=["tw-timeline"])
            with gr.Tab(tr("模型收到什么 · tokens", "Model input · tokens"), id="costs"):
                self.costs = gr.HTML(cost_view.render([]), css_template=cost_view.CSS, elem_classes=["tw-costs-view"])
            with gr.Tab(tr("对话视图", "Chat")):
                self.chat = gr.Chatbot(label=tr("对话（工具步骤可折叠）", "Conversation (tool steps fold)"), height=460, elem_classes=["tw-chat"])
            with gr.Tab(tr("原始 JSON", "Raw JSON")):
                self.raw = CodeBox(label=tr("事件流（流式分片已合并）", "Event stream (streamed chunks merged)"), language="json",
                                   filename="events.json", max_lines=40, elem_classes=["tw-raw"])
            with gr.Tab(tr("查看代码", "Code")):
                self.code = CodeBox(code_view.python_for([]), label=tr("复现最近一次请求的 Python（可复制）", "Python that repeats the last request (copyable)"),
                                    language="python", filename="repeat_request.py", elem_classes=["tw-code"])
            with gr.Tab(tr("导出/导入", "Export/import")):
                gr.Markdown(tr("导出：把整次运行（工具、源码、事件、原始响应，不含密钥）存成 JSON。导入：不需要模型，按「下一步」逐步回放。",
                                "Export: the whole run (tools, source, events, raw responses, no keys) as JSON. "
                                "Import: no model needed, replay step by step with «Next»."))
                with gr.Row():
                    self.export_btn = gr.Button(tr("导出本次运行", "Export this run"), elem_classes=["tw-export"], min_width=120)
                    self.export_file = gr.File(label=tr("下载", "Download"), interactive=False, elem_classes=["tw-export-file"])
                # What the export did, beside the file: the run's headline above stays as it was.
                self.export_note = gr.Markdown(elem_classes=["tw-export-note"])
                self.import_file = gr.File(label=tr("导入会话文件（.json）", "Import a session file (.json)"), file_types=[".json"], type="filepath",
                                           elem_classes=["tw-import"])
        # Everything render() writes (the tab's gr.State is added by the panel).
        self.outputs = [self.protocol, self.chat, self.raw, self.code, self.status,
                        self.step_box, self.step_args, self.step_result, self.replay_row, self.retry_btn,
                        self.costs, self.mark]

    def ready(self) -> dict:
        """The run buttons working: once what the browser kept of the page is back (LessonPage.on_load)."""
        return {self.run_btn: gr.update(interactive=True), self.step_btn: gr.update(interactive=True)}

    def verdict(self, state: RunState) -> str:
        """The headline of the run shown: its verdict, as it was when it ran."""
        return summary(state.shown_events)

    def render(self, state: RunState, note: str = "") -> dict:
        """{component: value} for every view of the run."""
        events = state.shown_events
        pending = state.paused_on
        if pending is not None and not note:
            note = tr("⏸ 暂停：即将执行 {name}（id={id}）", "⏸ Paused: about to run {name} (id={id})").format(
                name=pending.get("name"), id=pending.get("id"))
        args = pending.get("arguments") if pending else None
        shown_args = (json.dumps(args, ensure_ascii=False, indent=2) if args is not None
                      else (pending or {}).get("raw_arguments", ""))
        return {
            self.protocol: timeline.render_protocol(events, self.lesson, note, self.check_arguments,
                                                    replaying=state.replay is not None),
            self.chat: timeline.render_chat(events, self.lesson, self.check_arguments),
            self.raw: json.dumps(timeline.without_deltas(events), ensure_ascii=False, indent=2),
            self.code: code_view.python_for(events, state.settings),
            self.status: note or self.verdict(state),
            self.step_box: gr.update(visible=pending is not None),
            self.step_args: gr.update(value=shown_args) if pending is not None else gr.update(),
            self.step_result: gr.update(value="") if pending is not None else gr.update(),
            # 下一步 / 全部显示 only while a replay has steps left to show.
            self.replay_row: gr.update(visible=state.replay is not None and state.pos < len(state.replay)),
            self.retry_btn: retry_button(state),
            self.costs: cost_view.render(events, (state.settings or {}).get("provider"), self.lesson),
            self.mark: str(next(DRAWINGS)),
        }


def retry_button(state: RunState) -> dict:
    """「去掉 tool_choice 重试」 etc., shown only when the endpoint refused a parameter."""
    parameter = run_driver.refused_parameter(state)
    if parameter is None:
        return gr.update(visible=False)
    label = (tr("🔁 关掉 strict 重试", "🔁 Retry with strict off") if parameter == "strict"
             else tr("🔁 去掉 {p} 重试", "🔁 Retry without {p}").format(p=parameter))
    return gr.update(visible=True, value=label)
