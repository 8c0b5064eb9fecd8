"""工具调用教学工坊: assembles the lesson tabs and launches the page.

Order matters. API keys are moved out of the environment (and the process is made
non-dumpable) before gradio is imported, so no thread, helper or child process that
gradio starts can ever see them. Only then is gradio imported, with telemetry off.
"""
import os
import threading

import sandbox

SERVER_SECRETS = sandbox.seal_secrets([
    "ZHIPUAI_API_KEY", "ZHIPUAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
    "OPENAI_MODEL", "GLM_MODEL", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
])
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

from types import MappingProxyType  # noqa: E402

import gradio as gr  # noqa: E402

from lessons import api, function_calling_tab, react_tab, registry_tab  # noqa: E402
from lessons.settings_panel import SettingsPanel  # noqa: E402

SERVER_SECRETS = MappingProxyType(dict(SERVER_SECRETS))
PORT = int(os.environ.get("GRADIO_SERVER_PORT", "7860"))
# Events of one kind that may run at once (a classroom of ~40 clicking now and then).
CONCURRENCY_LIMIT = int(os.environ.get("TOOL_WORKSHOP_CONCURRENCY", "12"))
MAX_UPLOAD = "8mb"

# System fonts only: the page loads nothing from the internet.
THEME = gr.themes.Default(
    primary_hue="indigo",
    font=["system-ui", "-apple-system", "Segoe UI", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei",
          "Noto Sans CJK SC", "Noto Sans", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono", "Noto Sans Mono CJK SC",
               "DejaVu Sans Mono", "monospace"],
)
CSS = """
.gradio-container { max-width: 1440px !important; }
#header h1 { margin-bottom: 0.1em; }
#sandbox-notice { font-size: 0.85em; color: var(--body-text-color-subdued); }
.tw-status p { margin: 0.2em 0; }
@media (max-width: 640px) {
  .gradio-container { padding: 4px !important; }
  #header h1 { font-size: 1.4em; }
  button[role=tab] { padding-left: 6px !important; padding-right: 6px !important; font-size: 0.88em !important; }
}
"""
HEADER = ("# 🧰 工具调用教学工坊\n"
          "从正则 ReAct 到工具注册，再到 Function Calling：改动左边的工具源码，一步一步看清模型和工具之间到底传了什么。")


def build_demo(secrets=None) -> gr.Blocks:
    secrets = SERVER_SECRETS if secrets is None else MappingProxyType(dict(secrets))
    with gr.Blocks(title="工具调用教学工坊") as demo:
        gr.Markdown(HEADER, elem_id="header")
        notice = gr.Markdown(elem_id="sandbox-notice")
        settings = SettingsPanel(secrets)
        with gr.Tabs():
            tabs = [react_tab.build(settings), registry_tab.build(settings), function_calling_tab.build(settings)]
        api.register(secrets)
        for tab in tabs:
            schema = tab["schema"]
            demo.load(tab["refresh"], schema.inputs, schema.outputs, api_visibility="private", show_progress="hidden")
        demo.load(lambda: sandbox.status()["notice"], None, [notice], api_visibility="private", show_progress="hidden")
    return demo


def launch(demo=None, *, server_name=None, server_port=PORT, prevent_thread_lock=False, quiet=False):
    """Serves the page: loopback locally, 0.0.0.0 on a Hugging Face Space."""
    host = server_name or ("0.0.0.0" if os.environ.get("SPACE_ID") else "127.0.0.1")
    sandbox.configure(server_name=host)
    demo = demo or build_demo()
    demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT)
    # Warm the sandbox's worker pool while the server starts, so the first schema is quick.
    threading.Thread(target=sandbox.start, name="sandbox-warmup", daemon=True).start()
    demo.launch(server_name=host, server_port=server_port, ssr_mode=False, share=False, theme=THEME, css=CSS,
                prevent_thread_lock=prevent_thread_lock, quiet=quiet, max_file_size=MAX_UPLOAD, show_error=True)
    return demo


def main():
    launch()


if __name__ == "__main__":
    main()
