"""The one error type for bad input: it names where the problem is and how to fix it."""


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


class InvariantError(RuntimeError):
    """A run broke one of the engine's invariants (raised only with ``Scenario(check_invariants=True)``):
    the message gives the time, the node or port, and the flow."""
