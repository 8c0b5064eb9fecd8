"""Sessions as trees (code/sessions.py): paths, forks, runs on a branch, JSONL and Markdown, hostile files.

Requests are checked where they leave: the offline client's raw request bodies, and the local server's
request log when the real openai SDK talks HTTP to it."""
import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import sessions
from examples_weather import registry
from llm_clients import make_client
from sessions import Session, SessionProblem, load, loads

RAIN = "北京今天大雨，气温 18°C，湿度 95%"


def recording_client():
    """The offline client, keeping a copy of every request body it sends."""
    client, bodies = make_client("offline"), []
    send = client.send

    def record(body):
        bodies.append(copy.deepcopy(body))
        return send(body)
    client.send = record
    return client, bodies


def paired(messages):
    """Written from the API's rule, not from sessions.py: every assistant message with tool_calls is followed
    directly by one tool result per call, and no tool result stands anywhere else."""
    index = 0
    while index < len(messages):
        message = messages[index]
        if message["role"] == "tool":
            return False
        index += 1
        if message.get("tool_calls"):
            answered = []
            while index < len(messages) and messages[index]["role"] == "tool":
                answered.append(messages[index]["tool_call_id"])
                index += 1
            if sorted(answered) != sorted(call["id"] for call in message["tool_calls"]):
                return False
    return True


def walked(jsonl, leaf):
    """The messages root → leaf, found from the file's lines alone by following parent_id."""
    lines = {entry["id"]: entry for entry in map(json.loads, jsonl.splitlines()[1:])}
    found = []
    while leaf is not None:
        found.append(lines[leaf]["message"])
        leaf = lines[leaf]["parent_id"]
    return found[::-1]


def leaves(session):
    return [entry_id for entry_id in session.entries if not session.children[entry_id]]


def asked(question="北京今天天气怎么样？", client=None):
    session = Session()
    produced = list(session.run(client or make_client("offline"), None, registry, question=question))
    return session, produced


def entry_with(session, role, text=None):
    return next(e for e in session.path() if e["message"]["role"] == role
                and (text is None or text in str(e["message"].get("content"))))


# ── a run writes its history as a path

def test_a_run_writes_the_loops_history_as_one_path_and_tags_every_event():
    session, produced = asked()
    final = next(e for e in produced if e["type"] == "final")
    assert final["messages"] == session.messages()                    # the loop's history is the branch's path
    assert [m["role"] for m in session.messages()] == ["user", "assistant", "tool", "assistant"]
    assert {e["branch"] for e in produced} == {session.branch_of()}    # every event carries the branch
    written = [e["entry"] for e in produced if e["type"] == "entry"]
    assert written == session.path()                                   # one entry event per entry written
    assert [e["parent_id"] for e in written] == [None] + [e["id"] for e in written[:-1]]
    assert written[1]["model"] == session.entries[written[-1]["id"]]["model"] == "offline-rule-model"
    kinds = [e["type"] for e in produced]
    assert kinds.index("entry", 1) > kinds.index("tool_result")        # the call is written with its result
    assert kinds[-2:] == ["entry", "final"]


def test_each_request_sends_exactly_its_branchs_path_and_nothing_of_a_sibling():
    client, bodies = recording_client()
    session = Session()
    runs = []                                     # (branch, bodies sent during that run)

    def on(steps):
        before = len(bodies)
        produced = list(steps)
        runs.append((produced[-1]["branch"], bodies[before:]))
        return produced

    on(session.run(client, None, registry, question="北京今天天气怎么样？"))
    first = session.branch_of()
    on(session.fork_and_run(entry_with(session, "tool")["id"], RAIN, client, None, registry))
    rain = session.branch_of()
    on(session.fork_and_run(entry_with(session, "user")["id"], "上海今天天气怎么样？", client, None, registry))
    shanghai = session.branch_of()
    assert len({first, rain, shanghai}) == 3 and all(sent for _, sent in runs)

    for branch, sent in runs:
        path = session.messages(session.leaf_of(branch))
        for body in sent:
            assert body["messages"] == path[:len(body["messages"])]         # a prefix of this branch's path
    rain_text = json.dumps([b["messages"] for b in runs[1][1]], ensure_ascii=False)
    assert "大雨" in rain_text and "晴" not in rain_text                       # the sunny result stays on branch 1
    shanghai_text = json.dumps([b["messages"] for b in runs[2][1]], ensure_ascii=False)
    assert "上海" in shanghai_text and "北京" not in shanghai_text            # a new question starts a new root
    assert "大雨" in session.answer(session.leaf_of(rain))
    assert "晴" in session.answer(session.leaf_of(first))


