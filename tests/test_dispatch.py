"""The dispatching front end (nttgen_<ring>.h/.c): it picks the best ISA this CPU runs, once;
NTTGEN_ISA restricts the choice and <prefix>_use_isa forces one; every forced ISA gives the exact
product; a choice that cannot run here is refused (use_isa returns -1, NTTGEN_ISA aborts with a
message), never run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import ALL_RINGS, require_isa, require_tool
from nttgen import cpu
from nttgen.cross import Target
from nttgen.emit.isa import ISAS, isa_class
from nttgen.generate import dispatch_isas, generate, generate_dispatch
from nttgen.reference import schoolbook
from nttgen.rings import PRESETS, Ring, make_ring

ROOT = Path(__file__).resolve().parents[1]
WARN = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wconversion")

DRIVER = r"""
#include "{stem}.h"
#include <stdio.h>
#include <string.h>

/* argv[1]: an ISA to force with use_isa, or "-"; stdin: a and b; stdout: the ISA in use, the
   product, and frommont(intt(from_standard(to_standard(ntt(a))))), which must give a back. */
int main(int argc, char **argv) {{
    static {t} a[{n}], b[{n}], r[{n}], t[{n}];
    long v;
    if (argc > 1 && strcmp(argv[1], "-") != 0 && {stem}_use_isa(argv[1]) != 0) {{
        printf("refused\n");
        return 3;
    }}
    for (int i = 0; i < {n}; ++i) {{
        if (scanf("%ld", &v) != 1) return 2;
        a[i] = ({t})v;
    }}
    for (int i = 0; i < {n}; ++i) {{
        if (scanf("%ld", &v) != 1) return 2;
        b[i] = ({t})v;
    }}
    {stem}_polymul(r, a, b);
    memcpy(t, a, sizeof t);
    {stem}_ntt(t);
    {stem}_to_standard(t);
    {stem}_from_standard(t);
    {stem}_intt(t);
    {stem}_frommont(t); /* intt leaves beta * a */
    printf("%s\n", {stem}_isa());
    for (int i = 0; i < {n}; ++i) printf("%ld ", (long)r[i]);
    printf("\n");
    for (int i = 0; i < {n}; ++i) printf("%ld ", (long)t[i]);
    printf("\n");
    return 0;
}}
"""


def _build(
    ring: Ring, cc: str, tmp: Path, target: Target | None = None, front: tuple[str, ...] = ()
) -> list[str]:
    """Compile, for ``target`` (the host by default), the files of every ISA of that machine
    with their flags, the front end (over every ISA) with ``front``, and the driver; return the
    command that runs the driver (under QEMU for another machine)."""
    target = target or Target()
    cmd = target.compile_command(cc)
    require_tool(cmd[0])
    isas = dispatch_isas(ring, list(ISAS))
    mine = [i for i in isas if isa_class(i).arch in (None, target.arch)]
    objects = []
    for files in [*(generate(ring, i) for i in mine), generate_dispatch(ring, isas)]:
        for name, text in files.items():
            (tmp / name).write_text(text)
        isa = files.stem.rsplit("_", 1)[-1]
        flags = isa_class(isa).cflags if isa in ISAS and files.stem.endswith(f"_{isa}") else front
        obj = tmp / f"{files.stem}.o"
        src = tmp / f"{files.stem}.c"
        subprocess.run([*cmd, *WARN, *flags, "-c", str(src), "-o", str(obj)], check=True)
        objects.append(str(obj))
    stem = f"nttgen_{ring.c_name}"
    (tmp / "driver.c").write_text(DRIVER.format(stem=stem, n=ring.n, t=ring.lane.c_type))
    exe = tmp / "driver"
    static = () if target.native else ("-static",)
    link = [*target.compile_command(target.linker if not target.native else cc), *static]
    subprocess.run([*link, "-O2", "-std=c99", str(tmp / "driver.c"), *objects, "-o", str(exe)],
                   check=True)  # fmt: skip
    return [*target.emulator(), str(exe)]


def _run(exe: list[str], ring: Ring, a: np.ndarray, b: np.ndarray, force: str = "-",
         env_isa: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    env = dict(os.environ)
    env.pop("NTTGEN_ISA", None)
    if env_isa is not None:
        env["NTTGEN_ISA"] = env_isa
    data = " ".join(map(str, [*a, *b]))
    return subprocess.run([*exe, force], input=data, capture_output=True, text=True, env=env)


def _check_forced(
    exe: list[str], ring: Ring, a: np.ndarray, b: np.ndarray, isas: list[str]
) -> None:
    """Each ISA, forced by use_isa and by NTTGEN_ISA, runs and gives the exact product and the
    round trip back to a."""
    q = ring.q
    want = [int(x) % q for x in schoolbook(a, b, q)]
    for isa in isas:
        for proc in (_run(exe, ring, a, b, force=isa), _run(exe, ring, a, b, env_isa=isa)):
            assert proc.returncode == 0, proc.stderr
            name, prod, back = proc.stdout.split("\n")[:3]
            assert name == isa
            assert [int(x) % q for x in prod.split()] == want, isa
            assert [int(x) % q for x in back.split()] == [int(x) % q for x in a], isa


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
@pytest.mark.parametrize(
    "ring",
    [PRESETS["mlkem"], PRESETS["mldsa"], PRESETS["newhope1024"], make_ring(16, 97)],
    ids=lambda r: r.name,
)
def test_every_forced_isa_gives_the_exact_product(ring: Ring, cc: str, tmp_path: Path) -> None:
    exe = _build(ring, cc, tmp_path)
    rng = np.random.default_rng(ring.q)
    q = ring.q
    a = rng.integers(-(q // 2), q // 2 + 1, ring.n)
    b = rng.integers(-(q // 2), q // 2 + 1, ring.n)
    a[: ring.n // 8] = q // 2  # an extreme block
    usable = [i for i in cpu.usable_isas() if i in dispatch_isas(ring, list(ISAS))]
    default = _run(exe, ring, a, b)
    assert default.returncode == 0, default.stderr
    assert default.stdout.split("\n")[0] == usable[0]  # the best ISA, as the Python API picks
    _check_forced(exe, ring, a, b, usable)
    # a list restricts the choice to its best usable member
    proc = _run(exe, ring, a, b, env_isa=f"neon,{usable[-1]}")
    assert proc.stdout.split("\n")[0] == usable[-1]


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=lambda r: r.name)
def test_aarch64_front_end_picks_neon(ring: Ring, cc: str, tmp_path: Path) -> None:
    """On AArch64 (under QEMU) the same front end compiles in NEON and the portable C, picks
    NEON, and both give the exact product; the x86 ISAs are not compiled in, so they are
    refused."""
    require_isa("neon")
    exe = _build(ring, cc, tmp_path, Target("aarch64"))
    q = ring.q
    rng = np.random.default_rng(q + 1)
    a = rng.integers(-(q - 1), q, ring.n)
    b = rng.integers(-(q - 1), q, ring.n)
    a[:8] = q - 1
    default = _run(exe, ring, a, b)
    assert default.returncode == 0, default.stderr
    assert default.stdout.split("\n")[0] == "neon"
    _check_forced(exe, ring, a, b, ["neon", "c"])
    for isa in ("avx2", "avx512"):
        assert _run(exe, ring, a, b, force=isa).returncode == 3, isa
    proc = _run(exe, ring, a, b, env_isa="avx512,avx2")
    assert proc.returncode != 0 and "names no ISA compiled in that runs here" in proc.stderr


@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=lambda r: r.name)
def test_riscv_front_end_picks_by_vlen(ring: Ring, tmp_path: Path) -> None:
    """Built for rv64gcv (clang: gcc 12 has no RVV intrinsics), one front end reads VLEN and
    takes the code specialised for exactly that VLEN, else the VLEN-agnostic code; every RVV
    variant that fits the core can be forced and gives the exact product; one that needs a
    longer VLEN is refused, never run."""
    require_isa("rvv")
    exe = _build(ring, "clang-19", tmp_path, Target("riscv64"), front=("-march=rv64gcv",))
    q = ring.q
    rng = np.random.default_rng(q + 2)
    a = rng.integers(-(q - 1), q, ring.n)
    b = rng.integers(-(q - 1), q, ring.n)
    b[-8:] = -(q - 1)
    for vlen, best in ((128, "rvv128"), (256, "rvv256"), (512, "rvv")):
        run = [*Target("riscv64", vlen).emulator(), exe[-1]]
        default = _run(run, ring, a, b)
        assert default.returncode == 0, default.stderr
        assert default.stdout.split("\n")[0] == best, vlen
        fits = [i for i in ("rvv256", "rvv128", "rvv") if isa_class(i).min_vlen <= vlen]
        _check_forced(run, ring, a, b, [*fits, "c"])
        for isa in ("rvv256", "neon", "avx2"):
            if isa not in fits:
                assert _run(run, ring, a, b, force=isa).returncode == 3, (isa, vlen)


def test_a_choice_that_cannot_run_is_refused(tmp_path: Path) -> None:
    ring = PRESETS["mlkem"]
    exe = _build(ring, "gcc", tmp_path)
    a = np.zeros(ring.n, dtype=np.int64)
    proc = _run(exe, ring, a, a, force="neon")
    assert proc.returncode == 3 and proc.stdout.strip() == "refused"
    proc = _run(exe, ring, a, a, env_isa="neon,sse9")
    assert proc.returncode != 0
    assert "NTTGEN_ISA=neon,sse9 names no ISA compiled in that runs here" in proc.stderr
    for isa in ISAS:
        if isa not in cpu.usable_isas():  # e.g. no AVX-512 here: refused, not run
            proc = _run(exe, ring, a, a, force=isa)
            assert proc.returncode == 3, isa


def test_small_rings_dispatch_over_the_isas_that_fit() -> None:
    ring = make_ring(32, 97)
    # 32 lanes of 16 bits: too wide for AVX-512; NEON's 8 lanes fit
    assert dispatch_isas(ring, list(ISAS)) == ["c", "avx2", "neon", "rvv", "rvv128", "rvv256"]
    text = generate_dispatch(ring, ["avx512"]).source
    assert "nttgen_n32_q97_c_polymul" in text and "avx512" not in text.split("*/", 1)[1]
    # the smallest ring: NEON and RVV at VLEN 128 still hold it in two vectors; the
    # strip-mined RVV code has no minimum
    assert dispatch_isas(make_ring(16, 97), list(ISAS)) == ["c", "neon", "rvv", "rvv128"]


def test_front_ends_are_clang_format_clean(tmp_path: Path) -> None:
    """Every ring's front end, the long custom names included (the lines must still fit)."""
    cf = require_tool("clang-format-19")
    paths = []
    for ring in ALL_RINGS:
        for name, text in generate_dispatch(ring, list(ISAS)).items():
            if name.endswith((".c", ".h")):
                (tmp_path / name).write_text(text)
                paths.append(str(tmp_path / name))
    proc = subprocess.run(
        [cf, f"--style=file:{ROOT / '.clang-format'}", "--dry-run", "--Werror", *paths],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[:2000]
