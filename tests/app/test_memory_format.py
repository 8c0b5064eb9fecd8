"""The format of what the page keeps in the browser: records round-trip, every stored value
is checked against its control, caps hold, old, newer and corrupted values are refused with
a Chinese reason, and a migration step is applied when one is registered."""
from __future__ import annotations

import json

import pytest

from memory import memory_format as mf
from runs import session_io

SPECS = {
    "source": mf.FieldSpec("text", mf.SOURCE_LIMIT, label="源码"),
    "question": mf.FieldSpec("text", mf.TEXT_LIMIT, label="问题"),
    "parallel": mf.FieldSpec("bool", label="并行"),
    "turns": mf.FieldSpec("number", minimum=1, maximum=12, label="轮数"),
    "approach": mf.FieldSpec("choice", choices=("react", "json"), label="解析方式"),
    "model": mf.FieldSpec("choice", choices=None, label="模型"),
    "files": mf.FieldSpec("json", 50, label="文件"),
}
GOOD = {"source": "def f(): pass", "question": "广州冷不冷？", "parallel": False, "turns": 6,
        "approach": "json", "model": "glm-4.6", "files": {"a.txt": "hi"}}


def stored(fields=GOOD, part="lesson:react", **changes) -> str:
    document = json.loads(mf.Record(part, dict(fields), saved_at=1_700_000_000.0, writer="tab-a").to_json())
    document.update(changes)
    return json.dumps(document, ensure_ascii=False)


def test_a_record_round_trips_with_its_format_and_version():
    text = stored()
    document = json.loads(text)
    assert document["format"] == mf.FORMAT and document["version"] == mf.VERSION
    record, why = mf.decode(text, "lesson:react")
    assert why == ""
    assert record.fields == GOOD and record.writer == "tab-a" and record.saved_at == 1_700_000_000.0
    assert mf.restore_fields(record.fields, SPECS) == (GOOD, [])


@pytest.mark.parametrize("text, reason", [
    ("{not json", "不是合法的 JSON"),
    ("[1, 2]", "不是本页保存的格式"),
    (json.dumps({"format": "something-else", "version": 1}), "不是本页保存的格式"),
    (stored(version=0), "来自旧版本的页面（格式 0）"),
    (stored(version=mf.VERSION + 1), "来自更新版本的页面"),
    (stored(version="1"), "没有版本号"),
    (stored(part="lesson:registry"), "属于别的部分"),
    (stored(run=[1, 2]), "run 不是对象"),
])
def test_unusable_stored_values_are_refused_with_a_reason(text, reason):
    record, why = mf.decode(text, "lesson:react")
    assert record is None
    assert reason in why


def test_nothing_stored_is_not_a_problem():
    assert mf.decode("", "settings") == (None, "")
    assert mf.decode(None, "settings") == (None, "")


def test_each_value_is_checked_against_its_control():
    tampered = {"source": 42, "question": "x" * (mf.TEXT_LIMIT + 1), "parallel": "yes", "turns": 99,
                "approach": "regex", "model": "any-custom-model", "files": {"big": "x" * 100},
                "gone": "a control the page no longer has"}
    good, bad = mf.restore_fields(tampered, SPECS)
    assert good == {"model": "any-custom-model"}
    assert sorted(bad) == sorted(["源码", "问题", "并行", "轮数", "解析方式", "文件"])
    assert mf.restore_fields("not a dict", SPECS)[0] == {}


def test_numbers_reject_booleans_and_nan():
    spec = SPECS["turns"]
    assert mf.check_value(spec, True) == (False, None)
    assert mf.check_value(spec, float("nan")) == (False, None)
    assert mf.check_value(spec, 12) == (True, 12)


def test_saving_leaves_out_what_is_too_big_and_says_so():
    values = dict(GOOD, source="x" * (mf.SOURCE_LIMIT + 1))
    kept, notices = mf.keep_fields(values, SPECS)
    assert "source" not in kept and kept["question"] == "广州冷不冷？"
    assert len(notices) == 1 and "源码超过 100000 个字符" in notices[0]


def run_record(events: list) -> mf.Record:
    document = session_io.session_document("react", "src", [], "q", events, {"provider": "offline"}, {})
    return mf.Record("run:react", run=document, saved_at=1.0, writer="t")