TEXTS = ["北京今天下雪，气温 -3°C", "上海今天天气怎么样？", "广州和深圳的天气怎么样？", "好的，知道了。", "成都明天会下雨吗？"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(TEXTS)), max_size=6))
def test_any_forks_leave_every_path_paired_and_every_request_on_its_own_path(forks):
    client, bodies = recording_client()
    session = Session()
    sent = []                                         # (branch, body)

    def on(steps):
        before = len(bodies)
        produced = list(steps)
        sent.extend((produced[-1]["branch"], body) for body in bodies[before:])

    on(session.run(client, None, registry, question="北京和上海的天气怎么样？"))
    for pick, text in forks:
        editable = [i for i, e in session.entries.items()
                    if not e["message"].get("tool_calls") and e["message"]["content"] != text]
        session.fork(editable[pick % len(editable)], text)
        on(session.run_on(client, None, registry) if session.cannot_run() is None
           else session.run(client, None, registry, question="杭州今天天气怎么样？"))
    dumped = session.dumps()
    for leaf in leaves(session):
        assert paired(session.messages(leaf))
        assert session.messages(leaf) == walked(dumped, leaf)
    assert len(leaves(session)) == len(session.branches()) == len(forks) + 1
    for branch, body in sent:
        path = session.messages(session.leaf_of(branch))
        assert body["messages"] == path[:len(body["messages"])]


# ── forks of each kind

def test_fork_of_a_tool_result_keeps_its_call_id_and_copies_the_rest_of_its_batch():
    session, _ = asked("北京和上海的天气怎么样？")
    calls = entry_with(session, "assistant")["message"]["tool_calls"]
    beijing, shanghai = [e for e in session.path() if e["message"]["role"] == "tool"]
    written = session.fork(beijing["id"], RAIN)
    assert [e["message"]["tool_call_id"] for e in written] == [calls[0]["id"], calls[1]["id"]]
    assert written[0]["edited_from"] == beijing["id"] and written[0]["parent_id"] == beijing["parent_id"]
    assert written[1]["copied_from"] == shanghai["id"] and written[1]["message"] == shanghai["message"]
    assert paired(session.messages())
    answer = list(session.run_on(make_client("offline"), None, registry))[-1]["content"]
    assert "大雨" in answer and "上海今天多云" in answer

    last = session.fork(session.path()[3]["id"], "上海今天有台风")   # the second result: nothing after it to copy
    assert len(last) == 1 and last[0]["parent_id"] == session.path()[2]["id"]
    assert paired(session.messages())


def test_fork_of_the_question_starts_a_new_root():
    session, _ = asked()
    question = session.path()[0]
    new = session.fork(question["id"], "上海今天天气怎么样？")[0]
    assert new["parent_id"] is None and len(session.children[None]) == 2
    list(session.run_on(make_client("offline"), None, registry))
    row = next(r for r in session.branches() if r["id"] == new["id"])
    assert row["change"]["kind"] == "question" and row["change"]["before"] == "北京今天天气怎么样？"
    assert row["fork_point"] is None and "上海" in row["answer"] and row["current"]


