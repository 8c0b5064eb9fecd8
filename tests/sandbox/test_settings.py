"""The settings by themselves: each lane's rules grouped, changed in place of the others."""
import pytest

from sandbox.settings import JobSettings, Settings


def test_each_lane_is_changed_on_its_own_and_numbers_are_checked():
    settings = Settings().changed(tool={"concurrent": "6", "probation_concurrent": 0},
                                  shell={"seconds_per_minute": 30, "demote_after_seconds": None})
    assert settings.tool.concurrent == 6 and settings.tool.probation_concurrent == 1     # at least one
    assert settings.shell.seconds_per_minute == 30.0 and isinstance(settings.shell.seconds_per_minute, float)
    assert settings.shell.demote_after_seconds == Settings().shell.demote_after_seconds  # None: as it was
    assert settings.tool.seconds_per_minute == Settings().tool.seconds_per_minute
    assert settings.changed(tool={"slow_concurrent": 2}).tool.concurrent == 6          # on top of the current
    whole = JobSettings(**dict(vars(Settings().shell), concurrent=5))
    assert Settings().changed(shell=whole).shell == whole


def test_the_gate_reads_a_lane_with_the_shared_rules():
    settings = Settings().changed(shell={"concurrent": 2, "probation_wall_seconds": 4.0}, queue_wait_seconds=3.0)
    shell, tool = settings.budget("shell"), settings.budget("tool")
    assert (shell.concurrent, shell.probation_wall_seconds, shell.queue_wait_seconds) == (2, 4.0, 3.0)
    assert shell.what == "bash 命令" and tool.what == "工具" and tool.queue_wait_seconds == 3.0
    assert tool.demote_after_seconds == settings.tool.demote_after_seconds


@pytest.mark.parametrize("changes, said", [
    ({"max_concurrent": 3}, "max_concurrent (now tool.concurrent)"),
    ({"shell_seconds_per_minute": 3}, "shell_seconds_per_minute (now shell.seconds_per_minute)"),
    ({"tool": {"concurent": 3}}, "tool.concurent"),
])
def test_an_unknown_or_moved_name_is_refused_and_says_where_it_went(changes, said):
    with pytest.raises(TypeError, match=said.replace("(", r"\(").replace(")", r"\)")):
        Settings().changed(**changes)