def test_a_run_that_fits_is_kept_whole_and_the_key_is_blanked():
    events = [{"type": "request", "turn": 1, "messages": [{"role": "user", "content": "q"}]},
              {"type": "response", "turn": 1, "raw": {"echo": "sk-secret-123"}},
              {"type": "final", "turn": 1, "content": "答"}]
    text, notice = mf.run_text(run_record(events), secret="sk-secret-123")
    assert notice == "" and "sk-secret-123" not in text and "***" in text
    record, why = mf.decode(text, "run:react")
    assert why == "" and [e["type"] for e in record.run["events"]] == ["request", "response", "final"]
    assert session_io.load_document(record.run)["events"] == record.run["events"]


def test_a_run_over_the_cap_drops_stream_fragments_first_then_itself():
    fragment = {"type": "delta", "turn": 1, "content": "字" * 1000}
    final = {"type": "final", "turn": 1, "content": "答"}
    fits_without_fragments = [fragment] * (mf.RUN_LIMIT // 1000 + 5) + [final]
    text, notice = mf.run_text(run_record(fits_without_fragments))
    assert notice == "" and len(text) <= mf.RUN_LIMIT
    assert [e["type"] for e in json.loads(text)["run"]["events"]] == ["final"]
    too_big = [{"type": "tool_result", "turn": 1, "content": "字" * 1000}] * (mf.RUN_LIMIT // 1000 + 5)
    text, notice = mf.run_text(run_record(too_big))
    assert text is None
    assert "超过本浏览器保存上限" in notice and "导出本次运行" in notice


def test_a_registered_migration_brings_an_old_record_up_to_date(monkeypatch):
    def rename(document):
        fields = document.get("fields") or {}
        return dict(document, version=1, fields={"question": fields.get("prompt", "")})

    monkeypatch.setitem(mf.MIGRATIONS, 0, rename)
    record, why = mf.decode(stored(fields={"prompt": "旧版问题"}, version=0), "lesson:react")
    assert why == "" and record.fields == {"question": "旧版问题"}


def test_a_migration_that_does_not_advance_is_refused(monkeypatch):
    monkeypatch.setitem(mf.MIGRATIONS, 0, lambda document: document)
    record, why = mf.decode(stored(version=0), "lesson:react")
    assert record is None and "没能升级" in why


def test_the_origin_notice_names_another_tab_in_the_browsers_time():
    record = mf.Record("lesson:react", saved_at=0.0 + 13 * 3600 + 5 * 60, writer="tab-a")
    assert mf.origin_notice(record, "tab-a") == ""
    notice = mf.origin_notice(record, "tab-b", utc_offset_minutes=480)
    assert "21:05" in notice and "另一个标签页" in notice


# ---------------------------------------------------------------- a workspace's files

def test_workspace_files_that_fit_are_kept_whole():
    files = {"src/calc.py": "def add(a, b):\n    return a + b\n", "notes.md": "练习"}
    kept, left_out = mf.keep_files(files)
    assert kept == files and left_out == []
    text = mf.Record("workspace", {"files": kept, "left_out": left_out}).to_json()
    record, why = mf.decode(text, "workspace")
    assert why == "" and mf.restore_files(record.fields) == (files, [], "")
    assert mf.files_notice([]) == ""


def test_a_workspace_over_the_cap_keeps_the_small_files_and_names_the_rest():
    files = {"big.txt": "字" * 300, "notes.md": "n" * 40, "src/a.py": "a" * 40, "huge.log": "x" * 500}
    kept, left_out = mf.keep_files(files, limit=200)
    assert kept == {"notes.md": files["notes.md"], "src/a.py": files["src/a.py"]}
    assert left_out == ["big.txt", "huge.log"]
    assert len(json.dumps(kept, ensure_ascii=False, separators=(",", ":"))) <= 200
    notice = mf.files_notice(left_out, limit=200)
    assert "big.txt、huge.log" in notice and "没有存进本浏览器" in notice and "其余文件照常保存" in notice
    # Exactly what fits is accepted back; one character more is not.
    assert mf.restore_files({"files": kept, "left_out": left_out}, limit=200)[0] == kept
    size = len(json.dumps(kept, ensure_ascii=False, separators=(",", ":")))
    assert mf.keep_files(kept, limit=size) == (kept, [])
    assert mf.keep_files(kept, limit=size - 1)[1] != []


@pytest.mark.parametrize("fields, reason", [
    ("not an object", "不是对象"),
    ({"files": ["a.py"]}, "files 应是"),
    ({"files": {"a.py": 3}}, "files 应是"),
    ({"files": {"a.py": "x" * (mf.FILES_LIMIT + 1)}}, "超过保存上限"),
])
def test_unusable_kept_files_are_refused_with_a_reason(fields, reason):
    files, left_out, why = mf.restore_files(fields)
    assert files is None and reason in why
