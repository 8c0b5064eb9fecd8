"""The lessons, in the course's order: the one place that says what a lesson is.

Each entry holds what every other part reads: the page (which module builds it, its panel, its
titles), links (which parameters a link may set), the run (how its loop starts, whether it works
on the workspace, which option picks a simulated mistake), its editor's example sets, the named API
and the README's lesson table. What is the lesson's alone lives in its folder, lessons/<id>/ (its page,
its texts, its own views), found from the id: adding a lesson is one entry here plus that folder
(README, 添加一课, lists the rest).

The catalogue sits below the page and below the runs: it names its page module (app.py imports
it) and its loop's starter (runs/starters.py resolves it) but imports neither, so runs/, endpoints/
and the tests can read it without building any component or loading any loop.
"""
from __future__ import annotations

import dataclasses

from i18n import now, tr


@dataclasses.dataclass(frozen=True)
class Lesson:
    id: str
    title: tr
    heading: tr                       # its lesson text's title (the text itself: `texts`)
    # The course's section (chapter 8 of the course), or None for a lesson beyond the course text.
    section: str | None
    course_files: tuple[str, ...]     # under code/: what the lesson's loop and tools are made of
    path: str                         # the page's address under the app's root ("": the lesson at /, see ROOT)
    panel: str                        # the page element that holds the lesson (its elem_id)
    # The name of its loop's starter in runs/starters.py (starters.of(lesson) is the function); a
    # workspace lesson has none (workspace_backend starts starters.workspace) unless it names its own loop.
    start: str | None = None
    workspace: bool = False           # runs the four atomic tools on the session's workspace
    # Its tools come from a server that loads the source (MCP): a source that does not load is the
    # server's failure to show, so the run starts all the same.
    served: bool = False
    mistake_option: str | None = None  # the run option that picks a simulated mistake
    link_options: tuple[str, ...] = ()  # link parameters besides example / question
    approaches: tuple[str, ...] = ()    # the loops its "approach" option picks from
    step: bool = True                   # its loop takes step mode's edits (单步); the hooks' loop does not
    # Its loop takes the tools of a source; the context lesson's offers none, the first call its own one tool.
    tools: bool = True
    # Its tools come from an editable source: the example set (lessons/editor_panel.py's EXAMPLES) its editor
    # opens with, None for a lesson without an editor. Every editor offers the shared sets; own_examples
    # are the sets only this lesson's editor offers beside them.
    example: str | None = None
    own_examples: tuple[str, ...] = ()
    # Its endpoint in the named API (endpoints/api.py, "Use via API"): the one that runs its loop, or for
    # the registry lesson the schema its editor shows.
    api: str | None = None

    @property
    def editor(self) -> bool:
        """Its tools come from an editable source with example sets."""
        return self.example is not None

    @property
    def name(self) -> str:
        return self.id

    @property
    def exercises(self) -> tuple:
        """The lesson's exercises (catalogue/exercises.py), in order; () when it has none yet."""
        from catalogue.exercises import lesson_exercises   # below: the exercises read this module's lessons' ids only
        return lesson_exercises(self.id)

    @property
    def folder(self) -> str:
        """Everything that is this lesson's alone, relative to the project's root: "lessons/react"."""
        return f"lessons/{self.id}"

    @property
    def page(self) -> str:
        """The module whose build(settings) makes the lesson's page: "lessons.react.page"."""
        return f"lessons.{self.id}.page"

    @property
    def texts(self) -> tr:
        """Its lesson text's files, Chinese and English, relative to the project's root."""
        return tr(f"{self.folder}/lesson.md", f"{self.folder}/lesson.en.md")

    @property
    def address(self) -> str:
        """The page's address relative to the app's root: "/", "/function-calling"."""
        return "/" + self.path

    def label(self) -> str:
        """The lesson as a list shows it, in the page's language: "8.2 正则 ReAct"."""
        section = self.section or tr("课外", "extra")
        return f"{now(section)} {now(self.title)}"


BEYOND_THE_COURSE = None
WEATHER = "天气"            # the example set most editors open with


