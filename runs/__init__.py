"""What a run does on the server: start one of the course's loops with the chosen model and the
sandboxed tools, step it (single step, approvals), and judge how it ended (headline)."""
from import_paths import use_project_paths

use_project_paths()
