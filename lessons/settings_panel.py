"""模型设置: one panel shared by every tab (provider, model, base URL, key, temperature,
max turns, streaming); access/clients.py turns what it holds into a client.

Keys: a key configured on the server (Space secrets, handed in by app.py after
sealing) is used but never shown; a key typed by a student goes into that session's
gr.State on the server, the password box is emptied, and nothing ever sends it back
(unless the student ticks 在此浏览器记住我的密钥: then browser_memory.py stores it in the browser once).
Each lesson is its own page: the key is also held under a handle (access/typed_keys.py) that
the browser tab keeps, so the student's other lesson pages in that tab use it too.
A server key is only ever sent to the server's own endpoint, never to a base URL
typed in the page.

预设 (code/provider_presets.py) fills provider, base URL and model and shows a card of
what that endpoint supports; it never brings a key. A local preset (Ollama, vLLM,
LM Studio) runs with its placeholder key when no other key applies.
"""
from __future__ import annotations

import html
from types import MappingProxyType
from typing import Mapping

import gradio as gr

from i18n import now, tr

from access.typed_keys import TYPED_KEYS
from memory.browser_memory import KEEP_HANDLE_JS, KEY_REMEMBERED, MARK_HANDLE_JS, TYPED_ELSEWHERE, SettingsControls
from serving.page_events import PRIVATE, SILENT, on_choice, value_box
from lessons.server_key_panel import ServerKeyPanel
from provider_presets import PRESETS, Preset, settings_for

from access.clients import (BASE_URL_ENV, Settings, default_model, local_placeholder, model_box, model_choices,
                            resolve_credentials, server_has_key, settings_from)

PROVIDERS = [(tr("离线演示模型", "Offline demo model"), "offline"), (tr("智谱 GLM", "Zhipu GLM"), "glm"),
             (tr("OpenAI 兼容接口", "OpenAI-compatible API"), "openai")]
NO_KEY_HINT = tr("仅保存在当前浏览器会话（服务器端内存），不会回传、不会记录",
                "Kept only for this browser session (in the server's memory), never sent back, never logged")
SERVER_KEY_HINT = tr("已使用服务器配置的密钥", "Using the key configured on the server")
# Where the session's key came from -> its status line; a key typed on this page has key_status's.
KEY_ORIGINS = {"typed": None, "tab": TYPED_ELSEWHERE, "remembered": KEY_REMEMBERED}


def model_update(provider: str, secrets: Mapping[str, str] | None = None, model: str | None = None) -> dict:
    """The model box for this provider: its suggestions, showing `model` or else the default."""
    return gr.update(**model_box(provider, secrets, model))


