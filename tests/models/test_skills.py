"""code/skills.py: skills in the Agent Skills format, found and checked; the catalogue in the system
prompt against every body pasted in; load_skill; memory as tools over a file a person can read; and
the offline model choosing a skill by its description (a misleading one makes it choose wrong)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import skills
from context import tokens
from llm_clients import make_client

GOOD = "---\nname: release-notes\ndescription: 把提交写成发布说明。\n---\n正文"


def skill_tree(root: Path, texts: dict[str, str]) -> Path:
    for folder, text in texts.items():
        (root / folder).mkdir(parents=True)
        (root / folder / "SKILL.md").write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("text, folder, said", [
    ("name: x\n正文", "x", "开头没有 YAML 头"),
    ("---\nname: [x\n---\n", "x", "YAML 头写错了"),
    ("---\n- a\n---\n", "x", "YAML 头应是 name: … 和 description: … 这样的键值"),
    ("---\ndescription: d\n---\n", "x", "缺少 name"),
    ("---\nname: Release\ndescription: d\n---\n", "Release", "name 'Release' 不合格式"),
    ("---\nname: -notes\ndescription: d\n---\n", "-notes", "不合格式"),
    ("---\nname: a--b\ndescription: d\n---\n", "a--b", "不合格式"),
    ("---\nname: " + "a" * 65 + "\ndescription: d\n---\n", "a" * 65, "最多 64 字"),
    ("---\nname: notes\ndescription: d\n---\n", "release-notes", "应和文件夹同名（'release-notes'）"),
    ("---\nname: x\n---\n", "x", "缺少 description"),
    ("---\nname: x\ndescription: " + "长" * 1025 + "\n---\n", "x", "description 有 1025 字，最多 1024 字"),
])
def test_a_malformed_skill_is_reported_not_skipped(text, folder, said):
    skill, problems = skills.parse_skill(text, folder)
    assert skill is None and any(said in p for p in problems), problems


def test_a_good_skill_and_the_folder_that_has_none(tmp_path):
    root = skill_tree(tmp_path, {"release-notes": GOOD, "broken": "no front matter"})
    (root / "empty").mkdir()
    found, problems = skills.find_skills(root)
    assert list(found) == ["release-notes"] and found["release-notes"].body == "正文"
    assert found["release-notes"].description == "把提交写成发布说明。"
    assert problems == ["broken/SKILL.md：开头没有 YAML 头（第一行应是 ---，写完 name 和 description 后再一行 ---）",
                        "empty/：文件夹里没有 SKILL.md"]
    assert skills.find_skills(tmp_path / "missing") == ({}, [])


def test_the_catalogue_costs_less_than_every_body_and_load_skill_brings_one(tmp_path):
    found, _ = skills.find_skills(skill_tree(tmp_path, skills.EXAMPLES))
    catalogue = tokens([{"role": "system", "content": skills.catalogue_prompt(found)}])[0]
    pasted = tokens([{"role": "system", "content": skills.pasted_prompt(found)}])[0]
    assert catalogue < pasted
    assert all(f"- {s.name}: {s.description}" in skills.catalogue_prompt(found) for s in found.values())
    registry = skills.skill_tools(found)
    assert registry.invoke("load_skill", '{"name": "sql-style"}').startswith("关键字大写")
    unknown = registry.call("load_skill", '{"name": "sql"}')
    assert not unknown.ok and "没有叫 'sql' 的技能。可用的技能：code-review, release-notes, sql-style" in unknown.content


def test_memory_keeps_source_and_time_and_a_person_can_read_correct_and_delete_it(tmp_path):
    memory = skills.Memory(tmp_path / "memory.json")
    registry = skills.memory_tools(memory)
    assert registry.invoke("remember", '{"fact": "用户叫小林"}') == "记下了，第 1 条。"
    registry.invoke("remember", '{"fact": "用户喜欢简短的回答", "source": "用户说的"}')
    saved = json.loads((tmp_path / "memory.json").read_text(encoding="utf-8"))
    assert [item["fact"] for item in saved] == ["用户叫小林", "用户喜欢简短的回答"]
    assert all(item["source"] == "用户说的" and item["at"][:4].isdigit() for item in saved)
    assert registry.invoke("recall", '{"query": "小林"}').startswith("1. 用户叫小林（用户说的，")
    assert "没有记着" in registry.invoke("recall", '{"query": "生日"}')
    assert registry.invoke("forget", '{"number": 1}') == "删掉了第 1 条：用户叫小林"
    assert registry.invoke("forget", '{"number": 9}') == "没有第 9 条记忆。"
    assert [item["fact"] for item in memory.all()] == ["用户喜欢简短的回答"]


def run(found, question):
    return list(skills.run_with_skills(make_client("offline"), question, found))


def test_the_offline_model_reads_the_skill_whose_description_fits_then_follows_it(tmp_path):
    found, _ = skills.find_skills(skill_tree(tmp_path, skills.EXAMPLES))
    events = run(found, "帮我把这几个提交写成发布说明")
    [call] = [e for e in events if e["type"] == "tool_call"]
    assert call["name"] == "load_skill" and call["arguments"] == {"name": "release-notes"}
    assert events[-1]["type"] == "final" and "按“新功能 / 修复 / 其他”分三组" in events[-1]["content"]
    assert events[0]["type"] == "skills" and events[0]["way"] == "catalogue"
    assert events[1]["messages"][0]["content"] == skills.catalogue_prompt(found)


def test_a_misleading_description_makes_it_read_the_wrong_skill_and_a_vague_one_none(tmp_path):
    misleading = dict(skills.EXAMPLES)
    misleading["sql-style"] = misleading["sql-style"].replace(
        "团队写 SQL 的规矩。用户要写查询、改 SQL、问数据库怎么查时用。", "写发布说明时的格式规矩。")
    found, _ = skills.find_skills(skill_tree(tmp_path / "a", misleading))
    calls = [e for e in run(found, "帮我写一份发布说明的格式") if e["type"] == "tool_call"]
    assert calls[0]["arguments"] == {"name": "sql-style"}
    vague = {"tips": "---\nname: tips\ndescription: 一些有用的东西。\n---\n正文"}
    found, _ = skills.find_skills(skill_tree(tmp_path / "b", vague))
    events = run(found, "这个查询怎么写")
    assert not [e for e in events if e["type"] == "tool_call"]
    assert "没有哪个技能的描述和这个问题对得上" in events[-1]["content"]


def test_the_box_says_what_it_did_not_read():
    from runs import skills_backend

    box = ("a note\n" + skills_backend.text_from_files({"release-notes": GOOD})
           + "==> skills/release-notes/SKILL.md <==\n" + GOOD.replace("把提交", "另一份"))
    found, problems = skills_backend.skills_from(box)
    assert list(found) == ["release-notes"] and found["release-notes"].description == "把提交写成发布说明。"
    assert problems == ["第一行 ==> skills/<名字>/SKILL.md <== 之前还有文字，它不属于任何技能，没有读。",
                        "skills/release-notes/SKILL.md 出现了不止一次：只读了第一个。"]


def test_front_matter_too_long_or_too_deep_is_said_not_crashed():
    deep = "---\nname: " + "[" * 5000 + "\n---\n"
    assert "YAML 头有" in skills.parse_skill(deep, "x")[1][0]
    nested = "---\nname: " + "[" * 1000 + "]" * 1000 + "\n---\n"
    skill, problems = skills.parse_skill(nested, "x")
    assert skill is None and problems


def test_the_pasted_way_gives_the_offline_model_the_bodies_to_follow(tmp_path):
    found, _ = skills.find_skills(skill_tree(tmp_path, skills.EXAMPLES))
    events = list(skills.run_with_skills(make_client("offline"), "帮我把这几个提交写成发布说明", found, way="pasted"))
    assert events[1]["tools"] is None and not [e for e in events if e["type"] == "tool_call"]
    assert events[-1]["content"].startswith("提示词里贴着技能 release-notes 的说明，照它来做")


def test_a_memory_is_corrected_by_a_person_and_bounded(tmp_path):
    memory = skills.Memory(tmp_path / "memory.json")
    memory.remember("喜欢", "Python")
    corrected = memory.correct(1, "用户的偏好：喜欢用 Python")
    assert corrected["fact"] == "用户的偏好：喜欢用 Python" and corrected["source"] == "用户改正"
    assert memory.correct(2, "x") is None and memory.forget(0) is None
    memory.remember("长" * 1000, "用户说的")
    assert len(memory.all()[1]["fact"]) == skills.Memory.FACT_LIMIT
    for n in range(skills.Memory.COUNT_LIMIT - 2):
        memory.remember(f"第 {n} 件事", "用户说的")
    with pytest.raises(ValueError, match="记不下了"):
        memory.remember("再一件", "用户说的")


def test_each_session_has_its_own_memories_and_loses_them_with_the_session():
    from runs import skills_backend

    mine, theirs = skills_backend.memory_of("session-a"), skills_backend.memory_of("session-b")
    mine.remember("我叫小林", "用户说的")
    assert [m["fact"] for m in skills_backend.memory_of("session-a").all()] == ["我叫小林"] and theirs.all() == []
    assert skills_backend.memory_of(None).path != skills_backend.memory_of(None).path    # no session: one run only
    skills_backend.forget_memories("session-a")
    assert skills_backend.memory_of("session-a").all() == []
