"""The documentation's methods table is generated from the registry; it must not go stale. The
documentation builds without a warning."""
import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "methods_table.py"


def _tool():
    spec = importlib.util.spec_from_file_location("methods_table", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_methods_table_is_the_registrys():
    tool = _tool()
    text = tool.TARGET.read_text(encoding="utf-8")
    assert tool.render(text) == text, f"{tool.TARGET}'s methods table is stale; regenerate it with: {tool.COMMAND}"


def test_the_table_lists_every_registered_method():
    import genosift as gs

    table = _tool().table()
    for name in gs.REGISTRY:
        assert f"| `{name}` |" in table
