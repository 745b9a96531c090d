"""The one error type users see: a file, what is wrong with it, and how to fix it."""

from __future__ import annotations

from .safe_text import display_text


class FlopscopeError(Exception):
    """An input problem reported as one line; the CLI prints it and exits with code 2."""

    def __init__(self, path: object, problem: str, fix: str = "") -> None:
        self.path = str(path)
        self.problem = problem
        self.fix = fix
        super().__init__(self.line())

    def line(self) -> str:
        """The line as shown: a path or problem quoting a file or a remote host cannot drive the
        terminal."""
        text = f"{self.path}: {self.problem}"
        return display_text(f"{text}; {self.fix}" if self.fix else text)


def permission_denied(path: object) -> FlopscopeError:
    """The line for a file the user may not read or write, or one behind a folder they may not
    enter."""
    problem = "permission denied (the file, or a folder above it)"
    return FlopscopeError(path, problem, "check its permissions (a folder needs x to be entered)")


def path_error(path: object, exc: OSError) -> FlopscopeError:
    """The line for `exc` met on `path`: permission denied as above, anything else (a name too long,
    a loop of symbolic links, an I/O error) in the system's words."""
    if isinstance(exc, PermissionError):
        return permission_denied(path)
    return FlopscopeError(path, f"cannot open ({exc.strerror or exc})", "check the path")


class OutOfMemory(FlopscopeError):
    """Memory ran out (readers/limits.py words the line): after it, the process is best ended at
    once, as a library's threads may never let its teardown finish."""
