"""Calling kernels compiled for another architecture: a static server program under QEMU.

The generated kernels of one ring and ISA are linked with a small generated ``main`` that reads
requests from stdin and answers on stdout, and the program runs under ``qemu-<arch>`` for as long
as the Python object lives. A request is the function's index in the manifest and k (both
little-endian uint32), then the bytes of every input buffer (roles in and inout) in parameter
order; the answer is the bytes of every written buffer (roles out and inout) in parameter order.
Buffers are allocated afresh for each call, unaligned to the vector size as a caller's may be.
"""

from __future__ import annotations

import contextlib
import struct
import subprocess
import threading
from typing import Any

import numpy as np

from .cross import Target, build_static
from .emit.files import GeneratedFiles
from .errors import BuildError
from .toolchain import cache_dir

_SERVER_HEAD = r"""/* nttgen emulation server (generated; the protocol: nttgen/emulate.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "%(header)s"

/* A buffer 4 bytes past an aligned allocation: element-aligned, never vector-aligned, so the
 * kernels are run as a caller's unaligned arrays would run them. */
static void *take(size_t bytes, int read) {
    unsigned char *p = malloc(bytes + 64);
    if (p == NULL) {
        exit(3);
    }
    if (read && fread(p + 4, 1, bytes, stdin) != bytes) {
        exit(0);
    }
    if (!read) {
        memset(p + 4, 0, bytes);
    }
    return p + 4;
}

static void give(void *p, size_t bytes) {
    fwrite(p, 1, bytes, stdout);
    free((unsigned char *)p - 4);
}

int main(void) {
    uint32_t hdr[2];
    while (fread(hdr, sizeof hdr, 1, stdin) == 1) {
        size_t k = hdr[1];
        (void)k;
        switch (hdr[0]) {
"""

_SERVER_TAIL = r"""        default:
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
"""


def server_source(files: GeneratedFiles, manifest: dict[str, Any]) -> str:
    """The C source of the server for one generated file set (cases in manifest order)."""
    out = [_SERVER_HEAD % {"header": f"{files.stem}.h"}]
    for index, (name, meta) in enumerate(manifest["functions"].items()):
        out.append(f"        case {index}: {{ /* {name} */\n")
        args, gives, frees = [], [], []
        for j, p in enumerate(meta["params"]):
            if p["kind"] == "size":
                args.append("k")
                continue
            elem = p["elem"]
            count = f"{p['length']}u" + (" * k" if p["times"] else "")
            size = f"({count}) * sizeof({elem})"
            read = 1 if p["role"] in ("in", "inout") else 0
            out.append(f"            {elem} *b{j} = take({size}, {read});\n")
            args.append(f"b{j}")
            if p["role"] in ("out", "inout"):
                gives.append(f"            give(b{j}, {size});\n")
            else:
                frees.append(f"            free((unsigned char *)b{j} - 4);\n")
        out.append(f"            {meta['c_name']}({', '.join(args)});\n")
        out += gives + frees
        out.append("            break;\n        }\n")
    out.append(_SERVER_TAIL)
    return "".join(out)


class EmulatedLibrary:
    """A generated file set compiled for ``target`` and served by a QEMU process."""

    def __init__(
        self,
        files: GeneratedFiles,
        manifest: dict[str, Any],
        compile_cmd: list[str],
        target: Target,
    ) -> None:
        self.target = target
        self.manifest = manifest
        self._index = {name: i for i, name in enumerate(manifest["functions"])}
        sources = dict(files.items())
        sources["server.c"] = server_source(files, manifest)
        self.executable = build_static(
            target,
            sources,
            [(f"{files.stem}.c", compile_cmd)],
            "server.c",
            f"{files.stem}-server",
            cache_dir(),
        )
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [*self.target.emulator(), str(self.executable)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
            )
        return self._proc

    def call(self, name: str, k: int, buffers: list[tuple[dict[str, Any], np.ndarray]]) -> None:
        """Run function ``name`` on ``buffers`` ((manifest param, array) per buffer parameter,
        in order); the written arrays (roles out and inout) are updated in place."""
        with self._lock:
            proc = self._process()
            assert proc.stdin is not None and proc.stdout is not None
            request = [struct.pack("<II", self._index[name], k)]
            request += [a.tobytes() for p, a in buffers if p["role"] in ("in", "inout")]
            try:
                proc.stdin.write(b"".join(request))
                for p, a in buffers:
                    if p["role"] not in ("out", "inout"):
                        continue
                    want = a.nbytes
                    data = b""
                    while len(data) < want:
                        chunk = proc.stdout.read(want - len(data))
                        if not chunk:
                            raise BuildError(
                                f"{self.executable.name} under {self.target.label} stopped "
                                f"(exit {proc.wait()}) while answering {name}"
                            )
                        data += chunk
                    a[...] = np.frombuffer(data, dtype=a.dtype)
            except BrokenPipeError:
                raise BuildError(
                    f"{self.executable.name} under {self.target.label} stopped "
                    f"(exit {proc.wait()}) on {name}"
                ) from None

    def close(self) -> None:
        """Stop the server process."""
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=10)
        self._proc = None

    def __del__(self) -> None:
        # at interpreter shutdown there is nobody left to report a failure to
        with contextlib.suppress(Exception):
            self.close()
