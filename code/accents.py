"""各家"OpenAI 兼容"接口的口音：同一套协议，每家都有自己的小毛病。

DeepSeek、智谱、通义、Kimi、硅基流动、本地的 Ollama / vLLM……都说自己兼容 OpenAI，
但回答里总有些地方不一样。这里把见过的口音逐个认出来：能修的修好（循环照常跑），
修不了的说清楚（告诉学生服务端做了什么、为什么要紧、该改哪里）。

    message, finish, reasoning, accents = tidy(message, finish_reason, tool_names)

accents 是一串 {"code": ..., "message": 中文说明}，llm_clients 把它放进 Completion.accents，
循环再把它带进时间线。每个 code 对应下面一个 note_* 说明。
"""
import hashlib
import json
import re
import unicodedata

from text_parsers import FENCE, find_json_objects, parse_json_reply, parse_react

# 开头的 <think>…</think>，或者只有结尾标签的（有的模板把 <think> 放进了提示词，回答里只剩 </think>）
THINK_BLOCK = re.compile(r"^\s*(?:<think>(?P<inside>.*?)</think>|(?P<open>(?:(?!<think>).)*?)</think>)\s*", re.S)
HERMES_CALL = re.compile(r"<tool_call>\s*(?P<body>\{.*?\})\s*</tool_call>", re.S)


def note(code, message):
    return {"code": code, "message": message}


def stable_id(name, arguments, index):
    """同样的调用每次得到同样的 id：重放历史时 tool_call_id 才对得上。"""
    digest = hashlib.sha256(json.dumps([name, arguments, index], ensure_ascii=False).encode()).hexdigest()
    return f"call_{digest[:16]}"


# ---------------------------------------------------------------- 一条 assistant 消息

def tidy(message, finish_reason, tool_names=()):
    """服务端发来的 assistant 消息 -> (能放回历史的消息, finish_reason, 思考内容, 口音说明列表)。
    tool_names：这次请求里带的工具名（没带工具时为空，文本协议的课就不会误判"工具调用写成了文字"）。"""
    accents = []
    content = message.get("content")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        field = "reasoning_content" if message.get("reasoning_content") else "reasoning"
        accents.append(note("reasoning_field", f"服务端在 content 旁边多发了一个 {field} 字段（模型的思考过程，"
                                               f"{len(reasoning)} 字）。它不是回答，已单独放进 Completion.reasoning。"))
    if isinstance(content, str):
        found = THINK_BLOCK.match(content)
        if found and ("<think>" in content or "</think>" in content):
            thought = found.group("inside") if found.group("inside") is not None else found.group("open")
            reasoning = ((reasoning or "") + thought).strip() or reasoning
            content = content[found.end():]
            accents.append(note("think_tags", "回复开头有 <think>…</think> 思考块：服务端把思考过程混在了 content 里"
                                              "（本地部署的推理模型常见；vLLM 可加 --reasoning-parser，Ollama 新版会单独放进 reasoning 字段）。"
                                              "思考块已移到 Completion.reasoning，放回历史的只有正文。"))

    calls, call_accents = tidy_calls(message.get("tool_calls"))
    accents += call_accents
    written = []
    if not calls and tool_names and content:
        calls, content, written = calls_written_as_text(content, tool_names)
        accents += written

    if calls and message.get("content") == "":
        accents.append(note("empty_content", "工具调用旁边的 content 是空字符串 \"\" 而不是 null。已统一成 null："
                                             "有的平台（如智谱 GLM，错误码 1214）不接受历史里 \"\" 加 tool_calls。"))
    if calls and finish_reason == "stop" and not written:    # 写成文字的调用，"stop" 本来就对
        accents.append(note("stop_with_tool_calls", "回答里有 tool_calls，finish_reason 却是 \"stop\"（不是 \"tool_calls\"）。"
                                                    "判断要不要执行工具请看有没有 tool_calls，别只看 finish_reason；已按 tool_calls 处理。"))
        finish_reason = "tool_calls"

    tidied = {"role": "assistant", "content": (content or None) if calls else (content or "")}
    if calls:
        tidied["tool_calls"] = calls
        if reasoning and message.get("reasoning_content"):
            # DeepSeek 的思考模式：带工具调用的那一轮，reasoning_content 必须原样发回去，否则 400。
            # 不带工具调用的轮次就不放回：早期的 deepseek-reasoner 见到输入里有它反而会报 400。
            tidied["reasoning_content"] = message["reasoning_content"]
    return tidied, finish_reason, reasoning or None, accents


