"""From the model settings to a client: the one place that decides which key and which address a
run uses, and what a server key may do.

Keys: a key configured on the server (Space secrets, handed in by app.py after sealing) is used
but never shown, and only ever sent to the server's own endpoint, never to a base URL typed in the
page; on it the class code and the meter apply (server_keys.py). A key typed by a student is used
for that student's runs only. A typed base URL passes the outbound check (outbound.py) first.
A local preset (Ollama, vLLM, LM Studio) runs with its placeholder key when no other key applies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlsplit

import llm_clients
from i18n import tr
from provider_presets import PRESETS

from access import outbound, server_keys

# A model chosen on the server (GLM_MODEL / OPENAI_MODEL) is offered first.
MODEL_ENV = {"glm": "GLM_MODEL", "openai": "OPENAI_MODEL"}
KEY_ENV = {"glm": "ZHIPUAI_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"glm": "ZHIPUAI_BASE_URL", "openai": "OPENAI_BASE_URL"}


@dataclass(frozen=True)
class Settings:
    provider: str = "offline"
    model: str = ""
    base_url: str = ""
    temperature: float = 0.0
    max_turns: int = 6
    stream: bool = False
    max_tokens: int = 1024    # the answer's length limit sent to the endpoint (0 = not sent)
    round_seconds: float = 60.0   # one round's wall-clock limit, kept by the client
    preset: str = ""          # provider_presets key chosen in 预设 ("" = none); decides the local placeholder key

    def public(self) -> dict:
        """What may be shown or exported: everything except keys."""
        return {"provider": self.provider, "model": self.model or default_model(self.provider),
                "base_url": self.base_url, "temperature": self.temperature,
                "max_turns": self.max_turns, "stream": self.stream, "max_tokens": self.max_tokens,
                "round_seconds": self.round_seconds}


def model_choices(provider: str, secrets: Mapping[str, str] | None = None) -> list[str]:
    chosen = (secrets or {}).get(MODEL_ENV.get(provider, ""), "")
    return ([chosen] if chosen else []) + [m for m in llm_clients.MODEL_SUGGESTIONS.get(provider, []) if m != chosen]


def default_model(provider: str, secrets: Mapping[str, str] | None = None) -> str:
    return (model_choices(provider, secrets) or [""])[0]


def model_box(provider: str, secrets: Mapping[str, str] | None = None, model: str | None = None) -> dict:
    """The model box for this provider: its suggestions, showing `model` or else the default."""
    return {"choices": model_choices(provider, secrets), "value": model or default_model(provider, secrets)}


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


def local_placeholder(settings: Settings, base_url: str | None) -> str:
    """The placeholder key of a local preset (Ollama, vLLM, LM Studio: not a secret) for a
    typed base URL; "" otherwise. Only used when no other key applies, so it never stands
    in for, or displaces, a server key."""
    preset = PRESETS.get(settings.preset)
    if preset is None or not preset.local or preset.provider != settings.provider:
        return ""
    return preset.placeholder_key if (settings.base_url or "").strip() and base_url else ""


def missing_key_message(settings: Settings, secrets: Mapping[str, str], key_box: str = "") -> str:
    """Why there is no key for this run, and what to do (a server key configured for
    another address is named as such: it does not follow a preset or a typed URL).
    key_box: where the page takes this model's key (default: «Model settings»)."""
    box = key_box or tr("「模型设置」", "«Model settings»")
    preset = PRESETS.get(settings.preset)
    where = (tr("你自己的 {name} API Key（{src}）", "your own {name} API key ({src})").format(
        name=preset.name, src=preset.key_from) if preset else tr("你自己的 API Key", "your own API key"))
    if server_has_key(settings.provider, secrets) and settings.base_url:
        host = urlsplit(settings.base_url).hostname or settings.base_url
        return tr("没有可用的 API Key：服务器配置的密钥只发往服务器为它设定的地址，不会发往 {host}。"
                  "请在{box}里填写{where}后按回车，或改用「离线演示模型」。",
                  "No API key to use: the server's key goes only to the address set for it on the server, never to "
                  "{host}. Enter {where} in {box} and press Enter, or use the «Offline demo model»."
                  ).format(host=host, where=where, box=box)
    return tr("没有可用的 API Key：请在{box}里填写{where}（服务器没有为这个地址配置密钥）。",
              "No API key to use: enter {where} in {box} (the server has no key for this address)."
              ).format(where=where, box=box)


def make_client(settings: Settings, session_key: str, secrets: Mapping[str, str], mistake: str | None = None,
                request: Any = None, class_code: str | None = None, key_box: str = ""):
    """A client for the chosen provider (llm_clients.make_client); raises LLMError /
    ValueError with a Chinese message when something is missing or not allowed
    (access/: typed base URLs on a public server, the class code and meter on server keys).
    key_box: where the page takes this model's key, for the message when there is none."""
    api_key, base_url = resolve_credentials(settings, session_key, secrets)
    placeholder = "" if api_key else local_placeholder(settings, base_url)
    api_key = api_key or placeholder or None
    if settings.provider != "offline" and not api_key:
        raise ValueError(missing_key_message(settings, secrets, key_box))
    if settings.provider == "openai" and not base_url:
        base_url = None  # the SDK's default endpoint
    on_server_key = settings.provider != "offline" and not session_key and not placeholder
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
        max_tokens=settings.max_tokens or None,
        round_seconds=settings.round_seconds or None,
    )
    return server_keys.policy_for(secrets).metered(client, request) if on_server_key else client


def whole(value: Any, default: int, low: int, high: int) -> int:
    """A number from the page or an API call, clamped to [low, high]; absent or not a number -> default."""
    try:
        return min(high, max(low, int(float(value))))
    except (TypeError, ValueError, OverflowError):
        return default


def settings_from(values: Mapping[str, Any], session_key: str = "") -> tuple[Settings, str]:
    """The panel's values by field name -> (Settings, session key), each value made sane."""
    settings = Settings(provider=values.get("provider") or "offline", model=(values.get("model") or "").strip(),
                        base_url=(values.get("base_url") or "").strip(),
                        temperature=float(values.get("temperature") or 0), max_turns=int(values.get("max_turns") or 6),
                        stream=bool(values.get("stream")), preset=values.get("preset") or "",
                        max_tokens=whole(values.get("max_tokens"), 1024, 0, 32_768),
                        round_seconds=float(whole(values.get("round_seconds"), 60, 5, 600)))
    return settings, session_key or ""