def test_fork_of_a_follow_up_a_system_prompt_and_an_answer():
    client = make_client("offline")
    session = Session()
    list(session.run(client, None, registry, question="北京今天天气怎么样？", system="你是天气助手。"))
    list(session.run(client, None, registry, question="上海今天天气怎么样？"))
    follow_up = [e for e in session.path() if e["message"]["role"] == "user"][1]
    assert session.kind(follow_up["id"]) == "user"
    list(session.fork_and_run(follow_up["id"], "广州今天天气怎么样？", client, None, registry))
    assert "广州" in session.answer(session.leaf) and "北京今天晴" in json.dumps(session.messages(), ensure_ascii=False)

    system = session.path()[0]
    session.fork(system["id"], "你是一个只说英文的天气助手。")
    assert session.messages() == [{"role": "system", "content": "你是一个只说英文的天气助手。"}]
    assert session.cannot_run() is None

    with pytest.raises(SessionProblem) as caught:
        next(session.run(client, None, registry, question="再问一句", system="换一个 system"))
    assert "fork 原来那一条" in caught.value.zh

    answered = session.switch(follow_up["id"])
    session.fork(answered, "我不知道。")                               # the model's answer, edited by a person
    assert session.answer(session.leaf) == "我不知道。"
    refused = list(session.run_on(client, None, registry))
    assert [e["type"] for e in refused] == ["error"] and "已经有回答" in refused[0]["message"]


@pytest.mark.parametrize("which, content, words", [
    ("calls", "随便", "带工具调用的 assistant 消息不能直接改"),
    ("tool", None, "和原来一样"),
    ("tool", "   ", "空的"),
    ("nobody", "x", "没有 id"),
])
def test_forks_that_cannot_be_made_say_why(which, content, words):
    session, _ = asked()
    target = {"calls": session.path()[1]["id"], "tool": session.path()[2]["id"], "nobody": "no-such-entry"}[which]
    before = session.dumps()
    with pytest.raises(SessionProblem) as caught:
        session.fork(target, session.path()[2]["message"]["content"] if content is None else content)
    assert words in caught.value.zh and caught.value.en
    assert session.dumps() == before


# ── branches side by side

def test_branches_say_where_they_part_what_changed_and_how_each_answered():
    session, _ = asked()
    first = session.branch_of()
    result = entry_with(session, "tool")
    list(session.fork_and_run(result["id"], RAIN, make_client("offline"), None, registry))
    rows = session.branches()
    assert [r["number"] for r in rows] == [1, 2] and [r["current"] for r in rows] == [False, True]
    assert rows[0]["change"] is None and rows[0]["id"] == first
    change = rows[1]["change"]
    assert change["sibling"] == result["id"] and change["sibling_branch"] == first and change["kind"] == "tool"
    assert change["before"] == result["message"]["content"] and change["after"] == RAIN and change["edited"]
    assert rows[1]["fork_point"] == result["parent_id"] and rows[1]["length"] == 4
    side = session.compare(first, rows[1]["leaf"])
    assert side["shared"] == 2 and side["fork_point"] == result["parent_id"]
    assert side["a"]["first"]["id"] == result["id"] and side["b"]["first"]["message"]["content"] == RAIN
    assert "晴" in side["a"]["answer"] and "大雨" in side["b"]["answer"]
    tree = session.tree()
    assert [r["depth"] for r in tree] == [0, 1, 2, 3, 2, 3]
    assert [r["number"] for r in tree] == [1, 1, 1, 1, 2, 2]
    assert [r["current"] for r in tree] == [True, True, False, False, True, True]
    assert tree[4]["edited_from"] == result["id"] and tree[0]["kind"] == "question"
    assert session.switch(first) == rows[0]["leaf"] and session.branches()[0]["current"]


# ── runs stopped half way, single steps

def test_a_run_stopped_after_the_models_call_writes_nothing_of_that_turn():
    session = Session()
    steps = session.run(make_client("offline"), None, registry, question="北京和上海的天气怎么样？")
    for event in steps:
        if event["type"] == "tool_result":             # one of the two results is back
            break
    steps.close()
    assert [m["role"] for m in session.messages()] == ["user"]
    produced = list(session.run_on(make_client("offline"), None, registry))
    assert produced[-1]["type"] == "final" and paired(session.messages())


