"""The playground's lesson tabs and the panels they share.

The course modules in code/ are imported by bare name (`import llm_clients`); make
sure that folder is importable however the app is started.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE_DIR = ROOT / "code"
if str(CODE_DIR) not in sys.path:
    sys.path.insert(0, str(CODE_DIR))
