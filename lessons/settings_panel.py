"""模型设置: one panel shared by every tab (provider, model, base URL, key, temperature,
max turns, streaming) and the one place that turns those settings into a client.

Keys: a key configured on the server (Space secrets, handed in by app.py after
sealing) is used but never shown; a key typed by a student goes into that session's
gr.State on the server, the password box is emptied, and nothing ever sends it back
(unless the student ticks 在此浏览器记住我的密钥: then browser_memory.py stores it in the browser once).
A server key is only ever sent to the server's own endpoint, never to a base URL
typed in the page.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import gradio as gr

from lessons.browser_memory import SettingsControls
from lessons.server_key_panel import ServerKeyPanel
from llm_clients import MODEL_SUGGESTIONS

PROVIDERS = [("离线演示模型", "offline"), ("智谱 GLM", "glm"), ("OpenAI 兼容接口", "openai")]
# A model chosen on the server (GLM_MODEL / OPENAI_MODEL) is offered first.
MODEL_ENV = {"glm": "GLM_MODEL", "openai": "OPENAI_MODEL"}
KEY_ENV = {"glm": "ZHIPUAI_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"glm": "ZHIPUAI_BASE_URL", "openai": "OPENAI_BASE_URL"}
SECRET_NAMES = ("ZHIPUAI_API_KEY", "ZHIPUAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
NO_KEY_HINT = "仅保存在当前浏览器会话（服务器端内存），不会回传、不会记录"
SERVER_KEY_HINT = "已使用服务器配置的密钥"


@dataclass(frozen=True)
class Settings:
    provider: str = "offline"
    model: str = ""
    base_url: str = ""
    temperature: float = 0.0
    max_turns: int = 6
    stream: bool = False

    def public(self) -> dict:
        """What may be shown or exported: everything except keys."""
        return {"provider": self.provider, "model": self.model or default_model(self.provider),
                "base_url": self.base_url, "temperature": self.temperature,
                "max_turns": self.max_turns, "stream": self.stream}


def model_choices(provider: str, secrets: Mapping[str, str] | None = None) -> list[str]:
    chosen = (secrets or {}).get(MODEL_ENV.get(provider, ""), "")
    return ([chosen] if chosen else []) + [m for m in MODEL_SUGGESTIONS.get(provider, []) if m != chosen]


def default_model(provider: str, secrets: Mapping[str, str] | None = None) -> str:
    return (model_choices(provider, secrets) or [""])[0]


def server_has_key(provider: str, secrets: Mapping[str, str]) -> bool:
    return bool(secrets.get(KEY_ENV.get(provider, ""), ""))


def resolve_credentials(settings: Settings, session_key: str, secrets: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(api_key, base_url) for a client. The student's own key wins; otherwise the
    server's key, but only towards the server's own (or the provider's default) endpoint."""
    if settings.provider == "offline":
        return None, None
    typed_url = (settings.base_url or "").strip() or None
    if session_key:
        return session_key, typed_url or secrets.get(BASE_URL_ENV[settings.provider]) or None
    server_url = secrets.get(BASE_URL_ENV[settings.provider]) or None
    if typed_url and typed_url.rstrip("/") != (server_url or "").rstrip("/"):
        return None, typed_url  # never send the server's key to an address typed in the page
    return secrets.get(KEY_ENV[settings.provider]) or None, server_url


def make_client(settings: Settings, session_key: str, secrets: Mapping[str, str], mistake: str | None = None,
                request: Any = None, class_code: str | None = None):
    """A client for the chosen provider (llm_clients.make_client); raises LLMError /
    ValueError with a Chinese message when something is missing or not allowed
    (access/: typed base URLs on a public server, the class code and meter on server keys)."""
    import llm_clients
    from access import outbound, server_keys

    api_key, base_url = resolve_credentials(settings, session_key, secrets)
    if settings.provider != "offline" and not api_key:
        raise ValueError("没有可用的 API Key：请在「模型设置」里填写密钥（服务器没有为这个地址配置密钥）。")
    if settings.provider == "openai" and not base_url:
        base_url = None  # the SDK's default endpoint
    on_server_key = settings.provider != "offline" and not session_key
    if on_server_key:
        server_keys.policy_for(secrets).admit(request, class_code)
    typed = base_url and base_url.rstrip("/") != (secrets.get(BASE_URL_ENV.get(settings.provider, "")) or "").rstrip("/")
    client = llm_clients.make_client(
        settings.provider,
        model=settings.model or default_model(settings.provider, secrets),
        api_key=api_key,
        base_url=base_url,
        timeout=60.0,
        max_retries=0,
        mistake=(mistake or None) if settings.provider == "offline" else None,
        http_client=outbound.client_for_typed_url(base_url, 60.0) if typed else None,
    )
    return server_keys.policy_for(secrets).metered(client, request) if on_server_key else client