def test_a_result_written_by_hand_in_single_step_is_what_the_branch_keeps():
    session = Session()
    steps = session.run(make_client("offline"), None, registry, question="北京今天天气怎么样？")
    event = next(steps)
    while event["type"] != "tool_call":
        event = next(steps)
    steps.send({"result": "北京今天冰雹"})
    list(steps)
    assert entry_with(session, "tool")["message"]["content"] == "北京今天冰雹"
    assert "冰雹" in session.answer(session.leaf)


@pytest.mark.parametrize("limit, kept", [(2, ["user"]), (3, ["user", "assistant", "tool"])])
def test_a_full_session_stops_the_run_with_a_message_and_never_splits_a_turn(monkeypatch, limit, kept):
    monkeypatch.setattr(sessions, "MAX_ENTRIES", limit)
    session = Session()
    produced = list(session.run(make_client("offline"), None, registry, question="北京今天天气怎么样？"))
    assert produced[-1]["type"] == "error" and produced[-1]["code"] == "session"
    assert f"最多 {limit} 条" in produced[-1]["message"] and produced[-1]["branch"] == session.branch_of()
    assert [m["role"] for m in session.messages()] == kept and paired(session.messages())


# ── files: JSONL round trip, resume, export

def test_jsonl_round_trip_keeps_every_entry_the_branches_and_the_current_leaf():
    session, _ = asked("北京和上海的天气怎么样？")
    list(session.fork_and_run(entry_with(session, "tool")["id"], RAIN, make_client("offline"), None, registry))
    text = session.dumps()
    header = json.loads(text.splitlines()[0])
    assert header == {"type": "session", "format": sessions.FORMAT, "version": 1, "id": session.id,
                      "time": session.created}
    back = loads(text)
    assert back.entries == session.entries and back.leaf == session.leaf and back.id == session.id
    assert back.branches() == session.branches() and back.tree() == session.tree()
    assert back.dumps() == text


def test_a_session_written_as_it_runs_resumes_after_a_restart(tmp_path):
    file = tmp_path / "run.jsonl"
    session = Session(file=file)
    list(session.run(make_client("offline"), None, registry, question="北京今天天气怎么样？"))
    assert len(file.read_text(encoding="utf-8").splitlines()) == 1 + 4      # header + each entry as written

    resumed = load(file)                                   # a new process would do exactly this
    assert resumed.messages() == session.messages() and resumed.file == str(file)
    produced = list(resumed.run(make_client("offline"), None, registry, question="上海今天天气怎么样？"))
    assert produced[-1]["type"] == "final" and "上海" in produced[-1]["content"]
    again = load(file)
    assert again.messages() == resumed.messages() and len(again.messages()) == 8
    assert "北京今天晴" in json.dumps(produced[1]["messages"], ensure_ascii=False)   # the request carried the past

    with pytest.raises(FileExistsError):
        Session(file=file)                                 # a new session never overwrites a file


def test_a_hand_edited_file_without_a_final_newline_resumes_on_a_new_line(tmp_path):
    session, _ = asked()
    file = tmp_path / "edited.jsonl"
    file.write_text(session.dumps().rstrip("\n"), encoding="utf-8")
    resumed = load(file)
    resumed.say("上海今天天气怎么样？")
    assert load(file).messages() == resumed.messages()


def test_one_branch_exports_as_a_session_of_its_own(tmp_path):
    session, _ = asked()
    list(session.fork_and_run(entry_with(session, "tool")["id"], RAIN, make_client("offline"), None, registry))
    text = session.dumps(leaf=session.leaf)
    header = json.loads(text.splitlines()[0])
    assert header["parent_session"] == session.id and header["id"] != session.id
    alone = loads(text)
    assert alone.messages() == session.messages() and len(alone.entries) == 4
    assert "晴" not in json.dumps(alone.messages(), ensure_ascii=False)
    assert [r["change"] for r in alone.branches()] == [None]
    session.save(tmp_path / "rain.jsonl", leaf=session.leaf)
    assert load(tmp_path / "rain.jsonl").messages() == session.messages()
    assert [p.name for p in tmp_path.iterdir()] == ["rain.jsonl"]              # no temporary file left behind
    assert "人改过" in alone.to_markdown() and "原来是" not in alone.to_markdown()


