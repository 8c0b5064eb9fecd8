"""The server-key part of 模型设置: the class code field (when the server has one) and
the session's use of the server's keys. The rules themselves live in access/."""
from __future__ import annotations

from typing import Mapping

import gradio as gr

from i18n import tr

from access import server_keys
from access.class_code import CodeRefused
from access.typed_keys import CLASS_CODE, TYPED_KEYS
from memory.browser_memory import KEEP_HANDLE_JS, MARK_HANDLE_JS
from serving.page_events import PRIVATE, SILENT

KEY_NAMES = ("ZHIPUAI_API_KEY", "OPENAI_API_KEY")


class ServerKeyPanel:
    """`handle`: the browser tab's handle (access/typed_keys.py): an accepted class code is held under it,
    so the tab's other lesson pages are let in without asking again."""

    def __init__(self, secrets: Mapping[str, str], accordion: gr.Accordion, provider: gr.Dropdown,
                 handle: gr.Textbox):
        self.policy = server_keys.policy_for(secrets)
        has_key = any(secrets.get(name) for name in KEY_NAMES)
        with gr.Row(visible=has_key):
            self.class_code = gr.Textbox(label=tr("课堂口令（使用服务器密钥时需要）", "Class code (needed to use the server's key)"), type="password",
                                         placeholder=tr("输入老师给的口令后按回车", "Enter the code your teacher gave and press Enter"), elem_id="class-code", min_width=220,
                                         visible=self.policy.class_code.required)
            self.usage = gr.Markdown(elem_id="key-usage")
        if not has_key:
            return
        policy = self.policy

        def show_usage(request: gr.Request):
            return policy.usage_line(request)

        def enter_code(typed: str, held: str, request: gr.Request):
            # The box is emptied at once: the code is never sent back to the browser.
            try:
                policy.enter_code(typed, request)
                held = TYPED_KEYS.hold(typed.strip(), held, CLASS_CODE)
                note = tr("✅ 课堂口令正确，这个浏览器标签页里的各课都可以使用服务器的密钥。",
                          "✅ Class code accepted: every lesson in this browser tab may use the server's key.")
            except CodeRefused as exc:
                note = f"❌ {exc}"
            return "", f"{note}\n\n{policy.usage_line(request)}", held

        accordion.expand(show_usage, None, [self.usage], api_visibility=PRIVATE, show_progress="hidden")
        provider.change(show_usage, None, [self.usage], api_visibility=PRIVATE, show_progress="hidden")
        self.class_code.submit(None, None, None, js=MARK_HANDLE_JS, **SILENT)
        self.class_code.submit(enter_code, [self.class_code, handle], [self.class_code, self.usage, handle],
                               api_visibility=PRIVATE, show_progress="hidden").then(
            None, [handle], None, js=KEEP_HANDLE_JS, api_visibility=PRIVATE, show_progress="hidden")

    def join_tab(self, tab: str, request) -> None:
        """A page loaded in a browser tab: its use of the server's keys counts with the tab's other lesson pages."""
        self.policy.join_tab(tab, request)

    def let_in(self, held: str, request) -> None:
        """A page loaded in a browser tab whose class code was accepted on another of its pages: let in
        this page's session too (the code is checked again: one the teacher has changed is forgotten)."""
        code = TYPED_KEYS.key(held, CLASS_CODE) if self.policy.class_code.required else ""
        if not code:
            return
        try:
            self.policy.enter_code(code, request)
        except CodeRefused:
            TYPED_KEYS.hold("", held, CLASS_CODE)
