"""What one lesson's page weighs, and that it does not grow with the number of lessons.

    /opt/tool-workshop-venv/bin/python benchmarks/page_weight.py [--extra 10] [--root CHECKOUT]

Builds the app as `python app.py` does, serves it on a free loopback port and asks for each
lesson's page as a browser does (gzip): per page, the components and event handlers in the
config it inlines, and the HTML's bytes plain and over the wire. Then builds it again with
`--extra` more lesson pages (copies of the Function Calling lesson at addresses of their own,
standing for the lessons still to come) and measures the first lesson's page again: its
components and handlers must stay the same, and its bytes grow only by the extra entries of the
lesson list. Next to both, in the same run, a one-textbox Gradio app's page (the floor: Gradio's
own config). `--root` measures another checkout (before / after a change).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MEASURE = textwrap.dedent('''
    import dataclasses, gzip, importlib, json, os, re, socket, sys, urllib.request
    sys.argv = ["app.py"]
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    import app
    extra = int(os.environ.get("EXTRA_LESSONS", "0"))
    try:
        import catalogue
        copied = catalogue.LESSONS["function_calling"]
        for n in range(extra):
            fields = {"id": f"extra_{n}", "path": f"extra-{n}"} if hasattr(copied, "path") else {"id": f"extra_{n}"}
            extra_lesson = catalogue.LESSONS[f"extra_{n}"] = dataclasses.replace(copied, **fields)
            if extra_lesson.page != copied.page:    # the page module is found by the id (lessons/<id>/page.py)
                sys.modules[extra_lesson.page] = importlib.import_module(copied.page)
    except (ImportError, KeyError):
        pass
    demo = app.build_demo()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    pages = {p[0]: p for p in demo.config.get("pages", [("", "")])}
    out = {}
    for path in (["/" + p for p in pages] if len(pages) > 1 else ["/"]):
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Accept-Encoding": "gzip"})
        body = urllib.request.urlopen(request).read()
        wire = len(body)
        plain = gzip.decompress(body) if body[:2] == b"\\x1f\\x8b" else body
        config = json.loads(re.search(rb"window.gradio_config = (.*?);</script>", plain, re.S).group(1))
        out[path] = {"components": len(config["components"]), "handlers": len(config["dependencies"]),
                     "plain": len(plain), "wire": wire}
    print("RESULT " + json.dumps(out))
    demo.close()
''')
PEER = textwrap.dedent('''
    import gzip, json, os, re, socket, urllib.request
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    import gradio as gr
    with gr.Blocks() as demo:
        box = gr.Textbox(label="text")
        demo.load(lambda: "ready", None, box)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, ssr_mode=False)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Accept-Encoding": "gzip"})
    body = urllib.request.urlopen(request).read()
    plain = gzip.decompress(body) if body[:2] == b"\\x1f\\x8b" else body
    config = json.loads(re.search(rb"window.gradio_config = (.*?);</script>", plain, re.S).group(1))
    print("RESULT " + json.dumps({"/": {"components": len(config["components"]), "handlers": len(config["dependencies"]),
                                       "plain": len(plain), "wire": len(body)}}))
    demo.close()
''')


def measure(root: Path, script: str, extra: int = 0) -> dict:
    env = dict(os.environ, EXTRA_LESSONS=str(extra), GRADIO_ANALYTICS_ENABLED="False",
               TOOL_WORKSHOP_ALLOCATOR="python", NO_PROXY="127.0.0.1,localhost")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])


def row(name: str, figures: dict, peer: dict) -> str:
    return (f"  {name:<26} {figures['components']:>5} comp {figures['handlers']:>5} handlers "
            f"{figures['plain'] / 1000:>7.1f} KB plain {figures['wire'] / 1000:>6.1f} KB gzip "
            f"({figures['wire'] / peer['wire']:.1f}x the one-textbox page)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extra", type=int, default=10)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    peer = measure(args.root, PEER)["/"]
    print(f"one-textbox Gradio page: {peer['components']} components, {peer['handlers']} handlers, "
          f"{peer['plain'] / 1000:.1f} KB plain, {peer['wire'] / 1000:.1f} KB gzip")
    pages = measure(args.root, MEASURE)
    print(f"{args.root}: {len(pages)} page(s)")
    for path, figures in pages.items():
        print(row(path, figures, peer))
    grown = measure(args.root, MEASURE, args.extra)
    first, after = pages["/"], grown["/"]
    print(f"with {args.extra} more lesson pages ({len(grown)} pages):")
    print(row("/", after, peer))
    same = (after["components"], after["handlers"]) == (first["components"], first["handlers"])
    print(f"first page: components and handlers {'unchanged' if same else 'CHANGED'}, "
          f"{(after['wire'] - first['wire']) / 1000:+.1f} KB gzip, {(after['plain'] - first['plain']) / 1000:+.1f} KB plain")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