class SettingsPanel:
    """The 模型设置 accordion. Handlers take `components` as inputs and `read()` the settings by name."""

    def __init__(self, secrets: Mapping[str, str] | None = None):
        self.secrets = MappingProxyType(dict(secrets or {}))
        with gr.Accordion(tr("⚙️ 模型设置", "⚙️ Model settings"), open=False, elem_id="settings-panel") as accordion:
            with gr.Row():
                self.preset = gr.Dropdown(preset_choices(), value=NO_PRESET, label=tr("预设（常用平台：填好提供方、地址和模型）",
                                                   "Presets (common platforms: fills in provider, address and model)"),
                                          elem_id="preset", min_width=260)
            self.preset_card = gr.Markdown(visible=False, elem_id="preset-card")
            with gr.Row():
                self.provider = gr.Dropdown(PROVIDERS, value="offline", label=tr("提供方", "Provider"), elem_id="provider", min_width=180)
                self.model = gr.Dropdown(model_choices("offline"), value=default_model("offline"), label=tr("模型（可直接输入）", "Model (type any name)"),
                                         allow_custom_value=True, elem_id="model", min_width=180)
                self.base_url = gr.Textbox(label=tr("Base URL（OpenAI 兼容接口）", "Base URL (OpenAI-compatible API)"), placeholder="https://api.openai.com/v1",
                                           visible=False, elem_id="base-url", min_width=220)
            with gr.Row():
                self.api_key = gr.Textbox(label="API Key", type="password", placeholder=NO_KEY_HINT,
                                          elem_id="api-key", min_width=220, interactive=False)
                self.key_status = gr.Markdown(tr("离线演示模型不需要密钥。", "The offline demo model needs no key."), elem_id="key-status")
                self.clear_key = gr.Button(tr("清除本会话密钥", "Clear this session's key"), size="sm", min_width=120, visible=False)
            with gr.Row():
                self.temperature = gr.Slider(0, 2, value=0, step=0.1, label="temperature", min_width=160)
                self.max_turns = gr.Slider(1, 12, value=6, step=1, label=tr("最多轮数 max_turns", "Most rounds max_turns"), min_width=160)
                self.stream = gr.Checkbox(value=False, label=tr("流式输出（逐段显示）", "Streaming (shown as it arrives)"), elem_id="stream", min_width=140)
            with gr.Row():
                self.max_tokens = gr.Slider(0, 4096, value=1024, step=16, label=tr("每轮最多写 max_tokens 个 token（0 = 不限，由服务端定）",
                                               "At most max_tokens tokens per round (0 = no limit: the server decides)"),
                                            elem_id="max-tokens", min_width=220)
                self.round_seconds = gr.Slider(5, 300, value=60, step=5, label=tr("每轮时限（秒）：超过就停止等待", "Time limit per round (s): past it, stop waiting"),
                                               elem_id="round-seconds", min_width=220)
            # The browser tab's handle of what it typed (access/typed_keys.py): the browser may hold this one.
            self.key_handle = value_box(elem_id="key-handle")
            self.server_keys = ServerKeyPanel(self.secrets, accordion, self.provider, self.key_handle)
            # Remember the key in this browser / forget it / clear what this page keeps (browser_memory.py).
            self.memory = SettingsControls()
        # The typed key: server-side only, one per browser session (and held for the tab's other pages).
        self.key_state = gr.State("")
        # Where that key came from, for the status line: KEY_ORIGINS.
        self.key_origin = gr.State("typed")
        # Settings field -> the control that sets it; handlers read them by name (read()).
        self.fields = MappingProxyType({"provider": self.provider, "model": self.model, "base_url": self.base_url,
                                        "temperature": self.temperature, "max_turns": self.max_turns,
                                        "stream": self.stream, "max_tokens": self.max_tokens,
                                        "round_seconds": self.round_seconds})
        self.components = (*self.fields.values(), self.preset, self.key_state)
        self._wire()

    def read(self, values: Mapping) -> tuple[Settings, str]:
        """Handler side: {component: value} (of an event whose inputs include `components`)
        -> (Settings, the session's typed key)."""
        named = {name: values.get(component) for name, component in self.fields.items()}
        return settings_from({**named, "preset": values.get(self.preset, NO_PRESET)}, values[self.key_state])

    def _wire(self):
        secrets = self.secrets
        # The key's handle is about to change: a lesson link waits until the tab has stored it. Wired
        # first, since the page starts a trigger's listeners one after the other.
        gr.on([self.api_key.submit, self.api_key.blur, self.clear_key.click], None, None, None, js=MARK_HANDLE_JS,
              **SILENT)

        # The model box is not touched here, neither its value nor its choices: whatever changed
        # the provider sets both in the same update (a provider picked by hand: its suggestions,
        # below; a preset: its models; a page restored from the browser: the saved model). An
        # update from here arrives later, computed from the preset of its moment: after a second
        # preset of the same provider it put the first one's models back under the second's
        # model. Nor is the key box's value: it is emptied whenever a key is stored (Enter, or
        # leaving the box, as picking a provider does), and an update arriving late would wipe
        # what a student had begun to type.
        def on_provider(provider):
            offline = provider == "offline"
            hint = SERVER_KEY_HINT if server_has_key(provider, secrets) else NO_KEY_HINT
            return (gr.update(visible=provider == "openai",
                              placeholder=tr("使用服务器配置的地址", "Using the address configured on the server")
                              if secrets.get(BASE_URL_ENV.get(provider, "")) else "https://api.openai.com/v1"),
                    gr.update(interactive=not offline,
                              placeholder=tr("离线模型不需要密钥", "The offline model needs no key") if offline else now(hint)))

        self.provider.change(on_provider, [self.provider], [self.base_url, self.api_key],
                             api_visibility=PRIVATE, show_progress="hidden")
        self._wire_presets()

        def store_key(typed, session_key, handle):
            # The box is emptied at once; only the key's handle goes back to the browser (the status
            # line follows the key: wire_status).
            typed = (typed or "").strip()
            new_key = typed or session_key
            if typed:
                handle = TYPED_KEYS.hold(typed, handle)
            return "", new_key, handle, "typed" if typed else gr.skip()

        for event in (self.api_key.submit, self.api_key.blur):
            storing = event(store_key, [self.api_key, self.key_state, self.key_handle],
                            [self.api_key, self.key_state, self.key_handle, self.key_origin],
                            api_visibility=PRIVATE, show_progress="hidden")
            storing.then(None, [self.key_handle], None, js=KEEP_HANDLE_JS, api_visibility=PRIVATE,
                         show_progress="hidden")

        def forget_key(handle):
            handle = TYPED_KEYS.hold("", handle)      # the tab's class code, if any, stays
            return "", handle

        self.clear_key.click(forget_key, [self.key_handle], [self.key_state, self.key_handle],
                             api_visibility=PRIVATE).then(None, [self.key_handle], None, js=KEEP_HANDLE_JS,
                                                          api_visibility=PRIVATE, show_progress="hidden")

    def _wire_presets(self):
        """预设: choosing one fills provider, base URL and model and shows its card; choosing a
        provider by hand leaves the preset. No key moves: the run's key is decided by
        resolve_credentials from the address, whatever the preset."""
        secrets = self.secrets

        def on_preset(key):
            if key not in PRESETS:
                return {self.preset_card: gr.update(value="", visible=False)}
            values = settings_for(key)
            return {self.provider: values["provider"],
                    self.model: gr.update(choices=list(PRESETS[key].models), value=values["model"]),
                    self.base_url: gr.update(value=values["base_url"], visible=values["provider"] == "openai"),
                    self.preset_card: gr.update(value=preset_card(key, secrets), visible=True)}

        on_choice(self.preset, on_preset, [], [self.provider, self.model, self.base_url, self.preset_card])

        def on_pick(provider):
            return NO_PRESET, gr.update(visible=False), model_update(provider, secrets)

        on_choice(self.provider, on_pick, [], [self.preset, self.preset_card, self.model])

    def wire_status(self):
        """The key's status line and 清除本会话密钥 have this one writer, run again after whatever
        they follow from changed: with several writers, one computed from the key before it was
        cleared could finish after the clearing and leave "🔑" on screen over no key. The page
        runs it once more after a run in progress ("always_last"), which reads the session's
        key as it is by then. Wire it after the browser memory, whose marks of a changed key must
        come at once: the page starts a trigger's listeners one after the other."""
        secrets = self.secrets

        def status(provider, session_key, origin, base_url, preset):
            line = KEY_ORIGINS.get(origin) if session_key else None
            return (now(line) if line and provider != "offline" else
                    key_status(provider, session_key, secrets, base_url, preset)), gr.update(visible=bool(session_key))

        # The card changes with a preset's address (which may come with the same provider).
        gr.on([self.provider.change, self.preset.change, self.preset_card.change, self.base_url.submit,
               self.base_url.blur, self.key_state.change, self.key_origin.change], status,
              [self.provider, self.key_state, self.key_origin, self.base_url, self.preset],
              [self.key_status, self.clear_key], trigger_mode="always_last", api_visibility=PRIVATE,
              show_progress="hidden")


