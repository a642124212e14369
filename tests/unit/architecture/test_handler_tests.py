"""Every command handler (`async def handle_*` in commands/) is named by a fakes-based test in tests/unit/commands."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
COMMANDS = ROOT / "commands"
HANDLER_TESTS = ROOT / "tests" / "unit" / "commands"


def handlers_defined(source: str) -> set[str]:
    """The names of the `handle_*` coroutines `source` defines (at any depth)."""
    tree = ast.parse(source)
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name.startswith("handle_")}


def names_used(source: str) -> set[str]:
    """Every name `source` imports, reads or takes as an attribute (`handle_x`, `module.handle_x`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name.rpartition(".")[2])
    return found


def test_every_command_handler_has_a_unit_test_that_names_it() -> None:
    handlers = {
        name: str(path.relative_to(ROOT))
        for path in sorted(COMMANDS.rglob("*.py"))
        for name in handlers_defined(path.read_text())
    }
    assert len(handlers) > 40  # the finder sees the package's handlers
    named = set().union(*(names_used(path.read_text()) for path in sorted(HANDLER_TESTS.rglob("test_*.py"))))
    untested = {name: where for name, where in handlers.items() if name not in named}
    assert untested == {}, f"handlers without a test in {HANDLER_TESTS.relative_to(ROOT)}: {untested}"


def test_the_finders_see_handlers_and_their_uses_but_not_lookalikes() -> None:
    source = (
        "async def handle_a(cmd, ctx): ...\n"
        "def handle_sync(cmd): ...\n"
        "async def helper():\n"
        "    async def handle_inner(): ...\n"
        "async def _handle_private(): ...\n"
    )
    assert handlers_defined(source) == {"handle_a", "handle_inner"}
    uses = names_used("from commands.x import handle_a\nimport commands.y\ncommands.y.handle_b(1)\nhandle_c\n")
    assert {"handle_a", "handle_b", "handle_c"} <= uses
    assert "handle_d" not in names_used("# handle_d\n'handle_d'\n")