def test_markdown_export_shows_every_message_and_hostile_text_stays_text():
    session, _ = asked("北京和上海的天气怎么样？")
    list(session.fork_and_run(entry_with(session, "tool")["id"], "```\n# 不是标题\n```", make_client("offline"),
                              None, registry))
    text = session.to_markdown()
    tokens = MarkdownIt().parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    assert len(headings) == len(session.messages()) == 5
    assert headings[0] == "1. user（问题）" and "get_weather 的结果" in headings[2] and "人改过" in headings[2]
    fences = [t.content for t in tokens if t.type == "fence"]
    assert "```\n# 不是标题\n```\n" in fences                              # inside a fence, not a heading
    assert '{"city": "北京"}\n' in fences and "北京今天晴，气温 25°C，湿度 30%\n" in fences   # what it was
    assert "原来是" in text and "从分支 1 分出：第 3 条工具结果被人改过" in text


# ── hostile files

def good_file():
    session, _ = asked()
    return session.dumps()


def lines_of(text):
    return [json.loads(line) for line in text.splitlines()]


def written(lines):
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def changed(change):
    lines = lines_of(good_file())
    change(lines)
    return written(lines)


def set_in(index, *keys_and_value):
    *keys, value = keys_and_value

    def change(lines):
        target = lines[index]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return change


HOSTILE = [
    ("content is a number", lambda: changed(set_in(1, "message", "content", 42)), 2, "message.content 不对"),
    ("unknown role", lambda: changed(set_in(1, "message", "role", "robot")), 2, "message.role 只能是"),
    ("id with a path in it", lambda: changed(set_in(1, "id", "../../etc")), 2, "id 不对"),
    ("parent id a number", lambda: changed(set_in(2, "parent_id", 7)), 3, "parent_id 不对"),
    ("arguments as an object", lambda: changed(set_in(2, "message", "tool_calls", 0, "function", "arguments",
                                                       {"city": "北京"})), 3, "JSON 文本"),
    ("a time that is not a time", lambda: changed(set_in(1, "time", "yesterday")), 2, "ISO 8601"),
    ("an unknown field", lambda: changed(set_in(1, "run", "rm -rf /")), 2, "不认识的字段 run"),
    ("an unknown message field", lambda: changed(set_in(1, "message", "name", "x")), 2, "不认识的字段 name"),
    ("a line that is a list", lambda: changed(lambda lines: lines.__setitem__(2, [1, 2])), 3, "JSON 对象"),
    ("not JSON", lambda: good_file().replace('"type": "message"', "type: message", 1), 2, "不是合法的 JSON"),
    ("nested too deep", lambda: good_file() + "[" * 200_000 + "\n", 6, "嵌套得太深"),
    ("unknown parent", lambda: changed(set_in(3, "parent_id", "nowhere")), 4, "找不到"),
    ("its own parent", lambda: changed(lambda ls: ls[2].__setitem__("parent_id", ls[2]["id"])), 3, "它自己"),
    ("a cycle through a later line", lambda: changed(lambda ls: ls[1].__setitem__("parent_id", ls[4]["id"])), 2,
     "指向后面第 5 行"),
    ("duplicate ids", lambda: changed(lambda ls: ls[3].__setitem__("id", ls[1]["id"])), 4, "和第 2 行的重复"),
    ("a result with no call", lambda: changed(lambda ls: ls[3].__setitem__("parent_id", ls[1]["id"])), 4,
     "前面没有在等它的调用"),
    ("a result for another call", lambda: changed(set_in(3, "message", "tool_call_id", "call_other")), 4, "对不上"),
    ("an answer before the results", lambda: changed(lambda ls: (ls[4].__setitem__("parent_id", ls[2]["id"]),
                                                                  ls.__delitem__(3))), 4, "还没有结果"),
    ("a branch ending on a call", lambda: changed(lambda ls: ls.__delitem__(slice(3, None))), 3, "没有结果"),
    ("two calls with one id", lambda: changed(lambda ls: ls[2]["message"]["tool_calls"].append(
        ls[2]["message"]["tool_calls"][0])), 3, "两个调用的 id 都是"),
    ("an edit that is no sibling", lambda: changed(lambda ls: ls[3].__setitem__("edited_from", ls[1]["id"])), 4,
     "父条目不同"),
    ("no header", lambda: written(lines_of(good_file())[1:]), 1, "第一行应该是文件头"),
    ("another program's session", lambda: changed(set_in(0, "format", "pi")), 1, "别的程序"),
    ("a newer version", lambda: changed(set_in(0, "version", 2)), 1, "第 2 版"),
    ("a header with a wrong id", lambda: changed(set_in(0, "id", "a b")), 1, "id 不对"),
]


