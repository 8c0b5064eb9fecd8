"""How the page is served to many anonymous tabs: every patch of Gradio's internals (checked against
the pinned version), the page's private events and session ids, compressed responses, and forgetting
idle tabs."""
from import_paths import use_project_paths

use_project_paths()
