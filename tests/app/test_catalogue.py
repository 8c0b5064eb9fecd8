"""The lesson catalogue is the one description of a lesson: the page, the run, the named API, links
and the README all follow it."""
import ast
import dataclasses
import importlib
import pathlib
import re

import pytest

import catalogue
from catalogue import LESSONS
from i18n import tr
from runs import starters

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_each_lesson_names_a_page_that_builds_it_and_course_files_that_exist():
    for lesson in LESSONS.values():
        page = importlib.import_module(lesson.page)
        assert page.LESSON is lesson and callable(page.build)
        assert lesson.course_files and all((ROOT / "code" / name).is_file() for name in lesson.course_files), lesson.id
    assert len({lesson.panel for lesson in LESSONS.values()}) == len(LESSONS)


def test_a_lesson_runs_either_its_own_loop_on_a_source_or_the_workspace():
    """A workspace lesson runs starters.workspace (no start of its own) unless it names its own loop
    (MiniAgent); a lesson with a source has an editor unless its loop offers no tools."""
    for lesson in LESSONS.values():
        assert lesson.start is not None or lesson.workspace, lesson.id
        assert lesson.editor == (lesson.start is not None and lesson.tools and not lesson.workspace), lesson.id
        assert lesson.start is None or starters.of(lesson).__name__ == lesson.start, lesson.id
    assert [lesson.id for lesson in LESSONS.values() if lesson.workspace and lesson.start] == ["mini_agent"]
    # The lessons a run's export may name: those with a loop of their own, not the workspace's.
    assert {"first_call", "react", "context", "evaluation"} <= set(catalogue.SOURCE_LESSONS)
    assert not {"workspace", "permissions", "mini_agent"} & set(catalogue.SOURCE_LESSONS)
    assert catalogue.ROOT == "react" and LESSONS["react"].address == "/"      # links handed out before point there
    assert next(iter(LESSONS)) == "first_call"                                 # the course, and the list, start with 8.1


def test_sections_follow_the_course_order():
    numbered = [tuple(map(int, lesson.section.split("."))) for lesson in LESSONS.values() if lesson.section]
    assert numbered == sorted(numbered) and all(major == 8 for major, _ in numbered)
    assert LESSONS["react"].label() == "8.2 正则 ReAct"
    assert LESSONS["mcp"].label() == "课外 MCP"