@pytest.mark.parametrize("name, make, line, words", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_broken_or_hostile_file_says_which_line_and_what_is_wrong(name, make, line, words):
    with pytest.raises(SessionProblem) as caught:
        loads(make())
    assert caught.value.line == line and caught.value.zh.startswith(f"第 {line} 行：")
    assert words in caught.value.zh, caught.value.zh
    assert caught.value.en.startswith(f"line {line}: ")


@pytest.mark.parametrize("data, words", [
    (b"", "空的"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "不是 UTF-8"),
    ("x" * (sessions.MAX_FILE_BYTES + 1), "字节"),
    (b"{}\n" * (sessions.MAX_ENTRIES + 2), f"最多读 {sessions.MAX_ENTRIES} 条"),
])
def test_a_file_that_is_not_a_session_at_all_is_refused_whole(data, words):
    with pytest.raises(SessionProblem) as caught:
        loads(data)
    assert words in caught.value.zh and caught.value.line is None and caught.value.en


def test_a_huge_file_on_disk_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    file = tmp_path / "huge.jsonl"
    file.write_text(good_file() + " " * (sessions.MAX_FILE_BYTES + 10), encoding="utf-8")
    with pytest.raises(SessionProblem) as caught:
        load(file)
    assert f"{sessions.MAX_FILE_BYTES + 1} 字节" in caught.value.zh       # stopped one byte past the limit


def test_a_fork_that_would_not_fit_writes_nothing(monkeypatch):
    session, _ = asked("北京和上海的天气怎么样？")
    monkeypatch.setattr(sessions, "MAX_ENTRIES", len(session.entries) + 1)   # room for the edit, not its copy
    with pytest.raises(SessionProblem) as caught:
        session.fork(entry_with(session, "tool")["id"], RAIN)
    assert "写不下" in caught.value.zh and len(session.branches()) == 1


def test_a_file_at_the_limits_still_loads():
    session = Session()
    for number in range(sessions.MAX_ENTRIES // 2):
        session.say(f"第 {number} 个问题")
        session.append({"role": "assistant", "content": "好"})
    assert len(loads(session.dumps()).entries) == sessions.MAX_ENTRIES
    with pytest.raises(SessionProblem) as caught:
        session.say("再多一条")
    assert f"{sessions.MAX_ENTRIES} 条" in caught.value.zh


# ── over real HTTP, with the real openai SDK, against the project's own server

def test_fork_and_run_over_http_sends_each_branch_only_its_own_path(connect, server):
    client = connect("openai")
    session = Session()
    list(session.run(client, None, registry, question="北京今天天气怎么样？"))
    first = len(server.requests)
    list(session.fork_and_run(entry_with(session, "tool")["id"], RAIN, client, None, registry))
    sent = [request["body"]["messages"] for request in server.requests[first:]]
    assert sent == [session.messages()[:-1]]                 # one request: the rain branch up to its new answer
    assert "晴" not in json.dumps(sent, ensure_ascii=False)
    assert "大雨" in session.answer(session.leaf)
    back = loads(session.dumps())
    assert [r["answer"] for r in back.branches()] == [session.answer(leaf) for leaf in leaves(session)]
