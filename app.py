"""工具调用教学工坊: assembles the lesson tabs and launches (placeholder until the lessons land)."""
import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr

with gr.Blocks(title="工具调用教学工坊") as demo:
    gr.Markdown("# 工具调用教学工坊\n课程页面正在搭建中。")

if __name__ == "__main__":
    demo.launch(server_name="127.0.0.1", server_port=7860, ssr_mode=False, share=False)
