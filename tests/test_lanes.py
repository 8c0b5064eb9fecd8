"""scripts/test.sh collects the fairness (serial) and containment (unprivileged) tests only in
tests/sandbox and tests/workspace: a test so marked anywhere else would never run."""
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
COLLECTED = (TESTS / "sandbox", TESTS / "workspace")


def test_the_serial_and_unprivileged_tests_live_where_test_sh_collects_them():
    marked = [path for path in TESTS.rglob("*.py")
              if re.search(r"\bmark\.(serial|unprivileged)\b", path.read_text(encoding="utf-8"))]
    assert marked, "no marked test found: the pattern no longer matches how they are marked"
    assert [path for path in marked if not any(folder in path.parents for folder in COLLECTED)] == []
    assert "sandbox_tests=(tests/sandbox tests/workspace)" in (TESTS.parent / "scripts" / "test.sh").read_text()
