"""skills/lesson.md, performed: each claim of the skills lesson (8.9) on its page, offline, in Chinese. The
English page makes the same claims in skills/lesson.en.md."""
from __future__ import annotations

import pytest

from memory.memory_format import storage_key
from memory.workspace_memory import PART as WORKSPACE
from tests.app.harness import LessonPage, ask, code_text, paste_code, screenshot, show_file, wait_final, wait_stored

pytestmark = pytest.mark.browser
WAIT = 60_000
SQL_SAYS = "团队写 SQL 的规矩。用户要写查询、改 SQL、问数据库怎么查时用。"
MISLEADING = "写发布说明时的格式规矩。"
NAMING = "团队写 SQL 的规矩，也管表名和列名。"


@pytest.fixture(scope="module")
def lesson(browser, app_url):
    with LessonPage(browser, app_url, "skills", height=2400) as page:
        panel(page).filter(has_text="release-notes").first.wait_for(timeout=WAIT)
        yield page


def panel(lesson):
    return lesson.panel.locator(".tw-skills-panel").last


def box(lesson):
    return lesson.panel.locator(".tw-skills-box")


def edit(lesson, old: str, new: str, shown: str):
    text = code_text(box(lesson))
    assert old in text
    paste_code(lesson.page, box(lesson), text.replace(old, new))
    panel(lesson).filter(has_text=shown).first.wait_for(timeout=WAIT)


def restore(lesson):
    lesson.panel.locator(".tw-skills-reset").click()
    panel(lesson).filter(has_text=SQL_SAYS).first.wait_for(timeout=WAIT)


def loaded(lesson) -> list[str]:
    """The raw arguments of every load_skill call in the timeline."""
    return [c.locator("pre").first.text_content() for c in lesson.panel.locator(".tw-protocol .tw-call").all()
            if c.locator("b").first.text_content() == "load_skill"]


def test_the_panel_lists_the_skills_and_the_catalogue_costs_less(lesson):
    """左边的框里是三个示例技能，每个以一行 ==> skills/<名字>/SKILL.md <== 开头。右边列出读到的技能，和 system 提示词两种
    写法各多少 token：只列名字和描述，比把正文全贴进来少。"""
    assert code_text(box(lesson)).count("==> skills/") == 3
    names = panel(lesson).locator("tbody tr td code").all_inner_texts()
    assert names == ["code-review", "release-notes", "sql-style"]     # folder order, as the workspace lists them
    said = panel(lesson).locator(".tw-skills-cost").inner_text()
    catalogue = int(said.split("只列目录 ")[1].split(" ")[0])
    pasted = int(said.split("全贴进来 ")[1].split(" ")[0])
    assert catalogue < pasted


def box_holds(lesson, text: str):
    lesson.page.wait_for_function("([el, t]) => el.innerText.includes(t)",
                                  arg=[box(lesson).locator(".cm-content").first.element_handle(), text], timeout=WAIT)


def test_the_skills_are_files_of_the_workspace(lesson):
    """改了框里的技能，它就写回工作区，刷新页面后还在。「原子工具」课用的是同一个工作区：它的文件树里有
    skills/sql-style/SKILL.md，打开就是你改过的样子；在那里让模型把 skills/sql-style/SKILL.md 里的“关键字大写”改成
    “关键字小写”，回到这一课，框里的 sql-style 也就改了。"""
    stored = storage_key(WORKSPACE)
    edit(lesson, SQL_SAYS, NAMING, NAMING)
    wait_stored(lesson.page, NAMING, key=stored)
    lesson.page.reload()
    panel(lesson).filter(has_text=NAMING).first.wait_for(timeout=WAIT)
    box_holds(lesson, NAMING)
    lesson.go("workspace")
    show_file(lesson.panel, "skills/sql-style/SKILL.md", NAMING)
    ask(lesson.panel, "把 skills/sql-style/SKILL.md 里的“关键字大写”改成“关键字小写”")
    wait_final(lesson.panel)
    assert "skills/sql-style/SKILL.md" in lesson.panel.locator(".tw-ws-diff").first.inner_text()
    wait_stored(lesson.page, "关键字小写", key=stored)
    lesson.go("skills")
    box_holds(lesson, "关键字小写")
    assert "关键字大写" not in code_text(box(lesson))
    restore(lesson)
    wait_stored(lesson.page, "关键字大写", key=stored)


