"""Who may import whom (docs/architecture.md): the import-linter contracts of pyproject.toml
hold, no module of app/ is in an import circle, and each check fails on the mistake it is
there to catch (run on a copy of app/ with one bad import added)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """import-linter's contracts of pyproject.toml over the `app` package in `cwd`."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _imports(package_dir: Path) -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports, at the top or
    inside a function (read with `ast`), but its own packages (a blueprint's routes import
    their package's `bp`: one thing, not a circle)."""
    modules: dict[str, Path] = {}
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    edges[name].add(target)
    return edges


def circles(package_dir: Path) -> list[set[str]]:
    """Strongly connected groups of two or more modules (Tarjan): each is an import circle."""
    edges = _imports(package_dir)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(edges[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(group)

    sys.setrecursionlimit(10_000)
    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_the_import_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


def test_no_module_of_app_is_in_an_import_circle():
    assert circles(ROOT / "app") == []


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """app/ and the contracts, copied: a place to make mistakes in."""
    shutil.copytree(ROOT / "app", tmp_path / "app", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(copy: Path, module: str, line: str) -> None:
    path = copy / (module.replace(".", "/") + ".py")
    path.write_text(f"{line}\n{path.read_text(encoding='utf-8')}", encoding="utf-8")


def test_an_import_up_a_layer_breaks_the_contract(copy):
    add_import(copy, "app.rules.spans", "from app.models import Document  # noqa")
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "app.rules is not allowed to import app.models" in result.stdout


def test_a_circle_inside_a_package_breaks_the_contract_and_the_module_check(copy):
    # crowd.sessions imports crowd.identity: the other way closes a circle.
    add_import(copy, "app.crowd.identity", "from app.crowd import sessions  # noqa")
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "No cycles are allowed in app.crowd" in result.stdout
    assert any(
        {"app.crowd.identity", "app.crowd.sessions"} <= group for group in circles(copy / "app")
    )


def test_a_web_framework_in_the_pure_rules_breaks_the_contract(copy):
    add_import(copy, "app.rules.metrics", "import flask  # noqa")
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "app.rules.metrics -> flask" in result.stdout
