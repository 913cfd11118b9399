"""The one exception type that carries a message meant for a person.

Anything the user can cause (an unknown task, malformed PDDL, an unreachable LLM server,
a missing model file) raises `CowpError` with a sentence that names the problem and what
to do. The CLI prints that sentence and exits non-zero instead of showing a traceback;
any other exception is a bug and keeps its traceback.
"""


class CowpError(Exception):
    """A failure the user can act on; `str(err)` is the whole message for them."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message}\n  -> {hint}" if hint else message)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that it unwinds as Ctrl-C does: context
    managers stop child processes and remove temporary folders, `cowp run` writes its
    report. The `cowp` command installs the handler (see `cowp_ros.cli.main`)."""
