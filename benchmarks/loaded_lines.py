"""Lines of project code a course script loads: every module in sys.modules whose file is in
this repository, counted once, after the script has run.

    python benchmarks/loaded_lines.py                 # code/minimal_loop.py on the offline model
    python benchmarks/loaded_lines.py --provider openai
        # imports minimal_loop and builds an OpenAI-compatible client (no request is sent)

Prints one line per loaded file and the total; --json prints {"files": {path: lines}, "total": n}.
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
    parser.add_argument("--provider", default="offline", choices=("offline", "openai", "glm"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.provider)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for path, lines in result["files"].items():
        print(f"{lines:6d}  {path}")
    print(f"{result['total']:6d}  total ({len(result['files'])} files, provider {args.provider})")


if __name__ == "__main__":
    main()
