"""The skills lesson's memories kept in the browser (memory/skill_memories.py): what comes back from
the browser is anyone's, so only real memories are put into the session, and the page says how many
were left out."""
from memory import skill_memories
from runs import skills_backend


def test_kept_memories_come_back_into_a_new_session_and_only_real_ones():
    kept = [{"fact": "用户叫小林", "source": "用户说的", "at": "2026-12-05T10:00:00"},
            {"fact": "x" * 5000, "source": "用户说的", "at": "2026-12-05T10:01:00"},
            {"fact": ["not", "text"]}, "a string", {"fact": "   "}, {"fact": "喜欢 Python", "source": 3}, {"fact": "用户\ud800"}]
    notes = skill_memories.apply({"facts": kept}, "session-back")
    back = skills_backend.memory_of("session-back").all()
    assert [item["fact"] for item in back] == ["用户叫小林", "x" * 300]          # a fact is one sentence: cut
    assert notes == ["↩ 记忆已恢复：本浏览器保存的 2 条。", "⚠️ 另有 5 条不是有效的记忆（或超出 100 条），没有恢复。"]
    assert skill_memories.read("session-back") == ({"facts": back}, [])
    assert skills_backend.memory_of("another-session").all() == []


def test_a_malformed_copy_is_ignored_and_said():
    assert skill_memories.apply({"facts": "用户叫小林"}, "session-odd") == ["⚠️ 本浏览器里保存的记忆格式不对，已忽略。"]
    assert skills_backend.memory_of("session-odd").all() == []
    assert skill_memories.read(None) == (None, [])