def test_a_deleted_skills_folder_stays_deleted_until_the_student_restores_it(lesson):
    """What a student deleted is not written back behind their back: the page says the folder is empty
    and how to get the examples again."""
    stored = storage_key(WORKSPACE)
    lesson.go("workspace")
    ask(lesson.panel, "运行 `rm -rf skills`")
    wait_final(lesson.panel)
    wait_stored(lesson.page, "SKILL.md", present=False, key=stored)
    lesson.go("skills")
    lesson.panel.locator(".tw-skills-files").filter(has_text="工作区里没有技能文件").filter(
        has_text="恢复示例技能").first.wait_for(timeout=WAIT)
    assert "==> skills/" not in code_text(box(lesson))
    assert panel(lesson).locator("tbody tr td code").count() == 0
    assert "SKILL.md" not in lesson.page.evaluate("(key) => localStorage.getItem(key) || ''", stored)
    restore(lesson)
    assert code_text(box(lesson)).count("==> skills/") == 3
    assert panel(lesson).locator("tbody tr td code").all_inner_texts() == ["code-review", "release-notes", "sql-style"]
    wait_stored(lesson.page, "skills/sql-style/SKILL.md", key=stored)


def test_the_model_reads_the_skill_it_needs_and_follows_it(lesson):
    """问「帮我把这几个提交写成发布说明」：system 提示词里只有名字和描述；模型按描述挑中 release-notes，调用 load_skill 读它的
    正文，正文作为工具结果回来，回答照着这段正文来做（离线模型只会把正文照念一遍）。"""
    assert lesson.run("帮我把这几个提交写成发布说明").startswith("✅")
    assert loaded(lesson) == ['{"name": "release-notes"}']
    sent = lesson.rounds()[1].split("②")[0]             # round 1's request, before the model's reply
    assert "release-notes: 把一组提交记录写成给用户看的发布说明" in sent and "破坏兼容的改动单独放在最前面" not in sent
    assert "破坏兼容的改动单独放在最前面" in lesson.rounds()[1].split("③")[1]     # the body, as the tool's result
    final = lesson.panel.locator(".tw-protocol .tw-final").last.inner_text()
    assert final.startswith("我读了技能 release-notes 的说明，照它来做") and "按“新功能 / 修复 / 其他”分三组" in final
    screenshot(lesson.page, "skills-load-1280")


def test_a_misleading_description_loads_the_wrong_skill_until_it_is_fixed(lesson):
    """把 sql-style 的 description 改成「写发布说明时的格式规矩。」，问「帮我写一份发布说明的格式」：模型读的是 sql-style，
    回答成了写 SQL 的规矩。点「↺ 恢复示例技能」把描述改回去再问，它就读 release-notes 了。"""
    edit(lesson, SQL_SAYS, MISLEADING, MISLEADING)
    headline = lesson.run("帮我写一份发布说明的格式")
    assert loaded(lesson) == ['{"name": "sql-style"}']
    assert "关键字大写" in lesson.panel.locator(".tw-protocol .tw-final").last.inner_text()
    # 顶上的结论是 ⚠️：这个问题要读的是 release-notes，读的却是 sql-style。
    assert headline.startswith('⚠️ 这个问题要的是 load_skill(name="release-notes")，实际执行的是 '
                               'load_skill(name="sql-style")')
    restore(lesson)
    assert lesson.run("帮我写一份发布说明的格式").startswith("✅")
    assert loaded(lesson) == ['{"name": "release-notes"}']


def test_a_malformed_skill_is_said_and_the_others_still_work(lesson):
    """把一个技能的 name 改成 Bad_Name：右边说出哪里不对，其余技能照常能用。"""
    edit(lesson, "name: code-review", "name: Bad_Name", "不合格式")
    assert "code-review/SKILL.md：name 'Bad_Name' 不合格式" in panel(lesson).inner_text()
    assert panel(lesson).locator("tbody tr td code").all_inner_texts() == ["release-notes", "sql-style"]
    assert lesson.run("帮我把这几个提交写成发布说明").startswith("✅")
    assert loaded(lesson) == ['{"name": "release-notes"}']
    # 框里只剩这一个不合格的技能时，模型没有技能可读，结论是 ⚠️，写明没有一个合格的技能。
    only = "==> skills/code-review/SKILL.md <==\n---\nname: Bad_Name\ndescription: 看代码\n---\n正文\n"
    paste_code(lesson.page, box(lesson), only)
    panel(lesson).filter(has_text="不合格式").first.wait_for(timeout=WAIT)
    headline = lesson.run("帮我把这几个提交写成发布说明")
    assert headline.startswith("⚠️ 没有一个合格的技能，模型没有技能可读") and not loaded(lesson)
    assert "技能目录是空的" in lesson.panel.locator(".tw-protocol .tw-final").last.inner_text()
    restore(lesson)


