"""常用模型平台的预设：Base URL、建议的模型名、Key 从哪里来、支持哪些工具调用参数。

"兼容 OpenAI"只说明请求长得一样；每家支持哪些参数、回答里有什么小毛病，都不一样。
这里把课上常用的几家写成数据，方便对照（详细说明见 docs/providers.md）：

    from provider_presets import PRESETS, settings_for, script_env
    settings_for("deepseek")   # -> {"provider": "openai", "model": "deepseek-chat", "base_url": "https://api.deepseek.com/v1"}
    script_env("deepseek")     # -> 自己跑 code/*.py 时要设的环境变量

几条规矩：
  - 预设只给地址和模型名，从不给 Key。Key 要么你自己填，要么是服务器为那个地址配好的
    （选了预设，服务器的 Key 也不会跟着跑到别的地址去）。
  - 文档里查不到、只是社区反馈的事实，列在 unconfirmed 里；值为 None 表示"不知道"，不是"不支持"。
  - accent 是离线服务器里对应的口音：python code/offline_server.py --accent <它>，没网也能预演。
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    key: str                     # 预设的名字
    name: str                    # 显示名
    provider: str                # llm_clients.make_client 的 provider："glm" 用 zhipuai SDK，"openai" 用 openai SDK
    base_url: str                # "" 表示用 SDK 的默认地址
    models: tuple                # 建议的模型名（能调用工具的在前）；平台常改名，界面里可以直接改
    key_from: str                # 去哪里拿 Key
    tool_choice: tuple           # 支持的 tool_choice 取值（"指定函数" 写作 "function"）
    parallel_tool_calls: bool | None   # 能不能用 parallel_tool_calls 参数；None = 没查到
    strict: bool | None          # 能不能用 tools[].function.strict；None = 没查到
    streams_tool_calls: bool | None    # 流式输出时能不能拿到工具调用；None = 没查到
    accent: str                  # offline_server.py --accent 的名字
    note: str                    # 一句话提醒
    unconfirmed: tuple = ()      # 上面哪些字段没能在官方文档里确认
    local: bool = False          # 本机服务：不需要真 Key，随便填一个占位即可
    placeholder_key: str = ""    # 本机服务用的占位 Key（不是秘密）

    @property
    def sdk(self):
        return "zhipuai" if self.provider == "glm" else "openai"


PRESETS = {p.key: p for p in [
    Preset("glm", "智谱 GLM", "glm", "", ("glm-4.5-flash", "glm-4-flash", "glm-4.6"),
           "open.bigmodel.cn 控制台 → API Keys；环境变量 ZHIPUAI_API_KEY",
           tool_choice=("auto",), parallel_tool_calls=None, strict=None, streams_tool_calls=None, accent="glm",
           note="历史里 content 为 \"\" 又带 tool_calls 会报 1214（本课客户端已处理）；tool_choice 只认 auto；"
                "glm-4.5 系列默认会思考（reasoning_content）；边生成边流出工具参数只写明了 glm-4.6（tool_stream=True）。",
           unconfirmed=("parallel_tool_calls", "strict", "streams_tool_calls")),
    Preset("deepseek", "DeepSeek", "openai", "https://api.deepseek.com/v1", ("deepseek-chat", "deepseek-reasoner"),
           "platform.deepseek.com → API keys",
           tool_choice=("auto", "none", "required", "function"), parallel_tool_calls=None, strict=False,
           streams_tool_calls=True, accent="deepseek",
           note="思考模式下，带工具调用那一轮的 reasoning_content 要原样发回（本课客户端已处理）；"
                "strict 只在 https://api.deepseek.com/beta 上可用；余额不足是 HTTP 402。",
           unconfirmed=("parallel_tool_calls",)),
    Preset("dashscope", "通义千问（阿里云百炼 兼容模式）", "openai", "https://dashscope.aliyuncs.com/compatible-mode/v1",
           ("qwen-plus", "qwen-turbo", "qwen-max"), "百炼控制台 → API-KEY（DASHSCOPE_API_KEY）",
           tool_choice=("auto", "none", "function"), parallel_tool_calls=True, strict=None, streams_tool_calls=True,
           accent="dashscope",
           note="工具调用旁的 content 可能是 \"\"；流式里后续分片带空 id；错误体里有 request_id，找客服时报它。",
           unconfirmed=("tool_choice", "strict")),
    Preset("moonshot", "Kimi（月之暗面）", "openai", "https://api.moonshot.cn/v1", ("kimi-k2.6", "kimi-k2.5", "moonshot-v1-8k"),
           "platform.moonshot.cn → API Key 管理（MOONSHOT_API_KEY）",
           tool_choice=("auto", "none"), parallel_tool_calls=None, strict=None, streams_tool_calls=True,
           accent="moonshot",
           note="思考模型不接受强制调用（tool_choice 为 required 或指定函数会 400），只用 auto。",
           unconfirmed=("tool_choice", "parallel_tool_calls", "strict", "models")),
    Preset("siliconflow", "硅基流动 SiliconFlow", "openai", "https://api.siliconflow.cn/v1",
           ("Qwen/Qwen2.5-7B-Instruct", "deepseek-ai/DeepSeek-V3", "THUDM/glm-4-9b-chat"),
           "cloud.siliconflow.cn → API 密钥",
           tool_choice=("auto", "none", "required", "function"), parallel_tool_calls=None, strict=None,
           streams_tool_calls=True, accent="siliconflow",
           note="同一个地址转发很多家开源模型：能不能调工具要看具体模型；推理模型会带 reasoning_content。",
           unconfirmed=("tool_choice", "parallel_tool_calls", "strict", "streams_tool_calls")),
    Preset("volcengine", "火山方舟（豆包等）", "openai", "https://ark.cn-beijing.volces.com/api/v3",
           ("doubao-seed-1-6-250615", "doubao-1-5-pro-32k-250115"),
           "火山方舟控制台 → API Key 管理（ARK_API_KEY）；模型名也可以填推理接入点 ID（ep-…）",
           tool_choice=("auto", "none", "required"), parallel_tool_calls=None, strict=None, streams_tool_calls=True,
           accent="volcengine",
           note="模型名常带日期后缀，以控制台里开通的为准；思考模型会带 reasoning_content。",
           unconfirmed=("tool_choice", "parallel_tool_calls", "strict", "models")),
    Preset("ollama", "Ollama（本机）", "openai", "http://localhost:11434/v1", ("qwen3:8b", "qwen2.5:7b", "llama3.1:8b"),
           "不需要 Key：随便填一个（例如 ollama）",
           tool_choice=("auto",), parallel_tool_calls=None, strict=None, streams_tool_calls=True, accent="ollama",
           note="能不能调工具取决于模型模板（ollama show 模型名 --template 里要有 .Tools）；"
                "思考内容在 reasoning 字段或 <think> 里；tool_choice 等参数会被忽略。",
           unconfirmed=("tool_choice", "parallel_tool_calls", "strict"), local=True, placeholder_key="ollama"),
    Preset("vllm", "vLLM（本机或实验室服务器）", "openai", "http://localhost:8000/v1", ("Qwen/Qwen2.5-7B-Instruct",),
           "启动时给了 --api-key 就填那个，否则随便填（例如 EMPTY）",
           tool_choice=("auto", "none", "required", "function"), parallel_tool_calls=None, strict=None,
           streams_tool_calls=True, accent="vllm-no-parser",
           note="要原生工具调用，启动时必须加 --enable-auto-tool-choice --tool-call-parser <解析器>（Qwen 多用 hermes）；"
                "不加时 tool_choice=auto 会 400，模型会把调用写成文字。模型名就是 --served-model-name。",
           unconfirmed=("parallel_tool_calls", "strict"), local=True, placeholder_key="EMPTY"),
    Preset("llamacpp", "llama.cpp（llama-server，本机）", "openai", "http://localhost:8080/v1", ("local-model",),
           "启动时给了 --api-key 就填那个，否则随便填（例如 llama）",
           tool_choice=("auto", "none", "required"), parallel_tool_calls=None, strict=None, streams_tool_calls=True,
           accent="llamacpp-no-tools",
           note="要工具调用，启动时用 --jinja，聊天模板里得有 tools 的位置（模型自带的模板没有时用 --chat-template-file 换一个）；"
                "GET /props 的 chat_template_caps.supports_tools 说模板能不能写出 tools，本课在运行前会先读它。"
                "模板放不下 tools 时服务端不报错、悄悄丢掉它们。-np 1 只开一个槽：客户端放弃的请求不会继续占着 CPU。",
           unconfirmed=("tool_choice", "parallel_tool_calls", "strict"), local=True, placeholder_key="llama"),
    Preset("lmstudio", "LM Studio（本机）", "openai", "http://localhost:1234/v1", ("qwen2.5-7b-instruct",),
           "不需要 Key：随便填一个（例如 lm-studio）",
           tool_choice=("auto", "none", "required"), parallel_tool_calls=None, strict=None, streams_tool_calls=None,
           accent="vllm-no-parser",
           note="模型名以 LM Studio 里加载的为准；模型没有工具模板时调用会写成文字。",
           unconfirmed=("tool_choice", "parallel_tool_calls", "strict", "streams_tool_calls", "accent"),
           local=True, placeholder_key="lm-studio"),
]}


def settings_for(key, model=None):
    """选中一个预设 -> 设置面板的值 {"provider", "model", "base_url"}。纯函数，不含任何 Key。
    base_url 为 "" 时用 SDK（或服务器配置）的默认地址；服务器的 Key 只会发往服务器为它配置的地址。"""
    if key not in PRESETS:
        raise ValueError(f"没有名为 {key!r} 的预设，可选：{'、'.join(PRESETS)}")
    preset = PRESETS[key]
    return {"provider": preset.provider, "model": model or preset.models[0], "base_url": preset.base_url}


def script_env(key, model=None):
    """自己在命令行跑 code/*.py 时要设的环境变量（Key 那一项要你自己填）。"""
    settings = settings_for(key, model)
    if settings["provider"] == "glm":
        return {"ZHIPUAI_API_KEY": "<你的智谱 Key>", "GLM_MODEL": settings["model"]}
    key_value = PRESETS[key].placeholder_key or f"<你的 {PRESETS[key].name} Key>"
    return {"OPENAI_API_KEY": key_value, "OPENAI_BASE_URL": settings["base_url"], "OPENAI_MODEL": settings["model"]}


if __name__ == "__main__":
    for preset in PRESETS.values():
        print(f"{preset.name:<24} {preset.base_url or '(SDK 默认)':<52} {preset.models[0]}")