class SettingsPanel:
    """The 模型设置 accordion. Handlers take `components` as inputs and `read()` the settings by name."""

    def __init__(self, secrets: Mapping[str, str] | None = None):
        self.secrets = MappingProxyType(dict(secrets or {}))
        with gr.Accordion("⚙️ 模型设置", open=False, elem_id="settings-panel") as accordion:
            with gr.Row():
                self.provider = gr.Dropdown(PROVIDERS, value="offline", label="提供方", elem_id="provider", min_width=180)
                self.model = gr.Dropdown(model_choices("offline"), value=default_model("offline"), label="模型（可直接输入）",
                                         allow_custom_value=True, elem_id="model", min_width=180)
                self.base_url = gr.Textbox(label="Base URL（OpenAI 兼容接口）", placeholder="https://api.openai.com/v1",
                                           visible=False, elem_id="base-url", min_width=220)
            with gr.Row():
                self.api_key = gr.Textbox(label="API Key", type="password", placeholder=NO_KEY_HINT,
                                          elem_id="api-key", min_width=220, interactive=False)
                self.key_status = gr.Markdown("离线演示模型不需要密钥。", elem_id="key-status")
                self.clear_key = gr.Button("清除本会话密钥", size="sm", min_width=120, visible=False)
            with gr.Row():
                self.temperature = gr.Slider(0, 2, value=0, step=0.1, label="temperature", min_width=160)
                self.max_turns = gr.Slider(1, 12, value=6, step=1, label="最多轮数 max_turns", min_width=160)
                self.stream = gr.Checkbox(value=False, label="流式输出（逐段显示）", elem_id="stream", min_width=140)
            self.server_keys = ServerKeyPanel(self.secrets, accordion, self.provider)
            # Remember the key in this browser / forget it / clear what this page keeps (browser_memory.py).
            self.memory = SettingsControls()
        # The typed key: server-side only, one per browser session.
        self.key_state = gr.State("")
        # Settings field -> the control that sets it; handlers read them by name (read()).
        self.fields = MappingProxyType({"provider": self.provider, "model": self.model, "base_url": self.base_url,
                                        "temperature": self.temperature, "max_turns": self.max_turns,
                                        "stream": self.stream})
        self.components = (*self.fields.values(), self.key_state)
        self._wire()

    def read(self, values: Mapping) -> tuple[Settings, str]:
        """Handler side: {component: value} (of an event whose inputs include `components`)
        -> (Settings, the session's typed key)."""
        return settings_from({name: values[component] for name, component in self.fields.items()},
                             values[self.key_state])

    def _wire(self):
        secrets = self.secrets

        def on_provider(provider, session_key):
            models = model_choices(provider, secrets)
            offline = provider == "offline"
            hint = SERVER_KEY_HINT if server_has_key(provider, secrets) else NO_KEY_HINT
            return (gr.update(choices=models, value=models[0] if models else ""),
                    gr.update(visible=provider == "openai",
                              placeholder="使用服务器配置的地址" if secrets.get(BASE_URL_ENV.get(provider, "")) else "https://api.openai.com/v1"),
                    gr.update(interactive=not offline, placeholder="离线模型不需要密钥" if offline else hint, value=""),
                    key_status(provider, session_key, secrets),
                    gr.update(visible=bool(session_key)))

        # Kept: browser_memory puts a restored model back after this handler resets it.
        self.provider_changed = self.provider.change(
            on_provider, [self.provider, self.key_state],
            [self.model, self.base_url, self.api_key, self.key_status, self.clear_key],
            api_visibility="private", show_progress="hidden")

        def store_key(typed, session_key, provider):
            # The box is emptied at once; only the status line goes back to the browser.
            new_key = (typed or "").strip() or session_key
            return "", new_key, key_status(provider, new_key, secrets), gr.update(visible=bool(new_key))

        for event in (self.api_key.submit, self.api_key.blur):
            event(store_key, [self.api_key, self.key_state, self.provider],
                  [self.api_key, self.key_state, self.key_status, self.clear_key],
                  api_visibility="private", show_progress="hidden")

        def forget_key(provider):
            return "", key_status(provider, "", secrets), gr.update(visible=False)

        self.clear_key.click(forget_key, [self.provider], [self.key_state, self.key_status, self.clear_key],
                             api_visibility="private")


def key_status(provider: str, session_key: str, secrets: Mapping[str, str]) -> str:
    if provider == "offline":
        return "离线演示模型不需要密钥。"
    if session_key:
        return "🔑 已保存你输入的密钥（只在服务器端本会话内存中，页面上不会再显示）。"
    if server_has_key(provider, secrets):
        return "🔑 " + SERVER_KEY_HINT + "（不会显示）。"
    return "需要密钥：在上面的框里输入后按回车。"


def settings_from(values: Mapping[str, Any], session_key: str = "") -> tuple[Settings, str]:
    """The panel's values by field name -> (Settings, session key), each value made sane."""
    settings = Settings(provider=values.get("provider") or "offline", model=(values.get("model") or "").strip(),
                        base_url=(values.get("base_url") or "").strip(),
                        temperature=float(values.get("temperature") or 0), max_turns=int(values.get("max_turns") or 6),
                        stream=bool(values.get("stream")))
    return settings, session_key or ""