def tidy_calls(tool_calls):
    """-> (规范化的 tool_calls, 口音说明)。每种毛病只说一次，说明里带上是第几个调用。"""
    calls, problems = [], {}
    for index, call in enumerate(tool_calls or []):
        function = call.get("function") or {}
        name = function.get("name") or ""
        arguments = function.get("arguments")
        if isinstance(arguments, (dict, list)):
            problems.setdefault("arguments_object", []).append(index)
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif isinstance(arguments, str) and double_encoded(arguments):
            problems.setdefault("arguments_double_encoded", []).append(index)
            arguments = json.dumps(json.loads(json.loads(arguments)), ensure_ascii=False)
        arguments = arguments if isinstance(arguments, str) else ""
        call_id = call.get("id")
        if not call_id:
            problems.setdefault("missing_id", []).append(index)
            call_id = stable_id(name, arguments, index)
        if call.get("type") != "function":
            problems.setdefault("missing_type", []).append(index)
        calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    return calls, [note(code, CALL_PROBLEMS[code].format(which=which(indexes))) for code, indexes in problems.items()]


def double_encoded(text):
    """'"{\\"city\\": \\"北京\\"}"'：JSON 字符串里又包了一层 JSON 文本。"""
    try:
        inner = json.loads(text)
        return isinstance(inner, str) and isinstance(json.loads(inner), dict)
    except (json.JSONDecodeError, TypeError):
        return False


def which(indexes):
    return "、".join(f"第 {i + 1} 个" for i in indexes)


CALL_PROBLEMS = {
    "arguments_object": "{which}工具调用的 arguments 是 JSON 对象，不是协议规定的 JSON 字符串。已转成字符串；"
                        "自己写解析代码时别假设它一定是 str。",
    "arguments_double_encoded": "{which}工具调用的 arguments 被编码了两次（字符串里又是一段带引号的 JSON 文本）。"
                                "已解开一层；这通常是中转服务多做了一次 json.dumps。",
    "missing_id": "{which}工具调用没有 id（或 id 为空）。已按名字和参数生成一个稳定的 id，"
                  "工具结果的 tool_call_id 会用它；但平台自己可能认不出这个 id，多轮对话出错时先看这里。",
    "missing_type": "{which}工具调用缺少 \"type\": \"function\"。已补上：放回历史时 OpenAI 协议要求有这个字段。",
}


ADVICE = ("vLLM 启动时要加 --enable-auto-tool-choice --tool-call-parser <与模型匹配的解析器，如 hermes>；"
          "Ollama 要用模板里支持 tools 的模型（ollama show 模型名 --template 里有 .Tools）")


def calls_written_as_text(content, tool_names):
    """请求带了 tools，模型却把调用写成了文字：服务端没有打开工具解析器。
    能看懂的（<tool_call> JSON、Action: 工具名[JSON]、单独一个 JSON 对象、一段话后面的 JSON 调用）
    转成 tool_calls，让课能继续。"""
    hermes = [parse_json_reply(m.group("body")) for m in HERMES_CALL.finditer(content)]
    if hermes:
        shape, readings = "<tool_call> 标签", hermes
    elif re.search(r"Action\**\s*[:：]", content):
        shape, readings = "ReAct 的 Action: 写法（text_parsers.parse_react 是这样读的）", [parse_react(content)[0]]
    elif content.lstrip().startswith(("{", "```")):
        shape, readings = "一个 JSON 对象（text_parsers.parse_json_reply 是这样读的）", [parse_json_reply(content)]
    else:
        return calls_after_prose(content, tool_names)
    calls = []
    for index, parsed in enumerate(readings):
        if parsed["kind"] != "action":
            return [], content, []          # 像普通回答（比如 {"answer": ...}），不当成调用
        name, raw = parsed["groups"]["tool"], parsed["groups"]["args"]
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            arguments = None
        if name not in tool_names or not isinstance(arguments, dict):
            return [], content, [note("tool_call_as_text", f"请求带了 tools，模型却把工具调用写成了文字（{shape}），"
                                                           f"而且读不出可用的调用（工具 {name!r}，参数 {raw[:80]!r}）。"
                                                           f"服务端没有把它转成 tool_calls：{ADVICE}。这段文字按普通回答处理。")]
        text = json.dumps(arguments, ensure_ascii=False)
        calls.append({"id": stable_id(name, text, index), "type": "function", "function": {"name": name, "arguments": text}})
    listed = "、".join(f"{c['function']['name']}({c['function']['arguments']})" for c in calls)
    return calls, None, [note("tool_call_as_text", f"请求带了 tools，模型却把工具调用写成了文字（{shape}）："
                                                   f"服务端的工具解析器没有打开。已按文本协议读出 {listed}，当作 tool_calls 继续；"
                                                   f"要让服务端自己返回 tool_calls，{ADVICE}。")]


