"""The first call's request drawn as SDK code (lessons/first_call/first_call_view.py): each snippet is sent where
the run's request went, as that SDK must be told it, and never to an address the student did not type."""
from __future__ import annotations

import html
import re

import pytest

from first_call import TOOLS
from lessons.first_call import first_call_view

BODY = {"model": "m", "messages": [{"role": "user", "content": "北京今天天气怎么样？"}], "stream": True, "tools": TOOLS}


def addresses(provider: str, base_url: str = "") -> dict[str, str | None]:
    drawn = html.unescape(first_call_view.render_request({"type": "request", "body": BODY, "provider": provider,
                                                          "base_url": base_url}))
    found = {}
    for sdk in ("openai", "zhipuai"):
        snippet = drawn.split(f"tw-fc-sdk-{sdk}", 1)[1].split("</pre>", 1)[0]
        match = re.search(r"base_url='([^']*)'", snippet)
        found[sdk] = match.group(1) if match else None
    return found


@pytest.mark.parametrize("provider, typed, wanted", [
    ("offline", "", {"openai": "http://127.0.0.1:8765/v1", "zhipuai": "http://127.0.0.1:8765/api/paas/v4"}),
    ("glm", "", {"openai": "https://open.bigmodel.cn/api/paas/v4", "zhipuai": None}),
    ("openai", "", {"openai": None, "zhipuai": "https://api.openai.com/v1"}),
    ("openai", "http://127.0.0.1:8080/v1", {"openai": "http://127.0.0.1:8080/v1", "zhipuai": "http://127.0.0.1:8080/v1"}),
])
def test_each_snippet_goes_where_the_request_went(provider, typed, wanted):
    assert addresses(provider, typed) == wanted


def test_a_request_without_its_body_draws_nothing():
    assert first_call_view.render_request({"type": "request", "messages": []}) == ""