LESSONS: dict[str, Lesson] = {lesson.id: lesson for lesson in (
    # One request and its response, no loop: the course's first file; its one tool is the file's own.
    Lesson("first_call", tr("第一次调用", "First call"), tr("一个请求，一个响应", "one request, one response"), "8.1", ("first_call.py",),
           "first-call", "tab-first-call", start="first_call",
           step=False, tools=False, link_options=("stream",), api="first_call"),
    Lesson("react", tr("正则 ReAct", "Regex ReAct"), tr("用文字约定调用工具", "calling tools by a text convention"), "8.2",
           ("react_loop.py", "json_loop.py", "text_parsers.py", "text_protocol_loop.py"),
           "", "tab-react", example=WEATHER, start="react", mistake_option="mistake",
           link_options=("approach", "mistake", "envelope"), approaches=("react", "json"), api="run_react"),
    Lesson("planning", tr("计划与执行", "Plan and execute"), tr("计划是一个工具", "the plan is a tool"), "8.3", ("planning.py",),
           "planning", "tab-planning", example=WEATHER, start="planning",
           link_options=("approach",), approaches=("todos", "fixed"), api="run_planning"),
    Lesson("registry", tr("工具注册", "Tool registry"), tr("从函数签名生成 schema", "a schema from the function signature"), "8.4",
           ("naive_schema.py", "simple_registry.py", "tool_registry.py", "type_schema.py", "tool_arguments.py",
            "tool_outcome.py"),
           "registry", "tab-registry", example=WEATHER, start="registry", api="schema"),
    Lesson("function_calling", tr("Function Calling", "Function Calling"), tr("握手三步", "the three-step handshake"), "8.4",
           ("minimal_loop.py", "function_calling_loop.py", "loop_parts.py", "events.py", "llm_clients.py"),
           "function-calling", "tab-function-calling", example=WEATHER, start="function_calling",
           mistake_option="mistake", link_options=("tool_choice", "mistake", "parallel", "envelope"), api="run_function_calling"),
    # MCP is not a section of the course's chapter: the same registry, served over a protocol.
    Lesson("mcp", tr("MCP", "MCP"), tr("同一批工具，放到 MCP 上", "the same tools, over MCP"), BEYOND_THE_COURSE,
           ("mcp_server.py", "mcp_client_loop.py", "mcp_schema_diff.py"),
           "mcp", "tab-mcp", example=WEATHER, start="mcp", mistake_option="mistake", served=True, api="run_mcp"),
    Lesson("workspace", tr("原子工具", "Atomic tools"), tr("四个原子工具", "four atomic tools"), "8.5", ("atomic_tools.py",),
           "workspace", "tab-workspace", workspace=True,
           link_options=("approach",), approaches=("function_calling", "react"), api="run_workspace"),
    Lesson("permissions", tr("权限与确认", "Permissions"), tr("合法的调用不等于被允许的调用", "a valid call is not an allowed call"), "8.6", ("permissions.py",),
           "permissions", "tab-permissions", workspace=True,
           link_options=("approach", "rules"), approaches=("function_calling", "react"), api="run_workspace"),
    Lesson("hooks", tr("钩子", "Hooks"), tr("每次工具调用的前后", "before and after every tool call"), "8.7", ("hooks.py", "examples_ops.py"),
           "hooks", "tab-hooks", example="运维：配置、SQL、命令", start="hooks", step=False, api="run_hooks"),
    Lesson("context", tr("上下文预算", "Context budget"), tr("上下文装不下的时候", "when the context does not fit"), "8.8", ("context.py",),
           "context", "tab-context", start="context", step=False,
           tools=False, link_options=("strategy", "budget"), api="run_context"),
    Lesson("skills", tr("技能", "Skills"), tr("用到时才读的说明书", "instructions read when needed"), "8.9", ("skills.py",),
           "skills", "tab-skills", start="skills", step=False, tools=False, api="run_skills"),
    Lesson("subagents", tr("子代理", "Sub-agents"), tr("把一件事交给子代理", "handing a job to a sub-agent"), "8.10", ("subagents.py",),
           "subagents", "tab-subagents", example=WEATHER, start="subagent", step=False, api="run_subagent"),
    # A run is a tree of messages: fork from any step, branches side by side, JSONL saved and resumed.
    Lesson("sessions", tr("会话与分支", "Sessions and branches"), tr("一次运行是一棵树", "a run is a tree"), "8.11", ("sessions.py",),
           "sessions", "tab-sessions", example=WEATHER, start="session", api="run_sessions"),
    # A case set run against one or two models; its run panel runs one case's question through Function Calling.
    Lesson("evaluation", tr("评估", "Evaluation"), tr("给工具调用打分", "scoring tool calls"), "8.12", ("evaluation.py", "evaluation_cases.py"),
           "evaluation", "tab-evaluation", example=WEATHER, own_examples=("天气（描述含糊）",), start="function_calling", api="run_eval"),
    # The chapter's parts on one loop, on the workspace; its file runs on its own (mini_agent_file.py).
    Lesson("mini_agent", tr("MiniAgent", "MiniAgent"), tr("把零件装成一个 Agent", "the parts, assembled into one agent"), "8.13", ("mini_agent.py", "mini_agent_file.py"),
           "mini-agent", "tab-mini-agent", start="mini_agent",
           workspace=True, step=False, api="run_mini_agent"),
)}
# The lesson whose page is at the app's root (its path is ""): links handed out before 8.1 had a page
# point there, so the root stays ReAct's although the course, and the list, start with 8.1.
ROOT = next(lesson.id for lesson in LESSONS.values() if lesson.path == "")
# The lessons whose loop runs on a tool source, by the named API's `lesson` parameter.
SOURCE_LESSONS = tuple(lesson.id for lesson in LESSONS.values() if lesson.start is not None and not lesson.workspace)
