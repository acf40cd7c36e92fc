"""A content-addressed directory cache for build outputs (shared libraries, static executables).

An output is built once into a directory named by a hash of everything that determines it
(sources, compiler, flags) and reused by every later call, in any process. A lock file per key
makes concurrent callers (the test suite's workers, two programs) wait for the one that builds
it instead of compiling the same thing twice; where file locks are unavailable the build is
still safe, only possibly repeated (the finished directory is moved into place atomically).
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


def content_key(parts: Iterable[str]) -> str:
    """A short hash of ``parts`` (joined with NUL, which no part may contain unescaped)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cached_build(
    root: Path, name: str, key_parts: Iterable[str], output: str, build: Callable[[Path], None]
) -> Path:
    """The path of ``output`` inside the cache entry ``<root>/<name>-<key>``: built by
    ``build(directory)`` (which must write ``output`` there) if no process has built it yet,
    else the existing one. ``build`` may raise; nothing is cached then."""
    key = content_key(key_parts)
    final = root / f"{name}-{key}"
    out = final / output
    if out.exists():
        return out
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f"{name}-{key}.lock"):
        if out.exists():  # built while this process waited for the lock
            return out
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            t = Path(tmp)
            build(t)
            try:
                t.rename(final)
            except OSError:
                if not out.exists():  # a concurrent build won the race only if it finished
                    raise
            # TemporaryDirectory cleanup must not fail on the renamed directory
            t.mkdir(exist_ok=True)
    return out