# 一段话后面跟着调用（"Sure! Here is the call: ```json {"name": …, "arguments": {…}}```"）：也读成 tool_calls。
# 为什么读：调用已经写在那里了。llama.cpp 和 vLLM 自己的工具解析器遇到这种写法，也是把前面的话留作 content、
# 把调用读成 tool_calls；当成最终回答的话，判断会说"没调用工具就作答"，回答里的数据却没有任何来处。
# 怎样不误读：只认同时有 "name"（或 "tool"）和 "arguments" 对象两个键的 JSON——普通回答里举的数据例子
# （{"city": "北京", "temp": 25}）没有这个形状，照旧是文字；名字不是这次提供的工具时，说一声，也照旧是文字。
def calls_after_prose(content, tool_names):
    """-> (tool_calls, 去掉调用后剩下的话或 None, 口音说明)。没有调用形状的 JSON 时原样返回，不说话。"""
    found, _ = find_json_objects(content)
    shaped = [(obj, start, end) for obj, start, end in found
              if isinstance(obj.get("arguments"), dict) and isinstance(obj.get("name", obj.get("tool")), str)]
    if not shaped:
        return [], content, []
    names = [obj.get("name", obj.get("tool")) for obj, _, _ in shaped]
    shape = "一段话后面跟着 JSON 调用"
    unknown = [name for name in names if name not in tool_names]
    if unknown:
        return [], content, [note("tool_call_as_text", f"请求带了 tools，模型却把工具调用写成了文字（{shape}），"
                                                       f"而且调用的工具 {unknown[0]!r} 不在这次提供的工具里，读不出可用的调用。"
                                                       f"服务端没有把它转成 tool_calls：{ADVICE}。这段文字按普通回答处理。")]
    calls, kept, cursor = [], [], 0
    for index, (obj, start, end) in enumerate(shaped):
        fence = next((f for f in FENCE.finditer(content) if f.start() <= start and end <= f.end()), None)
        start, end = (fence.start(), fence.end()) if fence else (start, end)
        kept.append(content[cursor:start])
        cursor = max(cursor, end)
        text = json.dumps(obj["arguments"], ensure_ascii=False)
        calls.append({"id": stable_id(names[index], text, index), "type": "function",
                      "function": {"name": names[index], "arguments": text}})
    rest = "".join(kept + [content[cursor:]]).strip() or None
    listed = "、".join(f"{c['function']['name']}({c['function']['arguments']})" for c in calls)
    return calls, rest, [note("tool_call_as_text", f"请求带了 tools，模型却把工具调用写成了文字（{shape}）："
                                                   f"服务端的工具解析器没有读它。已读出 {listed}，当作 tool_calls 继续；"
                                                   f"调用前后的话「{(rest or '')[:80]}」留作 content。"
                                                   f"要让服务端自己返回 tool_calls，{ADVICE}。")]


# ---------------------------------------------------------------- 真模型常见的失败

# 中日韩文字大约一个字一个 token，其余文字大约四个字符一个 token：粗估，够判断"工具清单有没有被送进去"
WIDE = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
# 同一段文字（4 到 60 个字符）紧挨着重复 6 次以上：小模型"原地打转"的样子
LOOPING = re.compile(r"(.{4,60}?)(?:\s*\1){5,}", re.S)


