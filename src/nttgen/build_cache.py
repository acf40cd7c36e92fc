"""A content-addressed directory cache for build outputs (shared libraries, static executables).

An output is built once into a directory named by a hash of everything that determines it
(sources, compiler, flags) and reused by every later call, in any process. A lock file per key
makes concurrent callers (the test suite's workers, two programs) wait for the one that builds
it instead of compiling the same thing twice; where file locks are unavailable the build is
still safe, only possibly repeated (the finished directory is moved into place atomically).

:func:`stored` keeps Python results the same way (pickled), for work that is a pure function
of nttgen's own source and its arguments: the test suite's workers share the kernel sets and
generated files one of them built instead of each generating them again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TypeVar

from .errors import CacheError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


def content_key(parts: Iterable[str]) -> str:
    """A short hash of ``parts`` (joined with NUL, which no part may contain unescaped)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing). flock conflicts between two
    opens of the file in one process too, so this serialises threads as well as processes."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            held = True
        except OSError:  # a file system without locks (some NFS): the rename keeps us safe
            held = False
        try:
            yield
        finally:
            if held:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _unusable(root: Path, err: OSError) -> CacheError:
    """The one-line error for a cache directory that cannot be created or written."""
    reason = err.strerror or type(err).__name__
    where = f" ({err.filename})" if err.filename and str(err.filename) != str(root) else ""
    return CacheError(
        f"cannot use the build cache directory {root}: {reason}{where}; set NTTGEN_CACHE to a "
        "writable directory"
    )


def cached_build(
    root: Path, name: str, key_parts: Iterable[str], output: str, build: Callable[[Path], None]
) -> Path:
    """The path of ``output`` inside the cache entry ``<root>/<name>-<key>``: built by
    ``build(directory)`` (which must write ``output`` there) if no process has built it yet,
    else the existing one. ``build`` may raise; nothing is cached then. Concurrent callers
    with one key, threads or processes, wait for a single build. Raises
    :class:`~nttgen.errors.CacheError` when ``root`` cannot be created or written."""
    key = content_key(key_parts)
    final = root / f"{name}-{key}"
    out = final / output
    if out.exists():
        return out
    with contextlib.ExitStack() as stack:
        # only the cache's own file-system steps become CacheError: an OSError that ``build``
        # raises (its tool, its inputs) is the caller's to report
        try:
            root.mkdir(parents=True, exist_ok=True)
            stack.enter_context(_locked(root / f"{name}-{key}.lock"))
            if out.exists():  # built while this caller waited for the lock
                return out
            t = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=root)))
        except OSError as err:
            raise _unusable(root, err) from err
        build(t)
        try:
            t.rename(final)  # atomic: readers see no entry or a complete one
        except OSError as err:
            if not out.exists():  # a concurrent build won the race only if it finished
                raise _unusable(root, err) from err
        # TemporaryDirectory cleanup must not fail on the renamed directory
        t.mkdir(exist_ok=True)
    return out


T = TypeVar("T")

# `stored` is off unless this is set (the test suite sets it): a user's `nttgen generate`
# always builds afresh, and nothing it does depends on a pickle left by another version
STORE_ENV = "NTTGEN_STORE_GENERATED"

# Generation results kept in each process: enough for every preset and custom ring of a
# session on every ISA (the test suite holds about 110 pairs); a kernel set takes up to
# seconds to build and its files a third of that.
GENERATION_CACHE = 256
_store_off_in_this_process = False


@cache
def source_fingerprint() -> str:
    """A hash of every file of the installed nttgen package (its code and C resources), the
    Python version and numpy's: a stored result is valid exactly while all of them are the
    same."""
    import numpy

    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{sys.version}\0{numpy.__version__}".encode())
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:20]


def stop_storing() -> None:
    """Neither read nor write stored results again in this process: its state no longer
    follows from the source alone (a caller changed a tuning table or an ISA's choices in
    place)."""
    global _store_off_in_this_process
    _store_off_in_this_process = True


def stored(root: Path, name: str, args: Iterable[object], compute: Callable[[], T]) -> T:
    """``compute()``, kept pickled under ``root`` by a hash of ``name``, the ``repr`` of each of
    ``args`` and :func:`source_fingerprint`, when ``$NTTGEN_STORE_GENERATED`` is set (else
    computed every time). ``args`` must determine the result together with nttgen's source,
    and their ``repr`` must show everything that does. A second process asking for the same
    key waits for the first and reads its result."""
    if _store_off_in_this_process or not os.environ.get(STORE_ENV):
        return compute()
    key = [name, source_fingerprint(), *map(repr, args)]

    def build(directory: Path) -> None:
        (directory / "result.pickle").write_bytes(pickle.dumps(compute(), protocol=5))

    path = cached_build(root, name, key, "result.pickle", build)
    return pickle.loads(path.read_bytes())  # written by this user's own nttgen
