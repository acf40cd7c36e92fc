"""The ``nttgen`` command line.

Every error ends the program with one line on stderr and a nonzero exit status, never a
traceback: 2 for bad usage or parameters, 1 for a failed verification.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..emit.isa import ISAS
from ..errors import NttgenError
from ..families import FAMILIES
from ..ntru_rings import NTRU_PRESETS
from ..version import __version__
from .bench import HEADLINE_OPS, K_MAX_CLI, cmd_bench
from .generate import cmd_generate
from .listing import cmd_list, cmd_plans
from .options import Parser, add_ring_args
from .verify import cmd_verify

__all__ = ["main", "parser"]


EXAMPLES = {
    "list": """examples:
  nttgen list""",
    "plans": """examples:
  nttgen plans                               # the NTRU Prime presets
  nttgen plans --q 4591 --f 'x^761 - x - 1' --json plans.json""",
    "generate": """examples:
  nttgen generate --ring mlkem --isa c --isa avx2 -o out      # two ISAs
  nttgen generate --ring mlkem --isa all --dispatch -o out    # every ISA and a front end
  nttgen generate --n 512 --q 7681 --isa avx2 -o out          # a custom x^n + 1 ring
  nttgen generate --q 4591 --f 'x^761 - x - 1' --isa avx2 -o out
  nttgen generate --presets -o generated                      # the checked-in tree""",
    "verify": """examples:
  nttgen verify                              # every preset on every ISA this CPU runs
  nttgen verify --ring mlkem --isa avx2 --trials 200
  nttgen verify --ring sntrup761 --pipeline all
  nttgen verify --ring mlkem --isa all       # also NEON/RVV under QEMU, where installed
  nttgen verify generated/mlkem              # the files on disk, as a user vendors them
  nttgen verify vendor/nttgen_mlkem_avx2.c""",
    "bench": """examples:
  nttgen bench                               # headline ops of every preset, ISAs of this CPU
  nttgen bench --ring mlkem --op all --k 2 --k 3 --k 4
  nttgen bench --ring sntrup761 --pipeline all --png bench.png
  nttgen bench --ring mlkem --isa neon       # instruction counts under QEMU""",
}


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str, what: str
) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (in 'nttgen --help'), a description and the
    examples of :data:`EXAMPLES` (in 'nttgen NAME --help')."""
    return sub.add_parser(
        name,
        help=summary,
        description=what,
        epilog=EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_runnable_isas(p: argparse.ArgumentParser) -> None:
    """--isa of the commands that run kernels (verify, bench)."""
    p.add_argument(
        "--isa",
        action="append",
        help="ISA; repeatable; all = every ISA that runs here, under QEMU included "
        "(default: those this CPU runs)",
    )


def _add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-j", "--jobs", type=int, help="rings and ISAs prepared at once (default: one per CPU)"
    )


def parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    p = Parser(
        prog="nttgen",
        description="Generate, verify and time constant-time polynomial multipliers for "
        "lattice cryptography (ML-KEM, ML-DSA, Falcon, NTRU Prime, custom rings).",
        epilog="Start with 'nttgen list', then 'nttgen bench'. 'nttgen COMMAND --help' shows "
        "each command's options and examples.",
    )
    p.add_argument("--version", action="version", version=f"nttgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    s = _command(
        sub,
        "list",
        "list ring presets, scheme names and ISAs",
        "List the ring presets of every family, the scheme names that share a preset's ring, "
        "and the ISAs with whether this CPU runs them.",
    )
    s.set_defaults(func=cmd_list)

    s = _command(
        sub,
        "generate",
        "write the C files (.h/.c/.json) of a ring",
        "Write self-contained C99 for a ring: per ISA a header, a source and a manifest, "
        "optionally an ISA-dispatching front end, and alias headers for scheme names that "
        "share the ring. Without --isa only portable C is written.",
    )
    add_ring_args(s, many=False)
    s.add_argument(
        "--presets",
        action="store_true",
        help="every preset, into OUTPUT/<ring>/ (every ISA unless --isa is given)",
    )
    s.add_argument(
        "--isa", action="append", help=f"ISA ({', '.join(ISAS)}, or all); repeatable (default c)"
    )
    s.add_argument(
        "--dispatch",
        action="store_true",
        help="also write nttgen_<ring>.h/.c: ISA-neutral entry points that pick the best of the "
        "generated ISAs at run time (implied by --presets without --isa)",
    )
    s.add_argument(
        "--prefix",
        metavar="NAME",
        help="name the files, symbols and macros NAME_<isa>..., NAME_<ISA>_... and NAME_... "
        "instead of nttgen_<ring>_<isa>... (a C identifier; e.g. mlk, PQCLEAN_MLKEM768)",
    )
    s.add_argument(
        "--policy",
        metavar="FILE",
        help="the measurements the front end's automatic choice follows (written by 'nttgen "
        "bench --policy FILE'; default: those shipped with nttgen); with --dispatch",
    )
    s.add_argument("-o", "--output", required=True, help="output directory")
    _add_jobs(s)
    s.set_defaults(func=cmd_generate)

    s = _command(
        sub,
        "verify",
        "check compiled kernels against exact arithmetic",
        "Compile each ring's kernels (generated now, or the files on disk given as PATH) and "
        "check them on random and extreme inputs against the exact product (schoolbook mod q "
        "and f) and the exact evaluator, each output against its contract, and the manifest "
        "against what nttgen generates. Exit status 1 when a check fails.",
    )
    s.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="generated files to check as they are on disk: a directory (such as generated/mlkem) "
        "or any of a file set's .h/.c/.json (default: generate the rings and check them)",
    )
    add_ring_args(s, many=True)
    _add_runnable_isas(s)
    s.add_argument("--trials", type=int, default=20, help="random inputs per check (default 20)")
    s.add_argument(
        "--each-check",
        action="store_true",
        help="one row per check (default: one row per ring and ISA, its checks named)",
    )
    s.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    _add_jobs(s)
    s.set_defaults(func=cmd_verify)

    known = list(dict.fromkeys(op for fam in FAMILIES for op in fam.ops))
    s = _command(
        sub,
        "bench",
        "time the kernels (median ticks per call)",
        "Time each kernel in a C harness (median TSC ticks of batches of calls, pinned to one "
        "CPU) with every ISA side by side and its speed-up over the portable C. ISAs of "
        "another architecture (neon, rvv...) are counted in instructions under QEMU instead.",
    )
    add_ring_args(s, many=True)
    _add_runnable_isas(s)
    s.add_argument(
        "--op",
        action="append",
        help=f"operation: {', '.join(known)} or all; repeatable (default: "
        f"{', '.join(HEADLINE_OPS)}; each ring times those it has)",
    )
    s.add_argument(
        "--k",
        type=int,
        action="append",
        help=(
            f"basemul_acc: products summed per call; ntt_vec, intt_vec: polynomials per call "
            f"(1 to {K_MAX_CLI}); repeatable (default 3)"
        ),
    )
    s.add_argument(
        "--vlen",
        type=int,
        action="append",
        help="RISC-V VLEN to count RVV at; repeatable (default: 128 and 256)",
    )
    s.add_argument("--samples", type=int, default=1000, help="timed batches (default 1000)")
    s.add_argument("--batch", type=int, default=100, help="calls per batch (default 100)")
    s.add_argument("--json", help="also write the results to this JSON file")
    s.add_argument(
        "--png", help="also write a bar chart to this PNG file (needs nttgen[plot]: matplotlib)"
    )
    s.add_argument(
        "--cc",
        action="append",
        metavar="CC",
        help="build and time every ISA with the C compiler CC (e.g. gcc, clang-19); "
        "repeatable, to time compilers side by side (default: the compiler each ISA builds "
        "best with)",
    )
    s.add_argument(
        "--compare",
        action="store_true",
        help="also print the ratios of the run: each ISA against the next narrower one, and "
        "each compiler against the first --cc",
    )
    s.add_argument(
        "--policy",
        metavar="FILE",
        help="add this CPU family's figures to the policy file FILE (created if missing; "
        "then 'nttgen generate --dispatch --policy FILE' builds a front end that follows them)",
    )
    _add_jobs(s)
    s.set_defaults(func=cmd_bench)

    s = _command(
        sub,
        "plans",
        "list the multiplication pipelines of NTRU Prime rings with op counts",
        "For NTRU Prime rings Z_q[x]/(x^p - x - 1), which have no NTT: each pipeline of ring "
        "maps that multiplies in them, with its scalar op counts, or the rule that refuses it.",
    )
    s.add_argument(
        "--ring",
        action="append",
        help=f"NTRU Prime preset ({', '.join(NTRU_PRESETS)}) or p<P>_q<Q>; repeatable "
        "(default: the presets)",
    )
    s.add_argument("--q", type=int, help="custom ring: the prime modulus q (with --f)")
    s.add_argument("--f", help="custom ring: the modulus, written 'x^p - x - 1' (with --q)")
    s.add_argument("--json", help="also write the plans and counts to this JSON file")
    s.set_defaults(func=cmd_plans)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status. With no arguments, print the help: what nttgen
    does and where to start."""
    if not (sys.argv[1:] if argv is None else argv):
        parser().print_help()
        return 0
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except NttgenError as e:
        sys.stderr.write(f"nttgen: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("nttgen: interrupted\n")
        return 130
    except Exception as e:  # a bug in nttgen: still one line, unless debugging
        if os.environ.get("NTTGEN_DEBUG"):
            raise
        sys.stderr.write(
            f"nttgen: internal error: {type(e).__name__}: {e} (set NTTGEN_DEBUG=1 for the "
            "traceback, and please report it)\n"
        )
        return 3


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
