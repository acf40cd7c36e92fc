"""The dispatching front end (nttgen_<ring>.h/.c): it picks the best ISA this CPU runs, once;
NTTGEN_ISA restricts the choice and <prefix>_use_isa forces one; every forced ISA gives the exact
product; a choice that cannot run here is refused (use_isa returns -1, NTTGEN_ISA aborts with a
message), never run. The same front end serves NTRU Prime rings (built over their writers)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import ALL_RINGS, require_isa, require_tool
from nttgen import cpu
from nttgen.cross import Target
from nttgen.dispatch_policy import DOMAIN, automatic_choice, default_policy, skips
from nttgen.emit import c_ast as C
from nttgen.emit.dispatch import DispatchWriter
from nttgen.emit.isa import ISAS, isa_class
from nttgen.emit.ntru_files import NtruFileWriter
from nttgen.generate import generate
from nttgen.ntru_rings import NTRU_PRESETS, NtruPrimeRing
from nttgen.outputs import dispatch_isas, generate_dispatch
from nttgen.reference import schoolbook
from nttgen.ring_family import RingSpec
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
        testing = (f"-D{files.stem.upper()}_TESTING",)  # the front end reads NTTGEN_ISA
        per_isa = isa in ISAS and files.stem.endswith(f"_{isa}")
        flags = isa_class(isa).cflags if per_isa else (*front, *testing)
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


def _run(exe: list[str], ring: RingSpec, a: np.ndarray, b: np.ndarray, force: str = "-",
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
    # the best ISA, as the Python API picks, unless the shipped policy skips it on this CPU
    rules = skips(default_policy(), ring.name, dispatch_isas(ring, list(ISAS)), ["ntt"])
    best = automatic_choice(rules, usable, DOMAIN, cpu.cpu_vendor_family())
    assert default.stdout.split("\n")[0] == best
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
    # 32 lanes of 16 bits: too wide for AVX-512 and for rvv256's register pairs; NEON's 8
    # lanes fit
    assert dispatch_isas(ring, list(ISAS)) == ["c", "avx2", "neon", "rvv", "rvv128"]
    text = generate_dispatch(ring, ["avx512"]).source
    assert "nttgen_n32_q97_c_polymul" in text and "avx512" not in text.split("*/", 1)[1]
    # the smallest ring: NEON still holds it in two vectors, RVV at VLEN 128 with LMUL 1
    # too (named, the message says so); the strip-mined RVV code has no minimum
    small = make_ring(16, 97)
    assert dispatch_isas(small, list(ISAS)) == ["c", "neon", "rvv"]
    assert isa_class("rvv128m1").unsupported(small.n, small.lane) is None
    why = isa_class("rvv128").unsupported(small.n, small.lane)
    assert why and "use isa='rvv' or isa='rvv128m1'" in why, why


def test_front_ends_are_clang_format_clean(tmp_path: Path) -> None:
    """Every ring's front end, the long custom names included (the lines must still fit), and
    an NTRU Prime ring's."""
    cf = require_tool("clang-format-19")
    ntru = NTRU_PRESETS["sntrup761"]
    writers = [NtruFileWriter(ntru, i) for i in ("c", "avx2")]
    fronts = [generate_dispatch(ring, list(ISAS)) for ring in ALL_RINGS]
    fronts.append(DispatchWriter(writers, "nttgen generate --ring sntrup761 --dispatch").files())
    paths = []
    for front in fronts:
        for name, text in front.items():
            if name.endswith((".c", ".h")):
                (tmp_path / name).write_text(text)
                paths.append(str(tmp_path / name))
    proc = subprocess.run(
        [cf, f"--style=file:{ROOT / '.clang-format'}", "--dry-run", "--Werror", *paths],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[:2000]


NTRU_DRIVER = r"""
#include "{stem}.h"
#include "{stem}_c.h"
#include <stdio.h>
#include <string.h>

/* argv[1]: an ISA to force with use_isa, or "-"; stdin: a, b and a small s; stdout: the ISA in
   use, then a*b through the front end and through the portable C, then a*s likewise. */
int main(int argc, char **argv) {{
    static int16_t a[{p}], b[{p}], s[{p}], out[4][{p}];
    int16_t *in[3] = {{a, b, s}};
    long v;
    if (argc > 1 && strcmp(argv[1], "-") != 0 && {stem}_use_isa(argv[1]) != 0) {{
        printf("refused\n");
        return 3;
    }}
    for (int k = 0; k < 3; ++k) {{
        for (int i = 0; i < {p}; ++i) {{
            if (scanf("%ld", &v) != 1) return 2;
            in[k][i] = (int16_t)v;
        }}
    }}
    {stem}_polymul(out[0], a, b);
    {stem}_c_polymul(out[1], a, b);
    {stem}_polymul_small(out[2], a, s);
    {stem}_c_polymul_small(out[3], a, s);
    printf("%s\n", {stem}_isa());
    for (int k = 0; k < 4; ++k) {{
        for (int i = 0; i < {p}; ++i) printf("%ld ", (long)out[k][i]);
        printf("\n");
    }}
    return 0;
}}
"""


def _build_ntru(ring: NtruPrimeRing, isas: tuple[str, ...], cc: str, tmp: Path) -> list[str]:
    """Compile the files of ``isas`` for an NTRU Prime ring with their flags, the front end
    over them (built from their writers) with none, and the driver; return the command that
    runs the driver."""
    require_tool(cc)
    writers = [NtruFileWriter(ring, i) for i in isas]
    command = f"nttgen generate --ring {ring.name}"
    command += "".join(f" --isa {i}" for i in isas) + " --dispatch"
    built = [*((w.files(), w.isa.cflags) for w in writers)]
    front = DispatchWriter(writers, command).files()
    built.append((front, (f"-D{front.stem.upper()}_TESTING",)))  # it reads NTTGEN_ISA
    objects = []
    for files, flags in built:
        for name, text in files.items():
            (tmp / name).write_text(text)
        obj = tmp / f"{files.stem}.o"
        src = tmp / f"{files.stem}.c"
        subprocess.run([cc, *WARN, *flags, "-c", str(src), "-o", str(obj)], check=True)
        objects.append(str(obj))
    stem = f"nttgen_{ring.c_name}"
    (tmp / "driver.c").write_text(NTRU_DRIVER.format(stem=stem, p=ring.p))
    exe = tmp / "driver"
    subprocess.run([cc, "-O2", "-std=c99", str(tmp / "driver.c"), *objects, "-o", str(exe)],
                   check=True)  # fmt: skip
    return [str(exe)]


def _trinomial_product(a: np.ndarray, b: np.ndarray, p: int, q: int) -> list[int]:
    """a*b mod (q, x^p - x - 1), centred: the exact product the front end must give."""
    c = np.convolve(a.astype(np.int64), b.astype(np.int64))
    for k in range(2 * p - 2, p - 1, -1):  # x^k = x^(k-p+1) + x^(k-p)
        c[k - p + 1] += c[k]
        c[k - p] += c[k]
    r = c[:p] % q
    return [int(x) - q if x > q // 2 else int(x) for x in r]


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_ntru_prime_front_end_gives_the_portable_product(cc: str, tmp_path: Path) -> None:
    """A front end built over sntrup761's portable C and AVX2 writers compiles with both ISA
    files; its polymul and polymul_small give the portable C's results (which are the exact
    products) whichever ISA runs; it picks AVX2 where this CPU runs it, NTTGEN_ISA=c and
    NTTGEN_ISA=avx2 choose those, and an ISA that cannot run here is refused, never run."""
    ring = NTRU_PRESETS["sntrup761"]
    exe = _build_ntru(ring, ("c", "avx2"), cc, tmp_path)
    h, p = ring.half, ring.p
    avx2 = "avx2" in cpu.usable_isas()
    rng = np.random.default_rng(p)
    for trial in range(3):
        a = rng.integers(-h, h + 1, p)
        b = rng.integers(-h, h + 1, p)
        small = rng.integers(-1, 2, p)
        if trial == 0:  # the extremes of the input contract
            a[: p // 2], b[p // 2 :] = h, -h
        runs = [("-", None, "avx2" if avx2 else "c"), ("c", None, "c"), ("-", "c", "c")]
        runs.append(("-", "neon,c", "c"))  # a list: its best member compiled in that runs
        if avx2:
            runs += [("avx2", None, "avx2"), ("-", "avx2", "avx2")]
        for force, env_isa, want in runs:
            proc = _run(exe, ring, a, np.concatenate([b, small]), force=force, env_isa=env_isa)
            assert proc.returncode == 0, proc.stderr
            name, prod, prod_c, prod_s, prod_s_c = proc.stdout.split("\n")[:5]
            assert name == want, (force, env_isa)
            assert prod.split() == prod_c.split(), (force, env_isa)
            assert prod_s.split() == prod_s_c.split(), (force, env_isa)
            assert [int(x) for x in prod.split()] == _trinomial_product(a, b, p, ring.q)
            assert [int(x) for x in prod_s.split()] == _trinomial_product(a, small, p, ring.q)
    zero = np.zeros(2 * p, dtype=np.int64)
    if not avx2:  # compiled in, but this CPU cannot run it: refused
        assert _run(exe, ring, zero[:p], zero, force="avx2").returncode == 3
        proc = _run(exe, ring, zero[:p], zero, env_isa="avx2")
        assert proc.returncode != 0 and "names no ISA compiled in that runs here" in proc.stderr
    assert _run(exe, ring, zero[:p], zero, force="neon").returncode == 3
    proc = _run(exe, ring, zero[:p], zero, env_isa="neon")
    assert proc.returncode != 0
    assert "nttgen_sntrup761: NTTGEN_ISA=neon names no ISA compiled in" in proc.stderr


def test_ntru_prime_front_end_has_no_order_conversions() -> None:
    """NTRU Prime's products have no transform domain: the front end exports the writers'
    entry points alone (no to/from_standard no-ops) and documents no NTT order."""
    ring = NTRU_PRESETS["sntrup761"]
    front = DispatchWriter([NtruFileWriter(ring, "c")], "nttgen generate --ring sntrup761")
    assert front.entries == ["polymul", "polymul_small"]
    files = front.files()
    assert "standard" not in files.header and "Order:" not in files.source
    assert "p = 761, q = 4591 (preset sntrup761)" in files.header
    assert "#define NTTGEN_SNTRUP761_N 761" in files.header


def test_the_front_ends_ast_nodes_break_lines_as_clang_format_does(tmp_path: Path) -> None:
    """The C AST nodes the front end is built from, at lengths that force their line breaks
    (a long condition, call, function-pointer member and initialiser row; a trailing comment
    that no longer fits), print what clang-format prints."""
    cf = require_tool("clang-format-19")
    long = "a_rather_long_identifier_to_force_line_breaks"
    x, y, z = (C.Name(f"{long}_{k}") for k in "xyz")
    call = C.Call(f"{long}_fn", (x, y, z, C.Str('a "quoted" text\n')))
    chain = (
        C.Bin("==", x, C.Int(1)),
        C.Bin("!=", y, C.Char("'")),
        C.Logic("||", (C.Name("p"), C.Name("q"))),
    )
    member = C.Apply(C.Member(C.Call("f", ()), "g", arrow=True), (y,))
    body = (
        C.DeclList("int", ("p", "q")),
        C.If(
            C.Logic("&&", (*chain, C.Call("g", (x,)))),
            (C.CallStmt(call), C.CallStmt(C.Call("h", (x, y)))),
            (C.Commented(C.Return(C.Int(0)), f"{long} {long}"),),
        ),
        C.While(
            C.Logic(
                "||",
                (
                    C.Unary("!", C.Member(C.Index(x, C.Int(0)), "v")),
                    C.Bin("<", member, C.UInt(255, hex=True)),
                ),
            ),
            (C.OpAssign("+", C.Name("p"), C.UInt(1)), C.Break()),
        ),
        C.Asm("nop"),
        C.Asm("nop", (), (("r", C.Name("p")),)),
        C.IfDef("SOMETHING", (C.Commented(C.ExprStmt(C.Cast("void", C.Name("q"))), "why"),)),
        C.Return(C.Logic("&&", (C.Bin("==", C.Name("p"), C.Int(1)), C.Name("q")))),
    )
    fields = (
        C.Param("int16_t", "v", "4"),
        C.FuncPtr("void", f"{long}_ptr", (C.Param("int32_t", "r", "1024"), C.Param("size_t", "k"))),
    )
    row = tuple(C.Name(f"{long}_{i}") for i in range(4))
    signature = (("int16_t", "r"), ("const int16_t", "a"), ("const int16_t", "b"))
    unit = C.Unit(
        [
            C.ShortComment("short"),
            C.ShortComment(f"{long} {long} {long}"),
            C.TypedefStruct(f"{long}_t", fields),
            C.Global("int", "counter", "static", C.Int(3)),
            C.Global("const char", "*text", "", C.Str("t")),
            C.InitArray("int", "rows", (C.InitRow(row, "G"), C.InitRow((C.Int(1),)))),
            C.FuncDef("int", "f", (), body),
            # a signature whose parameters pack onto two lines keeps them after its name; one
            # that would take three breaks after the return type instead
            C.FuncDef(
                "vint32m2_t",
                "nttgen_mldsa_rvv128_montmul",
                tuple(C.Param("vint32m2_t", v) for v in ("a", "z", "zq", "w", "x")),
                (C.Return(C.Name("a")),),
                storage="static inline",
            ),
            C.FuncDef(
                "void",
                "nttgen_newhope512_rvv256_basemul_inner",
                tuple(C.Param(t, v, "512") for t, v in signature),
                (C.ExprStmt(C.Cast("void", C.Name("r"))),),
                storage="static NTTGEN_NOINLINE",
            ),
        ]
    )
    text = unit.render()
    assert "static NTTGEN_NOINLINE void\nnttgen_newhope512_rvv256_basemul_inner(int16_t" in text
    assert "if (a_rather_long_identifier_to_force_line_breaks_x == 1 &&\n" in text
    assert "    /* a_rather" in text  # the trailing comment moved above its statement
    (tmp_path / "nodes.c").write_text(text)
    proc = subprocess.run(
        [cf, f"--style=file:{ROOT / '.clang-format'}", str(tmp_path / "nodes.c")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout == text, proc.stdout
