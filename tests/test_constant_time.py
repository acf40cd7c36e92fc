"""Constant time, checked dynamically: the compiled kernels run under valgrind with their inputs
marked secret (undefined); any branch or memory index that depends on them is reported. Every
preset, gcc and clang, -O0/-O2/-O3/-Os. A deliberately leaky function proves the check can fail.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_isa, require_tool
from nttgen.emit.isa import isa_class
from nttgen.generate import generate
from nttgen.rings import PRESETS

DRIVER = r"""
#include <stdint.h>
#include <stddef.h>
#include <valgrind/memcheck.h>
#include "%(stem)s.h"
#define N %(n)d
#define K 3
typedef %(elem)s elem;
static elem a[N], b[N], r[N], A[K * N], B[K * N];
static void secret(void *p, size_t len) { VALGRIND_MAKE_MEM_UNDEFINED(p, len); }
static void fill(elem *p, size_t len, unsigned seed) {
    for (size_t i = 0; i < len; ++i) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (elem)(seed %% %(q)du);
    }
}
#ifdef LEAKY
static volatile int sink;
/* A secret-dependent branch, kept out of line so no compiler turns it into a cmov. */
__attribute__((noinline)) static void leaky(const elem *p) {
    if (p[0] > 5) { sink = 1; } else { sink = 2; r[1] = 7; }
}
#endif
int main(void) {
    fill(a, N, 1); fill(b, N, 2); fill(A, K * N, 3); fill(B, K * N, 4);
    secret(a, sizeof a); secret(b, sizeof b); secret(A, sizeof A); secret(B, sizeof B);
#ifdef LEAKY
    leaky(a);
#endif
    %(p)s_polymul(r, a, b);
    %(p)s_ntt(a);
    %(p)s_ntt(b);
    %(p)s_basemul(r, a, b);
    %(p)s_basemul_acc(r, A, B, K);
    %(p)s_intt(r);
    %(p)s_frommont(r);
    %(p)s_tomont(r);
    %(p)s_reduce(r);
    return 0;
}
"""


def _build(  # type: ignore[no-untyped-def]
    ring, tmp_path: Path, cc: str, opt: str, leaky: bool = False, isa: str = "c"
) -> Path:
    files = generate(ring, isa)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "driver.c").write_text(
        DRIVER
        % {
            "stem": files.stem,
            "n": ring.n,
            "q": ring.q,
            "elem": ring.lane.c_type,
            "p": f"nttgen_{ring.c_name}_{isa}",
        }
    )
    exe = tmp_path / f"ct_{isa}_{Path(cc).name}{opt}"
    # -gdwarf-4: valgrind 3.19 cannot read clang 19's default DWARF 5
    flags = ["-std=c99", opt, "-gdwarf-4", *isa_class(isa).cflags]
    flags += ["-DLEAKY"] if leaky else []
    subprocess.run(
        [cc, *flags, str(tmp_path / "driver.c"), str(tmp_path / f"{files.stem}.c"), "-o", str(exe)],
        check=True,
    )
    return exe


def _valgrind(exe: Path) -> subprocess.CompletedProcess[str]:
    vg = require_tool("valgrind")
    return subprocess.run(
        [vg, "-q", "--error-exitcode=3", "--track-origins=yes", str(exe)],
        capture_output=True,
        text=True,
        timeout=600,
    )


# valgrind runs AVX2 (not AVX-512) code; the portable C is also checked at -O0 and -Os
LEVELS = {"c": ("-O0", "-O2", "-O3", "-Os"), "avx2": ("-O2", "-O3")}


@pytest.mark.parametrize("isa", ["c", "avx2"])
@pytest.mark.parametrize("compiler", ["gcc", "clang-19"])
@pytest.mark.parametrize("ring", list(PRESETS.values()), ids=lambda r: r.name)
def test_no_secret_dependent_branch_or_index(  # type: ignore[no-untyped-def]
    isa: str, compiler: str, ring, tmp_path: Path
) -> None:
    cc = require_tool(compiler)
    require_tool("valgrind")
    require_isa(isa)
    for opt in LEVELS[isa]:
        p = _valgrind(_build(ring, tmp_path, cc, opt, isa=isa))
        assert p.returncode == 0, f"{compiler} {opt}:\n{p.stderr[:3000]}"
        assert "depends on uninitialised" not in p.stderr


def test_the_check_catches_a_leak(tmp_path: Path) -> None:
    """Positive control: a branch on secret data is reported."""
    cc = require_tool("gcc")
    p = _valgrind(_build(PRESETS["mlkem"], tmp_path, cc, "-O0", leaky=True))
    assert p.returncode == 3
    assert "Conditional jump or move depends on uninitialised value" in p.stderr
