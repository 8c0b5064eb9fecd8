"""What outlives a page load: the browser's localStorage (browser_memory, its record format, the
workspace's files) and the session files a student exports and imports (session_io)."""
from import_paths import use_project_paths

use_project_paths()
