"""Named API endpoints (visible under "Use via API") for scripted demos and tests:
the same functions the page uses, with plain inputs and JSON results. Keys are never
parameters: a provider other than the offline model uses the server's configured key."""
from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

import gradio as gr

from planning import tally

from endpoints import workspace_api
from i18n import tr
from runs import (backend, eval_backend, exercises, headline, planning_backend, purposes, session_io,
                  sessions_backend, starters)
from serving.page_events import session_of
from access.clients import Settings, settings_from
from catalogue import LESSONS, SOURCE_LESSONS

MAX_EVENTS = 2_000
MAX_ECHO_CHARS = 10_000
TRY_CALL_KEYS = ("ok", "content", "error_code", "arguments", "problems", "coercions", "duration_ms", "stdout")


def api_settings(provider: str, model: str, max_tokens: Any = None, stream: Any = False) -> Settings:
    """The settings an endpoint's plain inputs stand for (clamped as the page's sliders are)."""
    return settings_from({"provider": provider or "offline", "model": model or "", "max_tokens": max_tokens,
                          "stream": stream})[0]


def _run(lesson, secrets, source, question, settings, options, mistake, session_id, request=None,
         class_code="", fragments=False) -> dict:
    """A whole run of a catalogue lesson's loop through the same backend as the page's 运行, as one
    JSON result: {"ok", "final", "error", "verdict", "tools", "events"}; ok only when the verdict is a
    success. A preset question's run is judged against what it is for, as on the page (runs/purposes.py).
    The streamed fragments (delta events) are left out unless `fragments`: they are the first call's lesson."""
    purpose = purposes.event(purposes.purpose_for(lesson.id, question or "", options))
    run = backend.run_to_end(backend.start_run(starters.of(lesson), source or "", question or "", settings, options,
                                               secrets=secrets, mistake=mistake, session_id=session_id,
                                               request=request, class_code=class_code or "", served=lesson.served,
                                               tools=lesson.tools, purpose=purpose))
    if run.error is not None:
        return {"ok": False, "final": "", "error": run.error, "verdict": None, "tools": run.tools, "events": []}
    events = [e for e in run.events if fragments or e.get("type") != "delta"][:MAX_EVENTS]
    return {**headline.summary(events), "tools": run.tools, "events": events}


