"""How each lesson's loop starts: one function per kind of run, all with the signature of
backend.Starter, `start(client, question, tools, execute, settings, options)`.

The page, the named API and the workspace lessons start runs through these, by way of the
lesson catalogue (catalogue/), which names each by its name here (`of(lesson)` finds it): none of
them needs a page module to start a run.
"""
from __future__ import annotations

import inspect
import math
from typing import Callable

import first_call as one_request
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from llm_clients import without_parameter
from mini_agent import MAX_TURNS as MINI_AGENT_TURNS
from mini_agent import run_mini_agent
from planning import plan_then_execute, run_with_plan
from react_loop import run_react
from subagents import CHILD_SECONDS, CHILD_TURNS, run_with_subagents

from runs import backend, context_backend, hooks_backend, mcp_backend, mini_agent_backend, sessions_backend, skills_backend


def tool_choice_value(choice: str | None):
    """The tool_choice option -> the API's tool_choice: a keyword, or one forced function."""
    if not choice or choice == "auto":
        return None if not choice else "auto"
    if choice in ("none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _call_options(tools: list, options: dict, parallel_default: bool) -> tuple[list, object, bool]:
    """(tools, tool_choice, parallel_tool_calls) as the options ask, less what the endpoint refused
    (「去掉 … 重试」: options["without"] names the parameters not to send)."""
    tool_choice = tool_choice_value(options.get("tool_choice"))
    parallel = bool(options.get("parallel_tool_calls", parallel_default))
    for parameter in options.get("without") or ():
        tools, tool_choice, parallel = without_parameter(tools, tool_choice, parallel, parameter)
    return tools, tool_choice, parallel


def first_call(client, question, tools, execute, settings, options):
    """第一次调用 (8.1): one request and its response, no loop and no tool run, with code/first_call.py's
    own tool; options["stream"] (on unless said) turns streaming on for this lesson alone. Its request
    event also carries the body the client sends (first_call.request_body), which the page shows raw, and
    where it went: the provider and the Base URL the student typed (never the server's, never a key)."""
    stream = bool(options.get("stream", True))
    body = one_request.request_body(client, question, one_request.TOOLS, stream)
    sent = {"body": body, "provider": settings.provider, "base_url": settings.base_url}
    return backend.relayed(one_request.first_call(client, question, one_request.TOOLS, stream=stream),
                           lambda event: {**event, **sent} if event.get("type") == "request" else event)


def react(client, question, tools, execute, settings, options):
    """正则 ReAct: the model writes Thought / Action text (or, approach "json", a JSON object)."""
    run = run_json_from_text if options.get("approach") == "json" else run_react
    return run(client, question, tools, execute, max_turns=settings.max_turns, temperature=settings.temperature,
               stream=settings.stream, envelope=bool(options.get("envelope")))


def registry(client, question, tools, execute, settings, options):
    """工具注册: the registry's schemas through plain Function Calling, no options."""
    return run_function_calling(client, question, tools, execute, max_turns=settings.max_turns,
                                temperature=settings.temperature, stream=settings.stream)


def function_calling(client, question, tools, execute, settings, options):
    """Function Calling: tools= / tool_calls / role "tool", with tool_choice, parallel calls, envelope."""
    tools, tool_choice, parallel = _call_options(tools, options, parallel_default=False)
    return run_function_calling(
        client, question, tools, execute,
        max_turns=settings.max_turns, temperature=settings.temperature, stream=settings.stream,
        tool_choice=tool_choice, parallel_tool_calls=parallel, envelope=bool(options.get("envelope")),
    )


def planning(client, question, tools, execute, settings, options):
    """计划与执行: approach "todos" lets the model keep its plan through write_todos (checked by the tool's
    rules); "fixed" is the course's way, one plan written first and run step by step. options["broken"]
    names a tool made to fail this run (the demonstration of a failed step), the same in both."""
    broken = {options["broken"]} if options.get("broken") else ()
    if options.get("approach") == "fixed":
        return plan_then_execute(client, question, tools, execute, broken=broken, temperature=settings.temperature,
                                 stream=settings.stream)
    return run_with_plan(client, question, tools, execute, broken=broken, max_turns=settings.max_turns,
                         temperature=settings.temperature, stream=settings.stream)


def mcp(client, question, tools, execute, settings, options):
    """The loop over MCP: the options of Function Calling, the tools from the server's tools/list."""
    tools, tool_choice, parallel = _call_options(tools, options, parallel_default=True)
    return mcp_backend.served_loop(execute, client, question, max_turns=settings.max_turns,
                                   temperature=settings.temperature, stream=settings.stream, tool_choice=tool_choice,
                                   parallel_tool_calls=parallel, envelope=bool(options.get("envelope")))


def hooks(client, question, tools, execute, settings, options):
    """钩子: Function Calling one call at a time, with the hooks source options["hooks"] (run in the
    sandbox) around every call; the settings' temperature and streaming, and options["tool_choice"]."""
    tools, tool_choice, _ = _call_options(tools, options, parallel_default=False)
    return hooks_backend.hooked_loop(execute, client, question, tools, options.get("hooks") or "",
                                     max_turns=settings.max_turns, temperature=settings.temperature,
                                     stream=settings.stream, tool_choice=tool_choice)


def context(client, question, tools, execute, settings, options):
    """上下文预算: options["conversation"] plus the question, shrunk by options["strategy"] into
    options["budget"] tokens, then sent without tools."""
    return context_backend.context_loop(client, question, options, max_turns=settings.max_turns,
                                        temperature=settings.temperature, stream=settings.stream)


def skills(client, question, tools, execute, settings, options):
    """技能: options["skills"] ({folder: SKILL.md}) as a catalogue with load_skill, or pasted in
    whole (options["way"] "pasted"); the tools are the skills' own, not a source's, plus the session's
    memory tools when options["memory"]."""
    return skills_backend.skills_loop(client, question, options, max_turns=settings.max_turns,
                                      temperature=settings.temperature, stream=settings.stream,
                                      session_id=getattr(execute, "session_id", None))


CHILD_TURNS_MAX, CHILD_SECONDS_MAX = 10, 120.0    # what a caller may ask of one sub-agent


def subagent(client, question, tools, execute, settings, options):
    """子代理: Function Calling with a task tool; each task runs a child loop with the same tools
    (in the sandbox), options["child_turns"] rounds and options["child_seconds"] at most."""
    turns = options.get("child_turns")
    turns = min(max(int(CHILD_TURNS if turns is None else turns), 1), CHILD_TURNS_MAX)
    seconds = options.get("child_seconds")
    seconds = float(CHILD_SECONDS if seconds is None else seconds)
    if not math.isfinite(seconds):
        raise ValueError(f"child_seconds 应是 0 到 {CHILD_SECONDS_MAX:g} 之间的秒数，收到 {seconds}")
    seconds = min(max(seconds, 0.0), CHILD_SECONDS_MAX)
    return backend.child_turns(run_with_subagents(client, question, tools, execute, max_turns=settings.max_turns,
                                                  child_turns=turns, child_seconds=seconds,
                                                  temperature=settings.temperature))   # no streaming: one step each


def session(client, question, tools, execute, settings, options):
    """会话与分支: Function Calling on a branch of the session options["session"] (JSONL text), the
    branch options["branch"]; options["fork"] ({"entry", "content"}) edits a message into a new branch
    and runs on from it (runs/sessions_backend.py)."""
    return sessions_backend.session_loop(client, question, tools, execute, options, max_turns=settings.max_turns,
                                         temperature=settings.temperature, stream=settings.stream)


def workspace(client, question, tools, execute, settings, options):
    """The four atomic tools on the session's workspace: the ReAct loop or Function Calling, by
    options["approach"]."""
    if options.get("approach") == "react":
        return react(client, question, tools, execute, settings, {"approach": "react"})
    return function_calling(client, question, tools, execute, settings, {})


def mini_agent(client, question, tools, execute, settings, options):
    """MiniAgent (8.13): code/mini_agent.py with the parts the options choose (mini_agent_backend.choices_from:
    its skills may be the session's workspace files) on the workspace's four tools. At least the course's
    MAX_TURNS rounds (planning, reading a skill, fixing, checking take more than a question and an answer);
    no streaming, like the sub-agent lesson: a sub-agent's events come one step each."""
    choices = mini_agent_backend.choices_from(options, getattr(execute, "session_id", None))
    return backend.child_turns(run_mini_agent(client, question, tools, execute, choices.parts(),
                                              max_turns=max(settings.max_turns, MINI_AGENT_TURNS),
                                              temperature=settings.temperature))


# What a catalogue lesson's `start` may name: the catalogue names its starter and imports none. Every
# function written here with backend.Starter's parameters is one, so a new loop's starter is only written.
STARTER_PARAMETERS = ["client", "question", "tools", "execute", "settings", "options"]
BY_NAME = {name: value for name, value in list(globals().items())
           if inspect.isfunction(value) and value.__module__ == __name__
           and list(inspect.signature(value).parameters) == STARTER_PARAMETERS}


def of(lesson) -> Callable:
    """The starter a catalogue lesson names (its `start`)."""
    if lesson.start not in BY_NAME:
        raise LookupError(f"课程 {lesson.id} 的 start={lesson.start!r} 不是 runs/starters.py 里的开始方式"
                          f"（可选：{', '.join(BY_NAME)}）")
    return BY_NAME[lesson.start]
