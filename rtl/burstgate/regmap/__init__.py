"""The single register-map source of burstgate (docs/design.md contract 1)."""

from .burstgate_map import C, REGMAP
from .model import Block, Constant, Register, RegisterMap

__all__ = ["REGMAP", "C", "Block", "Constant", "Register", "RegisterMap"]
