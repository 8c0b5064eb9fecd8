"""The named API (the page's "Use via API"): plain inputs, JSON results, the same runs as the page."""
from import_paths import use_project_paths

use_project_paths()
