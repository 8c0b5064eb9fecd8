"""The page's English for what the course says in Chinese: every simulated mistake has an English name and
description, and each sentence of the naive-regex comparison and of the permission rules comes out in English
on an English page (only what it quotes from the model or the call may stay Chinese)."""
from __future__ import annotations

import re

import pytest

import examples_weather
import i18n
import permissions
from lessons import presets
from lessons.react.timeline import naive_verdict
from lessons.rule_reasons import reason_in_english
from llm_clients import make_client
from offline import model as offline_model
from react_loop import run_react

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_mistake_has_an_english_name_and_description():
    assert set(presets.MISTAKE_TEXTS) == set(offline_model.MISTAKES)
    with i18n.using("en"):
        for mode in ("function_calling", "react", "json"):
            for label, code in presets.mistake_choices(mode):
                assert not CJK.search(label), label
                assert code == "" or not CJK.search(presets.mistake_note(code))
    with i18n.using("zh"):
        # In Chinese the note is the offline model's own description, word for word.
        assert presets.mistake_note("missing_argument") == "ℹ️ " + offline_model.MISTAKES["missing_argument"]


@pytest.mark.parametrize("mistake", [None, "bold_action", "no_action_line", "invented_observation", "multi_step"])
def test_the_naive_regex_verdict_is_english_on_an_english_page(mistake):
    events = list(run_react(make_client("offline", mistake=mistake), "北京和上海明天的天气预报", None,
                            examples_weather.registry))
    naives = [e["naive"] for e in events if e["type"] == "parse"]
    assert naives
    for naive in naives:
        with i18n.using("zh"):
            assert naive_verdict(naive) == naive["verdict"]       # the loop's own sentence
        with i18n.using("en"):
            said = naive_verdict(naive)
            quoted = "".join(re.findall(r'"[^"]*"|«[^»]*»', said))            # what it quotes from the reply
            assert said.startswith("the naive regex") and not CJK.search(said.replace(quoted, ""))


RULES = {"read": "allow", "bash": "ask", "bash:python3 *": "allow", "bash:rm *": "deny", "bash:rm -rf *": "deny",
         "write:src/*": "allow", "edit": "ask"}
CALLS = [("bash", {"command": "python3 -m unittest"}),          # a pattern allows
         ("bash", {"command": "python3 x.py > out.txt"}),       # a pattern's allow that does not count
         ("bash", {"command": "rm -rf build"}),                 # two patterns match: the strictest
         ("read", {"path": "notes.md"}),                        # a tool rule
         ("write", {"path": "src/a.py"}),                       # a path pattern
         ("edit", {"path": "README.md"}),
         ("mcp_tool", {"x": 1})]                                # no rule at all


@pytest.mark.parametrize("name, args", CALLS)
def test_every_permission_reason_has_its_english(name, args):
    decision = permissions.decide(RULES, name, args)
    english = reason_in_english(decision.reason)
    assert english != decision.reason and not CJK.search(english), decision.reason
    assert name in english or str(next(iter(args.values()))) in english


def test_every_sentence_of_the_context_strategies_has_its_english(tmp_path):
    """What code/context.py says each strategy did (its notes, the orphans it leaves) comes out in English on an
    English page: every sentence it can write, the summary's empty and cut-short ones included."""
    import context
    from llm_clients import Completion
    from lessons import context_view

    class Summariser:
        """A model whose summary is empty, or cut at max_tokens."""
        model = "stand-in"

        def __init__(self, text: str, finish_reason: str):
            self.text, self.finish_reason = text, finish_reason

        def complete(self, messages, **params):
            return Completion({"role": "assistant", "content": self.text}, None, self.text, None,
                              finish_reason=self.finish_reason, model=self.model)

    said = []
    for strategy in context.STRATEGIES:
        shrunk = context.shrink(strategy, context.EXAMPLE, 300, make_client("offline"))
        said += shrunk.notes + context.orphans(shrunk.messages)
        said += context.context_event(strategy, 300, context.EXAMPLE, shrunk, 1.0)["orphans"]
    said += context.spill(context.EXAMPLE, tmp_path, limit=500).notes
    said += context.compact(Summariser("", "stop"), context.EXAMPLE).notes
    said += context.compact(Summariser("目标", "length"), context.EXAMPLE).notes
    said += context.compact(make_client("offline"), context.EXAMPLE[:2]).notes
    kinds = {pattern.pattern for pattern, _ in context_view.NOTES_EN for text in said if pattern.fullmatch(text)}
    assert kinds == {pattern.pattern for pattern, _ in context_view.NOTES_EN}      # each sentence was written
    with i18n.using("en"):
        assert [text for text in said if CJK.search(context_view.note(text))] == []
    with i18n.using("zh"):
        assert [context_view.note(text) for text in said] == said
