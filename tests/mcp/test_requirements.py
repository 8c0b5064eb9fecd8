"""The pins that keep the MCP SDK importable next to zhipuai (reasons in requirements.txt)."""
import importlib.metadata
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _pins():
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return dict(line.split("==", 1) for line in lines if "==" in line and not line.startswith("#"))


def test_mcp_and_pydantic_are_pinned_as_a_pair_and_installed_as_pinned():
    pins = _pins()
    assert pins["mcp"] == "1.19.0"
    major, minor, *_ = (int(part) for part in pins["pydantic"].split("."))
    assert (major, minor) < (2, 14)        # 2.14 removed eval_type_backport, which mcp 1.19 imports
    for name in ("mcp", "pydantic", "zhipuai"):
        assert importlib.metadata.version(name) == pins[name], name


def test_the_sdk_and_zhipuai_import_together_with_the_pyjwt_zhipuai_wants():
    import jwt
    import mcp.server.fastmcp  # noqa: F401
    import zhipuai  # noqa: F401
    major, minor, *_ = (int(part) for part in jwt.__version__.split("."))
    assert (major, minor) < (2, 9)         # zhipuai 2.1.5: pyjwt<2.9; mcp>=1.20 would need >=2.10.1
