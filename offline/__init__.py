"""The offline rule model: lets the whole tool-calling protocol run with no network and no key.

Not course code (students read code/, not this): a deterministic stand-in for a real model,
used by the playground's default provider, the tests and the local OpenAI-compatible server.

    model.py       OfflineModel: picks a tool, fills its arguments, writes the three dialects
                   (native tool_calls, ReAct text, JSON in text), and the simulated mistakes
    arguments.py   how arguments are read out of a question (always valid against the schema)
    workspace.py   the scripted plays for the four atomic tools (read, write, edit, bash)
    plans.py       the plans of lesson 8.3: a write_todos board worked through, and fixed steps
    accents.py     the providers' quirks the server can imitate
    server.py      the OpenAI-compatible HTTP server (`python code/offline_server.py`)

llm_clients.make_client("offline") imports it only when the offline model is chosen. Its
modules import course modules by bare name (tool_outcome, atomic_tools): the project's path
rule (import_paths.py) is applied here so that holds however the package was reached.
"""
from import_paths import use_project_paths

use_project_paths()