def test_the_courses_way_pastes_every_body_and_sends_no_tool(lesson):
    """换成「正文全贴进 system 提示词」：请求不带工具，所有技能的正文都在 system 提示词里，每次请求都背着它们。
    离线模型从贴着的正文里挑和问题重合最多的一段照念。"""
    lesson.panel.locator(".tw-skills-way label").filter(has_text="正文全贴进").first.click()
    panel(lesson).filter(has_text="这次的写法：正文全贴进").first.wait_for(timeout=WAIT)
    lesson.run("帮我把这几个提交写成发布说明")
    sent = lesson.rounds()[1].split("②")[0]
    assert "破坏兼容的改动单独放在最前面" in sent and "关键字大写" in sent and "先看改动想做什么" in sent
    assert "tools（" not in sent and not loaded(lesson)
    final = lesson.panel.locator(".tw-protocol .tw-final").last.inner_text()
    assert final.startswith("提示词里贴着技能 release-notes 的说明，照它来做")
    assert "请求：messages 发给模型（这次不带 tools）" in lesson.rounds()[1]


def memory_table(lesson) -> list[list[str]]:
    rows = lesson.panel.locator(".tw-memories .virtual-body [role=row]").all()
    return [[c.strip() for c in row.locator("[role=gridcell]").all_inner_texts()] for row in rows]


def memory_said(lesson, text: str):
    lesson.panel.locator(".tw-memory-said").last.filter(has_text=text).wait_for(timeout=WAIT)


def test_a_wrong_memory_is_seen_corrected_and_deleted(lesson):
    """勾选「再给模型记忆工具」，问「请记住我喜欢用 Python」：模型调用 remember，下面的「记忆」表多了一条，写着事实、来源和记下的
    时间：事实「用户喜欢用 Python」，来源「用户说的」。「第几条」填 1，「改成」写「用户的偏好：喜欢用 Python」，
    点「✏️ 改正这一条」，来源变成「用户改正」。再问「你记得我的偏好吗」：模型调用 recall，找回的是改正后的那条。
    刷新页面，这条记忆还在；别的浏览器看不到。点「🗑 删掉这一条」，它就从表里没了（再刷新也没有）。"""
    lesson.panel.locator(".tw-skills-memory-on input").check()
    assert lesson.run("请记住我喜欢用 Python").startswith("✅")
    assert '"fact": "用户喜欢用 Python"' in lesson.protocol() and '"source": "Python"' not in lesson.protocol()
    lesson.page.wait_for_function("el => el.innerText.includes('Python')",
                                  arg=lesson.panel.locator(".tw-memories").first.element_handle(), timeout=WAIT)
    [row] = memory_table(lesson)
    assert row[:3] == ["1", "用户喜欢用 Python", "用户说的"] and len(row[3]) == 19        # 2026-12-05T19:41:53
    lesson.panel.locator(".tw-memory-fact textarea, .tw-memory-fact input").first.fill("用户的偏好：喜欢用 Python")
    lesson.panel.locator(".tw-memory-correct").click()
    memory_said(lesson, "第 1 条改成了「用户的偏好：喜欢用 Python」")
    assert memory_table(lesson)[0][:3] == ["1", "用户的偏好：喜欢用 Python", "用户改正"]
    lesson.run("你记得我的偏好吗")
    assert "1. 用户的偏好：喜欢用 Python（用户改正，" in lesson.protocol()
    other = LessonPage(lesson.page.context.browser, lesson.page.url.split("?")[0].rsplit("/", 1)[0] + "/", "skills")
    with other:      # another browser: its own session, none of these memories
        other.panel.locator(".tw-skills-panel").last.filter(has_text="release-notes").first.wait_for(timeout=WAIT)
        assert other.panel.locator(".tw-memories .virtual-body [role=row]").count() == 0
    lesson.page.reload()
    memory_said(lesson, "↩ 记忆已恢复：本浏览器保存的 1 条")
    assert memory_table(lesson)[0][:3] == ["1", "用户的偏好：喜欢用 Python", "用户改正"]
    assert lesson.panel.locator(".tw-skills-memory-on input").is_checked()
    # 「第几条」填 0：页面自己说出来（提示框点名这个框、这个数和范围），不是 Gradio 的英文错误，也没有红色的「错误」标记。
    number = lesson.panel.locator(".tw-memory-number input")
    number.fill("0")
    lesson.panel.locator(".tw-memory-delete").click()
    memory_said(lesson, "没有第 0 条记忆。")
    toast = lesson.page.locator('[data-testid="toast-body"]').filter(has_text="「第几条」填的 0 太小：应不小于 1。")
    toast.first.wait_for(timeout=WAIT)
    assert toast.first.inner_text().startswith("警告") and "Value" not in toast.first.inner_text()
    assert lesson.page.get_by_text("错误", exact=True).count() == 0 and len(memory_table(lesson)) == 1
    number.fill("1")
    lesson.panel.locator(".tw-memory-delete").click()
    memory_said(lesson, "删掉了第 1 条「用户的偏好：喜欢用 Python」")
    assert memory_table(lesson) == []
    lesson.page.wait_for_function("() => !(localStorage.getItem('tool-workshop:memories') || '').includes('Python')",
                                  timeout=WAIT)
    lesson.page.reload()
    memory_said(lesson, "记下的事实自动保存在本浏览器")
    assert memory_table(lesson) == []
    lesson.panel.locator(".tw-skills-memory-on input").uncheck()


