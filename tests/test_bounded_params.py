"""Every parameter is answered at once: refusals name the user's value and the rule in one line,
admissible rings are planned without a hang, and an NTRU Prime ring's default pipeline is one
thing (what ``nttgen plans`` marks ``*`` is what ``generate`` and ``load`` use).

Each timed call runs under an alarm that interrupts it after :data:`HANG_S` seconds, so code
that would hang fails here instead of stalling the run; the assertion itself is one second of
wall time (:data:`LIMIT_S`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import nttgen
from nttgen.cli import main
from nttgen.emit.ntru_files import ntru_command, ntru_stem
from nttgen.errors import NttgenError, RingError, SizeError
from nttgen.families import NTRU_PRIME, family_of
from nttgen.ntru_rings import NTRU_PRESETS, get_ntru_ring, make_ntru_ring
from nttgen.plan.maps import build_pipeline, choose_pipelines, pipelines, plan_pipeline
from nttgen.plan.maps.choose import GRB, GSB, SN
from test_ringmaps import ref_ntru

LIMIT_S = 1.0
"""Wall time within which every refusal and every plan listing below must answer."""
HANG_S = 20
"""After this many seconds a call is interrupted and the test fails (code that hangs)."""


class Hang(BaseException):
    """Raised by the alarm inside a call that ran past :data:`HANG_S` (a BaseException, so
    that no `except Exception` of the code under test swallows it)."""


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Interrupt the block after ``seconds`` with :class:`Hang` (main thread only: elsewhere
    signals cannot be delivered, and the block simply runs)."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        yield
        return

    def fire(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def timed(call: Callable[[], object]) -> tuple[object, float]:
    """(result or the NttgenError raised, seconds of wall time) of ``call()``."""
    start = time.perf_counter()
    with alarm(HANG_S):
        try:
            out: object = call()
        except NttgenError as exc:
            out = exc
    return out, time.perf_counter() - start


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, seconds) of ``nttgen <args>`` run in this process."""
    capsys.readouterr()
    status, seconds = timed(lambda: main(args))
    out, err = capsys.readouterr()
    assert isinstance(status, int), status
    return status, out, err, seconds


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    """Import and cache what every command shares (the CLI's parser, the presets), so that
    the timings below are of the checks, not of a first import."""
    main(["plans", "--ring", "sntrup761"])


# -- refusals: one line, exit 2, at once --------------------------------------------------------

REFUSALS = [
    # x^n + 1 rings
    (["--n", "300", "--q", "3329"], "n=300 is not a power of two"),
    (["--n", "8", "--q", "17"], "n=8 is outside the supported range"),
    (["--n", str(2**40), "--q", "3329"], f"n={2**40} is outside the supported range"),
    (["--n", "256", "--q", "3327"], "q=3327 is not an odd prime"),
    (["--n", "256", "--q", "1"], "q=1 is not an odd prime"),
    (["--n", "256", "--q", "3331"], "q=3331 is not ≡ 1 (mod n=256)"),
    (["--n", "256", "--q", "40961", "--lane-bits", "16"], "q=40961 does not fit 16-bit lanes"),
    (["--n", "256", "--q", str(2**31 + 11)], f"q={2**31 + 11} is too large"),
    (["--n", "256", "--q", str(10**12)], f"q={10**12} is too large"),
    (["--n", "256", "--q", str(2**32)], f"q={2**32} is too large"),
    (["--n", "4096", "--q", str(10**40)], f"q={10**40} is too large"),
    (["--ring", "n256_q1000000000000"], "q=1000000000000 is too large"),
    (["--ring", "n256_q" + "9" * 5000], "(5000 digits) is too large"),
    # NTRU Prime rings
    (["--q", "4591", "--f", "x^760 - x - 1"], "p=760 is not prime"),
    (["--q", "4591", "--f", "x^2 - x - 1"], "p=2 is too small"),
    (["--q", "4591", "--f", "x^100003 - x - 1"], "p=100003 is too large"),
    (["--q", "4591", "--f", f"x^{10**30 + 57} - x - 1"], f"p={10**30 + 57} is too large"),
    (["--ring", f"p{10**18 + 9}_q4591"], f"p={10**18 + 9} is too large"),
    (["--q", "4590", "--f", "x^761 - x - 1"], "q=4590 is not an odd prime"),
    (["--q", "40961", "--f", "x^761 - x - 1"], "q=40961 is too large"),
    (["--q", str(10**12), "--f", "x^761 - x - 1"], f"q={10**12} is too large"),
    (["--q", str(2**32 + 15), "--f", "x^761 - x - 1"], f"q={2**32 + 15} is too large"),
    (["--ring", "p761_q1000000000039"], "q=1000000000039 is too large"),
    (["--q", "4591", "--f", "x^761 + x + 1"], "is not of the shape x^p - x - 1"),
    (["--q", "4591", "--f", "x^761 - x - 1" * 10000], "is not of the shape x^p - x - 1"),
    (["--q", "4621", "--f", "x^653 - x - 1", "--pipeline", GRB], "good-rader-bruun: needs"),
]


