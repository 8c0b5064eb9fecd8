"""8.13 MiniAgent: the chapter's parts on one loop (code/mini_agent.py), on the session's workspace.
The student picks the tools, the permission rules, the hooks, the context strategy and budget, the
skills, sub-agents and the plan tool; the run's timeline shows each part where it acts, a rule's "ask"
waits in the same box as on the permission lesson, and the whole agent is shown as the one file
code/mini_agent_file.py writes from the same choices, to download and run with `python mini_agent.py`."""
from __future__ import annotations

import os
import tempfile

import gradio as gr

import context
import skills
from mini_agent import CONTEXT_CHOICES, HOOK_PRESETS, WORKSPACE_TOOLS
from mini_agent_file import DEFAULT_TASK

from i18n import now, tr

from access.clients import make_client
from catalogue import LESSONS
from lessons.code_box import CodeBox
from lessons.editor_panel import lesson_text_box
from lessons.lesson_page import LessonPage
from lessons.run_panel import RunPanel
from lessons.settings_panel import SettingsPanel
from lessons.workspace_panel import WorkspaceView
from runs import mini_agent_backend
from serving.page_events import PRIVATE, session_of

LESSON = LESSONS["mini_agent"]
PRESETS = [
    DEFAULT_TASK,
    "派一个子代理去跑一下测试",
    "运行 `rm notes.md`",
    "读一下 notes.md，告诉我练习要做什么",
]
HOOK_LABELS = {"protect_tests": tr("protect_tests：不许改 tests/ 里的文件（PreToolUse）",
                                   "protect_tests: no edits under tests/ (PreToolUse)"),
               "mask_secrets": tr("mask_secrets：结果里的密钥遮住（PostToolUse）",
                                  "mask_secrets: mask secrets in results (PostToolUse)")}
NO_FILE = tr("# 选得不对的地方改好以后，这里是整个 Agent 的源码。", "# Once the choices are fixed, the whole agent's source is here.")


def skill_names() -> list[str]:
    """The skills the boxes offer: the course's fix-tests and the names of the workspace's example skills
    (the run reads them from the workspace's skills/ as they are then)."""
    return [mini_agent_backend.SKILL_EXAMPLE.name, *skills.EXAMPLES]


def score_table(scores: mini_agent_backend.Scores) -> str:
    """Each case: passed or not, with the composed agent and with the plain loop (and what went wrong), then
    the totals. The figures are this one run's: one trial per case."""
    composed, plain = scores.totals()
    mark = {True: "✓", False: "✗"}
    rows = [tr("| 用例 | 这组零件 | 只用 Function Calling | 没通过的原因 |", "| Case | These parts | Plain Function Calling | Why it failed |"),
            "|---|---|---|---|"]
    for mine, theirs in zip(scores.composed, scores.plain):
        problem = mine.score.problem if not mine.score.passed else theirs.score.problem if not theirs.score.passed else ""
        rows.append(f"| {mine.case.name} | {mark[mine.score.passed]} | {mark[theirs.score.passed]} | {problem} |")
    total = tr("**这组零件：通过 {a} / {n}；只用 Function Calling：通过 {b} / {m}。**（每个用例跑一次）",
               "**These parts: {a} / {n} passed; plain Function Calling: {b} / {m} passed.** (one run per case)").format(
                   a=composed.passed, n=composed.runs, b=plain.passed, m=plain.runs)
    return total + "\n\n" + "\n".join(str(row) for row in rows)