def test_skills_an_older_page_kept_with_the_lesson_move_into_the_workspace(browser, app_url):
    """Before the skills lived in the workspace, the box was kept with the lesson (option.skills): a
    returning student's edited skills are written to the workspace, and the page says so."""
    from memory.memory_format import VERSION

    import workspace

    folders = workspace.known_sessions()
    with LessonPage(browser, app_url, "skills") as page:
        panel(page).filter(has_text="release-notes").first.wait_for(timeout=WAIT)
        # A page that only shows the skills takes none of the server's workspace folders: a class opening
        # the lesson at once cannot use them up. The first write takes one, below.
        assert workspace.known_sessions() == folders
        old = code_text(box(page)).replace(SQL_SAYS, NAMING)
        page.page.evaluate("""([key, record]) => localStorage.setItem(key, JSON.stringify(record))""",
                           [storage_key("lesson:skills"), {"format": "tool-workshop-browser-memory", "version": VERSION,
                                                           "part": "lesson:skills", "saved_at": 1,
                                                           "fields": {"option.skills": old, "question": "你好"}}])
        page.page.reload()
        page.panel.locator(".tw-memory-said").filter(has_text="已写进 skills/").first.wait_for(timeout=WAIT)
        panel(page).filter(has_text=NAMING).first.wait_for(timeout=WAIT)
        box_holds(page, NAMING)
        wait_stored(page.page, NAMING, key=storage_key(WORKSPACE))
        assert workspace.known_sessions() == folders + 1


def test_what_is_typed_while_the_page_puts_back_what_was_kept_stays_and_runs(browser, app_url):
    """A question pasted, and a skill edited, before the page has put back what this browser kept are
    not replaced by the kept ones: the run asks the pasted question with the edited skill, and the
    workspace holds the edit."""
    from memory.memory_format import VERSION

    with LessonPage(browser, app_url, "skills") as page:
        panel(page).filter(has_text="release-notes").first.wait_for(timeout=WAIT)
        page.page.evaluate("""([key, record]) => localStorage.setItem(key, JSON.stringify(record))""",
                           [storage_key("lesson:skills"), {"format": "tool-workshop-browser-memory", "version": VERSION,
                                                           "part": "lesson:skills", "saved_at": 1,
                                                           "fields": {"question": "帮我把这几个提交写成发布说明"}}])
        held, holding = [], [True]                       # the server is slow to answer the page's restore
        for events in ("**/queue/join*", "**/run/predict*"):
            page.page.route(events, lambda route: held.append(route) if holding[0] else route.continue_())
        page.page.goto(page.page.url)
        page.panel.locator(".tw-question textarea").wait_for(timeout=WAIT)
        question = page.panel.locator(".tw-question textarea")
        question.click()
        question.fill("帮我写一条查订单的 SQL")
        paste_code(page.page, box(page), code_text(box(page)).replace(SQL_SAYS, NAMING))
        assert held
        holding[0] = False
        for route in held:
            route.continue_()
        page.wait_restored()
        said = page.panel.locator(".tw-memory-said").filter(has_text="保留了你的改动")
        said.filter(has_text="问题").filter(has_text="技能").first.wait_for(timeout=WAIT)
        assert question.input_value() == "帮我写一条查订单的 SQL"
        box_holds(page, NAMING)
        panel(page).filter(has_text=NAMING).first.wait_for(timeout=WAIT)
        wait_stored(page.page, NAMING, key=storage_key(WORKSPACE))
        assert page.run().startswith("✅")
        assert "帮我写一条查订单的 SQL" in page.protocol() and "帮我把这几个提交" not in page.protocol()
        assert loaded(page) == ['{"name": "sql-style"}']
