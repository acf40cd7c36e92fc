"""The algebra: arithmetic constants, NTT twiddles and data layouts, all computed and checked at
generation time by readable code."""
