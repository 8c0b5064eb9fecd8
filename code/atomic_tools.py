"""四个原子工具：read、write、edit、bash——一个会写代码的 Agent 需要的全部。

    registry = make_tools("/某个/工作区")                     # 四个工具都只在这个文件夹里工作
    run(registry, "read", {"path": "src/calc.py"})            # -> ToolOutcome（见 tool_outcome.py）
    run(registry, "edit", {"path": "src/calc.py", "old": "a - b", "new": "a + b"})
    run(registry, "bash", {"command": "python3 -m unittest"})

为什么只要四个：读文件、写文件、改文件，剩下的一切（运行测试、搜索、安装、查看目录）都交给 shell。
工具少，模型就不用在几十个相似的工具里挑，每个工具的错误信息却要写得足够具体，让模型能自己改正：
edit 找不到原文时指出最接近的一行，原文出现多次时说出现在哪几行。

这个文件分四段：1. 路径只许留在工作区里；2. 四个工具；3. 调用；4. 没有隔离的 shell。
bash 默认只是在工作区里跑 `bash -c`，没有任何隔离。应用里换成 sandbox/shell.py 的沙箱版本
（make_tools 的 shell= 参数）：参数和返回值完全一样，外面多了一层真正的边界。
"""
from __future__ import annotations

import difflib
import os
import signal
import stat
import subprocess
import time
from pathlib import PurePosixPath
from typing import Annotated, Callable

from tool_outcome import ToolOutcome, clip, failure, success
from tool_registry import ToolRegistry

MAX_FILE_BYTES = 1 << 20          # 一个文件最多 1 MB：工具只处理源码和笔记
MAX_WORKSPACE_BYTES = 4 << 20     # 整个工作区最多 4 MB
MAX_FILES = 300                   # 最多 300 个文件和文件夹
MAX_TIMEOUT = 30                  # 一条命令最多跑 30 秒：模型在等，学生也在等


class ToolFailure(Exception):
    """工具自己发现的失败：error_code + 结论 + 下一步，run() 把它变成 ToolOutcome。"""

    def __init__(self, code: str, conclusion: str, hint: str = "", detail: str = ""):
        super().__init__(conclusion)
        self.code, self.conclusion, self.hint, self.detail = code, conclusion, hint, detail


# ═══════════════════════════════════════════════════════════════ 1. 路径只许留在工作区里

def inside(root: str, path: str) -> str:
    """把模型给的相对路径变成真实的绝对路径；走出工作区就抛 ToolFailure，并说清是怎么走出去的。"""
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise ToolFailure("invalid_arguments", "路径不能为空", "请写相对于工作区的路径，如 src/calc.py")
    if path.startswith(("/", "~")):
        raise ToolFailure("path_outside", f"不能用绝对路径 {path}：工具只能访问工作区里的文件",
                          "请写相对于工作区的路径，如 src/calc.py")
    if ".." in PurePosixPath(path).parts:
        raise ToolFailure("path_outside", f"路径 {path} 里有 ..，会走到工作区外面",
                          "请写工作区里的路径（不要用 ..），如 src/calc.py")
    base = os.path.realpath(root)
    full = os.path.realpath(os.path.join(base, path))   # 顺着所有符号链接走到底，看最后落在哪
    if os.path.commonpath([base, full]) != base:
        link, target = _link_that_leaves(base, path)
        raise ToolFailure("path_outside", f"{link} 是符号链接，指向工作区外的 {target}",
                          "工具不会跟着链接走出工作区；请使用工作区里的文件")
    return full


def _link_that_leaves(base: str, path: str) -> tuple[str, str]:
    """路径上第一个符号链接（相对路径）和它指向哪里：错误信息要指名道姓。"""
    current, parts = base, PurePosixPath(path).parts
    for i, part in enumerate(parts):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return "/".join(parts[: i + 1]), os.readlink(current)
    return path, "工作区外"


