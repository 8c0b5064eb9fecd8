"""把离线规则模型包装成 OpenAI 兼容的 HTTP 服务，只监听 127.0.0.1。

    python code/offline_server.py --port 8765
    # 然后任何客户端都能用：base_url = "http://127.0.0.1:8765/v1"（openai）
    #                    或 "http://127.0.0.1:8765/api/paas/v4"（zhipuai）

还能学各家平台的"口音"（见 offline/accents.py）：整台服务器用一种，或者每个请求用地址前缀挑一种：

    python code/offline_server.py --accent deepseek            # 整台服务器都像 DeepSeek
    python code/offline_server.py --quirks no_id,args_object   # 自己挑几个毛病
    base_url = "http://127.0.0.1:8765/accent/glm/api/paas/v4"  # 只有这个客户端的请求像智谱
    base_url = "http://127.0.0.1:8765/quirks/no_id,stream_no_index/v1"

同时给测试用：可以让下一个（或下几个）请求故意失败（401、429、500、慢、流断开、返回非 JSON、网关的 HTML 错误页、
某家平台写法的错误体），或者直接指定要回的消息；收到的每个请求都记下来，测试可以检查"到底发了什么"。

    POST /_control  {"queue": [{"fault": "rate_limit"}, {"error": "glm_1214"}, {"message": {...}}],
                     "mistake": "bad_json", "accent": "ollama", "quirks": ["no_usage"], "reset": true}
    GET  /_requests -> 收到过的请求（Authorization 只记方式，不记 Key）

在测试里也可以直接在进程内启动：server = OfflineServer(); server.start(); ... server.stop()
"""
import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .accents import ACCENTS, ERRORS, GATEWAY_PAGE, QUIRKS, chunks, hear, props, quirks_of, reject, speak
from .model import MISTAKES, MODEL_NAME, OfflineModel, Refused

