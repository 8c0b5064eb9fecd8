"""The working rhythm every tab shares: question + presets, 运行 / 单步, the pause
box of step mode, and the views of the run (protocol, chat, raw JSON, code,
export/import with replay).

Per-session state lives in one gr.State dict per tab:
  {"events": [...], "gen": paused loop generator or None, "pending": tool_call event,
   "step": bool, "source", "tools", "question", "settings", "options",
   "replay": recorded events or None, "pos": replay position}
A loop generator stays in that state while paused; gr.State keeps it on the server.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Mapping

import gradio as gr

import sandbox

from lessons import code_view, expiry, schema_panel, session_io, settings_panel, timeline

STREAM_REFRESH_S = 0.15   # at most this often a partial stream is re-rendered
_FIRST = object()         # "start the generator" rather than "send an override"


def make_execute(source: str, session_id: str | None) -> Callable[[str, Any], dict]:
    """Tools always run in the sandbox, never in the page's process."""
    def execute(name: str, args: Any) -> dict:
        try:
            return sandbox.run_tool(source, name, args, session_id=session_id)
        except Exception as exc:  # a broken worker is one failed call, not a broken page
            return {"ok": False, "content": f"❌ [沙箱错误] 工具没有运行：{exc}。请重试。", "error_code": "sandbox",
                    "duration_ms": 0.0, "arguments": None, "problems": [], "coercions": []}
    return execute


