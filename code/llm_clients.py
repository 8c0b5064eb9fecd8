"""向模型要一次回答的统一入口：离线规则模型 / 智谱 GLM（zhipuai SDK）/ 任意 OpenAI 兼容接口（openai SDK）。

    client = make_client("glm")                       # Key 从 ZHIPUAI_API_KEY 读
    done = client.complete(messages, tools=tools)     # -> Completion
    for piece in client.stream(messages, tools=tools):
        ...                                           # 先是若干增量 dict，最后一个是 Completion

为什么要自己包一层？三个后端的差别都收在这里，循环代码只认一种形状：
  - Completion.message 是规范化后的 assistant 消息，可以直接放回对话历史；
  - Completion.raw 是服务端原样发来的 JSON（课堂上要给学生看"真正的响应长什么样"）；
  - 任何失败都变成 LLMError，带 code 和一句告诉你该怎么办的中文；
  - 各家接口的"口音"（思考字段、缺 id、参数是对象……见 accents.py）修好后记在 Completion.accents 里；
    真模型常见的失败（没理 tool_choice、工具没送到模型面前、被截断、原地打转）也记在那里。
  - 每一轮有两道限：max_tokens（回答最多多长，发给服务端）和 round_seconds（这一轮最多等多久，客户端自己掐表）。
    学生自己的端点可能是个会一直写下去的小模型，没有这两道限，一轮就能跑上几十秒。
Key 只从参数或环境变量来，从不写进文件，也从不出现在错误信息里。
离线规则模型不是课程代码，在项目根目录的 offline/ 包里：只有选了它才导入，用真平台时不会加载。
"""
import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass, field

from accents import (StreamAssembler, answer_accents, error_fields, explain_error, template_accent, template_examples,
                     tidy, tidy_usage)

OFFLINE_MODEL = "offline-rule-model"          # 离线规则模型的名字：只在这里写，offline/ 和页面都从这里读
MODEL_SUGGESTIONS = {
    "offline": [OFFLINE_MODEL],
    "glm": ["glm-4.5-flash", "glm-4-flash", "glm-4.6"],   # 前两个免费，够上课用
    "openai": ["gpt-4o-mini", "gpt-4.1-mini", "deepseek-chat", "qwen-plus"],
}
GLM_BASE_URL = "https://open.bigmodel.cn/api/paas/v4"
OPENAI_BASE_URL = "https://api.openai.com/v1"


