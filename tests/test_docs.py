"""The README's architecture section is a map (one short paragraph per folder; the narratives and
figures live in docs/), and every relative link in the README and docs/ leads to a file that exists."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP_PARAGRAPH_LIMIT = 1200          # characters; the longest folder paragraph (code/) is about 1,030


def architecture_section() -> str:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    return readme.split("\n## 架构\n", 1)[1].split("\n## ", 1)[0]


def test_the_architecture_section_stays_a_map():
    paragraphs = [p for p in architecture_section().split("\n\n") if p.strip() and not p.startswith("```")]
    assert any(p.startswith("**`serving/`") for p in paragraphs)
    long = {p[:30]: len(p) for p in paragraphs if len(p) > MAP_PARAGRAPH_LIMIT}
    assert long == {}, "move the narrative into docs/ and leave a pointer"


def test_relative_links_lead_to_files():
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for document in documents:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", document.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not (document.parent / target).exists():
                broken.append((document.name, target))
    assert broken == []
    assert "](docs/serving.md)" in architecture_section()        # the serving/ narrative's new home