def jsonable(event: Any) -> dict:
    """Events go into files and the page: make sure they are plain JSON data."""
    try:
        return json.loads(json.dumps(event, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return {"type": "error", "turn": None, "code": "bad_event", "message": f"无法显示的事件：{event!r}"[:500]}


def new_state() -> dict:
    return {"events": [], "gen": None, "pending": None, "step": False, "source": "", "tools": [],
            "question": "", "settings": {}, "options": {}, "replay": None, "pos": 0}


class RunPanel:
    """One tab's run area. `start(client, question, tools, execute, settings, options)`
    returns the lesson's loop generator; `option_inputs` are the tab's own controls,
    named by `option_names` in the options dict."""

    def __init__(self, lesson: str, settings: settings_panel.SettingsPanel, editor: gr.Code,
                 start: Callable[..., Any], presets: list[str], option_inputs: list | None = None,
                 option_names: list[str] | None = None, strict_input: gr.Checkbox | None = None,
                 mistake_option: str | None = None):
        self.lesson, self.settings, self.editor, self.start = lesson, settings, editor, start
        self.option_inputs, self.option_names = option_inputs or [], option_names or []
        self.strict_input, self.mistake_option = strict_input, mistake_option
        # Dropped (a paused loop closed) once the tab has been idle for the session TTL.
        self.state = gr.State(new_state(), time_to_live=expiry.session_ttl(), delete_callback=expiry.close_run)
        with gr.Group():
            self.presets = gr.Dropdown(presets, value=presets[0] if presets else None, label="预设问题",
                                       allow_custom_value=False, elem_classes=["tw-presets"])
            self.question = gr.Textbox(presets[0] if presets else "", label="问题", lines=2,
                                       elem_classes=["tw-question"])
        with gr.Row():
            self.run_btn = gr.Button("▶ 运行", variant="primary", elem_classes=["tw-run"], min_width=100)
            self.step_btn = gr.Button("⏯ 单步", elem_classes=["tw-step-btn"], min_width=100)
        self.status = gr.Markdown(elem_classes=["tw-status"])
        with gr.Row(visible=False, elem_classes=["tw-replay"]) as self.replay_row:
            self.next_btn = gr.Button("下一步 ⏭", variant="primary", elem_classes=["tw-next"], min_width=100)
            self.all_btn = gr.Button("全部显示", elem_classes=["tw-all"], min_width=100)
        with gr.Group(visible=False, elem_classes=["tw-stepbox"]) as self.step_box:
            gr.Markdown("**⏸ 已暂停在工具执行之前。** 可以修改参数（JSON），或者直接手写工具结果（填了就不执行工具），然后继续。")
            self.step_args = gr.Code(label="将要执行的参数（可修改）", language="json", lines=4, interactive=True,
                                     elem_classes=["tw-step-args"])
            self.step_result = gr.Textbox(label="手写工具结果（可选）", lines=2, elem_classes=["tw-step-result"])
            with gr.Row():
                self.continue_btn = gr.Button("继续 ▶", variant="primary", elem_classes=["tw-continue"], min_width=100)
                self.finish_btn = gr.Button("不再暂停，跑完", elem_classes=["tw-finish"], min_width=100)
        with gr.Tabs() as self.views_tabs:
            with gr.Tab("协议时间线", id="protocol"):
                self.protocol = gr.HTML(timeline.render_protocol([], lesson), css_template=timeline.CSS,
                                        elem_classes=["tw-timeline"])
            with gr.Tab("对话视图"):
                self.chat = gr.Chatbot(label="对话（工具步骤可折叠）", height=460, elem_classes=["tw-chat"])
            with gr.Tab("原始 JSON"):
                self.raw = gr.Code(label="事件流（流式分片已合并）", language="json", interactive=False,
                                   max_lines=40, elem_classes=["tw-raw"])
            with gr.Tab("查看代码"):
                self.code = gr.Code(code_view.python_for([]), label="复现最近一次请求的 Python（可复制）",
                                    language="python", interactive=False, elem_classes=["tw-code"])
            with gr.Tab("导出/导入"):
                gr.Markdown("导出：把整次运行（工具、源码、事件、原始响应，不含密钥）存成 JSON。导入：不需要模型，按「下一步」逐步回放。")
                with gr.Row():
                    self.export_btn = gr.Button("导出本次运行", elem_classes=["tw-export"], min_width=120)
                    self.export_file = gr.File(label="下载", interactive=False, elem_classes=["tw-export-file"])
                self.import_file = gr.File(label="导入会话文件（.json）", file_types=[".json"], type="filepath",
                                           elem_classes=["tw-import"])
        self.view_outputs = [self.protocol, self.chat, self.raw, self.code, self.status,
                             self.step_box, self.step_args, self.step_result, self.replay_row, self.state]

    # ------------------------------------------------------------ views

    def views(self, state: dict, note: str = "") -> list:
        events = state["events"] if state.get("replay") is None else state["replay"][: state["pos"]]
        pending = state.get("pending") if state.get("gen") is not None else None
        if pending is not None and not note:
            note = f"⏸ 暂停：即将执行 {pending.get('name')}（id={pending.get('id')}）"
        args = pending.get("arguments") if pending else None
        shown_args = json.dumps(args, ensure_ascii=False, indent=2) if args is not None else (pending or {}).get("raw_arguments", "")
        return [
            timeline.render_protocol(events, self.lesson, note),
            timeline.render_chat(events, self.lesson),
            json.dumps(timeline.without_deltas(events), ensure_ascii=False, indent=2),
            code_view.python_for(events, state.get("settings")),
            note or self.summary(events),
            gr.update(visible=pending is not None),
            gr.update(value=shown_args) if pending is not None else gr.update(),
            gr.update(value="") if pending is not None else gr.update(),
            gr.update(visible=state.get("replay") is not None),
            state,
        ]

    @staticmethod
    def summary(events: list[dict]) -> str:
        answer = timeline.final_answer(events)
        if not answer:
            return ""
        calls = sum(1 for e in events if e.get("type") == "tool_call")
        turns = len({e.get("turn") for e in events if e.get("type") == "response"})
        return f"**{'❌' if answer.startswith('出错') else '✅'} {turns} 轮，{calls} 次工具调用。** {timeline.esc(answer[:300])}"

    # ------------------------------------------------------------ driving the loop

    def drive(self, state: dict, override: Any = _FIRST):
        """Advances the paused/new generator, yielding views, until it pauses or ends."""
        gen = state["gen"]
        last_shown = 0.0
        hand_written = isinstance(override, dict) and "result" in override
        while gen is not None:
            try:
                event = next(gen) if override is _FIRST else gen.send(override)
                override = _FIRST
            except StopIteration:
                break
            except Exception as exc:  # whatever the client or loop raised: show it, keep the page alive
                state["events"].append({"type": "error", "turn": None, "code": getattr(exc, "code", "exception"),
                                        "message": str(exc) or exc.__class__.__name__})
                break
            event = jsonable(event)
            if event.get("type") == "tool_result" and hand_written:
                event["overridden"] = "结果由学生手写，没有执行工具"
                hand_written = False
            state["events"].append(event)
            if event.get("type") == "delta":
                if time.monotonic() - last_shown > STREAM_REFRESH_S:
                    last_shown = time.monotonic()
                    yield self.views(state, "⏳ 正在接收流式输出…")
                continue
            if event.get("type") == "tool_call" and state.get("step"):
                state["pending"] = event
                yield self.views(state)
                return
            state["pending"] = None
            yield self.views(state, "⏳ 运行中…")
        state["gen"], state["pending"] = None, None
        yield self.views(state)

    def begin(self, step: bool, source, question, provider, model, base_url, key, temperature, max_turns, stream,
              strict, options: dict, request: gr.Request | None, old: dict | None):
        if old and old.get("gen") is not None:
            old["gen"].close()
        settings, session_key = settings_panel.settings_from(provider, model, base_url, key, temperature, max_turns, stream)
        state = new_state()
        state.update(step=step, source=source or "", question=(question or "").strip(),
                     settings=settings.public(), options=dict(options))
        if not state["question"]:
            yield self.views(state, "请先输入一个问题，或从预设问题里选一个。")
            return
        report = schema_panel.schema_report(source, strict, session_id=getattr(request, "session_hash", None))
        if not report["ok"]:
            yield self.views(state, "工具源码有错误，先修好再运行：" + schema_panel.error_text(report["error"]))
            return
        state["tools"] = report["tools"]
        try:
            client = settings_panel.make_client(settings, session_key, self.settings.secrets,
                                                mistake=options.get(self.mistake_option) if self.mistake_option else None,
                                                request=request)
            execute = make_execute(source, getattr(request, "session_hash", None))
            state["gen"] = self.start(client, state["question"], report["tools"], execute, settings, options)
        except Exception as exc:
            yield self.views(state, f"❌ 无法开始：{exc}")
            return
        yield self.views(state, "⏳ 运行中…")
        yield from self.drive(state)

    def resume(self, state: dict, args_text: str, result_text: str, keep_stepping: bool):
        if not state or state.get("gen") is None:
            yield self.views(state or new_state(), "没有暂停中的运行：先点「单步」。")
            return
        pending = state.get("pending") or {}
        override = None
        if (result_text or "").strip():
            override = {"result": result_text}
        else:
            try:
                edited = json.loads(args_text) if (args_text or "").strip() else None
            except json.JSONDecodeError as exc:
                yield self.views(state, f"参数不是合法 JSON（第 {exc.lineno} 行第 {exc.colno} 列：{exc.msg}），改好再继续。")
                return
            if edited is not None and edited != pending.get("arguments"):
                if not isinstance(edited, dict):
                    yield self.views(state, "参数应是一个 JSON 对象，例如 {\"city\": \"北京\"}。")
                    return
                override = {"arguments": edited}
        state["step"] = keep_stepping
        state["pending"] = None
        yield from self.drive(state, override)

    # ------------------------------------------------------------ wiring

    def wire(self):
        s = self.settings
        base_inputs = [self.editor, self.question, *s.inputs]
        strict_inputs = [self.strict_input] if self.strict_input is not None else []
        names = self.option_names

        def handler(step: bool):
            def run(request: gr.Request, *values):
                fixed = values[: len(base_inputs)]
                strict = values[len(base_inputs)] if strict_inputs else False
                rest = values[len(base_inputs) + len(strict_inputs): -1]
                old = values[-1]
                yield from self.begin(step, *fixed, strict, dict(zip(names, rest)), request, old)
            return run

        inputs = base_inputs + strict_inputs + self.option_inputs + [self.state]
        self.run_btn.click(handler(False), inputs, self.view_outputs, api_visibility="private")
        self.step_btn.click(handler(True), inputs, self.view_outputs, api_visibility="private")
        self.presets.input(lambda q: q, [self.presets], [self.question], api_visibility="private", show_progress="hidden")

        def keep_stepping(state, args_text, result_text):
            yield from self.resume(state, args_text, result_text, True)

        def run_to_end(state, args_text, result_text):
            yield from self.resume(state, args_text, result_text, False)

        resume_inputs = [self.state, self.step_args, self.step_result]
        self.continue_btn.click(keep_stepping, resume_inputs, self.view_outputs, api_visibility="private")
        self.finish_btn.click(run_to_end, resume_inputs, self.view_outputs, api_visibility="private")

        def export(state, session_key):
            events = state.get("replay") if state.get("replay") is not None else state.get("events")
            if not events:
                return gr.update(value=None), "还没有可以导出的运行。"
            document = session_io.session_document(self.lesson, state.get("source", ""), state.get("tools"),
                                                   state.get("question", ""), events, state.get("settings"),
                                                   state.get("options"))
            return session_io.export_file(document, secret=session_key), "已生成会话文件，点上面的文件名下载。"

        self.export_btn.click(export, [self.state, s.key_state], [self.export_file, self.status], api_visibility="private")

        def load(path, state):
            if not path:
                return [gr.update()] * 3 + self.views(state or new_state())
            try:
                document = session_io.load_document(path)
            except session_io.ImportProblem as exc:
                return [gr.update()] * 3 + self.views(state or new_state(), f"❌ 导入失败：{exc}")
            fresh = new_state()
            fresh.update(replay=document["events"], pos=0, source=document.get("source", ""),
                         tools=document.get("tools", []), question=document.get("question", ""),
                         settings=document.get("settings", {}), options=document.get("options", {}))
            other = "" if document.get("lesson") == self.lesson else f"（这是「{document.get('lesson')}」课的记录）"
            note = f"已导入录制的运行{other}：点「下一步」逐步回放，不调用模型。"
            return ([document.get("source", ""), document.get("question", ""), gr.Tabs(selected="protocol")]
                    + self.views(fresh, note))

        self.import_file.upload(load, [self.import_file, self.state],
                                [self.editor, self.question, self.views_tabs] + self.view_outputs,
                                api_visibility="private")

        def walk(state, to_end: bool):
            if not state or state.get("replay") is None:
                return self.views(state or new_state(), "先导入一个会话文件，再逐步回放。")
            events = state["replay"]
            state["pos"] = len(events) if to_end else session_io.next_position(events, state["pos"])
            return self.views(state, session_io.step_label(events, state["pos"]))

        self.next_btn.click(lambda st: walk(st, False), [self.state], self.view_outputs, api_visibility="private")
        self.all_btn.click(lambda st: walk(st, True), [self.state], self.view_outputs, api_visibility="private")
