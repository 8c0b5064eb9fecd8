"""What the sandbox tells a student, in Chinese: why a job produced no usable reply, and
in which mode the sandbox runs.  Here are only the sentences: the error text around them
(label and all) is written by `tool_outcome.error_text`, the one formatter of the project."""
import os


def verdict(code, message, line=None):
    """The `error` of a reply: what went wrong, where (a line of the student's source)."""
    return {"code": code, "message": message, "line": line}


def machine_failure(outcome, limits, wall_seconds, memory_bytes, process="工具进程"):
    """Turns a job that produced no usable reply into (code, Chinese message); `process` names what
    ran ("工具进程", "钩子进程")."""
    if outcome.timed_out:
        return "timeout", f"运行超过 {wall_seconds:g} 秒，检查是否有死循环或长时间等待。"
    if outcome.too_large in ("stdout", "stderr"):
        return "output_too_large", (f"输出超过 {limits.output_bytes // 1024} KB，已停止运行。"
                                    "请减少 print 的内容，只输出需要的信息。")
    if outcome.too_large == "result":
        return "output_too_large", (f"返回值超过 {limits.result_bytes // 1024} KB。"
                                    "请只返回模型需要的信息，不要返回整份数据。")
    stderr = outcome.stderr.decode("utf-8", "replace")
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return "memory_limit", (f"内存超过上限（约 {memory_bytes >> 20} MB），{process}被终止。"
                                "请减少数据量。")
    if "RecursionError" in stderr or "Fatal Python error" in stderr or not stderr.strip():
        return "worker_crashed", (f"{process}意外退出（常见原因：递归太深、内存耗尽或触碰了系统限制）。"
                                  "请检查代码后重试。")
    return "worker_crashed", f"{process}意外退出。请检查代码后重试。"


# Refusals of the admission gate; `what` is the kind of job as a student calls it ("工具", "bash 命令").

MCP_SERVER = "MCP 服务器"     # Settings.mcp.what


def _spaced(what):
    return f" {what}" if what[:1].isascii() else what     # 你的 bash 命令, 你的工具


def over_budget(what, used, allowed, retry_in, heaviest=None, probation=""):
    """`heaviest`: (job, seconds, seconds ago) of the job that used most of the minute; `probation`: on_probation's sentence."""
    fix = "死循环或耗时的代码" if what in ("工具", MCP_SERVER) else "一直等待、死循环或耗时的命令"
    most = ""
    if heaviest is not None:
        job, seconds, ago = heaviest
        most = f"，其中最多的一次是{_spaced(job)}（{_ago(ago)}，用了 {seconds:.1f} 秒）"
    return (f"运行太频繁：你的{_spaced(what)}在最近一分钟里累计运行了 {used:.1f} 秒（上限 {allowed:g} 秒）{most}。"
            f"{_sentence(probation)}请修好{fix}后，约 {retry_in} 秒后再试。")


def on_probation(what, job, ago, left, allowed, normal):
    """Why a session's jobs run within probation's limits: which job ran into a limit, when, and for how much longer."""
    job = f"{job} " if job[-1:].isascii() else job          # 工具 forever 运行时
    return (f"这个会话在观察期：{_ago(ago)}，{job}运行时超出了上限（时间、内存或输出）；"
            f"在公开的服务器上，这之后你在这一页里的{_spaced(what)}都按观察期的限额运行"
            f"（每分钟 {allowed:g} 秒，平时 {normal:g} 秒；每次运行的时限也更短），观察期还剩 {left} 秒")


def _ago(seconds):
    return "刚才" if seconds < 1 else f"{seconds} 秒前"


def _sentence(text):
    return f"{text}。" if text else ""


def session_busy(what, running):
    if what == "工具":
        return f"你已经有 {running} 个工具任务在运行，请等它们结束后再试。"
    if what == MCP_SERVER:
        return f"你已经有 {running} 个 MCP 服务器在运行，请等这次运行结束后再试。"
    return f"你已经有 {running} 条{_spaced(what)}在运行（每人同时只能运行一条），请等它结束后再试。"


def too_many_runs(what, probation=""):
    if what == "工具":
        return f"一分钟内运行次数太多。{_sentence(probation)}请稍等片刻再试。"
    return f"一分钟内运行{_spaced(what)}的次数太多。{_sentence(probation)}请稍等片刻再试。"


def probation_queue_full(what, probation=""):
    return (f"你的{_spaced(what)}最近超时或超出了资源上限，这类任务需要排队，"
            f"现在排队的太多了。{_sentence(probation)}请修好代码后几秒再试。")


