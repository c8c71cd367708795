"""Data types of the register-map description.

The description is plain data; generators (:mod:`.gen_c`, :mod:`.gen_md`) and the CSR block
(:mod:`burstgate.csr`) read it. Nothing here knows about Amaranth or C.
"""

from dataclasses import dataclass, field

__all__ = ["Constant", "Register", "Block", "RegisterMap"]

_ACCESS = ("rw", "ro")
_STORAGE = ("flop", "external")


@dataclass(frozen=True)
class Constant:
    """A named integer fact shared by the gateware, the firmware and the model."""
    name: str
    value: int
    doc: str


@dataclass(frozen=True)
class Register:
    """One 32-bit register, or an array of ``count`` registers ``stride`` bytes apart.

    Parameters
    ----------
    name : str
        Upper-case identifier; the C header names it ``BG_<BLOCK>_<NAME>``.
    offset : int
        Byte offset of element 0 from the start of its block; a multiple of 4.
    width : int
        Implemented bits (1..32), right-aligned. Writes keep ``value & (2**width - 1)``.
    access : str
        ``"rw"`` or ``"ro"``. Writes to ``ro`` registers are ignored.
    reset : int or tuple of int
        Reset value (per element for arrays).
    storage : str
        ``"flop"``: the CSR block holds the value and drives it as an output port.
        ``"external"``: the owner of the block stores it (e.g. in block RAM) and the CSR
        block forwards index, write data and write/read strobes to it.
    doc : str
        What the register means, its unit and format.
    """
    name: str
    offset: int
    width: int
    doc: str
    access: str = "rw"
    reset: int | tuple = 0
    count: int = 1
    stride: int = 4
    storage: str = "flop"

    def __post_init__(self):
        if not self.name.isidentifier() or not self.name.isupper():
            raise ValueError(f"register name must be an upper-case identifier, not {self.name!r}")
        if self.offset % 4:
            raise ValueError(f"{self.name}: offset must be word aligned, not {self.offset:#x}")
        if not 1 <= self.width <= 32:
            raise ValueError(f"{self.name}: width must be 1..32, not {self.width!r}")
        if self.access not in _ACCESS:
            raise ValueError(f"{self.name}: access must be one of {_ACCESS}, not {self.access!r}")
        if self.storage not in _STORAGE:
            raise ValueError(f"{self.name}: storage must be one of {_STORAGE}, not {self.storage!r}")
        if self.count < 1 or self.stride < 4 or self.stride % 4:
            raise ValueError(f"{self.name}: bad count/stride {self.count}/{self.stride}")
        for value in self.resets:
            if not 0 <= value < (1 << self.width):
                raise ValueError(f"{self.name}: reset {value:#x} does not fit {self.width} bits")

    @property
    def resets(self):
        """Reset value of every element."""
        if isinstance(self.reset, tuple):
            if len(self.reset) != self.count:
                raise ValueError(f"{self.name}: {len(self.reset)} reset values for {self.count} elements")
            return self.reset
        return (self.reset,) * self.count

    @property
    def mask(self):
        return (1 << self.width) - 1

    @property
    def size(self):
        """Bytes the register (array) spans."""
        return (self.count - 1) * self.stride + 4

    def element_offsets(self):
        return [self.offset + i * self.stride for i in range(self.count)]


@dataclass(frozen=True)
class Block:
    """A group of registers owned by one gateware block, at ``base`` in the kernel's space."""
    name: str
    base: int
    size: int
    doc: str
    registers: tuple = field(default_factory=tuple)

    def __post_init__(self):
        if self.size & (self.size - 1) or self.base % self.size:
            raise ValueError(f"block {self.name}: size must be a power of two and base aligned to it")
        spans = sorted((r.offset, r.offset + r.size, r.name) for r in self.registers)
        for (lo0, hi0, n0), (lo1, _hi1, n1) in zip(spans, spans[1:]):
            if lo1 < hi0:
                raise ValueError(f"block {self.name}: {n0} and {n1} overlap")
        if spans and spans[-1][1] > self.size:
            raise ValueError(f"block {self.name}: {spans[-1][2]} lies past the block's end")
        for r in self.registers:
            if r.storage == "external" and r.stride != 4:
                raise ValueError(f"{r.name}: external arrays must be dense (stride 4)")

    def register(self, name):
        for r in self.registers:
            if r.name == name:
                return r
        raise KeyError(f"block {self.name} has no register {name!r}")


@dataclass(frozen=True)
class RegisterMap:
    name: str
    version: int
    constants: tuple
    blocks: tuple

    def __post_init__(self):
        spans = sorted((b.base, b.base + b.size, b.name) for b in self.blocks)
        for (lo0, hi0, n0), (lo1, _hi1, n1) in zip(spans, spans[1:]):
            if lo1 < hi0:
                raise ValueError(f"blocks {n0} and {n1} overlap")

    def block(self, name):
        for b in self.blocks:
            if b.name == name:
                return b
        raise KeyError(f"register map has no block {name!r}")

    def constant(self, name):
        for c in self.constants:
            if c.name == name:
                return c.value
        raise KeyError(f"register map has no constant {name!r}")
