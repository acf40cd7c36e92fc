"""Lane types: the signed machine words every value of a program lives in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class LaneType:
    """A signed two's-complement lane of ``bits`` bits (16 or 32)."""

    bits: int

    @property
    def beta(self) -> int:
        """The word size 2^bits: the Montgomery radix of this lane."""
        return 1 << self.bits

    @property
    def min(self) -> int:
        """The most negative representable value, -2^(bits-1)."""
        return -(1 << (self.bits - 1))

    @property
    def max(self) -> int:
        """The most positive representable value, 2^(bits-1) - 1."""
        return (1 << (self.bits - 1)) - 1

    @property
    def c_type(self) -> str:
        """The C99 type of one lane, e.g. ``int16_t``."""
        return f"int{self.bits}_t"

    @property
    def c_wide_type(self) -> str:
        """The C99 type that holds a full product of two lanes, e.g. ``int32_t``."""
        return f"int{2 * self.bits}_t"

    @property
    def c_unsigned_type(self) -> str:
        """The unsigned C99 type of one lane, used where wrap-around is intended."""
        return f"uint{self.bits}_t"

    @property
    def name(self) -> str:
        """Short name, ``i16`` or ``i32``."""
        return f"i{self.bits}"

    @property
    def wide(self) -> LaneType:
        """The double-width lane that holds an exact sum of a few products of two lanes."""
        return LaneType(2 * self.bits)

    def fits(self, lo: int, hi: int) -> bool:
        """Return whether every integer of [lo, hi] is representable in this lane."""
        return self.min <= lo and hi <= self.max

    def wrap(self, x: int) -> int:
        """Reduce the integer x to this lane's two's-complement value."""
        half = 1 << (self.bits - 1)
        return ((x + half) & (self.beta - 1)) - half


I16 = LaneType(16)
I32 = LaneType(32)

LANE_TYPES = {16: I16, 32: I32}
