"""How often the timeline's note "an argument nobody said" (accents.unsaid_arguments) fires: on every
preset question of every example set, run by Function Calling, on the offline model and on a real
small model (SmolLM2-135M-Instruct on llama.cpp's llama-server, with the real-model lane's template
that shows it how to call: tests/real_model/chatml_json_calls.jinja).

    /opt/tool-workshop-venv/bin/python benchmarks/unsaid_rate.py [--max-turns 3]

For each model: the runs, the tool calls made, the calls with at least one string argument that
appears nowhere in what the model was sent, and their share. The offline model fills arguments only
from the question, so a note on its runs is a false alarm; the real model's notes are what the note is
for (it copies cities from its template's examples). The binary and the model are found as the
real-model lane finds them ($LLAMA_SERVER and $MODEL, or `scripts/real_model.sh --check`)."""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import import_paths  # noqa: E402

import_paths.use_project_paths()

from accents import unsaid_arguments  # noqa: E402
from function_calling_loop import run_function_calling  # noqa: E402
from lessons.editor_panel import EXAMPLE_SETS  # noqa: E402
from lessons.presets import PRESETS  # noqa: E402
from llm_clients import make_client  # noqa: E402
from tests.real_model.conftest import CALLS_TEMPLATE, LlamaServer, locate  # noqa: E402


def noted_calls(events: list[dict]) -> tuple[int, list[str]]:
    """(tool calls, one line per call that got the note) of one run."""
    request, calls, noted = None, 0, []
    for event in events:
        if event["type"] == "request":
            request = event
        elif event["type"] == "tool_call" and isinstance(event.get("arguments"), dict) and request is not None:
            calls += 1
            found = unsaid_arguments(event["arguments"], request.get("messages") or [], request.get("tools"))
            if found:
                noted.append(f"{event['name']}({', '.join(f'{path}={value!r}' for path, value in found)})")
    return calls, noted


def measure(client, max_turns: int) -> tuple[int, int, list[str]]:
    runs = calls = 0
    noted: list[str] = []
    for label, file in EXAMPLE_SETS.items():
        registry = importlib.import_module(file.removesuffix(".py")).registry
        for question in PRESETS[label]:
            events = list(run_function_calling(client, question, registry.to_schemas(), registry, max_turns=max_turns))
            made, said = noted_calls(events)
            runs, calls = runs + 1, calls + made
            noted += [f"{question} → {line}" for line in said]
    return runs, calls, noted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-turns", type=int, default=3)
    args = parser.parse_args()
    found = locate()
    if isinstance(found, str):
        print(found)
        return 1
    server = LlamaServer(*found, template=CALLS_TEMPLATE)
    try:
        models = {"offline": make_client("offline"),
                  "SmolLM2-135M": make_client("openai", "SmolLM2-135M-Instruct", "none", server.url + "/v1",
                                              timeout=60.0, max_tokens=64)}
        for name, client in models.items():
            runs, calls, noted = measure(client, args.max_turns)
            share = f"{100 * len(noted) / calls:.0f}%" if calls else "—"
            print(f"{name}: {runs} runs, {calls} tool calls, {len(noted)} with the note ({share})")
            for line in noted[:12]:
                print("   ", line)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
