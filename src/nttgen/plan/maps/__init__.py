"""Ring maps for NTRU Prime multipliers (Hwang, Liu, Yang: "Algorithmic Views of Vectorized
Polynomial Multipliers – NTRU Prime").

Z_q[x]/(x^p - x - 1) has no large power-of-two roots of unity, so products are computed in a larger
ring Z_q[x]/(g), deg g >= 2p - 1, split by a tree of checked ring maps down to small rings:

* :mod:`.polys`, :mod:`.modarith` -- exact polynomial and number-theory helpers over Z_q;
* :mod:`.cost`, :mod:`.ops` -- operation counts and the counted kernels on coefficient blocks;
* :mod:`.base`, :mod:`.compose` -- the :class:`RingMap` abstraction and :class:`MapTree`;
* :mod:`.blocks` -- the block algebra the block algorithms are written against, and its
  carrier on coefficient lists;
* :mod:`.dft` -- block DFTs (direct, radix 3, radix 2) over Z_q or by shifts;
* :mod:`.cooley_tukey`, :mod:`.bruun`, :mod:`.good_thomas`, :mod:`.rader`,
  :mod:`.schoenhage`, :mod:`.nussbaumer` -- one map family each; :mod:`.split` -- greedy splits;
* :mod:`.basecase` -- leaf multiplications; :mod:`.pipelines` -- the three pipelines;
  :mod:`.choose` -- which pipelines exist for (p, q).

Pure Python, exact integers; meant to be read and re-expressed as vectorised programs.
"""

from ...errors import (
    FactorisationError,
    InputShapeError,
    MapError,
    NoPipelineError,
    NoRootOfUnityError,
    NoSquareRootError,
    ParameterError,
    SizeError,
)
from .base import RingMap
from .basecase import BaseMul, ConstMul
from .bruun import BruunMap, bruun_tree
from .choose import (
    PIPELINE_NAMES,
    PipelinePlan,
    choose_pipelines,
    explain_pipelines,
    plan_pipeline,
)
from .compose import MapTree
from .cooley_tukey import CooleyTukey3Map, CooleyTukeyMap
from .cost import Cost
from .good_thomas import CyclotomicGoodThomasMap, GoodThomasMap
from .nussbaumer import NussbaumerMap
from .pipelines import Pipeline, build_pipeline, reduce_ntru
from .rader import RaderDFT
from .schoenhage import SchoenhageMap, TruncatedSchoenhageMap
from .split import auto_split

__all__ = [
    "PIPELINE_NAMES",
    "BaseMul",
    "BruunMap",
    "ConstMul",
    "CooleyTukey3Map",
    "CooleyTukeyMap",
    "Cost",
    "CyclotomicGoodThomasMap",
    "FactorisationError",
    "GoodThomasMap",
    "InputShapeError",
    "MapError",
    "MapTree",
    "NoPipelineError",
    "NoRootOfUnityError",
    "NoSquareRootError",
    "NussbaumerMap",
    "ParameterError",
    "Pipeline",
    "PipelinePlan",
    "RaderDFT",
    "RingMap",
    "SchoenhageMap",
    "SizeError",
    "TruncatedSchoenhageMap",
    "auto_split",
    "bruun_tree",
    "build_pipeline",
    "choose_pipelines",
    "explain_pipelines",
    "plan_pipeline",
    "reduce_ntru",
]
