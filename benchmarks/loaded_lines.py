"""Lines of project code a course script loads: every module in sys.modules whose file is in
this repository, counted once, after the script has run.

    python benchmarks/loaded_lines.py                 # both runs below, side by side
    python benchmarks/loaded_lines.py --provider offline
        # `python code/minimal_loop.py` as shipped: the offline model answers
    python benchmarks/loaded_lines.py --provider openai
        # imports minimal_loop and builds an OpenAI-compatible client (no request is sent)

Prints one line per loaded file and the totals; --json prints {provider: {"files": {path: lines}, "total": n}}.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import json, os, runpy, sys
root, provider = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "code"))
if provider == "offline":
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(os.path.join(root, "code", "minimal_loop.py"), run_name="__main__")
else:
    import minimal_loop
    minimal_loop.make_client(provider, api_key="not-a-real-key", base_url="http://127.0.0.1:9/v1")
files = {}
for module in list(sys.modules.values()):
    path = getattr(module, "__file__", None)
    if path and os.path.abspath(path).startswith(root + os.sep) and path.endswith(".py"):
        with open(path, encoding="utf-8") as handle:
            files[os.path.relpath(path, root)] = sum(1 for _ in handle)
files[os.path.join("code", "minimal_loop.py")] = sum(1 for _ in open(os.path.join(root, "code", "minimal_loop.py"), encoding="utf-8"))
print(json.dumps(files))
"""


def measure(provider):
    out = subprocess.run([sys.executable, "-c", PROBE, ROOT, provider], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}).stdout
    files = json.loads(out.strip().splitlines()[-1])
    return {"files": dict(sorted(files.items())), "total": sum(files.values())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=("offline", "openai", "glm"), action="append",
                        help="measure only this provider (repeatable); default: offline and openai")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {provider: measure(provider) for provider in args.provider or ("offline", "openai")}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    paths = sorted({path for result in results.values() for path in result["files"]})
    print("".join(f"{provider:>9}" for provider in results) + "  file")
    for path in paths:
        print("".join(f"{result['files'].get(path, ''):>9}" for result in results.values()) + f"  {path}")
    print("".join(f"{result['total']:>9}" for result in results.values()) + "  total lines")
    print("".join(f"{len(result['files']):>9}" for result in results.values()) + "  files")


if __name__ == "__main__":
    main()