def build(settings: SettingsPanel) -> LessonPage:
    defaults = mini_agent_backend.default_options()
    with gr.Column(elem_id=LESSON.panel, elem_classes=["tw-lesson"]):
        lesson_text_box(LESSON)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=320):
                gr.Markdown(tr("**零件**（默认是 `code/mini_agent.py` 的 DEMO：每个零件都选上）",
                               "**Parts** (the default is `code/mini_agent.py`'s DEMO: every part chosen)"))
                tools = gr.CheckboxGroup(list(WORKSPACE_TOOLS), value=defaults["tools"],
                                         label=tr("工具（8.5）", "Tools (8.5)"), elem_classes=["tw-ma-tools"])
                rules_on = gr.Checkbox(defaults["rules_on"], label=tr("权限规则（8.6）", "Permission rules (8.6)"),
                                       elem_classes=["tw-ma-rules-on"])
                rules = gr.Code(defaults["rules"], language="json", interactive=True, lines=8,
                                label=tr("规则（键：工具名，或 bash:命令模式 / write:路径模式 / edit:路径模式；值：allow / ask / deny）",
                                         "Rules (key: a tool name, or bash:command pattern / write:path pattern / "
                                         "edit:path pattern; value: allow / ask / deny)"),
                                elem_classes=["tw-ma-rules"])
                hooks = gr.CheckboxGroup([(HOOK_LABELS[name], name) for name in HOOK_PRESETS], value=defaults["hooks"],
                                         label=tr("钩子（8.7）", "Hooks (8.7)"), elem_classes=["tw-ma-hooks"])
                with gr.Row():
                    strategy = gr.Dropdown([(tr(context.STRATEGIES[name], context.TITLES_EN[name]), name)
                                            for name in CONTEXT_CHOICES], value=defaults["context"],
                                           label=tr("上下文（8.8）", "Context (8.8)"), elem_classes=["tw-ma-context"])
                    budget = gr.Slider(200, 16000, value=defaults["budget"], step=100,
                                       label=tr("预算（token，估计值）", "Budget (tokens, estimated)"),
                                       elem_classes=["tw-ma-budget"])
                chosen_skills = gr.CheckboxGroup(skill_names(), value=defaults["skills"],
                                                 label=tr("技能（8.9：fix-tests 来自课程代码，其余是工作区 skills/ 里的）",
                                                          "Skills (8.9: fix-tests is the course's, the rest are the "
                                                          "workspace's skills/)"),
                                                 elem_classes=["tw-ma-skills"])
                with gr.Row():
                    subagents = gr.Checkbox(defaults["subagents"], label=tr("子代理 task（8.10）", "Sub-agents: task (8.10)"),
                                            elem_classes=["tw-ma-subagents"])
                    plan = gr.Checkbox(defaults["plan"], label=tr("计划 write_todos（8.3）", "Plan: write_todos (8.3)"),
                                       elem_classes=["tw-ma-plan"])
                view = WorkspaceView()
            with gr.Column(scale=6, min_width=320):
                parts = {"tools": tools, "rules_on": rules_on, "rules": rules, "hooks": hooks, "context": strategy,
                         "budget": budget, "skills": chosen_skills, "subagents": subagents, "plan": plan}
                run = RunPanel(LESSON, settings, None, PRESETS, options=parts, workspace=view, ask=True)
        with gr.Accordion(tr("📄 整个 Agent：一个文件（mini_agent.py）", "📄 The whole agent: one file (mini_agent.py)"),
                          open=True, elem_classes=["tw-ma-file-box"]):
            gr.Markdown(tr("`code/mini_agent_file.py` 按上面选的零件写成的文件，只要标准库和 openai；默认的任务是上面的问题。"
                           "先 `python code/offline_server.py --port 8765`，再 `python mini_agent.py --workspace 某个文件夹`。",
                           "The file `code/mini_agent_file.py` writes from the parts chosen above: only the standard "
                           "library and openai; its default task is the question above. Start "
                           "`python code/offline_server.py --port 8765`, then `python mini_agent.py --workspace "
                           "some-folder`."))
            file_status = gr.Markdown(elem_classes=["tw-ma-file-status"])
            source = CodeBox(mini_agent_backend.file_for(defaults, None, DEFAULT_TASK), language="python",
                             filename="mini_agent.py", lines=20, max_lines=40, label="mini_agent.py",
                             elem_classes=["tw-ma-file"])
            download_btn = gr.Button(tr("⬇ 下载 mini_agent.py", "⬇ Download mini_agent.py"), size="sm",
                                     elem_classes=["tw-ma-download"])
            download = gr.File(label="mini_agent.py", interactive=False, visible=False, elem_classes=["tw-ma-download-file"])

        with gr.Accordion(tr("📊 8.12 的用例给这组零件打分", "📊 8.12's cases score these parts"), open=False,
                          elem_classes=["tw-ma-score-box"]):
            gr.Markdown(tr("8.12 的天气用例（`code/evaluation_cases.py`），每个跑一次，用「模型设置」里的模型：工具换成天气示例的工具，"
                           "所以上面选的工作区工具和权限规则（它们管的是工作区的工具）打分时不用，钩子、上下文、技能、子代理、计划照你的选择；"
                           "旁边是同样的用例只用 Function Calling 循环的结果。",
                           "8.12's weather cases (`code/evaluation_cases.py`), one run each, on the model in «Model "
                           "settings»: the tools are the weather example's, so the workspace tools and the permission "
                           "rules chosen above (they are about the workspace's tools) are left out; the hooks, context, "
                           "skills, sub-agents and plan are as you chose. Beside them: the same cases on the plain "
                           "Function Calling loop."))
            score_btn = gr.Button(tr("📊 打分", "📊 Score"), size="sm", elem_classes=["tw-ma-score"])
            score_view = gr.Markdown(elem_classes=["tw-ma-score-view"])

        inputs = {*parts.values(), run.question}

        def written(values: dict, request: gr.Request) -> tuple[str | None, str]:
            """(the file's text, "") or (None, what is wrong with the choices)."""
            options = {name: values[component] for name, component in parts.items()}
            try:
                return mini_agent_backend.file_for(options, session_of(request), values[run.question]), ""
            except ValueError as exc:
                return None, "❌ " + str(exc)

        def show_file(values: dict, request: gr.Request) -> dict:
            text, problem = written(values, request)
            if text is None:
                return {source: gr.update(value=now(NO_FILE)), file_status: problem}
            return {source: text, file_status: tr("✅ {n} 行。", "✅ {n} lines.").format(n=len(text.splitlines()))}

        def save_file(values: dict, request: gr.Request) -> dict:
            text, problem = written(values, request)
            if text is None:
                return {download: gr.update(visible=False), file_status: problem}
            path = os.path.join(tempfile.mkdtemp(prefix="tool-workshop-"), "mini_agent.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            return {download: gr.update(value=path, visible=True),
                    file_status: tr("已写好，点文件名下载。", "Written: click the file name to download.")}

        # The file has one writer for all the choices: its next redraw waits for the one under way and reads
        # the choices as they are then ("always_last"), so the file shown is always the latest choices'.
        gr.on([component.change for component in inputs], show_file, inputs, [source, file_status],
              trigger_mode="always_last", api_visibility=PRIVATE, show_progress="hidden")
        # A download writes the file the box shows; the box stays that listener's alone.
        download_btn.click(save_file, inputs, [download, file_status], api_visibility=PRIVATE)

        def scored(values: dict, request: gr.Request) -> str:
            options = {name: values[component] for name, component in parts.items()}
            model, session_key = settings.read(values)
            try:
                client = make_client(model, session_key, settings.secrets, request=request)
                scores = mini_agent_backend.score(options, session_of(request), client, model.temperature)
            except Exception as exc:   # choices that do not fit, a missing key: said, nothing scored
                return "❌ " + (str(exc) or exc.__class__.__name__)
            return score_table(scores)

        score_btn.click(scored, {*parts.values(), *settings.components}, [score_view], api_visibility=PRIVATE)
        run.wire()
    # The choices the browser kept come back without a change event: the file follows them once they are back.
    return LessonPage(LESSON.id, run, also_on_load=(show_file, inputs, [source, file_status]))