def rough_tokens(text):
    """不用分词器的 token 粗估。"""
    wide = len(WIDE.findall(text))
    return wide + -(-(len(text) - wide) // 4)


def repeated_phrase(text):
    """-> (重复的那段文字, 重复了几次) 或 None。只看前 20000 个字符：正则回溯的代价要有上限。"""
    for found in LOOPING.finditer(text[:20_000]):
        phrase = found.group(1)
        if len(re.findall(r"\w", phrase)) >= 2:      # "-----" 这种分隔线不算
            times = len(re.findall(re.escape(phrase), found.group(0)))
            # 正则找到的一段可能从词中间开始（"ello, h"）：转到从一个词的开头开始（"hello, "）再给人看
            start = next((i for i in range(1, len(phrase)) if not phrase[i - 1].isalnum() and phrase[i].isalnum()), 0)
            return (phrase[start:] + phrase[:start]).strip(), times
    return None


# 不是服务端的小毛病、而是这次回答本身有问题的几种（界面上标成"回答有问题"，不叫"口音"）
ANSWER_PROBLEMS = ("tool_choice_ignored", "tools_not_delivered", "length", "repetition", "repeated_calls", "template_example")


def answer_accents(message, finish_reason, usage, tools, tool_choice):
    """请求本身没有报错、回答却不对劲的几种情况（真模型常见，服务端不会告诉你）。"""
    found = []
    calls = message.get("tool_calls")
    if tools and not calls and (tool_choice == "required" or isinstance(tool_choice, dict)):
        asked = "required" if tool_choice == "required" else f"指定函数 {tool_choice.get('function', {}).get('name')}"
        found.append(note("tool_choice_ignored", f"请求要求必须调用工具（tool_choice = {asked}），回答里却没有 tool_calls："
                                                 "这个服务端不支持或忽略了 tool_choice。别指望它强制调用；"
                                                 "要么换一个支持的服务端，要么在循环里检查并重问。"))
    listed = rough_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0
    prompt = (usage or {}).get("prompt_tokens")
    # 只在没有调用时才说：模型调用了工具，它就看到了工具。留一半余量：有的服务端把工具改写得更短再交给模型。
    if tools and not calls and isinstance(prompt, int) and prompt < listed // 2:
        found.append(note("tools_not_delivered", f"服务端说这次输入只有 {prompt} 个 token，可光是工具清单就约有 {listed} 个："
                                                 "工具根本没有送到模型面前（聊天模板里没有 tools 的位置，被悄悄丢掉了）。"
                                                 + TEMPLATE_ADVICE))
    repeats = repeated_calls(calls or [])
    if repeats:
        name, times = repeats
        found.append(note("repeated_calls", f"这个回答把同一个调用 {name}（参数也一样）写了 {times} 遍：模型在原地打转，"
                                            "这些调用会一个不落地执行，结果全都进对话。小模型常这样；换一个更大的模型，"
                                            "或调低 max_tokens 让它早点停。"))
    if finish_reason == "length" and repeats:
        found.append(note("length", "finish_reason 是 \"length\"：回答一直在重复同一个调用，写到 max_tokens 上限才停。"
                                    "调大 max_tokens 没有用，只会让它重复更多次。"))
    elif finish_reason == "length":
        found.append(note("length", "finish_reason 是 \"length\"：回答写到 max_tokens 上限被截断了，后面的话没有写完。"
                                    "调大 max_tokens，或者让问题更具体。"))
    looping = repeated_phrase(message.get("content") or "")
    if looping:
        phrase, times = looping
        found.append(note("repetition", f"回答把同一段话重复了 {times} 次（「{phrase[:40]}」）：小模型常见的原地打转。"
                                        "这不是一个可用的回答；换一个更大的模型，或调低 max_tokens 让它早点停。"))
    return found


REPEATED_CALLS = 3     # 一个回答里同一个调用（名字和参数都一样）写了这么多遍：不是计划，是打转


def repeated_calls(calls):
    """一个回答里重复得最多的调用：-> (名字, 遍数)，不到 REPEATED_CALLS 遍就是 None。"""
    counted = {}
    for call in calls:
        function = call.get("function") or {}
        key = (function.get("name"), json.dumps(function.get("arguments"), ensure_ascii=False, sort_keys=True))
        counted[key] = counted.get(key, 0) + 1
    (name, _), times = max(counted.items(), key=lambda item: item[1], default=((None, None), 0))
    return (name, times) if times >= REPEATED_CALLS else None


def unsaid_arguments(arguments, messages, tools=None):
    """模型填的参数里，哪些字符串值在发给它的内容里一次都没出现过：-> [(参数路径, 值)]。

    问"北京今天天气怎么样？"，小模型却调用 get_weather(city="Tokyo")：Tokyo 不在问题里、不在之前的消息和
    工具结果里、也不在系统提示和工具清单里——它是编的，或者是从模板里的示例抄来的（SmolLM2-135M 就这样做）。
    schema 校验拦不住它：Tokyo 是个完全合法的字符串。能查的只有一件事：这个值有没有人说过。

    "说过"的范围 = 这次请求发出去的一切：messages 里每条消息的正文（系统提示、问题、之前的回答和 tool_calls、
    工具结果）和 tools（名字、说明、枚举值：unit="f" 是从 schema 的 enum 里选的，不算编）。
    比较前统一写法：全角半角（NFKC）、大小写、空白都不计，"(3 + 5)*12" 和 "(3+5)*12" 算同一个。
    只看字符串：数字常常要模型自己算（"1.2万" → 12000），对不上不说明什么。
    服务端自己加进提示词的文字（聊天模板里的示例）不在这里面：template_examples 在知道模板时单独说。
    翻译（问"北京"，填 "Beijing"）、模型换了个说法，也会被列出来：所以页面的结论只说"核对一下"，不说"错了"。"""
    said = normalized("\x00".join(strings_in([messages, tools])))
    found = []
    for path, value in string_values(arguments):
        written = normalized(value)
        if written and written not in said:
            found.append((path, value))
    return found


def normalized(text):
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def strings_in(value):
    """一个 JSON 值里所有的字符串（dict 的值和键都算：工具清单里参数名就是键）。"""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from strings_in(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from strings_in(inner)


def string_values(value, path=""):
    """参数里的字符串值和它们的路径：city、stops[1]、filter.name。"""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from string_values(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            yield from string_values(inner, f"{path}[{index}]")


TEMPLATE_ADVICE = ("llama.cpp：用 --jinja 启动，并用 --chat-template-file 给一个会写出 tools 的模板，"
                   "GET /props 里 chat_template_caps.supports_tools 应为 true；"
                   "Ollama：换一个模板里有 .Tools 的模型（ollama show 模型名 --template）；"
                   "LM Studio：选一个标着支持工具调用（Tool Use）的模型。")


EXAMPLE_ARGUMENTS = re.compile(r'"arguments"\s*:\s*(\{[^{}]*\})')


def template_examples(message, messages, tools, template):
    """照抄了服务端聊天模板里示范调用的例子（比如 get_weather(city="Tokyo")）：小模型常这样。
    参数里对话中没有、模板里却有的值（values），和回答里提到的、模板示例调用里的参数值（answer_values，
    比如问北京天气，回答却说 "the weather in Tokyo"）。template 是 llama-server 的 GET /props 给的 chat_template。"""
    if not template:
        return None
    copied = []
    for call in message.get("tool_calls") or []:
        arguments = (call.get("function") or {}).get("arguments")
        try:
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError:
            continue
        copied += [value for _, value in unsaid_arguments(arguments, messages, tools)
                   if normalized(value) in normalized(template) and value not in copied]
    said = normalized("\x00".join(strings_in([messages, tools])))
    answer = normalized(message.get("content") or "")
    echoed = [value for value in example_values(template) if normalized(value) in answer and normalized(value) not in said]
    if not copied and not echoed:
        return None
    sentences = []
    if copied:
        sentences.append(f"参数里的 {'、'.join(json.dumps(v, ensure_ascii=False) for v in copied)} 不在对话里，"
                         "却在服务端的聊天模板里（GET /props 的 chat_template：模板里示范怎样调用的例子）：模型照抄了模板的例子，"
                         "没有用问题里的值。")
    if echoed:
        sentences.append(f"回答里的 {'、'.join(json.dumps(v, ensure_ascii=False) for v in echoed)} 不在对话里，"
                         "却是服务端聊天模板里示范调用的参数：模型照抄了模板的例子，这不是问题要的答案。")
    found = note("template_example", "".join(sentences))
    found["values"], found["answer_values"] = copied, echoed
    return found


def example_values(template):
    """聊天模板里示范调用的参数值：'"arguments": {"city": "Tokyo"}' -> ["Tokyo"]（"<value>" 这样的占位不算）。"""
    found = []
    for body in EXAMPLE_ARGUMENTS.findall(template or ""):
        try:
            arguments = json.loads(body)
        except json.JSONDecodeError:
            continue
        found += [value for _, value in string_values(arguments) if value.strip() and not value.startswith("<")]
    return list(dict.fromkeys(found))


def template_accent(props):
    """llama-server 的 GET /props 说它的聊天模板放不下 tools 时，运行之前就先说出来。"""
    caps = (props or {}).get("chat_template_caps") or {}
    if caps.get("supports_tools") is False:
        return note("tools_not_delivered", "这个 llama-server 的聊天模板不支持 tools（/props 里 "
                                           "chat_template_caps.supports_tools 为 false）：工具清单会被悄悄丢掉，"
                                           "模型看不到它们。" + TEMPLATE_ADVICE)
    return None


# ---------------------------------------------------------------- usage

def tidy_usage(usage, streamed):
    """-> (usage 或 None, 口音说明)。缺 total_tokens 时补上（它就是两项之和）。"""
    if not usage:
        hint = ("流式输出时，OpenAI 协议默认不在最后一片里带 usage（要在请求里加 stream_options={\"include_usage\": true}，"
                "不是每家都支持）。" if streamed else "")
        return None, [note("usage_missing", f"服务端没有返回 usage（用了多少 token）。{hint}计费以平台控制台为准。")]
    usage = dict(usage)
    present = [k for k in ("prompt_tokens", "completion_tokens", "total_tokens") if isinstance(usage.get(k), int)]
    if len(present) == 3:
        return usage, []
    if "total_tokens" not in present and {"prompt_tokens", "completion_tokens"} <= set(present):
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    missing = [k for k in ("prompt_tokens", "completion_tokens", "total_tokens") if k not in present]
    return usage, [note("usage_partial", f"usage 不完整：缺 {'、'.join(missing)}。"
                                         f"{'total_tokens 已按两项相加补上；' if 'total_tokens' in missing and 'total_tokens' in usage else ''}"
                                         f"界面上的 token 数只能作参考。")]


# ---------------------------------------------------------------- 流式分片

class StreamAssembler:
    """把流式分片拼回一条消息。标准做法是按 index 接参数碎片；口音有：
    整个调用一片发完（照样能接）、分片不带 index（按 id 或"接着上一个"来认）、几个调用交错着发（按 index/id 分开接）、
    后续分片带空 id（不覆盖已有的 id）、思考过程在 delta.reasoning_content / delta.reasoning 里。"""

    def __init__(self):
        self.chunks, self.content, self.reasoning, self.reasoning_field, self.calls = [], "", "", None, []
        self.finish_reason, self.usage, self.accents = None, None, []
        self.by_index, self.by_id = {}, {}

    def add(self, chunk):
        """吃进一个分片 dict，返回可以立刻显示的增量列表。"""
        self.chunks.append(chunk)
        self.usage = chunk.get("usage") or self.usage
        shown = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            for field in ("reasoning_content", "reasoning"):
                if delta.get(field):
                    self.reasoning, self.reasoning_field = self.reasoning + delta[field], field
            if delta.get("content"):
                self.content += delta["content"]
                shown.append({"content": delta["content"]})
            for part in delta.get("tool_calls") or []:
                index = self.slot(part)
                call = self.calls[index]
                fn = part.get("function") or {}
                call["id"] = part.get("id") or call["id"]
                call["type"] = part.get("type") or call["type"]
                call["function"]["name"] += fn.get("name") or ""
                piece = fn.get("arguments")
                if isinstance(piece, (dict, list)):           # 一片里直接给了对象：交给 tidy 去转
                    call["function"]["arguments"] = piece
                    piece = json.dumps(piece, ensure_ascii=False)
                else:
                    call["function"]["arguments"] += piece or ""
                shown.append({"index": index, **({"id": part["id"]} if part.get("id") else {}),
                              "name": fn.get("name"), "arguments": piece or ""})
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        return shown

    def slot(self, part):
        """这个碎片属于第几个调用。"""
        if "index" in part and part["index"] is not None:
            key = ("index", part["index"])
        else:
            if not any(a["code"] == "stream_no_index" for a in self.accents):
                self.accents.append(note("stream_no_index", "流式的工具调用分片没有带 index 字段。已按 id 认调用"
                                                            "（没有 id 的碎片接到上一个调用后面）；只按 index 拼接的代码在这里会拼错。"))
            named = bool((part.get("function") or {}).get("name"))
            if part.get("id") and part["id"] not in self.by_id:
                key = ("id", part["id"])
            elif part.get("id"):
                return self.by_id[part["id"]]
            elif self.calls and not named:
                return len(self.calls) - 1              # 没有 id 也没有名字：是上一个调用的参数碎片
            else:
                key = ("unnamed", len(self.calls))      # 带着新名字来的：是一个新调用
        if key not in self.by_index:
            self.by_index[key] = len(self.calls)
            self.calls.append({"id": None, "type": None, "function": {"name": "", "arguments": ""}})
        position = self.by_index[key]
        if part.get("id"):
            self.by_id.setdefault(part["id"], position)
        return position

    def message(self):
        # 流式里 content 没来过片段就是 None：第一片的 "content": "" 只是占位，不算"空字符串"口音
        message = {"role": "assistant", "content": self.content or None, "tool_calls": self.calls}
        if self.reasoning:
            message[self.reasoning_field] = self.reasoning
        return message


# ---------------------------------------------------------------- 错误：每家的形状和说法

# 智谱的业务错误码（open.bigmodel.cn 文档"错误码"页；只收上课最常遇到的几个）
GLM_CODES = {
    "1000": ("auth", "鉴权失败：Key 不对或已失效"), "1001": ("auth", "请求头里没有 Key"),
    "1002": ("auth", "Key 格式不对或已失效"), "1003": ("auth", "Key 已过期"),
    "1113": ("rate_limit", "账户欠费，请到智谱控制台充值或换免费模型（如 glm-4-flash）"),
    "1211": ("bad_request", "模型不存在：请检查模型名（例如 glm-4.5-flash）"),
    "1214": ("bad_request", "请求参数不合法：常见原因是历史里 assistant 消息 content 为 \"\" 又带 tool_calls，"
                            "或 tool 消息的 content 不是字符串"),
    "1301": ("bad_request", "内容被平台的安全审核拦下了：请换个问题，或检查工具结果里有没有敏感内容"),
    "1302": ("rate_limit", "并发数超过限制：请等几秒再试"), "1303": ("rate_limit", "请求频率超过限制：请等几秒再试"),
    "1305": ("rate_limit", "平台当前请求太多：请稍后再试"),
}
GLM_TOO_LONG = "1261"      # 智谱：输入超过了模型的上下文长度
# 阿里云百炼（DashScope）原生接口的错误码：{"code": ..., "message": ..., "request_id": ...}
DASHSCOPE_CODES = {
    "InvalidApiKey": ("auth", "Key 无效：请检查百炼控制台里的 API Key（以 sk- 开头）"),
    "Arrearage": ("rate_limit", "阿里云账户欠费：请到控制台充值"),
    "Throttling": ("rate_limit", "请求太频繁：请等几秒再试"),
    "InvalidParameter": ("bad_request", "参数不合法：请看下面平台的原话，通常是模型名或消息格式"),
    "DataInspectionFailed": ("bad_request", "内容没有通过平台的安全审核：请换个问题"),
    "ModelNotFound": ("bad_request", "模型不存在：请检查模型名（例如 qwen-plus）"),
}
OPTIONAL_PARAMETERS = {
    "tool_choice": re.compile(r"tool[_ ]choice", re.I),
    "parallel_tool_calls": re.compile(r"parallel[_ ]tool[_ ]calls", re.I),
    "strict": re.compile(r"\bstrict\b", re.I),
}


def error_fields(text):
    """错误体 -> (平台错误码, 平台原话, request_id)。认得三种形状：
    OpenAI/DeepSeek/智谱的 {"error": {"code", "message"}}、DashScope 原生的 {"code", "message", "request_id"}、
    以及 {"detail": ...} / {"message": ...} 这类简写（vLLM、各种网关）。"""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None, None, None
    if not isinstance(data, dict):
        return None, None, None
    inner = data.get("error") if isinstance(data.get("error"), dict) else data
    message = inner.get("message") or data.get("detail") or (data.get("error") if isinstance(data.get("error"), str) else None)
    code = inner.get("code")
    return (str(code) if code is not None else None), (str(message) if message else None), data.get("request_id")


def gateway_page(status, text, server):
    """HTML 错误页：请求根本没到模型服务，是中间的网关/代理（nginx、CDN、公司代理）答的。"""
    title = re.search(r"<title>(.*?)</title>|<h1>(.*?)</h1>", text, re.S | re.I)
    title = " ".join((title.group(1) or title.group(2)).split()) if title else text.strip()[:60]
    who = f"（{server}）" if server else ""
    if status in (502, 503, 504):
        return ("server", f"请求没有到达模型：中间的网关{who}返回了一个 HTML 错误页「{title}」（HTTP {status}）。"
                          f"通常是模型服务暂时挂了或太忙，或本地服务（Ollama/vLLM）没启动、端口不对。请稍后重试，并检查 Base URL。", None)
    return ("bad_request" if status < 500 else "server",
            f"服务端返回了一个 HTML 网页「{title}」（HTTP {status}）而不是 JSON 错误：Base URL 多半指向了网站或网关，"
            f"而不是 API（OpenAI 兼容接口通常以 /v1 结尾）。请检查地址{who}。", None)


# OpenAI 的原话（preceeding 的拼写也是原样）：tool 消息前面没有它的调用
ORPHAN_RESULT = re.compile(r"role 'tool' must be a response to a prece+ding", re.I)
# llama.cpp 读不了历史里 assistant 调用的参数（一个写到一半被 max_tokens 截断的调用）
CUT_CALL = re.compile(r"Failed to parse tool call arguments", re.I)
# 请求比模型的上下文还长：llama.cpp、OpenAI / DeepSeek / vLLM、百炼各自的说法（智谱是错误码 1261）
CONTEXT_EXCEEDED = re.compile(r"exceeds? the available context|exceed_context_size|context_length_exceeded|"
                              r"maximum context length|context window|prompt is too long|input length should be",
                              re.I)


def explain_error(status, text, sent, server=None):
    """HTTP 错误 -> (LLMError 的 code, 中文说明, retry_without) 或 None（交给通用说法）。
    sent 是发出去的请求体：只有真的发了某个可选参数，才会建议"去掉它重试"。"""
    text = text or ""
    if text.lstrip()[:15].lower().startswith(("<!doctype", "<html")) or "<html" in text[:200].lower():
        return gateway_page(status, text, server)
    code, said, request_id = error_fields(text)
    quoted = f"平台原话：{said}" if said else ""
    quoted += f"（错误码 {code}）" if code and said else ""
    quoted += f"（request_id {request_id}，找平台客服时报这个）" if request_id else ""
    said = said or ""
    if "reasoning_content" in said:
        if re.search(r"pass(ed)? back|must be", said, re.I):
            return ("bad_request", "DeepSeek 的思考模式要求：带工具调用的那一轮 assistant 消息，reasoning_content 必须原样放回历史。"
                                   f"本课的客户端会自动保留它；如果历史是你自己拼的，请把它加回去。{quoted}", None)
        return ("bad_request", "服务端不接受输入消息里的 reasoning_content（思考过程）：把历史发回去之前删掉这个字段。"
                               f"{quoted}", None)
    if CUT_CALL.search(said):         # code "server" still: the server took the request and failed on what the model wrote
        return ("server", "服务端读不了历史里一个调用的参数：它不是合法的 JSON。多半是上一轮的回答写到 max_tokens 被截断，"
                               "最后一个调用只写了一半（时间线里那一轮的 finish_reason 是 length），循环把它照原样放回了历史。"
                               "不是服务端坏了，重试也一样：这是小模型原地打转的后果，换一个更大的模型再试。" + quoted, None)
    if CONTEXT_EXCEEDED.search(said) or CONTEXT_EXCEEDED.search(str(code or "")) or code == GLM_TOO_LONG:
        return ("context_exceeded", context_exceeded(text) + quoted, None)
    if ORPHAN_RESULT.search(said):
        return ("orphan_result", "请求里有一条 role 为 tool 的结果，前面找不到它回答的那个调用（没有哪条 assistant 消息的 "
                               "tool_calls 里有这个 id），服务端拒收了整个请求（HTTP 400）。多半是裁剪历史时丢了调用、留下了结果："
                               f"调用和它的结果要一起留、一起丢。{quoted}", None)
    if status in (400, 422) and said:
        for parameter, pattern in OPTIONAL_PARAMETERS.items():
            if pattern.search(said) and was_sent(parameter, sent):
                return unsupported(parameter, sent, said, quoted)
    if code in GLM_CODES:
        kind, meaning = GLM_CODES[code]
        return (kind, f"智谱返回错误码 {code}（HTTP {status}）：{meaning}。{quoted}", None)
    if code in DASHSCOPE_CODES or (code or "").startswith("Throttling"):
        kind, meaning = DASHSCOPE_CODES.get(code) or DASHSCOPE_CODES["Throttling"]
        return (kind, f"阿里云百炼返回 {code}（HTTP {status}）：{meaning}。{quoted}", None)
    if status == 402:
        return ("rate_limit", f"账户余额不足（HTTP 402，DeepSeek 等平台这样表示欠费）：请到平台控制台充值。{quoted}", None)
    if status == 422:
        return ("bad_request", f"请求参数不合法（HTTP 422）：请对照平台文档检查参数名和取值。{quoted}", None)
    return None


def context_exceeded(text):
    """请求超出上下文时说什么：不是参数写错了，是对话太长了。llama.cpp 会报出两个数，有就说出来。"""
    try:
        body = json.loads(text or "")
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        sizes = (inner.get("n_prompt_tokens"), inner.get("n_ctx"))
    except (ValueError, AttributeError):
        sizes = (None, None)
    counted = (f"这次请求有 {sizes[0]} 个 token，服务端的上下文只有 {sizes[1]} 个。"
               if all(isinstance(n, int) for n in sizes) else "")
    return ("请求超出了模型的上下文长度，服务端拒收了整个请求：每次请求都带着整段对话（问题、每个工具调用和它的结果、工具清单），"
            f"对话越长请求越长。{counted}看看时间线里是什么让对话变长了：同一个调用重复了很多次、某个工具结果特别长。"
            "收拾历史的几种做法见「上下文预算」一课；也可以换一个上下文更长的模型（llama-server 启动时用 -c 调大）。")


def was_sent(parameter, sent):
    if parameter == "strict":
        return any((t.get("function") or {}).get("strict") is not None for t in (sent or {}).get("tools") or [])
    return parameter in (sent or {})


def unsupported(parameter, sent, said, quoted):
    value = "tools[].function.strict" if parameter == "strict" else f"{parameter}={json.dumps(sent[parameter], ensure_ascii=False)}"
    why = ""
    if "enable-auto-tool-choice" in said:
        why = ("这是 vLLM 没开工具解析器：启动时加 --enable-auto-tool-choice --tool-call-parser <解析器>"
               "（Qwen 系列多用 hermes）。去掉 tool_choice 重试，模型可能会把调用写成文字。")
    elif "thinking" in said:
        why = "这个模型在思考模式下不接受强制调用（required 或指定函数），只能用 auto。"
    return ("bad_request", f"服务端不支持这个参数：{value}（HTTP 400）。{why}可以去掉 {parameter} 再试一次；"
                           f"本课的循环在没有它时也能跑，只是少了它带来的约束。{quoted}", parameter)


if __name__ == "__main__":
    # 一条带着好几种口音的回答：思考块、缺 id、参数是对象、content 是 ""、finish_reason 是 stop
    heard = {"content": "<think>先查北京</think>", "tool_calls": [
        {"function": {"name": "get_weather", "arguments": {"city": "北京"}}}]}
    message, finish, reasoning, found = tidy(heard, "stop", ["get_weather"])
    print(json.dumps(message, ensure_ascii=False), finish, reasoning, sep="\n")
    for accent in found:
        print(f"- [{accent['code']}] {accent['message']}")
