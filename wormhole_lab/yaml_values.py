"""Typed values read from a parsed YAML document, each error located at ``<file>:<line>`` with its key and the fix.

``index_lines`` maps every key path of a document to its line; ``YamlValues`` reads integers, numbers, rates,
times, files and choices from it and raises an ``InputError`` naming where and what to write instead. The
scenario loader (``scenario_io``) builds its sections on these.
"""

import difflib
import math
import re
from pathlib import Path

import yaml

from wormhole_lab.errors import InputError
from wormhole_lab.units import MAX_RATE_BPS, MAX_TIME_PS, parse_rate, parse_time_ps

MAX_INTEGER = 2**53  # sizes, counts and bytes stay exact in float64 downstream and far from int64 overflow
_NUMBER_TEXT = re.compile(r"^[+-]?(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


# --- YAML line numbers -----------------------------------------------------------------------------------------


def index_lines(node, prefix: tuple, out: dict, source: str, seen_nodes: set) -> None:
    """Map every key path (``("config", "rp_timer_ps")``, ``("flows", "incast", "senders", 2)``) to its line.

    A node reached again through a YAML alias is not walked twice: an anchor that contains itself would
    recurse forever, and nested aliases ("billion laughs") would take exponential time."""
    out.setdefault(prefix, node.start_mark.line + 1)
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                name = dotted(prefix + (key,))
                raise InputError(
                    f"{source}:{line}", f"{name}: key given twice (first on line {seen[key]})", "keep one of them"
                )
            seen[key] = line
            out[prefix + (key,)] = line
            index_lines(value_node, prefix + (key,), out, source, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            index_lines(item, prefix + (i,), out, source, seen_nodes)


def dotted(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


def kind_of(value) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int | float):
        return f"{value!r} (a number)"
    if isinstance(value, str):
        return f"{value!r} (text)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"{value!r} ({type(value).__name__})"


def allowed_fix(word: str, choices) -> str:
    """The fix for an unknown ``word``: the closest of ``choices`` first, then all of them."""
    names = [str(a) for a in choices]
    close = difflib.get_close_matches(str(word), names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}allowed: {', '.join(names)}"


class YamlValues:
    """Reads checked values from a document whose key paths have the ``lines`` of ``source``; relative files are
    looked for in ``base``."""

    def __init__(self, source: str, base: Path, lines: dict):
        self.source = source
        self.base = base
        self.lines = lines

    # errors

    def error(self, path: tuple, problem: str, fix: str = "") -> InputError:
        line = next((self.lines[path[:k]] for k in range(len(path), -1, -1) if path[:k] in self.lines), 0)
        where = f"{self.source}:{line}" if self.lines else self.source
        return InputError(where, f"{dotted(path)}: {problem}", fix)

    def rewrap(self, path: tuple, exc: InputError) -> InputError:
        return self.error(path, f"{exc.where}: {exc.problem}", exc.fix)

    # typed values

    def mapping(self, value, path: tuple, what: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(
                path,
                f"must be a mapping of {what}, got {kind_of(value)}",
                f"write {dotted(path)!r} as 'key: value' lines"
                if path
                else "write 'key: value' lines at the top level",
            )
        for key in value:
            if not isinstance(key, str):
                raise self.error(path + (str(key),), f"key {key!r} is not a name", f"use one of the keys of {what}")
        return value

    def keys(self, mapping: dict, path: tuple, allowed, required=()) -> None:
        for key in mapping:
            if key not in allowed:
                raise self.error(path + (key,), f"unknown key {key!r}", allowed_fix(key, allowed))
        for key in required:
            if key not in mapping:
                raise self.error(
                    path, f"missing required key {key!r}", f"add '{key}:' (keys here: {', '.join(allowed)})"
                )

    def integer(self, value, path: tuple, minimum: int | None = None, maximum: int = MAX_INTEGER) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.error(path, f"must be an integer, got {kind_of(value)}", "write a whole number such as 1000000")
        if isinstance(value, str):
            hint = "write a whole number such as 1000000"
            if _NUMBER_TEXT.match(value.strip()):
                hint = f"YAML reads {value!r} as text; write it as digits, e.g. 1000000 or 1_000_000"
            raise self.error(path, f"must be an integer, got {kind_of(value)}", hint)
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                raise self.error(path, f"must be an integer, got {kind_of(value)}", "write a whole number")
            value = int(value)
        if minimum is not None and value < minimum:
            raise self.error(path, f"must be at least {minimum}, got {value}", f"use a value >= {minimum}")
        if value > maximum:
            raise self.error(path, f"{value} is too large (at most {maximum})", "use a smaller value; check the unit")
        return value

    def number(self, value, path: tuple) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"must be a number, got {kind_of(value)}", "write a number such as 0.95")
        return float(value)

    def boolean(self, value, path: tuple) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"must be true or false, got {kind_of(value)}", "write true or false")
        return value

    def text(self, value, path: tuple) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be text, got {kind_of(value)}", "write a string (quote it if needed)")
        return value

    def choice(self, value, path: tuple, allowed) -> str:
        value = self.text(value, path)
        if value not in allowed:
            raise self.error(path, f"unknown value {value!r}", allowed_fix(value, allowed))
        return value

    def rate(self, value, path: tuple) -> int:
        if isinstance(value, str):
            try:
                return parse_rate(value, dotted(path))
            except InputError as exc:
                raise self.error(path, exc.problem, exc.fix) from None
        v = self.integer(value, path, maximum=MAX_RATE_BPS)
        if v <= 0:
            raise self.error(path, f"rate must be positive, got {v}", "write bit/s such as 100000000000 or 100Gbps")
        return v

    def time(self, value, path: tuple) -> int:
        if isinstance(value, str):
            try:
                return parse_time_ps(value, dotted(path))
            except InputError as exc:
                raise self.error(path, exc.problem, exc.fix) from None
        return self.integer(value, path, minimum=0, maximum=MAX_TIME_PS)

    def file(self, value, path: tuple) -> Path:
        name = self.text(value, path)
        target = Path(name) if Path(name).is_absolute() else self.base / name
        if not target.is_file():
            raise self.error(
                path, f"file {name!r} not found (looked for {target})", "paths are relative to the YAML file"
            )
        return target

    def unit_time(self, value, path: tuple, example: str) -> int:
        """A time written with its unit (``5ms``); a bare number is refused except 0, because the reference's
        ``-t`` takes seconds and the ``*_ps`` keys picoseconds, so either reading would surprise someone."""
        if isinstance(value, int) and not isinstance(value, bool) and value == 0:
            return 0
        if not isinstance(value, str):
            fix = f"write e.g. {example} (units: s, ms, us, ns, ps)"
            raise self.error(path, f"must be a time with its unit, got {kind_of(value)}", fix)
        return self.time(value, path)

    def mapping_any(self, value, path: tuple, what: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(path, f"must be a mapping {what}, got {kind_of(value)}", "e.g. {100000000000: 400000}")
        return value