def key_status(provider: str, session_key: str, secrets: Mapping[str, str], base_url: str = "",
               preset: str = "") -> str:
    """The line next to the key box: which key a run would use for this provider, base URL and preset."""
    if provider == "offline":
        return tr("离线演示模型不需要密钥。", "The offline demo model needs no key.")
    if session_key:
        return tr("🔑 已保存你输入的密钥（只在服务器端本会话内存中，页面上不会再显示）。",
                  "🔑 Your key is kept (only in this session's memory on the server; the page never shows it again).")
    settings = Settings(provider=provider, base_url=(base_url or "").strip(), preset=preset or "")
    server_key, address = resolve_credentials(settings, "", secrets)
    if server_key:
        return "🔑 " + now(SERVER_KEY_HINT) + tr("（不会显示）。", " (never shown).")
    placeholder = local_placeholder(settings, address)
    if placeholder:
        return tr("本机服务不需要密钥：运行时用占位 Key「{p}」（不是秘密）。服务启动时要求了 Key 就填在上面。",
                  "A local service needs no key: runs use the placeholder key «{p}» (not a secret). If the service "
                  "was started with a key, enter it above.").format(p=placeholder)
    if server_has_key(provider, secrets):
        return tr("需要你自己的密钥：服务器配置的密钥只发往服务器设定的地址，不会发往这里。在上面的框里输入后按回车。",
                  "Your own key is needed: the server's key goes only to the address set on the server, not here. "
                  "Enter it in the box above and press Enter.")
    return tr("需要密钥：在上面的框里输入后按回车。", "A key is needed: enter it in the box above and press Enter.")


