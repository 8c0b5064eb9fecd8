"""/run_skills through gradio_client against the real app: skills given as SKILL.md texts, the
catalogue with load_skill against every body pasted in, and what is wrong with a skill said first."""
from __future__ import annotations

import pytest
from gradio_client import Client

import skills

ASK = "帮我把这几个提交写成发布说明"


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def first(result):
    """The skills event: the loop's first (a preset question's run starts with its purpose before it)."""
    return next(e for e in result["events"] if e["type"] in ("skills", "request"))


def test_the_inputs(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    names = [p["parameter_name"] for p in endpoints["/run_skills"]["parameters"]]
    assert names == ["skills", "question", "way", "provider", "model", "class_code", "max_tokens"]


def test_the_catalogue_way_reads_one_body_through_load_skill(client):
    result = client.predict(skills.EXAMPLES, ASK, "catalogue", api_name="/run_skills")
    event = first(result)
    assert event["type"] == "skills" and [s["name"] for s in event["skills"]] == list(skills.EXAMPLES)
    assert event["system_tokens"]["catalogue"] < event["system_tokens"]["pasted"]
    [call] = [e for e in result["events"] if e["type"] == "tool_call"]
    assert call["name"] == "load_skill" and call["arguments"] == {"name": "release-notes"}
    request = next(e for e in result["events"] if e["type"] == "request")
    assert "按“新功能" not in request["messages"][0]["content"]          # only names and descriptions
    assert result["ok"] and "按“新功能 / 修复 / 其他”分三组" in result["final"]


def test_the_pasted_way_sends_every_body_and_no_tool(client):
    result = client.predict(skills.EXAMPLES, ASK, "pasted", api_name="/run_skills")
    request = next(e for e in result["events"] if e["type"] == "request")
    assert request["tools"] is None
    assert all(skills.parse_skill(text, name)[0].body in request["messages"][0]["content"]
               for name, text in skills.EXAMPLES.items())


def test_a_malformed_skill_is_said_and_the_others_still_load(client):
    given = {**skills.EXAMPLES, "Bad": "---\nname: Bad\ndescription: x\n---\n正文", "odd": 3}
    event = first(client.predict(given, ASK, "catalogue", api_name="/run_skills"))
    assert [s["name"] for s in event["skills"]] == list(skills.EXAMPLES)
    assert any(p.startswith("Bad/SKILL.md：name 'Bad' 不合格式") for p in event["problems"])
    assert "odd/SKILL.md：应是不超过 20000 字的文字。" in event["problems"]


def test_a_misleading_description_makes_the_offline_model_read_the_wrong_skill(client):
    given = dict(skills.EXAMPLES)
    given["sql-style"] = given["sql-style"].replace("团队写 SQL 的规矩。用户要写查询、改 SQL、问数据库怎么查时用。",
                                                    "写发布说明时的格式规矩。")
    result = client.predict(given, "帮我写一份发布说明的格式", "catalogue", api_name="/run_skills")
    [call] = [e for e in result["events"] if e["type"] == "tool_call"]
    assert call["arguments"] == {"name": "sql-style"} and "关键字大写" in result["final"]
    # The question wants the release-notes skill (runs/purposes.py): the verdict names the wrong one read.
    assert not result["ok"] and result["verdict"]["state"] == "missed"
    assert result["verdict"]["title"].startswith('这个问题要的是 load_skill(name="release-notes")，实际执行的是 '
                                                 'load_skill(name="sql-style")')