@pytest.mark.parametrize(("args", "rule"), REFUSALS, ids=lambda x: str(x)[:60])
def test_every_refusal_answers_at_once_in_one_line(
    args: list[str], rule: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for command in (["generate", *args, "-o", str(tmp_path)], ["plans", *args]):
        if command[0] == "plans" and ("--n" in args or "n256_q" in " ".join(args)):
            continue  # plans is for NTRU Prime rings
        if command[0] == "plans" and "--pipeline" in args:
            continue
        status, _, err, seconds = cli(command, capsys)
        assert status == 2, (command, err)
        assert rule in err and err.startswith("nttgen: error: "), (command, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert len(err) < 1000, err  # the user's value is shortened, never echoed whole
        assert seconds < LIMIT_S, (command, seconds)
    assert not any(tmp_path.iterdir())  # refused before anything was written


@pytest.mark.parametrize(
    ("call", "rule"),
    [
        (lambda: nttgen.load(n=256, q=10**12), "q=1000000000000 is too large"),
        (lambda: nttgen.load(n=256, q=2**32), "q=4294967296 is too large"),
        (lambda: nttgen.load(n=2**50, q=3329), "outside the supported range"),
        (lambda: nttgen.load(n=256, q=4294967295), "too large"),
        (lambda: nttgen.load("n512_q4294967297"), "too large"),
        (lambda: nttgen.get_ring("n256_q1000000000000"), "too large"),
        (lambda: nttgen.get_ring("p100003_q4591"), "p=100003 is too large"),
        (
            lambda: nttgen.get_ring("p761_q4590"),
            "q=4590 is not an odd prime: Z_q must be a field with 2 invertible; nearest: 4591",
        ),
        (lambda: nttgen.get_ring("p761_q99999999999"), "too large"),
        (lambda: nttgen.get_ring("p1_q4591"), "p=1 is too small"),
        (lambda: make_ntru_ring(10**100 + 267, 4591), "too large"),
        (lambda: make_ntru_ring(761, 10**100 + 267), "too large"),
        (lambda: plan_pipeline(GRB, 761, 32749), "deg g = 261888"),
        (lambda: choose_pipelines(761, 2**61 - 1), "q=2305843009213693951 is too large"),
    ],
)
def test_the_python_api_refuses_at_once(call: Callable[[], object], rule: str) -> None:
    out, seconds = timed(call)
    assert isinstance(out, RingError), out
    assert rule in str(out) and "\n" not in str(out)
    assert seconds < LIMIT_S, seconds


def test_suggestions_are_bounded_and_still_helpful() -> None:
    """The nearest-valid hints come from a bounded search: the classic ones still hold, one
    above 2^31 names the largest q the lanes admit, and none walks from a huge value."""
    for call, hint in (
        (lambda: nttgen.rings.make_ring(256, 3327), "nearest primes with an NTT for n=256: 3329"),
        (lambda: nttgen.rings.make_ring(256, 10**12), "largest q with an NTT for n=256: 2147"),
        (lambda: nttgen.rings.make_ring(4096, 2**31 - 1), "nearest valid q: 2147"),
        (lambda: make_ntru_ring(760, 4591), "nearest: 757, 761"),
        (lambda: make_ntru_ring(761, 4590), "nearest: 4591, 4583"),
    ):
        out, seconds = timed(call)
        assert isinstance(out, RingError) and hint in str(out), out
        assert seconds < LIMIT_S


# -- admissible rings: planned at once, with the degree bound ---------------------------------


def test_plans_with_a_huge_rader_prime_answers_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    """q = 32749: q - 1 = 4 * 3 * 2729, so Good–Rader–Bruun's Rader prime is 2729 and its ring
    has degree 261,888 (172 times 2p - 1): refused by the degree bound, listed with its rule,
    and the ring is planned through the rest at once."""
    from nttgen.plan.maps.choose import MAX_BLOWUP, degree_bound

    status, out, err, seconds = cli(["plans", "--q", "32749", "--f", "x^761 - x - 1"], capsys)
    assert status == 0, err
    flat = " ".join(out.split())
    assert "*schoenhage-nussbaumer" in flat
    assert "refused: good-rader-bruun: for p=761, q=32749 Rader's prime r=2729" in flat
    assert f"at most max({MAX_BLOWUP}(2p-1), 2048) = {degree_bound(761)}" in flat
    assert seconds < LIMIT_S, seconds
    ring, seconds = timed(lambda: make_ntru_ring(761, 32749))
    assert isinstance(ring, nttgen.NtruPrimeRing) and ring.pipeline_names == (SN,)
    assert seconds < LIMIT_S


def test_the_degree_bound_keeps_the_known_pipelines() -> None:
    """Every pipeline of sntrup761, of the rings the tests use and of small p stays: the bound
    refuses only what no parameter set needs."""
    from nttgen.plan.maps.choose import MAX_BLOWUP, MAX_P, degree_bound

    assert [c.name for c in choose_pipelines(761, 4591)] == [GSB, GRB, SN]
    assert [c.name for c in choose_pipelines(857, 5167)] == [GSB, GRB, SN]
    assert [c.name for c in choose_pipelines(653, 4621)] == [SN]
    assert [c.name for c in choose_pipelines(787, 4591)] == [GSB, GRB, SN]
    assert [c.name for c in choose_pipelines(11, 4591)] == [GRB, SN]
    for p, q in ((761, 4591), (857, 5167), (11, 4591), (31, 4591), (1277, 7879), (3, 4591)):
        for plan in choose_pipelines(p, q):
            assert 2 * p - 1 <= plan.degree <= degree_bound(p)
    # sntrup1277's Good–Rader–Bruun (Phi_101(x^96), 3.76 x 2p-1) is past the bound
    with pytest.raises(SizeError, match=r"r=101 .* gives deg g = 9600, 3\.8 times 2p-1 = 2553"):
        plan_pipeline(GRB, 1277, 7879)
    assert degree_bound(MAX_P) == MAX_BLOWUP * (2 * MAX_P - 1)


def test_the_smallest_ring_plans_in_the_users_terms(capsys: pytest.CaptureFixture[str]) -> None:
    """p = 3 took truncated Schönhage with l = 2 and failed on that map's own rule ("needs
    l >= 4, got 2"); it now gets the cyclic Schönhage ring and multiplies exactly."""
    status, out, err, seconds = cli(["plans", "--q", "4591", "--f", "x^3 - x - 1"], capsys)
    assert status == 0 and "schoenhage-nussbaumer" in out, err
    assert seconds < LIMIT_S
    pipe = build_pipeline(SN, 3, 4591)
    for a, b in (([1, 2, 3], [4590, 7, 2295]), ([2295] * 3, [-2295] * 3)):
        assert pipe.polymul(a, b) == ref_ntru(a, b, 3, 4591)


def test_a_maps_rule_is_reported_with_pipeline_p_and_q(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule met inside a map names the pipeline, p, q and g the user chose, not only the
    map's internal sizes."""

    def refuse(q: int, k: int, r: int) -> None:
        raise SizeError(f"Nussbaumer needs powers of two, got k={k}, r={r}")

    monkeypatch.setattr(pipelines, "NussbaumerMap", refuse)
    with pytest.raises(SizeError) as info:
        build_pipeline(SN, 47, 4597)  # a pair no other test builds (the builder caches)
    g = plan_pipeline(SN, 47, 4597).modulus
    assert str(info.value).startswith(
        f"schoenhage-nussbaumer for p=47, q=4597 (g = {g}): Nussbaumer needs powers of two"
    )


# -- the default pipeline is one thing --------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "q", "default"),
    [
        (761, 4591, GRB),
        (857, 5167, GRB),
        (653, 4621, SN),
        (761, 4111, GSB),
        (761, 4603, SN),
        (761, 32749, SN),
    ],
)
def test_one_default_pipeline(
    p: int, q: int, default: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ring's default_pipeline is the first existing one of DEFAULT_PREFERENCE, ``nttgen
    plans`` marks it ``*``, and the files generated without a pipeline are its (name, command
    and the family's first variant)."""
    from nttgen.ntru_rings import DEFAULT_PREFERENCE

    ring = make_ntru_ring(p, q)
    assert ring.default_pipeline == default
    assert default == next(n for n in DEFAULT_PREFERENCE if n in ring.pipeline_names)
    status, out, err, _ = cli(["plans", "--q", str(q), "--f", ring.modulus_poly], capsys)
    assert status == 0, err
    starred = [w[1:] for w in out.split() if w.startswith("*") and w[1:] in ring.pipeline_names]
    assert starred == [default]
    assert NTRU_PRIME.variants(ring)[0] == default
    assert ntru_stem(ring, "c") == ntru_stem(ring, "c", default)
    assert "--pipeline" not in ntru_command(ring, "c")
    assert NTRU_PRESETS["sntrup761"].default_pipeline == GRB


def test_p653_q4621_generates_and_loads_through_its_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """p = 653, q = 4621 has only Schönhage–Nussbaumer: ``generate`` without --pipeline and
    the family's generate (what ``nttgen.load`` compiles) go through it, not Good–Rader–Bruun
    (whose rule they used to raise). Generation itself is not timed."""
    ring = get_ntru_ring("p653_q4621")
    assert nttgen.get_ring("p653_q4621") == ring and ring.default_pipeline == SN
    files = family_of(ring).generate(ring, "c")
    assert '"pipeline": "schoenhage-nussbaumer"' in files.manifest
    status, _, err, _ = cli(
        ["generate", "--q", "4621", "--f", "x^653 - x - 1", "-o", str(tmp_path)], capsys
    )
    assert status == 0, err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == [f"nttgen_p653_q4621_sn_c.{s}" for s in ("c", "h", "json")]
    head = (tmp_path / "nttgen_p653_q4621_sn_c.h").read_text()[:400]
    assert 'nttgen generate --q 4621 --f "x^653 - x - 1" --isa c\n' in head
