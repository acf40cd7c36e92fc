"""Which reduction each function of an x^n + 1 kernel set takes: Barrett's exact one or the
lazy policy's coarse one (``BuildConfig.coarse_reductions``), by building it both ways and
keeping the cheaper (docs/reductions.md)."""

from __future__ import annotations

from collections.abc import Callable

from ..dsl.ir import Function
from ..errors import BoundsError
from ..interp.cost import rank
from .build_config import BuildConfig

Range = tuple[int, int]


class ReductionChoice:
    """Mixed into :class:`~nttgen.programs.kernels.KernelSet`: its builders read ``_coarse``
    (whether the lazy policy may reduce coarsely in the function now being built)."""

    config: BuildConfig
    _coarse: bool

    def _owed(self, op: str, buffer: str) -> Range | None:
        raise NotImplementedError

    def _either_reduction(
        self, build: Callable[[], Function], feeds: bool = True, owed: Range | None = None
    ) -> Function:
        """``build()`` with Barrett's exact reductions and, where the configuration allows
        ``coarse_reductions``, with the lazy policy's coarse ones too: the cheaper of the two
        (:func:`nttgen.interp.cost.rank`; the exact one on a tie). A coarse result is wider,
        so the analysis may place more of them (the forward NTTs, which owe the products a
        narrow range, mostly keep Barrett's) or refuse the build. Where the function
        ``feeds`` the set's later builds (they read its output ranges: the forward NTT, the
        products, the cache), the coarse build is kept only if its outputs stay within the
        exact build's or the contract's (``owed``: the range the contract holds its output
        to, where the function is not an entry point itself)."""
        exact = build()
        exact.info["coarse"] = False
        if not self.config.coarse_reductions:
            return exact
        coarse = self._built_with(True, build)
        if coarse is None:
            return exact
        if (feeds and not self._within(coarse, exact, owed)) or rank(coarse) >= rank(exact):
            return exact
        return coarse

    def _built_with(self, coarse: bool, build: Callable[[], Function]) -> Function | None:
        """``build()`` with the coarse reductions allowed or not (``info["coarse"]`` records
        which), None where the analysis refuses it."""
        self._coarse = coarse
        try:
            fn = build()
        except BoundsError:
            return None
        finally:
            self._coarse = False
        fn.info["coarse"] = coarse
        return fn

    def _within(self, fn: Function, exact: Function, owed: Range | None) -> bool:
        """Whether every output of ``fn`` lies in ``exact``'s range for it joined with the
        range the contract allows there (``owed``, else the contract's for ``fn``)."""
        for buf, (lo, hi) in fn.contract.outputs.items():
            allowed = exact.contract.outputs[buf]
            limit = owed or self._owed(fn.name, buf)
            if limit is not None:
                allowed = (min(allowed[0], limit[0]), max(allowed[1], limit[1]))
            if lo < allowed[0] or hi > allowed[1]:
                return False
        return True
