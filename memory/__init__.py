"""What outlives a page load: the browser's localStorage (browser_memory, its record format, the
workspace's files). The session files a student exports and imports are a run's record: runs/session_io.py."""
from import_paths import use_project_paths

use_project_paths()
