"""Writing nttgen's outputs: every :class:`OSError` of creating a directory or writing a file
becomes an :class:`~nttgen.errors.OutputError` whose one-line message names the option that gave
the path (``-o``, ``--json``, ``--png``), the path and the reason in plain words, e.g.
``-o /etc/passwd: the path is a file, not a directory``.

:func:`ensure_directory` and :func:`write_text` / :func:`write_bytes` do the writing;
:func:`check_writable_file` checks a file's place before a long run, so that a bad ``--json``
fails at once rather than after the run; :func:`writing` wraps a writer nttgen does not own
(``matplotlib``'s ``savefig``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError

_PLAIN = {
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.ELOOP: "too many levels of symbolic links",
}


def _show(path: Path) -> str:
    """``path`` as the message prints it: as written, quoted when that would not be one line."""
    text = str(path)
    return text if text.isprintable() else repr(text)


def _failing_path(error: OSError, path: Path) -> Path:
    """The path the system call refused (a parent that ``mkdir`` was creating, say), or
    ``path`` when the error does not name one."""
    name = error.filename
    return Path(name) if isinstance(name, str | os.PathLike) else path


def _not_a_directory(what: str, path: Path) -> str:
    """``<what> is a file, not a directory`` (``exists and is not a directory`` for a device,
    a socket, ...)."""
    if path.is_file():
        return f"{what} is a file, not a directory"
    return f"{what} exists and is not a directory"


def _blocking_ancestor(path: Path) -> tuple[Path, bool] | None:
    """The shallowest proper ancestor of ``path`` that is missing (True) or exists and is not
    a directory (False), or None when every ancestor is a directory."""
    for ancestor in reversed(path.parents):
        if not ancestor.exists():
            return ancestor, True
        if not ancestor.is_dir():
            return ancestor, False
    return None


def _ancestor_reason(path: Path) -> str | None:
    """Why ``path`` cannot be created because of one of its ancestors (``the parent directory
    X does not exist``, ``X is a file, not a directory``), or None."""
    found = _blocking_ancestor(path)
    if found is None:
        return None
    ancestor, missing = found
    if missing:
        return f"the parent directory {_show(ancestor)} does not exist"
    return _not_a_directory(_show(ancestor), ancestor)


def _read_only(path: Path) -> bool:
    """Whether the file system holding ``path`` (an existing path) is mounted read-only."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def reason(error: OSError, path: Path) -> str:
    """The plain-words reason ``error`` (raised while creating or writing ``path``) gives:
    ``the path is a file, not a directory``, ``the parent directory X does not exist``,
    ``permission denied``, ``read-only file system``, ``no space left on the device``,
    ``the path is a directory``, ...; otherwise the system's ``strerror`` in lower case. One
    line, no trailing full stop."""
    failing = _failing_path(error, path)
    what = "the path" if failing == path else _show(failing)
    code = error.errno
    if code == errno.EEXIST and failing.exists() and not failing.is_dir():
        return _not_a_directory(what, failing)
    if code == errno.ENOTDIR:
        if failing.exists() and not failing.is_dir() and failing == path:
            return _not_a_directory(what, failing)
        found = _ancestor_reason(failing)
        if found is not None:
            return found
    if code == errno.ENOENT:
        found = _ancestor_reason(failing)
        if found is not None:
            return found
        if failing.is_symlink():
            return f"{what} is a symbolic link to a missing path"
        return f"nothing can be created in {_show(failing.parent)} (no such file or directory)"
    if code == errno.EISDIR:
        return f"{what} is a directory, not a file"
    if code in _PLAIN:
        plain = _PLAIN[code]
        return plain if failing == path else f"{plain} ({_show(failing)})"
    text = error.strerror or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


def output_error(
    path: Path, option: str, error: OSError, *, given: Path | None = None
) -> OutputError:
    """The :class:`OutputError` for ``error`` raised while writing ``path``:
    ``<option> <path>: <reason>``, or with ``given`` (the option's value when ``path`` is a
    file inside it) ``<option> <given>: cannot write <path>: <reason>``."""
    why = reason(error, Path(path))
    if given is not None and Path(given) != Path(path):
        return OutputError(f"{option} {_show(Path(given))}: cannot write {_show(path)}: {why}")
    return OutputError(f"{option} {_show(Path(path))}: {why}")


@contextmanager
def writing(path: Path, option: str, *, given: Path | None = None) -> Iterator[None]:
    """Run the block, turning an :class:`OSError` it raises into :func:`output_error` for
    ``path`` (for writers nttgen does not own: ``with writing(png, "--png"):
    fig.savefig(png)``)."""
    try:
        yield
    except OSError as e:
        raise output_error(path, option, e, given=given) from e


def ensure_directory(path: Path, option: str) -> None:
    """Make ``path`` a directory, creating it and its missing parents (nothing when it is
    one already). Raises :class:`OutputError` (``-o /etc/passwd: the path is a file, not a
    directory``) when it cannot be created."""
    path = Path(path)
    if path.is_dir():
        return
    with writing(path, option):
        path.mkdir(parents=True, exist_ok=True)


def write_text(path: Path, text: str, option: str, *, given: Path | None = None) -> None:
    """Write ``text`` (UTF-8) to the file ``path``, replacing its contents; its directory must
    exist. ``given``: the option's value when ``path`` is a file inside it (for the message).
    Raises :class:`OutputError` naming ``option``, the path and the reason."""
    with writing(Path(path), option, given=given):
        Path(path).write_text(text, encoding="utf-8")


def write_bytes(path: Path, data: bytes, option: str, *, given: Path | None = None) -> None:
    """Write ``data`` to the file ``path``, replacing its contents; otherwise as
    :func:`write_text`."""
    with writing(Path(path), option, given=given):
        Path(path).write_bytes(data)


def check_writable_file(path: Path, option: str) -> None:
    """Check, before a long run, that the file ``path`` can be written later: it is not a
    directory, its parent is an existing directory that this process may write in, and, when
    the file does not exist yet, it can be created (a probe file is created and removed at once;
    an existing file is not touched). Writes nothing that stays. Raises :class:`OutputError`
    naming ``option``, the path and the reason."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{option} {_show(path)}: the path is a directory, not a file")
    blocked = _ancestor_reason(path)
    if blocked is not None:
        raise OutputError(f"{option} {_show(path)}: {blocked}")
    parent = path.parent
    if path.exists():
        if not os.access(path, os.W_OK):
            why = "read-only file system" if _read_only(path) else "permission denied"
            raise OutputError(f"{option} {_show(path)}: {why}")
        return
    if not os.access(parent, os.W_OK | os.X_OK):
        why = "read-only file system" if _read_only(parent) else "permission denied"
        raise OutputError(f"{option} {_show(path)}: {why} (cannot create files in {_show(parent)})")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return  # created meanwhile by someone else: it exists, as a later write needs
    except OSError as e:
        raise output_error(path, option, e) from e
    os.close(fd)
    try:
        path.unlink()
    except OSError as e:
        raise output_error(path, option, e) from e