def register(secrets: Mapping[str, str]) -> list[str]:
    """Adds the endpoints to the Blocks being built; returns their api_names."""
    secrets = MappingProxyType(dict(secrets))

    def schema(source: str, strict: bool = False, method: str = "registry", request: gr.Request = None) -> dict:
        """工具源码 -> OpenAI tools 列表、警告、错误（含行号）。method: registry | naive。"""
        report = backend.extract(source, method, strict, session_of(request))
        return {key: report[key] for key in ("ok", "tools", "warnings", "error")}

    def try_call(source: str, name: str, arguments: str = "{}", request: gr.Request = None) -> dict:
        """不经过模型，在沙箱里调用一个工具：类型转换、参数问题和 invoke 返回的原文。"""
        result = backend.call_tool(source, name, arguments if arguments is not None else "{}", session_of(request))
        return {key: result.get(key) for key in TRY_CALL_KEYS}

    def first_call(question: str, stream: bool = True, provider: str = "offline", model: str = "",
                   class_code: str = "", max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """第一次调用（8.1，code/first_call.py）：只问模型一次，带一个工具 get_weather(city)，不执行工具。
        事件：request（还带着客户端发出的请求体 body）→ 流式时每一片 delta（at_ms 到达时刻；工具调用的碎片还有
        index、id、name、arguments，so_far 拼到这一片的参数，closed / json_error 是 json.loads 读它的结果）→ response
        （raw 是服务端发来的原文，流式时是分片列表）→ assembled（每个调用由几片拼成、第几片参数才完整，finish_reason 和它的意思）。
        verdict.state：requested（模型要调用工具，参数是完整的 JSON；ok 为 true）、no_tool_call / answered（文字回答）、
        truncated（写到 max_tokens 被截断）、unclosed（参数一直不是完整的 JSON）、missed（预设问题要的调用没有要）、error。"""
        return _run(LESSONS["first_call"], secrets, "", question, api_settings(provider, model, max_tokens),
                    {"stream": bool(stream)}, "", session_of(request), request, class_code, fragments=True)

    def run_function_calling(source: str, question: str, tool_choice: str = "auto",
                             parallel_tool_calls: bool = True, mistake: str = "",
                             provider: str = "offline", model: str = "", class_code: str = "",
                             envelope: bool = False, max_tokens: int = 1024, stream: bool = False,
                             request: gr.Request = None) -> dict:
        """用 Function Calling 跑完一个问题；返回最终回答、判断（verdict，与页面标题同一个对象）和全部事件（不含流式分片）。
        ok 只在判断是成功时为 true：被截断、没调工具就作答、放弃了的回答都不算。问题是页面上的预设问题时，
        事件的第一个是 type 为 purpose 的“这个问题要什么”（该调哪个工具、参数怎样算对，写法同评估一课的用例），
        verdict 对照它判断（没做到就是 missed）；这一条对每个 run_* 接口都一样。
        max_tokens：每轮回答的长度上限（0 = 不发，由服务端定）；stream：是否用流式请求。
        用服务器的密钥（provider 为 glm / openai）且服务器设了课堂口令时，需要 class_code。
        envelope=True：工具结果装进固定形状的 JSON 信封 {"status", "data", "error_code", "message"} 再回填。"""
        options = {"tool_choice": tool_choice, "parallel_tool_calls": parallel_tool_calls, "envelope": bool(envelope)}
        return _run(LESSONS["function_calling"], secrets, source, question,
                    api_settings(provider, model, max_tokens, stream), options, mistake, session_of(request), request,
                    class_code)

    def run_planning(question: str, source: str = "", approach: str = "todos", broken: str = "",
                     provider: str = "offline", model: str = "", class_code: str = "", max_tokens: int = 1024,
                     request: gr.Request = None) -> dict:
        """计划与执行（8.3）：approach=todos 时模型用 write_todos 工具自己写、自己改计划（工具守规则：同一时间最多一项
        in_progress，标成 completed 要有原样摘自成功工具结果的 evidence，不合规则就退回 plan_rule 错误）；approach=fixed 是
        课程仓库的写法，先一次写好全部步骤再逐步执行。source 是工具源码，不给就是示例「天气」；broken 是这次一律失败的工具名
        （演示一步失败了）。事件里每次写计划后有一个 type 为 plan 的事件（之前和之后的计划板、变了什么、replanned 是否改了计划、
        退回的理由 problems）；tally 是 code/planning.py 的计数（请求轮数、token：服务端报的，离线模型的是估算，estimated 为 true）。
        verdict 只在计划做完（每项都有证据）时才是成功；一步失败后改了计划会写明。"""
        if approach not in planning_backend.APPROACHES:
            raise gr.Error(f"approach 只能是 {' / '.join(planning_backend.APPROACHES)}，收到 {approach!r}。")
        options = {"approach": approach, "broken": broken or ""}
        result = _run(LESSONS["planning"], secrets, source or planning_backend.weather_source(), question,
                      api_settings(provider, model, max_tokens), options, "", session_of(request), request, class_code)
        return {**result, "tally": tally(result["events"]) if result["events"] else None}

    def run_mcp(source: str, question: str, tool_choice: str = "auto",
                parallel_tool_calls: bool = True, mistake: str = "",
                provider: str = "offline", model: str = "", class_code: str = "",
                envelope: bool = False, max_tokens: int = 1024, stream: bool = False,
                request: gr.Request = None) -> dict:
        """同 /run_function_calling，但工具由一个 MCP 服务器提供：源码在沙箱里的服务器上运行，循环是 MCP 客户端。
        事件里还有每条 JSON-RPC 消息（type 为 rpc：initialize、tools/list、tools/call，它们的结果和错误）。
        连不上服务器（initialize / tools/list 没有完成）时 verdict.state 是 mcp_failed。"""
        options = {"tool_choice": tool_choice, "parallel_tool_calls": parallel_tool_calls, "envelope": bool(envelope)}
        return _run(LESSONS["mcp"], secrets, source, question, api_settings(provider, model, max_tokens, stream),
                    options, mistake, session_of(request), request, class_code)

    def run_react(source: str, question: str, approach: str = "react", mistake: str = "",
                  provider: str = "offline", model: str = "", class_code: str = "",
                  envelope: bool = False, max_tokens: int = 1024, stream: bool = False,
                  request: gr.Request = None) -> dict:
        """用正则 ReAct（approach=react）或从文本解析 JSON（approach=json）跑完一个问题；结果的形状同 /run_function_calling。
        用服务器的密钥且服务器设了课堂口令时，需要 class_code。envelope=True：Observation 装进 JSON 信封。"""
        options = {"approach": approach, "envelope": bool(envelope)}
        return _run(LESSONS["react"], secrets, source, question, api_settings(provider, model, max_tokens, stream),
                    options, mistake, session_of(request), request, class_code)

    def run_hooks(source: str, hooks: str, question: str, mistake: str = "", provider: str = "offline",
                  model: str = "", class_code: str = "", max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """同 /run_function_calling，但每次工具调用前后运行 hooks（钩子源码，code/hooks.py 的 Hooks）里登记的钩子；
        钩子和工具一样在沙箱里运行，每次一个新进程（钩子之间不留状态：要记录就 print，打印的内容在它的事件里）。
        不设 tool_choice；模型一轮要求几个调用时，它们一个接一个地执行（钩子按顺序看到它们）。事件里还有每个钩子的一次运行（type 为 hook：
        拿到的 payload、返回的 answer、出的错 problem、打印的 printed）。钩子要“先问人”（ask）时没有人可以回答，
        按不执行处理。钩子写的文字（换掉的结果、理由、附言）和工具结果一样最多 4000 字。钩子源码加载不了（或沙箱这次没有运行它）时 verdict.state 是 hooks_failed。"""
        return _run(LESSONS["hooks"], secrets, source, question, api_settings(provider, model, max_tokens),
                    {"hooks": hooks or ""}, mistake, session_of(request), request, class_code)

    def run_context(conversation: Any, question: str, strategy: str = "window", budget: int = 300,
                    provider: str = "offline", model: str = "", class_code: str = "", max_tokens: int = 1024,
                    request: gr.Request = None) -> dict:
        """对话（消息列表，或它的 JSON 文本）加上新问题，按 strategy 收拾进 budget 个 token 再发给模型（不带工具）。
        strategy：none / fold / forget / window / fold_window / naive_window / compact（compact 多一次模型调用写摘要）。
        循环的第一个事件是 type 为 context 的“下一次请求”：每条消息的 token、去向，省下多少，找不到调用的工具结果（orphans），
        和不用模型的几种做法并排（用时是这次量的）。对话用不了时 verdict.state 是 conversation_invalid；
        收拾后的上下文被服务端拒收（孤儿结果）时是 context_rejected。"""
        options = {"conversation": conversation, "strategy": strategy, "budget": budget}
        return _run(LESSONS["context"], secrets, "", question, api_settings(provider, model, max_tokens),
                    options, "", session_of(request), request, class_code)

    def run_skills(skills: Any, question: str, way: str = "catalogue", provider: str = "offline", model: str = "",
                   class_code: str = "", max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """技能（Agent Skills 格式）：skills 是 {文件夹名: SKILL.md 全文}（或它的 JSON 文本），最多 20 个，每个最多 2 万字。
        way=catalogue：system 提示词里只列名字和描述，模型用 load_skill(name) 读正文；way=pasted：正文全贴进 system 提示词。
        循环的第一个事件（type 为 skills）列出读到的技能、不合格的技能（problems，每条说明哪里不对）和两种写法各多少 token。"""
        options = {"skills": skills, "way": way}
        return _run(LESSONS["skills"], secrets, "", question, api_settings(provider, model, max_tokens), options,
                    "", session_of(request), request, class_code)

    def run_subagent(source: str, question: str, child_turns: int = 4, child_seconds: float = 60,
                     provider: str = "offline", model: str = "", class_code: str = "", max_tokens: int = 1024,
                     request: gr.Request = None) -> dict:
        """同 /run_function_calling，但工具里多一个 task(description, prompt)：模型可以把一件事交给子代理。
        子代理从零开始（只有一句 system 和 prompt），用同样的工具（没有 task），最多 child_turns 轮（1～10）、
        child_seconds 秒（0～120）；它的事件带着 "child"（父循环那次 task 调用的 id），只有它的最终回答回到父循环。
        子代理没做完、被截断或没调工具就作答时，verdict 会说出来（成功的父循环变成 child_failed）。"""
        options = {"child_turns": child_turns, "child_seconds": child_seconds}
        return _run(LESSONS["subagents"], secrets, source, question, api_settings(provider, model, max_tokens),
                    options, "", session_of(request), request, class_code)

    def run_sessions(question: str, session: str = "", branch: str = "", fork_entry: str = "", fork_text: str = "",
                     source: str = "", provider: str = "offline", model: str = "", class_code: str = "",
                     max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """会话与分支（code/sessions.py）：在会话 session（JSONL 文本；空就是新会话）的分支 branch（任一条的 id；空就是文件里
        最后写下的那条分支）上接着问 question，走 Function Calling 循环。给了 fork_entry（当前分支上一条消息的 id）时不接着问：
        把那一条改成 fork_text，分出一条新分支，从那里接着跑（question 不用）。source 是工具源码，空就是天气示例。
        返回值同 /run_function_calling，另有 session（跑完以后的 JSONL，下一次原样传回来就接着跑）、branch（当前分支）、
        branches（每条分支从哪里分出、和兄弟哪里不同、最后的回答）。session 读不进来时（逐行检查：大小、字段类型、父条目、
        重复的 id、调用和结果配对），session_problem 写着第几行、错在哪里，session 原样返回。"""
        options: dict[str, Any] = {"session": session or "", "branch": branch or ""}
        if fork_entry:
            options["fork"] = {"entry": fork_entry, "content": fork_text or ""}
            question = sessions_backend.asked_by_fork(session, branch, fork_entry, fork_text or "")
        result = _run(LESSONS["sessions"], secrets, source or sessions_backend.WEATHER_SOURCE, question,
                      api_settings(provider, model, max_tokens), options, "", session_of(request), request, class_code)
        return {**result, **sessions_backend.outcome(session, result["events"], branch)}

    def run_eval(source: str, cases: Any, models: Any = None, trials: int = 1, class_code: str = "",
                 max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """评估（code/evaluation.py）：cases 是用例集（列表、{"cases": 列表}，或它的 JSON 文本），每个用例跑 trials 次（1～5），
        经 Function Calling 循环，工具在沙箱里运行。models 是一到两个模型：[{"provider", "model", "mistake", "price"}]
        （price 为 "输入, 输出" 每百万 token 的价格，不给就不算费用；mistake 只对离线模型）；不给就是离线模型。
        返回每个模型的 totals（通过率和次数、各项对了几次、这次量到的用时 p50 / p95、token：服务端报的 usage，离线模型的是估算）、
        每个用例一行（cases）和每次运行的得分（runs）。用服务器的密钥时每次运行都计入用量；次数超过上限（公开的 Space 上更低）时
        一次也不运行，problem 说明原因。"""
        wanted = models if isinstance(models, list) and models else [{"provider": "offline"}]
        try:
            contenders = [
                eval_backend.Contender(label, api_settings(str(m.get("provider") or "offline"), str(m.get("model") or ""),
                                                           max_tokens),
                                       mistake=(str(m.get("mistake") or "") or None)
                                       if (m.get("provider") or "offline") == "offline" else None,
                                       price=eval_backend.parse_price(m.get("price")))
                for label, m in zip(eval_backend.LABELS, wanted) if isinstance(m, dict)]
        except (ValueError, TypeError) as problem:
            return eval_backend.report(eval_backend.Evaluation(problem=str(problem)))
        if len(wanted) > eval_backend.MODELS_MAX or len(contenders) != len(wanted):
            return eval_backend.report(eval_backend.Evaluation(problem=tr(
                "models 应是一到 {n} 个对象 {{\"provider\", \"model\", \"mistake\", \"price\"}}",
                "models must be one or {n} objects {{\"provider\", \"model\", \"mistake\", \"price\"}}").format(
                    n=eval_backend.MODELS_MAX)))
        state = None
        for state in eval_backend.run_evaluation(source or "", cases, contenders, trials, secrets=secrets,
                                                 session_id=session_of(request), request=request,
                                                 class_code=class_code or ""):
            pass
        return eval_backend.report(state)

    def export(run: dict, lesson: str = "function_calling", source: str = "", question: str = "") -> dict:
        """把 /run_function_calling、/run_mcp 或 /run_react 的返回值整理成会话文档（与页面「导出」的文件相同，可导入回放）。"""
        if lesson not in SOURCE_LESSONS:
            raise gr.Error(f"lesson 只能是 {' / '.join(SOURCE_LESSONS)}，收到 {lesson!r}。")
        events = run.get("events") if isinstance(run, dict) else None
        if not isinstance(events, list) or not all(isinstance(e, dict) and "type" in e for e in events):
            raise gr.Error("run 应是 /run_function_calling、/run_mcp 或 /run_react 的返回值（含 events 事件列表）。")
        tools = run.get("tools") if isinstance(run.get("tools"), list) else []
        settings = Settings().public()
        return session_io.session_document(lesson, source or "", backend.jsonable(tools), question or "",
                                           [backend.jsonable(e) for e in events[:MAX_EVENTS]], settings)

    def check_exercise(lesson: str, exercise: str, state: Any = None, provider: str = "offline", model: str = "",
                       class_code: str = "", max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """检查一个练习（catalogue/exercises.py）：从练习的起始状态加上 state（{字段: 值}，或它的 JSON 文本；只需写和起始状态不同的字段，
        如 {"hooks": "..."}、{"strategy": "compact"}）跑这一课的循环，在离线模型上跑一次（它是规则模型，同样的输入同样的运行）；
        provider 不是 offline 时，再在那个模型上跑 3 次，结果写在 own 里（通过与否以离线模型为准）。
        返回 passed、没做到的地方 failures（每条 {"zh", "en"}）、summary、own，每次运行 trials（含事件）；没通过时还有 hint。
        lesson 或 exercise 不对、state 有练习没有的字段时，ok 为 false，problem 说明原因。参考答案不在返回值里。"""
        try:
            found = exercises.find(lesson or "", exercise or "")
            verdict = exercises.check(found, state, api_settings(provider, model, max_tokens), secrets=secrets,
                                      session_id=session_of(request), request=request, class_code=class_code or "")
        except exercises.ExerciseProblem as problem:
            return {"ok": False, "problem": str(problem)}
        for trial in verdict["trials"]:
            trial["events"] = trial["events"][:MAX_EVENTS]
        return {"ok": True, **verdict, **({} if verdict["passed"] else {"hint": exercises.hint(found)})}

    def run_workspace(question: str, files: dict | None = None, rules: dict | None = None,
                      provider: str = "offline", model: str = "", class_code: str = "",
                      max_tokens: int = 1024, stream: bool = False, request: gr.Request = None) -> dict:
        """在一个临时工作区里用 read / write / edit / bash 跑完一个问题（调用结束后工作区即删除）。
        files：{相对路径: 文本}，运行前的工作区（不给就是初始练习项目）；返回的 files 是运行后的工作区。
        rules：权限规则（同「权限与确认」课，如 {"bash:rm *": "deny"}）；不给则所有调用直接执行。
        规则为 ask 时没有人可以批准，按拒绝处理。
        用 gradio_client 调用时请设 Client(..., download_files=False)：事件里的 {"path": ...} 参数会被它当成文件去下载。"""
        return workspace_api.run(question, files, rules, api_settings(provider, model, max_tokens, stream),
                                 secrets=secrets, request=request, class_code=class_code or "")

    def run_mini_agent(question: str, tools: Any = None, rules: Any = None, hooks: Any = None, context: str | None = None,
                       budget: int | None = None, skills: Any = None, subagents: bool | None = None,
                       plan: bool | None = None, files: dict | None = None, provider: str = "offline", model: str = "",
                       class_code: str = "", max_tokens: int = 1024, request: gr.Request = None) -> dict:
        """MiniAgent（8.13）：这一章的零件装在一个循环上，在一个临时工作区里做完 question（调用结束后工作区即删除）。
        只有 question 必填；没给的零件用 code/mini_agent.py 的 DEMO（每个零件都选上）。
        tools：read / write / edit / bash 里的几个；rules：权限规则（同「权限与确认」课），给 false 就不检查；
        hooks：protect_tests、mask_secrets 里的几个；context：none / fold / forget / window / fold_window / compact，
        budget 是它的 token 预算；skills：技能名（fix-tests，或工作区 skills/ 里的）；subagents、plan：要不要 task、write_todos。
        files：运行前的工作区（不给就是初始练习项目）；返回的 files 是运行后的工作区。规则为 ask 时没有人可以批准，不执行。
        用 gradio_client 调用时请设 Client(..., download_files=False)。"""
        options = {"tools": tools, "rules_on": rules is not False, "rules": None if rules is False else rules,
                   "hooks": hooks, "context": context, "budget": budget, "skills": skills, "subagents": subagents,
                   "plan": plan}
        return workspace_api.run_mini_agent(question, options, files, api_settings(provider, model, max_tokens),
                                            secrets=secrets, request=request, class_code=class_code or "")

    def status() -> dict:
        """沙箱是否可用：mode（sandboxed / unsandboxed / refused）、各隔离层是否开启、给学生看的说明。"""
        current = backend.sandbox_status()
        layers = {name: bool(value) for name, value in (current.get("layers") or {}).items()
                  if name in ("seccomp", "landlock", "rlimits")}
        return {"mode": current["mode"], "layers": layers, "notice": current["notice"]}

    def echo(text: str = "") -> str:
        """原样返回输入（最多 1 万字）：服务器本身一次往返的开销，用来对比其他接口。"""
        return (text or "")[:MAX_ECHO_CHARS]

    endpoints = {"schema": schema, "try_call": try_call, "first_call": first_call, "run_function_calling": run_function_calling,
                 "run_planning": run_planning,
                 "run_mcp": run_mcp, "run_react": run_react, "run_hooks": run_hooks, "run_context": run_context,
                 "run_skills": run_skills, "run_subagent": run_subagent, "run_sessions": run_sessions,
                 "run_eval": run_eval,
                 "run_workspace": run_workspace, "run_mini_agent": run_mini_agent,
                 "check_exercise": check_exercise, "export": export, "status": status, "echo": echo}
    for name, fn in endpoints.items():
        # The schema is a few milliseconds of work: answer it directly, not through the queue.
        gr.api(fn, api_name=name, queue=name != "schema")
    return list(endpoints)
