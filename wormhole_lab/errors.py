"""The one error type for bad input: it names where the problem is and how to fix it."""

from pathlib import Path


class InputError(ValueError):
    """Malformed or impossible input, found before any kernel runs.

    ``where`` names the file and line (``topology.txt:4``) or the field (``Scenario.flows[3].size``);
    ``fix`` says what a valid value looks like.
    """

    def __init__(self, where: str, problem: str, fix: str = ""):
        self.where = where
        self.problem = problem
        self.fix = fix
        message = f"{where}: {problem}"
        if fix:
            message += f" (fix: {fix})"
        super().__init__(message)


def read_text_file(path: Path, what: str, fix: str) -> str:
    """The UTF-8 text of ``path``; an unreadable file or a non-UTF-8 byte is an InputError naming the file and
    line. ``what`` names the kind of file (for example "topology file"); ``fix`` says what it should be."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        where, problem = f"{path}:0", f"cannot read the {what} ({exc.strerror})"
        raise InputError(where, problem, "check the path and permissions") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}", f"the file is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})", fix
        ) from None


def read_json_file(path: Path, what: str, example: str):
    """The parsed JSON of ``path``; bad JSON is an InputError naming the file and line, with ``example`` as the fix."""
    import json

    try:
        return json.loads(read_text_file(path, what, example))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}", f"not valid JSON ({exc.msg})", f"fix the syntax: {example}") from None


def read_yaml_file(path: Path, what: str, fix: str):
    """(the node tree, the document) of the YAML file ``path`` (the nodes give each key's line for errors); bad
    YAML is an InputError naming the file and line."""
    import yaml

    text = read_text_file(path, what, fix)
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader), yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{path}:{line}", f"not valid YAML: {problem}", "fix the YAML syntax at this line") from None


class InvariantError(RuntimeError):
    """A run broke one of the engine's invariants (raised only with ``Scenario(check_invariants=True)``):
    the message gives the time, the node or port, and the flow."""
