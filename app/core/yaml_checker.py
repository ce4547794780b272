"""Read a YAML file and check its values, reporting every problem with its line.

PyYAML's plain `safe_load` loses line numbers and silently keeps the last of two
duplicate keys; here the file is composed to nodes first, so each value's line is
known and duplicates become problems.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from app.core.errors import ProblemsError

KeyPath = tuple[str | int, ...]
REQUIRED: Any = object()  # a `get` default meaning "absent is a problem"


class Problem(NamedTuple):
    """One thing wrong with a file; `line` is 1-based, `key` a dotted path."""

    file: str
    line: int
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.key}: {self.message}"


def dotted(path: KeyPath) -> str:
    """("categories", 2, "type") -> "categories[2].type"."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class Checker:
    """Collects problems while reading plain data, with lines from the composed nodes."""

    def __init__(self, file: str, node: yaml.Node | None = None) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.lines: dict[KeyPath, int] = {(): 1}
        if node is not None:
            self._walk(node, ())

    def _walk(self, node: yaml.Node, path: KeyPath) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                child, line = (*path, key_node.value), key_node.start_mark.line + 1
                self.lines[child] = line
                if key_node.value in seen:
                    self.problem(child, f"duplicate key (first at line {seen[key_node.value]})")
                seen[key_node.value] = line
                self._walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.lines[(*path, index)] = item.start_mark.line + 1
                self._walk(item, (*path, index))

    def problem(self, path: KeyPath, message: str) -> None:
        """Report at the line of `path`, or of its nearest parent when it is absent."""
        known = path
        while known not in self.lines:
            known = known[:-1]
        self.problems.append(Problem(self.file, self.lines[known], dotted(path), message))

    def sorted_problems(self) -> list[Problem]:
        """Problems in file order."""
        return sorted(self.problems, key=lambda p: p.line)

    def mapping(self, data: Any, path: KeyPath, allowed: tuple[str, ...]) -> dict[str, Any]:
        """Return `data` as a dict (empty if null or wrong) after flagging unknown keys."""
        if data is None:
            return {}
        if not isinstance(data, dict):
            self.problem(path, "must be a mapping of keys to values")
            return {}
        for key in data:
            if key not in allowed:
                self.problem(
                    (*path, str(key)), f"unknown key; expected one of {', '.join(allowed)}"
                )
        return data

    def get(self, data: dict, path: KeyPath, default: Any, convert: Callable[[Any], Any]) -> Any:
        """Convert data[path[-1]] (see `convert`)."""
        return self.convert(data.get(path[-1]), path, default, convert)

    def convert(self, value: Any, path: KeyPath, default: Any, convert: Callable) -> Any:
        """Null gives `default` (a problem if REQUIRED); a ValueError becomes a problem."""
        if value is None:
            if default is REQUIRED:
                self.problem(path, "is required")
                return None
            return default
        try:
            return convert(value)
        except ValueError as exc:
            self.problem(path, str(exc))
            return None if default is REQUIRED else default


def read_yaml(path: str | os.PathLike) -> tuple[bytes, Any, Checker]:
    """Return (raw bytes, data, checker) or raise ProblemsError for unreadable or bad YAML."""
    file = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ProblemsError([Problem(file, 1, "file", f"cannot read: {exc.strerror}")]) from None
    return parse_yaml(raw, file)


def parse_yaml(raw: bytes, file: str) -> tuple[bytes, Any, Checker]:
    """read_yaml for bytes already read (an upload); `file` names them in problems."""
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProblemsError([Problem(file, 1, "file", "is not UTF-8 text")]) from None
    loader = yaml.SafeLoader(source)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        raise ProblemsError([_syntax_problem(file, exc)]) from None
    finally:
        loader.dispose()
    return raw, data, Checker(file, node)


def _syntax_problem(file: str, exc: yaml.MarkedYAMLError) -> Problem:
    """Where PyYAML gave up, plus where the unfinished construct began (an open quote...)."""
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 1
    message = exc.problem or str(exc)
    if exc.context:
        start = exc.context_mark.line + 1 if exc.context_mark else line
        where = f" at line {start}" if start != line else ""
        message = f"{exc.context}{where}: {message}"
    return Problem(file, line, "yaml", message)


def text(value: Any) -> str:
    """Non-empty text, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be non-empty text")
    return value.strip()


def flag(value: Any) -> bool:
    """A YAML boolean."""
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")
    return value


def integer(low: int, high: int) -> Callable[[Any], int]:
    """A whole number in [low, high]."""

    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"must be a whole number from {low} to {high}, got {value!r}")
        return value

    return convert


def number(low: float, high: float) -> Callable[[Any], float]:
    """A number in [low, high]."""

    def convert(value: Any) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            raise ValueError(f"must be a number from {low} to {high}, got {value!r}")
        return float(value)

    return convert


def one_of(*choices: str) -> Callable[[Any], str]:
    """One of the given strings."""

    def convert(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return convert