CHAT_PATHS = ("/v1/chat/completions", "/api/paas/v4/chat/completions", "/chat/completions")
ACCENT_PREFIX = re.compile(r"^/(?P<kind>accent|quirks)/(?P<names>[\w,\-]+)(?P<rest>/.*)$")
FAULTS = {
    "auth": (401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    "rate_limit": (429, {"error": {"message": "您的账户已达到速率限制，请稍后再试。", "type": "rate_limit", "code": "1302"}}),
    "server": (500, {"error": {"message": "Internal server error", "type": "server_error", "code": "500"}}),
}


class OfflineServer:
    def __init__(self, port=0, mistake=None, slow_seconds=2.0, accent=None, quirks=()):
        self.model = OfflineModel(mistake)
        self.default_quirks = quirks_of(accent, quirks)     # 整台服务器的口音；reset() 回到它
        self.quirks = set(self.default_quirks)
        self.slow_seconds = slow_seconds
        self.requests = []        # 收到的请求：path、auth 方式、body
        self.pending = []         # 测试排好的下一批响应
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def queue(self, *items):
        """排上下一批响应。item 之一：{"fault": "auth|rate_limit|server|slow|cut_stream|not_json|gateway_html"}、
        {"error": offline/accents.py 的 ERRORS 里的名字}（某家平台写法的错误体）、
        {"message": assistant 消息}、{"body": 完整响应体}、{"status": 400, "json": {...}}。"""
        with self.lock:
            self.pending.extend(items)

    def reset(self, mistake=None, accent=None, quirks=()):
        with self.lock:
            self.pending.clear()
            self.requests.clear()
            self.model = OfflineModel(mistake)
            self.quirks = quirks_of(accent, quirks) if (accent or quirks) else set(self.default_quirks)

    def next_item(self):
        with self.lock:
            return self.pending.pop(0) if self.pending else None

    def record(self, path, headers, body):
        auth = headers.get("Authorization") or ""
        with self.lock:
            self.requests.append({"path": path, "auth_scheme": auth.split(" ")[0] if auth else None,
                                  "has_key": len(auth.split(" ", 1)) == 2, "body": body})


def glm_problem(body):
    """模拟 GLM 的校验：空字符串 content 加 tool_calls、非字符串的工具结果，都回 1214。"""
    for i, message in enumerate(body.get("messages") or []):
        if message.get("role") == "assistant" and message.get("tool_calls") and message.get("content") == "":
            return f"messages[{i}]:content和tool_calls 字段不能同时为空"
        if message.get("role") == "tool" and not isinstance(message.get("content"), str):
            return f"messages[{i}]:tool 消息的 content 必须是字符串"
    return None


def make_handler(server):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"    # 支持长连接和分块传输，和真实服务一样

        def log_message(self, *args):    # 测试输出保持干净
            pass

        def handle(self):
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                pass                     # 客户端超时后先挂断了：这正是"慢"故障要测的情形

        def do_GET(self):
            if self.path == "/_requests":
                with server.lock:
                    return self.send_json(200, list(server.requests))
            if self.path in ("/props", "/v1/props"):        # llama-server 的接口：模板能不能写出 tools
                return self.send_json(200, props(server.quirks))
            if self.path in ("/v1/models", "/api/paas/v4/models"):
                return self.send_json(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})
            self.send_json(404, {"error": {"message": f"没有这个地址：{self.path}"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                return self.send_json(400, {"error": {"message": "请求体不是 JSON"}})
            if self.path == "/_control":
                return self.control(body)
            path, quirks = self.path, server.quirks
            prefix = ACCENT_PREFIX.match(path)
            if prefix:                   # 地址里挑的口音只管这一个请求
                names = prefix["names"].split(",")
                try:
                    quirks = quirks_of(names[0]) if prefix["kind"] == "accent" else quirks_of(None, names)
                except ValueError as error:
                    return self.send_json(404, {"error": {"message": str(error)}})
                path = prefix["rest"]
            if path not in CHAT_PATHS:
                return self.send_json(404, {"error": {"message": f"没有这个地址：{self.path}"}})
            server.record(self.path, self.headers, body)
            item = server.next_item() or {}
            fault = item.get("fault")
            if fault in FAULTS:
                return self.send_json(*FAULTS[fault])
            if "status" in item:
                return self.send_json(item["status"], item.get("json", {}))
            if item.get("error") in ERRORS:
                return self.send_json(*ERRORS[item["error"]])
            if fault == "slow":
                time.sleep(item.get("seconds", server.slow_seconds))
            if fault == "not_json":
                return self.send_bytes(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            if fault == "gateway_html":
                return self.send_bytes(502, GATEWAY_PAGE, "text/html", {"Server": "nginx/1.24.0"})
            if path.startswith("/api/paas/v4") and glm_problem(body):
                return self.send_json(400, {"error": {"code": "1214", "message": glm_problem(body)}})
            if reject(quirks, body):
                return self.send_json(*reject(quirks, body))
            if "body" in item:
                reply = item["body"]
            elif "message" in item:
                reply = scripted(item["message"])
            else:
                try:
                    reply = server.model.completion_body(hear(quirks, body))
                except Refused as refused:
                    return self.send_json(refused.status, refused.body)
            reply = speak(quirks, reply) if quirks else reply
            if body.get("stream"):
                pieces = chunks(quirks, reply) if quirks else chunks_of(reply)
                return self.send_stream(pieces, cut=(fault == "cut_stream"))
            if fault == "cut_stream":
                return self.send_cut_body(reply)
            self.send_json(200, reply)

        def control(self, body):
            try:
                quirks = quirks_of(body.get("accent"), body.get("quirks") or ())
            except ValueError as error:
                return self.send_json(400, {"error": {"message": str(error)}})
            if body.get("reset"):
                server.reset(body.get("mistake"), body.get("accent"), body.get("quirks") or ())
            elif "mistake" in body:
                if body["mistake"] and body["mistake"] not in MISTAKES:
                    return self.send_json(400, {"error": {"message": f"未知的错误类型，可选：{list(MISTAKES)}"}})
                server.model = OfflineModel(body["mistake"])
            if not body.get("reset") and ("accent" in body or "quirks" in body):
                server.quirks = quirks
            server.queue(*body.get("queue", []))
            self.send_json(200, {"ok": True, "pending": len(server.pending)})

        # ---- 写响应
        def send_bytes(self, status, data, content_type, headers=None):
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def send_json(self, status, payload):
            self.send_bytes(status, json.dumps(payload, ensure_ascii=False).encode(), "application/json")

        def send_cut_body(self, payload):
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True

        def send_stream(self, chunks, cut=False):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
            if cut:   # 发一半就断：不发分块结尾，客户端会看到连接意外关闭
                events = events[: max(1, len(events) // 2)]
            for event in events:
                data = event.encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            if cut:
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")

    return Handler


def scripted(message):
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": "scripted", "object": "chat.completion", "created": 0, "model": MODEL_NAME,
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]}


def chunks_of(body):
    """把一个完整响应体切成流式分片（给测试指定的消息用）。"""
    model = OfflineModel()
    model.completion_body = lambda request: body
    return model.completion_chunks({})


def main():
    parser = argparse.ArgumentParser(description="离线规则模型的 OpenAI 兼容服务（只监听 127.0.0.1）")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--mistake", choices=list(MISTAKES), default=None, help="让模型在第一轮故意犯这种错")
    parser.add_argument("--accent", choices=list(ACCENTS), default=None, help="像这家平台那样回答（它的小毛病）")
    parser.add_argument("--quirks", default="", help=f"再加几个毛病，逗号分隔，可选：{','.join(QUIRKS)}")
    args = parser.parse_args()
    quirks = [q for q in args.quirks.split(",") if q]
    try:
        server = OfflineServer(args.port, args.mistake, accent=args.accent, quirks=quirks)
    except ValueError as error:
        parser.error(str(error))
    print(f"离线模型服务已启动：{server.url}/v1（OpenAI）与 {server.url}/api/paas/v4（GLM）。Ctrl+C 结束。", flush=True)
    if server.quirks:
        print(f"口音：{args.accent or '自选'}；毛病：{', '.join(sorted(server.quirks))}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