class LLMError(Exception):
    """code 是机器看的（auth / rate_limit / server / timeout / connection / bad_response / stream_cut / bad_request，
    以及 orphan_result：bad_request 里的一种，历史里有一条找不到调用的工具结果），
    str(error) 是给人看的中文，说清楚下一步怎么做。
    retry_without：服务端不支持某个参数时是它的名字（"tool_choice" / "parallel_tool_calls" / "strict"），
    去掉它再试一次多半能成（见 without_parameter）；其余情况为 None。
    status：服务端答了一个 HTTP 错误时是它的状态码（500、429……）；请求根本没得到回答（连不上、超时、流断了）时为 None。"""

    def __init__(self, code, message, retry_without=None, status=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_without = retry_without
        self.status = status


@dataclass
class Completion:
    message: dict
    raw: object
    text: str
    usage: dict | None = None
    duration_ms: float = 0.0
    finish_reason: str | None = None
    model: str | None = None
    notes: list = field(default_factory=list)
    reasoning: str | None = None                          # 思考过程（reasoning_content / <think>），不放回历史
    accents: list = field(default_factory=list)           # 认出来的口音：[{"code": ..., "message": 中文说明}]


# ---------------------------------------------------------------- 响应 -> 规范化消息

def message_from_body(body):
    """非流式响应体 -> (服务端原样的 assistant 消息, finish_reason)。body 不像聊天补全时抛 bad_response。"""
    try:
        choice = body["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise LLMError("bad_response", "服务端返回的 JSON 里没有 choices[0].message，它可能不是聊天补全接口。"
                                       "请检查 Base URL（OpenAI 兼容接口通常以 /v1 结尾）。") from None
    return message, choice.get("finish_reason")


# ---------------------------------------------------------------- 客户端

class BaseClient:
    provider = "base"
    max_tokens = None            # 回答最多多少 token；None 不发，由服务端自己定
    round_seconds = None         # 一轮最多等多少秒（流式时从发出请求算起，整轮的墙钟时间）
    template_checked = False
    chat_template = None         # llama-server 的 GET /props 给的聊天模板（知道时才有）

    def __init__(self, model):
        self.model = model

    def limit(self, max_tokens=None, round_seconds=None):
        """设这个客户端每一轮的两道限；返回自己，方便 make_client(...).limit(...) 连着写。"""
        self.max_tokens = max_tokens or None
        self.round_seconds = round_seconds or None
        return self

    def template_note(self, tools):
        """运行之前能查出来的问题（只有 llama-server 的 /props 会说模板放不下 tools）；大多数端点返回 None。"""
        return None

    def request_body(self, messages, tools, tool_choice, parallel_tool_calls, temperature, stop, stream):
        """只放调用方给了值的参数：None 一律不发，免得某些后端把 null 当错误。"""
        body = {"model": self.model, "messages": self.prepare_messages(messages), "stream": stream}
        for key, value in (("tools", tools), ("tool_choice", tool_choice), ("temperature", temperature),
                           ("parallel_tool_calls", parallel_tool_calls), ("stop", stop),
                           ("max_tokens", self.max_tokens)):
            if value is not None and value != []:
                body[key] = value
        return body

    def prepare_messages(self, messages):
        return [dict(m) for m in messages]

    def complete(self, messages, tools=None, tool_choice=None, parallel_tool_calls=None, temperature=None, stop=None):
        for item in self.stream(messages, tools, tool_choice, parallel_tool_calls, temperature, stop, _stream=False):
            if isinstance(item, Completion):
                return item

    def stream(self, messages, tools=None, tool_choice=None, parallel_tool_calls=None, temperature=None, stop=None,
               _stream=True):
        body = self.request_body(messages, tools, tool_choice, parallel_tool_calls, temperature, stop, _stream)
        before = []
        if tools and not self.template_checked:       # 每个客户端只问一次
            self.template_checked = True
            before = [n for n in [self.template_note(tools)] if n]
        started = time.perf_counter()
        if not _stream:
            raw = self.send(body)
            message, finish = message_from_body(raw)
            usage, accents = raw.get("usage"), []
        else:
            assembler = StreamAssembler()
            chunks = self.send_stream(body)
            for chunk in chunks:
                yield from assembler.add(chunk)
                if self.round_seconds and time.perf_counter() - started > self.round_seconds:
                    chunks.close()           # 关掉生成器也就关掉了连接：服务端不再为这一轮写下去
                    raise LLMError("timeout", f"这一轮超过了每轮时限 {self.round_seconds:g} 秒，已停止等待"
                                              f"（已经收到 {len(assembler.content)} 个字）。模型可能在不停地写：调小 max_tokens，"
                                              "或在模型设置里调大每轮时限。")
            if assembler.finish_reason is None:
                # 连接提前断开时 SDK 往往安静地结束迭代，只能靠"没收到 finish_reason"发现。
                raise LLMError("stream_cut", f"流式响应中途断开：只收到 {len(assembler.chunks)} 个分片，没有收到结束标记。"
                                             "请重试；如果总是这样，请关闭流式输出或检查网络/代理。")
            raw, message, finish, usage = assembler.chunks, assembler.message(), assembler.finish_reason, assembler.usage
            accents = assembler.accents
        names = [t.get("function", {}).get("name") for t in tools or []]
        message, finish, reasoning, found = tidy(message, finish, names)
        usage, usage_accents = tidy_usage(usage, streamed=_stream)
        known = {n["code"] for n in before}       # /props 已经说过工具没送到，usage 就不再说一遍
        failed = [n for n in answer_accents(message, finish, usage, tools, tool_choice) if n["code"] not in known]
        copied = template_examples(message, body["messages"], tools, self.chat_template)
        failed += [copied] if copied else []
        yield Completion(message=message, raw=raw, text=message.get("content") or "", usage=usage,
                         duration_ms=(time.perf_counter() - started) * 1000, finish_reason=finish, model=self.model,
                         reasoning=reasoning, accents=before + accents + found + usage_accents + failed)


class OfflineClient(BaseClient):
    """离线规则模型，直接在本进程里运行（不走 HTTP）；raw 和 HTTP 服务返回的一模一样。"""
    provider = "offline"

    def __init__(self, model=None, mistake=None):
        super().__init__(model or OFFLINE_MODEL)
        self.offline = load_offline_model().OfflineModel(mistake)
        self.base_url = None

    def send(self, body):
        with self.refusals(body):
            return self.offline.completion_body(body)

    def send_stream(self, body):
        with self.refusals(body):
            chunks = self.offline.completion_chunks(body)     # 拒收发生在第一片之前，和真服务端一样
        yield from chunks

    @contextlib.contextmanager
    def refusals(self, body):
        """离线模型拒收的请求（真服务端会回的 HTTP 错误），照真服务端的错误一样翻译。"""
        try:
            yield
        except load_offline_model().Refused as refused:
            text = json.dumps(refused.body, ensure_ascii=False)
            raise LLMError(*(explain_error(refused.status, text, body)
                             or ("bad_request", f"请求被服务端拒绝（HTTP {refused.status}）：{refused}")),
                           status=refused.status) from None


def usage_is_estimate(raw):
    """离线模型的 usage 是按字数粗估的（accents.rough_tokens），不是分词器数出来的。
    raw 是 Completion.raw（流式时是分片列表）：服务端报的 model 是离线模型的名字，usage 就是估算。"""
    body = raw[0] if isinstance(raw, list) and raw else raw
    return isinstance(body, dict) and body.get("model") == OFFLINE_MODEL


def load_offline_model():
    """-> offline.model 模块。它在项目根目录（code/ 的上一级），第一次选离线模型时才导入。"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:                  # 单独运行 python code/NAME.py 时，项目根目录还不在路径上
        sys.path.insert(0, root)              # 先找得到根目录的 import_paths.py
        from import_paths import use_project_paths
        use_project_paths()                   # 路径的先后只在 import_paths.py 里规定：code/ 第一，项目根目录第二
    from offline import model
    return model


class OpenAICompatibleClient(BaseClient):
    """任何 OpenAI 兼容接口（OpenAI、DeepSeek、通义、本地 vLLM/Ollama、本项目的离线服务器）。"""
    provider = "openai"
    key_env = "OPENAI_API_KEY"

    def __init__(self, model=None, api_key=None, base_url=None, timeout=30.0, max_retries=0, http_client=None):
        import openai
        super().__init__(model or os.environ.get("OPENAI_MODEL") or MODEL_SUGGESTIONS["openai"][0])
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        self.timeout = timeout
        self.http_client = http_client
        # max_retries 要自己定：SDK 默认会悄悄重试 2 次，课堂上学生就看不到第一次失败了。
        self.sdk = openai.OpenAI(api_key=find_key(api_key, self.key_env), base_url=self.base_url,
                                 timeout=timeout, max_retries=max_retries, http_client=http_client)

    def send(self, body):
        with self.errors(body):
            # with_raw_response 让我们拿到 HTTP 响应本身：raw 就是服务端发来的原文，不是 SDK 解析后再导出的。
            response = self.sdk.chat.completions.with_raw_response.create(**body)
            return parse_json_body(response.http_response.text)

    def send_stream(self, body):
        with self.errors(body):
            response = self.sdk.chat.completions.with_raw_response.create(**body)
            yield from stream_chunks(response)

    def errors(self, body):
        return translate_errors(self.base_url, self.timeout, self.key_env, body)

    def template_note(self, tools):
        """llama-server 在 GET /props 里说出它的聊天模板能不能写出 tools。别的服务端没有 /props（404），
        就什么也不说。只问本机和局域网的地址：云上的平台没有这个接口，不必多发一个请求。"""
        if not tools or not is_local(self.base_url):
            return None
        import httpx
        root = self.base_url.rstrip("/").removesuffix("/v1")
        try:
            if self.http_client is not None:
                props = self.http_client.get(f"{root}/props", timeout=3.0).json()
            else:
                with httpx.Client(timeout=3.0) as client:
                    props = client.get(f"{root}/props").json()
        except Exception:                # 不是 llama-server、没开、不是 JSON：都只是查不到，不影响运行
            return None
        props = props if isinstance(props, dict) else None
        if isinstance((props or {}).get("chat_template"), str):
            self.chat_template = props["chat_template"]     # 模型照抄了模板里的例子时，回答的口音说得出来源
        return template_accent(props)


class GLMClient(OpenAICompatibleClient):
    """智谱 GLM，走官方 zhipuai SDK。和 OpenAI 的差别（都是踩过的坑）：
      1. assistant 消息里 content 为 "" 又带 tool_calls 会被拒（错误码 1214）：这种情况我们干脆不发 content。
      2. 工具结果必须是 role "tool"、content 为字符串：非字符串先转成 JSON 文本。
      3. 公开反馈说 tool_choice 只认 "auto"，传别的值会被当成 auto：我们照传，但别指望它生效。
      4. SDK 的响应对象带着 reasoning_content=None 等空字段，放回历史前要 model_dump(exclude_none=True)。
      5. zhipuai 的 create() 没有 parallel_tool_calls 参数：给了值就放进 extra_body 原样发出去。
      6. SDK 会把 temperature 夹到 (0, 1) 开区间里（<=0 时改成 0.01 并关闭采样）。
    """
    provider = "glm"
    key_env = "ZHIPUAI_API_KEY"

    def __init__(self, model=None, api_key=None, base_url=None, timeout=30.0, max_retries=0, http_client=None):
        import zhipuai
        BaseClient.__init__(self, model or os.environ.get("GLM_MODEL") or MODEL_SUGGESTIONS["glm"][0])
        self.base_url = base_url or os.environ.get("ZHIPUAI_BASE_URL") or GLM_BASE_URL
        self.timeout = timeout
        # disable_token_cache=True 是默认的 "Bearer <key>" 模式；False 会用 key 签 JWT，要求 id.secret 格式。
        self.sdk = zhipuai.ZhipuAI(api_key=find_key(api_key, self.key_env), base_url=self.base_url,
                                   timeout=timeout, max_retries=max_retries, disable_token_cache=True,
                                   http_client=http_client)

    def prepare_messages(self, messages):
        prepared = []
        for message in messages:
            message = dict(message)
            if message.get("role") == "assistant" and message.get("tool_calls") and not message.get("content"):
                message.pop("content", None)                                  # 坑 1
            if message.get("role") == "tool" and not isinstance(message.get("content"), str):
                message["content"] = json.dumps(message.get("content"), ensure_ascii=False)   # 坑 2
            prepared.append({k: v for k, v in message.items() if v is not None})            # 坑 4
        return prepared

    def glm_arguments(self, body):
        body = dict(body)
        if "parallel_tool_calls" in body:                                      # 坑 5
            body["extra_body"] = {"parallel_tool_calls": body.pop("parallel_tool_calls")}
        return body

    def send(self, body):
        from zhipuai.core._legacy_response import to_raw_response_wrapper
        with self.errors(body):
            # zhipuai 的 chat.completions 没有 .with_raw_response 属性，但 SDK 内部的这个包装器做的是同一件事：
            # 拿回 HTTP 响应，raw 就是原文。
            response = to_raw_response_wrapper(self.sdk.chat.completions.create)(**self.glm_arguments(body))
            return parse_json_body(response.http_response.text)

    def send_stream(self, body):
        from zhipuai.core._legacy_response import to_raw_response_wrapper
        with self.errors(body):
            response = to_raw_response_wrapper(self.sdk.chat.completions.create)(**self.glm_arguments(body))
            yield from stream_chunks(response)


def is_local(base_url):
    from urllib.parse import urlsplit
    import ipaddress
    host = urlsplit(base_url or "").hostname or ""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def find_key(api_key, env_name):
    key = api_key or os.environ.get(env_name)
    if not key:
        raise LLMError("auth", f"没有 API Key：请设置环境变量 {env_name}，或在界面里填写 Key；没有 Key 可以先用离线模型。")
    return key


def stream_chunks(response):
    """SDK 的原始响应 -> 一个个分片 dict。先看 Content-Type：不是 SSE 就说明服务端没按流式回答。"""
    kind = response.http_response.headers.get("content-type", "")
    if "event-stream" not in kind:
        response.http_response.read()
        parse_json_body(response.http_response.text)       # 不是 JSON 会在这里报 bad_response
        raise LLMError("bad_response", f"请求的是流式输出，服务端却返回了 {kind or '未知类型'} 的整块内容。"
                                       "这个接口可能不支持流式：请关闭流式输出再试。")
    try:
        for chunk in response.parse():
            # exclude_unset：只导出服务端真的发来的字段，和原文一致；
            # warnings=False：有的服务端发的类型和 SDK 声明的不同（比如 arguments 是对象），照原样导出，交给 accents 去认。
            yield chunk.model_dump(exclude_unset=True, warnings=False)
    finally:
        response.http_response.close()     # 提前不读了（每轮时限到了）也要关掉连接，服务端才会停下


def parse_json_body(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        snippet = " ".join(text.split())[:120]
        raise LLMError("bad_response", f"服务端返回的不是 JSON（开头是：{snippet!r}）。"
                                       "通常是 Base URL 写错了（指向了网页或网关错误页），请检查地址和代理。") from None


# ---------------------------------------------------------------- 异常翻译

class translate_errors:
    """把 openai / zhipuai / httpx 的各种异常翻译成 LLMError。两个 SDK 的异常类不同，但都带 status_code。"""

    def __init__(self, base_url, timeout, key_env, sent=None):
        self.base_url, self.timeout, self.key_env, self.sent = base_url, timeout, key_env, sent

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        if error is None or isinstance(error, (LLMError, GeneratorExit)):
            return False
        raise self.translate(error) from error

    def translate(self, error):
        name = type(error).__name__
        causes = set()
        cause = error
        while cause is not None and len(causes) < 10:      # SDK 常把底层 httpx 异常包一层：顺着 __cause__ 看根因
            causes.add(type(cause).__name__)
            cause = cause.__cause__ or cause.__context__
        status = getattr(error, "status_code", None) or getattr(getattr(error, "response", None), "status_code", None)
        detail = server_message(error)
        if status is not None:
            # 先看是不是认得的平台写法（智谱错误码、百炼的 code、网关的 HTML 页、不支持的参数……）
            response = getattr(error, "response", None)
            special = explain_error(status, getattr(response, "text", ""), self.sent,
                                    getattr(response, "headers", {}).get("server"))
            if special:
                return LLMError(*special, status=status)
        if status in (401, 403):
            return LLMError("auth", f"API Key 无效或没有权限（HTTP {status}）。请检查 {self.key_env} 或界面里填的 Key 是否完整、"
                                    f"是否属于这个平台。{detail}", status=status)
        if status == 429:
            return LLMError("rate_limit", f"请求太频繁或账户余额不足（HTTP 429）。请等几秒再试，或到平台控制台查看余额和限额。{detail}",
                            status=status)
        if status is not None and status >= 500:
            return LLMError("server", f"模型服务端出错（HTTP {status}），这不是你的代码的问题。请稍后重试，或换一个模型。{detail}",
                            status=status)
        if status is not None:
            hint = "请检查 Base URL 和模型名。" if status == 404 else "请检查模型名和消息格式（例如 GLM 不接受空 content 加 tool_calls）。"
            return LLMError("bad_request", f"请求被服务端拒绝（HTTP {status}）。{hint}{detail}", status=status)
        if "Timeout" in name:
            return LLMError("timeout", f"等了 {self.timeout:g} 秒模型还没回答，已超时（每轮时限）。"
                                       "请稍后重试，或在模型设置里调大每轮时限、调小 max_tokens。")
        if causes & {"RemoteProtocolError", "ReadError", "IncompleteRead", "ChunkedEncodingError"}:
            return LLMError("stream_cut", "响应传到一半连接断了。请重试；如果总是这样，请关闭流式输出或检查网络/代理。")
        if causes & {"APIConnectionError", "ConnectError", "ConnectionRefusedError"}:
            return LLMError("connection", f"连不上模型服务 {self.base_url}。请检查网络、Base URL 是否写对、本地服务是否已启动。")
        if isinstance(error, (json.JSONDecodeError, ValueError)) or "Validation" in name:
            return LLMError("bad_response", f"服务端的响应格式不对，无法解析（{name}）。请检查 Base URL 是否指向聊天补全接口。")
        return LLMError("connection", f"调用模型时出错（{name}）。请检查网络和 Base URL 后重试。")


def server_message(error):
    """服务端错误体里的 message，让学生看到平台原话。"""
    code, text, request_id = error_fields(getattr(getattr(error, "response", None), "text", None))
    if not text:
        return ""
    return f"服务端说：{text}" + (f"（错误码 {code}）" if code else "") + (f"（request_id {request_id}）" if request_id else "")


def without_parameter(tools, tool_choice, parallel_tool_calls, parameter):
    """LLMError.retry_without 说某个参数不被支持时，去掉它再发：-> (tools, tool_choice, parallel_tool_calls)。"""
    if parameter == "strict":
        tools = [{**t, "function": {k: v for k, v in t["function"].items() if k != "strict"}} for t in tools or []]
    return (tools, None if parameter == "tool_choice" else tool_choice,
            None if parameter == "parallel_tool_calls" else parallel_tool_calls)


def make_client(provider, model=None, api_key=None, base_url=None, timeout=30.0, max_retries=0, mistake=None,
                http_client=None, max_tokens=None, round_seconds=None):
    """provider: "offline" | "glm" | "openai"。mistake 只对离线模型有效（见 offline/model.py 的 MISTAKES）。
    http_client：交给 SDK 的 httpx.Client（例如公开部署时只连检查过的地址），不给就用 SDK 自己的。
    max_tokens / round_seconds：每一轮的长度上限和时间上限（见 BaseClient.limit）。"""
    if round_seconds:
        timeout = min(timeout, round_seconds)     # 不流式时，SDK 的超时就是这一轮的时限
    if provider == "offline":
        client = OfflineClient(model, mistake)
    elif provider == "glm":
        client = GLMClient(model, api_key, base_url, timeout, max_retries, http_client)
    elif provider == "openai":
        client = OpenAICompatibleClient(model, api_key, base_url, timeout, max_retries, http_client)
    else:
        raise ValueError(f"未知的 provider {provider!r}，可选：offline、glm、openai")
    return client.limit(max_tokens, round_seconds)


if __name__ == "__main__":
    client = make_client("offline")
    print(client.complete([{"role": "user", "content": "你好"}]).text)