def limit_on_probation(message, probation):
    """A job on probation that ran into probation's shorter limits: what happened, then why the limits were short."""
    return f"{message.rstrip('。')}（这是观察期的限额）。{_sentence(probation)}"


def server_busy(what):
    if what == "工具":
        return "服务器正忙（同时运行的工具任务太多），请几秒后再试。"
    return f"服务器正忙（全班同时运行的{_spaced(what)}太多），请几秒后再试。"


def worker_unavailable(exc):
    return "worker_crashed", f"无法启动工作进程：{exc}"


BAD_REPLY = ("worker_crashed", "工作进程的回复格式不对，请重试。")


def describe_mode(layers, public, start_error=None):
    """The mode and the notice for the layers a worker reported (None: no worker started)."""
    # "notice" is Chinese; "notice_en" says the same for an English page (i18n).
    if not layers:
        return {"mode": "refused", "layers": {}, "public": public,
                "notice": f"无法启动运行工具的工作进程，暂时不能运行工具代码（{start_error}）。",
                "notice_en": f"The worker process that runs tools could not start: tool code cannot run for now ({start_error})."}
    layers = dict(layers)
    why = layers.get("seccomp_error", "")
    if layers.get("seccomp"):
        parts, parts_en = ["seccomp 系统调用过滤"], ["seccomp system-call filtering"]
        if layers.get("landlock"):
            parts.append(f"Landlock 文件与网络限制（ABI {layers['landlock']}）")
            parts_en.append(f"Landlock file and network limits (ABI {layers['landlock']})")
        if layers.get("rlimits"):
            parts.append("CPU、内存、文件与输出上限")
            parts_en.append("CPU, memory, file and output limits")
        if layers.get("uid") not in (None, 0) and os.geteuid() == 0:
            parts.append("以无特权用户运行")
            parts_en.append("an unprivileged user")
        return {"mode": "sandboxed", "layers": layers, "public": public,
                "notice": "工具代码在一次性的隔离进程中运行：" + "、".join(parts) + "。",
                "notice_en": "Tool code runs in single-use isolated processes: " + ", ".join(parts_en) + "."}
    if public:
        return {"mode": "refused", "layers": layers, "public": public,
                "notice": ("这台服务器无法加载 seccomp 沙箱（" + (why or "未知原因")
                           + "）。应用正在公开提供服务，为安全起见不运行任何工具代码。"
                           "请在自己的电脑上运行本应用来体验。"),
                "notice_en": (f"This server cannot load the seccomp sandbox ({why or 'reason unknown'}). The app is "
                              "served publicly, so for safety no tool code runs. Run the app on your own computer "
                              "to try it.")}
    return {"mode": "unsandboxed", "layers": layers, "public": public,
            "notice": ("注意：本机没有可用的 seccomp 沙箱（" + (why or "未知原因")
                       + "），工具代码只在带资源限制的子进程中运行，没有隔离。"
                       "只适合在自己的电脑上运行自己信任的代码。"),
            "notice_en": (f"Note: this machine has no seccomp sandbox ({why or 'reason unknown'}): tool code runs "
                          "only in a child process with resource limits, not isolated. Only for code you trust, "
                          "on your own computer.")}


def mcp_ended(reason, limits=None, wall_seconds=None, cpu_seconds=None, request_seconds=None, method=None):
    """Why the sandbox ended an MCP server before its run did (None: nothing to say)."""
    if reason == "session_ended":
        return "这个页面的会话已经结束，沙箱结束了它的 MCP 服务器。"
    # reason -> (what the server did, what to look for)
    said = {
        "request_timeout": (f"超过 {request_seconds or 0:g} 秒没有回答 {method}",
                            f"请检查{'导入源码或' if method == 'initialize' else ''}工具里是否有死循环、长时间等待。"),
        "timeout": (f"运行超过 {wall_seconds or 0:g} 秒", "请检查工具或导入时是否有死循环、长时间等待。"),
        "cpu_limit": (f"用满了 {cpu_seconds or 0:g} 秒 CPU", "请检查工具或导入时是否有死循环或耗时的计算。"),
        "output_too_large": (f"的日志（stderr 与 print）超过 {limits.output_bytes // 1024 if limits else 0} KB",
                             "请减少 print 的内容，只输出需要的信息。"),
        "message_too_large": (f"的一条消息超过 {limits.result_bytes // 1024 if limits else 0} KB",
                              "请只返回模型需要的信息，不要返回整份数据。"),
    }.get(reason)
    return None if said is None else f"MCP 服务器{said[0]}，沙箱结束了它。{said[1]}"
