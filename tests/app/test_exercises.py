"""Every exercise of the catalogue, on the offline model: its starting state fails the check and its
reference solution passes it. A check that passes by itself would teach nothing; one that the
solution fails would be unsolvable."""
from __future__ import annotations

import pytest

from catalogue import LESSONS
from catalogue.exercises import BY_ID, EXERCISES
from runs import exercises

ALL = [exercise for found in EXERCISES.values() for exercise in found]


@pytest.mark.parametrize("exercise", ALL, ids=[e.id for e in ALL])
def test_the_start_fails_and_the_solution_passes(exercise):
    started = exercises.check(exercise)
    assert not started["passed"], f"{exercise.id}: the starting state passes by itself"
    assert started["failures"] and all(f["zh"] and f["en"] for f in started["failures"])
    solved = exercises.check(exercise, exercise.solution)
    assert solved["passed"], f"{exercise.id}: the reference solution fails: {solved['failures']}"
    assert solved["failures"] == []


@pytest.mark.parametrize("exercise", ALL, ids=[e.id for e in ALL])
def test_each_exercise_is_whole(exercise):
    assert exercise.lesson in LESSONS and exercise in LESSONS[exercise.lesson].exercises
    assert exercise.task.zh and exercise.task.en and exercise.hint.zh and exercise.hint.en
    assert set(exercise.solution) <= set(exercise.start) and exercise.solution
    assert all(exercise.start[name] != value for name, value in exercise.solution.items())
    for probe in exercise.probes:
        assert probe["expect"]
        for matcher in probe["expect"]:
            exercises.kind(matcher)     # exactly one known matcher


def test_every_lesson_has_two_to_four_or_none_yet():
    for lesson_id, found in EXERCISES.items():
        assert 2 <= len(found) <= 4, lesson_id
    assert len(BY_ID) == len(ALL)      # ids are unique


def test_a_state_field_the_exercise_has_not_is_refused():
    exercise = BY_ID["hooks_block_rm"]
    with pytest.raises(exercises.ExerciseProblem, match="hooks_block_rm 没有字段 rules"):
        exercises.state_of(exercise, {"rules": "{}"})
    with pytest.raises(exercises.ExerciseProblem, match="registry 没有练习 nope"):
        exercises.find("registry", "nope")


def test_a_failure_says_which_argument_in_both_languages():
    exercise = BY_ID["registry_integer"]
    verdict = exercises.check(exercise)
    said = [f["zh"] for f in verdict["failures"]]
    assert any("days" in s and "integer" in s for s in said), said
    assert any("days" in f["en"] for f in verdict["failures"])
