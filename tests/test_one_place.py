"""Facts that live in one place: a second copy would drift from the first."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def project_sources():
    return [path for path in ROOT.rglob("*.py")
            if not {"tests", ".venv", "benchmarks", "__pycache__"} & set(path.relative_to(ROOT).parts)]


def test_the_offline_model_s_name_is_written_once():
    import llm_clients
    from offline import model

    written = [str(path.relative_to(ROOT)) for path in project_sources()
               if f'"{llm_clients.OFFLINE_MODEL}"' in path.read_text(encoding="utf-8")]
    assert written == ["code/llm_clients.py"]
    assert model.MODEL_NAME == llm_clients.OFFLINE_MODEL


def test_every_variable_the_server_reads_a_key_or_address_from_is_sealed():
    from access import class_code, clients
    from sandbox import sealing

    read = {*clients.KEY_ENV.values(), *clients.BASE_URL_ENV.values(), *clients.MODEL_ENV.values(),
            class_code.CLASS_CODE_ENV}
    assert read <= set(sealing.SECRET_NAMES)
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    assert "sandbox.seal_secrets()" in app      # the one list, not a copy of it


def test_the_masking_hook_is_written_once_and_the_example_shows_the_course_s():
    import inspect

    import hooks
    from lessons.hooks.hook_sets import HOOK_SOURCES

    written = [str(path.relative_to(ROOT)) for path in project_sources()
               if '{"updatedToolOutput": masked}' in path.read_text(encoding="utf-8")]
    assert written == ["code/hooks.py"]
    assert inspect.getsource(hooks.mask_secrets) in HOOK_SOURCES["脱敏"]


def test_the_context_strategies_titles_are_one_table():
    import context

    assert list(context.TITLES_EN) == list(context.STRATEGIES)
    written = [str(path.relative_to(ROOT)) for path in project_sources()
               if '"Fold long results"' in path.read_text(encoding="utf-8")]
    assert written == ["code/context.py"]


def test_the_app_builds_no_event_by_hand():
    """A run's events come from code/events.py's builders; the app's own layers call them too."""
    import re

    kinds = set(re.findall(r'type: Literal\["(\w+)"\]', (ROOT / "code" / "events.py").read_text(encoding="utf-8")))
    assert {"error", "purpose", "tool_result"} <= kinds
    built = {str(path.relative_to(ROOT)): kind for path in project_sources()
             if path.relative_to(ROOT).parts[0] in ("runs", "lessons", "offline", "endpoints", "memory", "serving")
             for kind in kinds if f'{{"type": "{kind}"' in path.read_text(encoding="utf-8")}
    assert built == {}
