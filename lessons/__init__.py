"""The playground's lesson pages: each lesson's folder, lessons/<id>/ (its page.py, its texts lesson.md
and lesson.en.md, the views only it uses, and timeline.py when its loop has event kinds of its own; all
found by the catalogue's id), and here the panels they share.

The course modules in code/ are imported by bare name (`import llm_clients`); the
project's one path rule (import_paths.py) puts that folder first however the app is started.
"""
from pathlib import Path

from import_paths import use_project_paths

use_project_paths()
ROOT = Path(__file__).resolve().parent.parent
CODE_DIR = ROOT / "code"
