"""The server-key part of 模型设置: the class code field (when the server has one) and
the session's use of the server's keys. The rules themselves live in access/."""
from __future__ import annotations

from typing import Mapping

import gradio as gr

from i18n import tr

from access import server_keys
from access.class_code import CodeRefused
from serving.page_events import PRIVATE

KEY_NAMES = ("ZHIPUAI_API_KEY", "OPENAI_API_KEY")


class ServerKeyPanel:
    def __init__(self, secrets: Mapping[str, str], accordion: gr.Accordion, provider: gr.Dropdown):
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

        def enter_code(typed: str, request: gr.Request):
            # The box is emptied at once: the code is never sent back to the browser.
            try:
                policy.enter_code(typed, request)
                note = tr("✅ 课堂口令正确，本会话可以使用服务器的密钥。",
                          "✅ Class code accepted: this session may use the server's key.")
            except CodeRefused as exc:
                note = f"❌ {exc}"
            return "", f"{note}\n\n{policy.usage_line(request)}"

        accordion.expand(show_usage, None, [self.usage], api_visibility=PRIVATE, show_progress="hidden")
        provider.change(show_usage, None, [self.usage], api_visibility=PRIVATE, show_progress="hidden")
        self.class_code.submit(enter_code, [self.class_code], [self.class_code, self.usage],
                               api_visibility=PRIVATE, show_progress="hidden")