# ---------------------------------------------------------------- 预设 (provider_presets)

NO_PRESET = ""


SUPPORT = {True: tr("支持", "yes"), False: tr("不支持", "no"), None: tr("未确认", "unconfirmed")}
UNCONFIRMED = tr("（未确认）", " (unconfirmed)")


def preset_choices() -> list[tuple[str, str]]:
    """The 预设 dropdown: cloud endpoints first, then the ones that run on your own machine."""
    ordered = sorted(PRESETS.values(), key=lambda p: p.local)
    return [(tr("不用预设（自己选提供方、填地址）", "No preset (choose the provider, enter the address)"), NO_PRESET)] + [
        ((tr("本机", "local") if p.local else tr("云端", "cloud")) + " · " + p.name.replace("（本机）", ""), p.key)
        for p in ordered]


def _support(preset: Preset, field: str) -> str:
    value = getattr(preset, field)
    doubt = now(UNCONFIRMED) if field in preset.unconfirmed and value is not None else ""
    return now(SUPPORT[value]) + doubt


def preset_card(key: str, secrets: Mapping[str, str]) -> str:
    """The short Chinese card under 预设: SDK, where the key comes from, what the endpoint
    supports ("未确认" where no official document says so), and the note."""
    preset = PRESETS[key]
    choices = " / ".join(tr("指定函数", "a named function") if c == "function" else c for c in preset.tool_choice)
    doubt = now(UNCONFIRMED) if "tool_choice" in preset.unconfirmed else ""
    address = (f"`{preset.base_url}`" if preset.base_url else
               tr("SDK 默认地址（服务器为智谱配置了地址时用那个）",
                  "the SDK's default address (or the one the server configured for Zhipu)"))
    settings = Settings(**settings_for(key), preset=key)
    if preset.local:
        key_line = tr("可以不填，运行时自动用占位 Key「{p}」（不是秘密）；平台说明：{src}。端口或机器不同就改 Base URL。",
                      "may stay empty: runs use the placeholder key «{p}» (not a secret); the platform says: {src}. "
                      "Another port or machine: change the Base URL.").format(p=preset.placeholder_key,
                                                                              src=preset.key_from)
    elif resolve_credentials(settings, "", secrets)[0]:
        key_line = tr("服务器为这个地址配置了密钥，可以不填；也可以填自己的（{src}）。",
                      "the server has a key for this address, so it may stay empty; or enter your own ({src})."
                      ).format(src=preset.key_from)
    else:
        key_line = tr("填你自己的：{src}。服务器配置的密钥不会发往这个地址。",
                      "enter your own: {src}. The server's key is never sent to this address.").format(src=preset.key_from)
    return html.escape("\n".join([
        tr("**{name}** · 用 `{sdk}` SDK · Base URL {address}", "**{name}** · `{sdk}` SDK · Base URL {address}").format(
            name=preset.name, sdk=preset.sdk, address=address),
        tr("- **Key**：", "- **Key**: ") + key_line,
        tr("- **支持**：tool_choice {c}{d} · parallel_tool_calls {p} · strict {s} · 流式工具调用 {t}",
           "- **Supports**: tool_choice {c}{d} · parallel_tool_calls {p} · strict {s} · streamed tool calls {t}").format(
            c=choices, d=doubt, p=_support(preset, "parallel_tool_calls"), s=_support(preset, "strict"),
            t=_support(preset, "streams_tool_calls")),
        tr("- **提醒**：", "- **Note** (the course's preset notes are in Chinese): ") + preset.note,
        tr("- 模型名是建议（能调用工具的在前），可以直接改。逐条说明见项目里的 docs/providers.md"
           "「各平台」中标着 `{key}` 的一节；没网时可用 `python code/offline_server.py --accent {accent}` 预演。",
           "- The model names are suggestions (those that can call tools first): change them freely. Each platform "
           "is described in the project's docs/providers.md, in the section marked `{key}`; without a network, "
           "rehearse with `python code/offline_server.py --accent {accent}`.").format(key=key, accent=preset.accent),
    ]), quote=False)