def test_the_readme_table_lists_the_catalogue_in_order():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([^|]+) \| \*\*([^*]+)\*\* \| `([^`]+)` \|", readme, re.M)
    assert rows == [(str(lesson.section or tr("课外", "extra")), str(lesson.title), lesson.address)
                    for lesson in LESSONS.values()]


CHINESE_NUMBERS = "一二三四五六七八九十"
ENGLISH_NUMBERS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                   "sixteen seventeen eighteen nineteen twenty").split()


def in_chinese(number: int) -> str:
    """1-99 as written in Chinese prose: 七, 十一, 二十三."""
    tens, ones = divmod(number, 10)
    return (("" if tens < 2 else CHINESE_NUMBERS[tens - 1]) + ("十" if tens else "")
            + (CHINESE_NUMBERS[ones - 1] if ones else ""))


def test_the_readme_counts_and_names_the_catalogue_s_lessons():
    """The README says how many lessons there are, in Chinese and in its English summary, and its map of
    lessons/ names each lesson's folder, in the catalogue's order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert in_chinese(7) == "七" and in_chinese(11) == "十一" and in_chinese(23) == "二十三"
    assert f"\n{in_chinese(len(LESSONS))}课，每课一页" in readme
    summary = readme.split("## English summary", 1)[1]
    assert f"{ENGLISH_NUMBERS[len(LESSONS) - 1].capitalize()} lessons," in summary
    lessons_map = next(p for p in readme.split("\n\n") if p.startswith("**`lessons/` 页面。**"))
    folders = lessons_map.split("每课一个文件夹（", 1)[1].split("）", 1)[0]
    assert re.findall(r"`(\w+)/`", folders) == list(LESSONS)
    editors = [str(lesson.title) for lesson in LESSONS.values() if lesson.editor]
    assert f"有工具源码的{in_chinese(len(editors))}页（{'、'.join(editors)}）" in readme


def endpoint_functions() -> dict[str, ast.FunctionDef]:
    """{api name: the function endpoints/api.py registers under it}, read from its `endpoints` table."""
    tree = ast.parse((ROOT / "endpoints" / "api.py").read_text(encoding="utf-8"))
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    table = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and [target.id for target in node.targets if isinstance(target, ast.Name)] == ["endpoints"])
    return {key.value: functions[value.id] for key, value in zip(table.keys, table.values)}


def lessons_run(function: ast.FunctionDef) -> list[str]:
    """The lessons whose loop a function runs through _run(LESSONS["id"], ...)."""
    return [call.args[0].slice.value for call in ast.walk(function) if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name) and call.func.id == "_run"]


def test_each_lesson_s_named_endpoint_is_registered_and_runs_that_lesson():
    """The catalogue names each lesson's endpoint (Lesson.api): it is registered, and an endpoint that runs a
    lesson's loop runs the lesson whose entry names it; the README's API paragraph lists each one."""
    endpoints = endpoint_functions()
    for lesson in LESSONS.values():
        assert lesson.api in endpoints, lesson.id
        assert lessons_run(endpoints[lesson.api]) in ([], [lesson.id]), lesson.id
    run = {lesson for function in endpoints.values() for lesson in lessons_run(function)}
    assert run == {lesson.id for lesson in LESSONS.values() if lesson.start and not lesson.workspace} - {"registry", "evaluation"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    api_map = next(p for p in readme.split("\n\n") if p.startswith("**`endpoints/` 具名 API。**"))
    assert [lesson.id for lesson in LESSONS.values() if f"`/{lesson.api}`" not in api_map] == []


def test_a_lesson_naming_no_starter_is_told_which_there_are():
    wrong = dataclasses.replace(LESSONS["react"], start="reactt")
    with pytest.raises(LookupError, match="start='reactt'.*first_call, react, registry, function_calling"):
        starters.of(wrong)
    assert "tool_choice_value" not in starters.BY_NAME and set(starters.BY_NAME) >= {lesson.start for lesson in LESSONS.values()
                                                                                  if lesson.start}


def test_a_lesson_s_heading_is_written_once_in_the_catalogue():
    """The page folds the lesson text under the catalogue's heading; the texts carry no title of their own."""
    pages = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "lessons").glob("*/page.py"))
    for lesson in LESSONS.values():
        for name in (lesson.texts.zh, lesson.texts.en):
            first = (ROOT / name).read_text(encoding="utf-8").lstrip().splitlines()[0]
            assert not first.startswith("#"), (name, first)
    assert "📖 课文：" not in pages and "📖 Lesson: " not in pages        # no page writes its own


def test_every_lesson_folder_is_a_catalogue_lesson_with_its_page_and_texts():
    """A lesson is its catalogue entry and its folder: lessons/<id>/ with an empty __init__.py, page.py and
    its two texts; every folder under lessons/ is a lesson's, and no page or text is left beside the shared panels."""
    lessons = ROOT / "lessons"
    folders = sorted(path.name for path in lessons.iterdir() if path.is_dir() and path.name != "__pycache__")
    assert folders == sorted(LESSONS)
    for lesson in LESSONS.values():
        folder = ROOT / lesson.folder
        assert (folder / "__init__.py").read_bytes() == b"", lesson.id        # empty: merges cleanly
        assert (ROOT / lesson.page.replace(".", "/")).with_suffix(".py") == folder / "page.py"
        assert all((ROOT / text).is_file() and (ROOT / text).parent == folder
                   for text in (lesson.texts.zh, lesson.texts.en)), lesson.id
    assert sorted(path.name for path in lessons.glob("*_page.py")) == ["lesson_page.py"]    # the pages' shared shape
    assert sorted(path.name for path in lessons.glob("*.md")) == []


def test_a_lesson_s_example_sets_are_ones_its_editor_can_open():
    """The catalogue names the example sets (lessons/editor_panel.py has their files): the set an editor opens
    with is one it offers, and a lesson's own sets are not the shared ones."""
    from lessons.editor_panel import EXAMPLE_FILES, EXAMPLE_SETS, lesson_sets

    for lesson in LESSONS.values():
        assert lesson.editor or not lesson.own_examples, lesson.id
        assert not set(lesson.own_examples) & set(EXAMPLE_SETS) and set(lesson.own_examples) <= set(EXAMPLE_FILES)
        assert lesson.example is None or lesson.example in lesson_sets(lesson), lesson.id
    assert list(lesson_sets(LESSONS["evaluation"])) == [*EXAMPLE_SETS, "天气（描述含糊）"]
    assert lesson_sets(LESSONS["workspace"]) == {}