def _open(full: str, shown: str, flags: int) -> int:
    """打开一个普通文件，不跟随符号链接；拒绝硬链接——它可能是工作区外某个文件的另一个名字。"""
    folder = ToolFailure("invalid_arguments", f"{shown} 是一个文件夹，不是文件", "请用 bash 的 ls 查看它里面的文件")
    try:
        fd = os.open(full, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except FileNotFoundError:
        raise ToolFailure("not_found", f"工作区里没有 {shown}", "请先用 bash 的 ls 或 find 看看有哪些文件") from None
    except IsADirectoryError:
        raise folder from None
    info, problem = os.fstat(fd), None
    if stat.S_ISDIR(info.st_mode):
        problem = folder
    elif not stat.S_ISREG(info.st_mode):
        problem = ToolFailure("invalid_arguments", f"{shown} 不是普通文件（管道或设备）", "工具只读写普通文件")
    elif info.st_nlink > 1:
        problem = ToolFailure("path_outside", f"{shown} 有多个硬链接，可能是工作区外某个文件的另一个名字",
                              "工具不处理硬链接；请用 write 写一个普通的新文件")
    if problem:
        os.close(fd)
        raise problem
    return fd


def read_text(full: str, shown: str) -> str:
    """一个工作区文件的文本（UTF-8，不超过上限）；full 来自 inside()，shown 是写进错误信息的名字。"""
    fd = _open(full, shown, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ToolFailure("invalid_arguments", f"{shown} 超过 {MAX_FILE_BYTES >> 20} MB",
                          "请用 bash 的 head、tail 或 grep 只看需要的部分")
    try:
        if b"\0" in data:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL")
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure("invalid_arguments", f"{shown} 不是 UTF-8 文本文件",
                          "二进制文件请用 bash 查看，如 xxd 文件名 | head") from None


def _write_text(root: str, full: str, shown: str, text: str) -> None:
    """写入前先算配额：写完以后工作区不能超过上限。"""
    data = text.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise ToolFailure("workspace_full", f"内容有 {len(data)} 字节，超过单个文件上限 {MAX_FILE_BYTES >> 20} MB",
                          "请把内容拆成几个小文件")
    old = os.path.getsize(full) if os.path.isfile(full) else 0
    used, count = usage(root)
    if used - old + len(data) > MAX_WORKSPACE_BYTES or (not os.path.exists(full) and count + 1 > MAX_FILES):
        raise ToolFailure("workspace_full", f"工作区已满（上限 {MAX_WORKSPACE_BYTES >> 20} MB、{MAX_FILES} 个文件）",
                          "请先用 bash 删掉不需要的文件")
    os.makedirs(os.path.dirname(full), exist_ok=True)
    fd = _open(full, shown, os.O_WRONLY | os.O_CREAT)   # 先检查、后清空：不用 O_TRUNC
    with os.fdopen(fd, "wb") as handle:
        handle.truncate(0)
        handle.write(data)


def usage(root: str) -> tuple[int, int]:
    """(字节数, 文件与文件夹的个数)；数到上限多一点就停：工作区再大，这里花的时间也有限。"""
    size, count, stack = 0, 0, [root]
    while stack and count <= MAX_FILES:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                count += 1
                size += entry.stat(follow_symlinks=False).st_size
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return size, count


# ═══════════════════════════════════════════════════════════════ 2. 四个工具

def make_tools(root: str, shell: Callable[[str, str, float], dict] | None = None) -> ToolRegistry:
    """四个工具，都绑定在 root 这个工作区上。shell(command, cwd, timeout) 默认是下面没有隔离的 run_locally。
    这里只是登记（名字、给模型看的说明、每个参数的说明）；每个工具做什么，在下面同名的函数里。"""
    registry = ToolRegistry()
    run_shell = shell or run_locally

    @registry.tool("读取工作区里的文本文件，每行前面带行号。先读再改：edit 需要一字不差的原文。")
    def read(path: Annotated[str, "相对于工作区的路径，如 src/calc.py"],
             offset: Annotated[int, "从第几行开始读（从 1 开始）"] = 1,
             limit: Annotated[int, "最多读多少行"] = 200) -> str:
        return read_file(root, path, offset, limit)

    @registry.tool("把内容写入工作区里的文件：文件不存在就新建（包括所在的文件夹），存在就整个覆盖。")
    def write(path: Annotated[str, "相对于工作区的路径，如 src/util.py"],
              content: Annotated[str, "文件的完整新内容"]) -> str:
        return write_file(root, path, content)

    @registry.tool("把文件里的一段原文替换成新文本。old 必须与文件内容一字不差（包括缩进），并且在文件里只出现一次。")
    def edit(path: Annotated[str, "相对于工作区的路径"],
             old: Annotated[str, "要替换的原文，一字不差；多带几行上下文让它唯一"],
             new: Annotated[str, "替换成的新文本"]) -> str:
        return edit_file(root, path, old, new)

    @registry.tool("在工作区里用 bash 运行一条命令（如 python3 -m unittest、ls、grep），返回退出码和输出。")
    def bash(command: Annotated[str, "要运行的 bash 命令，当前目录是工作区"],
             timeout: Annotated[int, "最多运行多少秒"] = 10) -> str:
        return run_bash(root, command, timeout, run_shell)

    return registry


def read_file(root: str, path: str, offset: int = 1, limit: int = 200) -> str:
    if offset < 1 or not 1 <= limit <= 2000:
        raise ToolFailure("invalid_arguments",
                          f"offset 应 ≥ 1、limit 应在 1 到 2000 之间，收到 offset={offset}、limit={limit}", "请修改后重试")
    lines = read_text(inside(root, path), path).splitlines()
    if offset > max(len(lines), 1):
        raise ToolFailure("invalid_arguments", f"{path} 只有 {len(lines)} 行，offset={offset} 超出了范围",
                          f"请用 1 到 {max(len(lines), 1)} 之间的 offset")
    shown = lines[offset - 1: offset - 1 + limit]
    last = offset + len(shown) - 1
    body = "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(shown, offset))
    more = f"\n…（后面还有 {len(lines) - last} 行，继续读请用 offset={last + 1}）" if last < len(lines) else ""
    return f"{path}（共 {len(lines)} 行，第 {offset}–{last} 行）\n{body}{more}" if lines else f"{path}（空文件）"


def write_file(root: str, path: str, content: str) -> str:
    full = inside(root, path)
    existed = os.path.exists(full)
    before = read_text(full, path).count("\n") if existed else 0
    _write_text(root, full, path, content)
    lines = content.count("\n") + (not content.endswith("\n") and content != "")
    return f"已写入 {path}：{lines} 行，{len(content.encode('utf-8'))} 字节（{'覆盖了原来的 %d 行' % before if existed else '新文件'}）"


def edit_file(root: str, path: str, old: str, new: str) -> str:
    full = inside(root, path)
    text = read_text(full, path)
    if old == "":
        raise ToolFailure("invalid_arguments", "old 不能为空", "要新建或整个重写文件，请用 write")
    if old == new:
        raise ToolFailure("invalid_arguments", "old 与 new 相同，文件不会有任何变化", "请在 new 里写出修改后的文本")
    starts = _occurrences(text, old)
    if not starts:
        raise ToolFailure("no_match", f"{path} 里找不到 old 的原文{_closest(text, old)}",
                          "请先用 read 查看确切内容（包括缩进和空格），再把原文一字不差地放进 old")
    if len(starts) > 1:
        lines = "、".join(str(text.count("\n", 0, start) + 1) for start in starts)
        raise ToolFailure("ambiguous_match", f"old 的原文在 {path} 里出现了 {len(starts)} 次（第 {lines} 行）",
                          "请在 old 里多带上前后几行，让它只出现一次")
    changed = text.replace(old, new, 1)
    _write_text(root, full, path, changed)
    diff = difflib.unified_diff(text.splitlines(keepends=True), changed.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}")
    return f"已修改 {path}：\n" + "".join(diff)


def run_bash(root: str, command: str, timeout: int = 10,
             shell: Callable[[str, str, float], dict] | None = None) -> str:
    if not command.strip():
        raise ToolFailure("invalid_arguments", "command 不能为空", "请写要运行的命令，如 ls")
    if not 1 <= timeout <= MAX_TIMEOUT:
        raise ToolFailure("invalid_arguments", f"timeout 应在 1 到 {MAX_TIMEOUT} 秒之间，收到 {timeout}",
                          "请修改后重试；更久的任务请拆成几步")
    result = (shell or run_locally)(command, root, timeout)
    output = _format_output(result)
    problem = result.get("error")
    if problem:   # 超时、输出太多……：失败，但把已经有的输出也交给模型
        raise ToolFailure(problem["code"], problem["conclusion"], problem.get("hint", ""),
                          output if result.get("stdout") or result.get("stderr") else "")
    if result.get("exit_code") != 0:
        # 命令运行了，但没有成功（测试没通过、文件读不了……）：这是一个失败的结果，不能当成功交回去，
        # 否则模型和界面都会把 “Permission denied” 当成答案。输出照样附上，原因往往就在里面。
        raise ToolFailure("exit_status", f"命令运行了，但退出码是 {result.get('exit_code')}（不是 0），没有成功",
                          "原因见下面的输出", output)
    return output


def _occurrences(text: str, old: str) -> list[int]:
    """old 在 text 里每次出现的起点（不重叠）。"""
    starts, at = [], text.find(old)
    while at >= 0:
        starts.append(at)
        at = text.find(old, at + len(old))
    return starts


def _closest(text: str, old: str) -> str:
    """找不到原文时最有用的一句话：是不是只差缩进？哪一行最像？"""
    lines = text.splitlines()
    wanted = [line.strip() for line in old.strip("\n").splitlines()]
    stripped = [line.strip() for line in lines]
    for i in range(len(lines) - len(wanted) + 1):
        if stripped[i: i + len(wanted)] == wanted:
            return f"；第 {i + 1} 行起的内容只在缩进或行首行尾的空白上不同"
    first = next((line for line in wanted if line), "")
    close = difflib.get_close_matches(first, stripped, n=1, cutoff=0.5)
    if close:
        number = stripped.index(close[0]) + 1
        return f"；最接近的是第 {number} 行：{lines[number - 1].strip()}"
    return ""


def _format_output(result: dict) -> str:
    parts = [f"退出码：{result.get('exit_code')}"]
    for name in ("stdout", "stderr"):
        if result.get(name):
            parts.append(f"[{name}]\n{result[name].rstrip()}")
    if len(parts) == 1:
        parts.append("（没有输出）")
    return "\n".join(parts)


# ═══════════════════════════════════════════════════════════════ 3. 调用

def run(registry: ToolRegistry, name: str, args: dict | str | None) -> ToolOutcome:
    """校验参数（交给注册表）→ 执行 → ToolOutcome。永不抛异常。
    和 registry.call 的区别只有一处：工具抛出的 ToolFailure 带着自己的 error_code，
    模型看到的是“路径越界”“没有匹配”，而不是笼统的“工具异常”。"""
    start = time.perf_counter()
    check = registry.validate(name, args)
    if not check.ok:
        outcome = failure(check.error_code, "；".join(check.problems), check.hint,
                          problems=check.problems, coercions=check.coercions)
    else:
        try:
            outcome = success(registry.tools[name].func(**check.arguments),
                              arguments=check.arguments, coercions=check.coercions)
        except ToolFailure as problem:
            outcome = failure(problem.code, problem.conclusion, problem.hint, arguments=check.arguments)
            if problem.detail:
                outcome.content, outcome.clipped_from = clip(f"{outcome.content}\n{problem.detail}")
        except Exception as exc:     # 兜底：磁盘错误、权限……也变成给模型看的文本
            outcome = failure("tool_exception", f"{name} 执行出错：{type(exc).__name__}: {exc}",
                              "请检查参数后重试", arguments=check.arguments)
    outcome.duration_ms = round((time.perf_counter() - start) * 1000, 3)
    return outcome


# ═══════════════════════════════════════════════════════════════ 4. 没有隔离的 shell

def run_locally(command: str, cwd: str, timeout: float) -> dict:
    """在 cwd 里跑 bash -c。没有任何隔离：命令能读写你能读写的一切，也能联网。
    只在自己的电脑上、对自己信任的命令使用。应用里用 sandbox/shell.py，参数和返回值一样。"""
    process = subprocess.Popen(["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               errors="replace", start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        return {"exit_code": process.returncode, "stdout": stdout, "stderr": stderr, "error": None}
    except subprocess.TimeoutExpired:
        # 杀整个进程组：只杀 bash 的话，它启动的子进程还活着。
        # （用 setsid 另立门户的进程仍然逃得掉——沙箱版本用 PID 命名空间才管得住它们。）
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return {"exit_code": None, "stdout": stdout, "stderr": stderr,
                "error": {"code": "timeout", "conclusion": f"命令运行超过 {timeout:g} 秒，已被终止",
                          "hint": "如果命令在等待输入，请改成不需要输入的写法；如果是死循环，请修好后再试"}}


# ═══════════════════════════════════════════════════════════════ 自己跑一遍：python code/atomic_tools.py

if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as workspace:
        tools = make_tools(workspace)
        steps = [
            ("write", {"path": "calc.py", "content": "def add(a, b):\n    return a - b\n"}),
            ("read", {"path": "calc.py"}),
            ("edit", {"path": "calc.py", "old": "return a-b", "new": "return a + b"}),
            ("edit", {"path": "calc.py", "old": "return a - b", "new": "return a + b"}),
            ("bash", {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"}),
            ("read", {"path": "../etc/passwd"}),
        ]
        for name, arguments in steps:
            print(f"── {name}({arguments})\n{run(tools, name, arguments).content}\n")
