"""Flat AXI port members with Vitis names (``<prefix>_awvalid``, ...).

Amaranth joins the paths of nested signatures with ``__``; Vitis and cocotbext-axi expect
``s_axi_control_awvalid``. So the top's members are flat, built here, and internal blocks take
the same names through :func:`ports`.
"""

from amaranth.lib.wiring import In, Out

__all__ = ["DATA_WIDTH", "ADDR_WIDTH", "ID_WIDTH", "axi_lite_slave", "axi_master", "ports"]

#: The master's data width: one descriptor or completion record a beat, a decision in two.
DATA_WIDTH = 128
#: Device-memory addresses are 64 bits (XRT buffer objects).
ADDR_WIDTH = 64
#: Read IDs route R beats back to the descriptor (0) or completion (1) ring reader.
ID_WIDTH = 1


def axi_lite_slave(prefix, *, addr_width):
    """Members of an AXI4-Lite slave (32-bit data), as seen by the slave."""
    return {
        f"{prefix}_awvalid": In(1), f"{prefix}_awready": Out(1), f"{prefix}_awaddr": In(addr_width),
        f"{prefix}_wvalid": In(1), f"{prefix}_wready": Out(1), f"{prefix}_wdata": In(32),
        f"{prefix}_wstrb": In(4),
        f"{prefix}_bvalid": Out(1), f"{prefix}_bready": In(1), f"{prefix}_bresp": Out(2),
        f"{prefix}_arvalid": In(1), f"{prefix}_arready": Out(1), f"{prefix}_araddr": In(addr_width),
        f"{prefix}_rvalid": Out(1), f"{prefix}_rready": In(1), f"{prefix}_rdata": Out(32),
        f"{prefix}_rresp": Out(2),
    }


def axi_master(prefix):
    """Members of an AXI4 master (INCR bursts only), as seen by the master."""
    members = {}
    for ch in ("aw", "ar"):
        members |= {
            f"{prefix}_{ch}valid": Out(1), f"{prefix}_{ch}ready": In(1),
            f"{prefix}_{ch}addr": Out(ADDR_WIDTH), f"{prefix}_{ch}len": Out(8),
            f"{prefix}_{ch}size": Out(3), f"{prefix}_{ch}burst": Out(2),
            f"{prefix}_{ch}id": Out(ID_WIDTH),
        }
    members |= {
        f"{prefix}_wvalid": Out(1), f"{prefix}_wready": In(1), f"{prefix}_wdata": Out(DATA_WIDTH),
        f"{prefix}_wstrb": Out(DATA_WIDTH // 8), f"{prefix}_wlast": Out(1),
        f"{prefix}_bvalid": In(1), f"{prefix}_bready": Out(1), f"{prefix}_bresp": In(2),
        f"{prefix}_bid": In(ID_WIDTH),
        f"{prefix}_rvalid": In(1), f"{prefix}_rready": Out(1), f"{prefix}_rdata": In(DATA_WIDTH),
        f"{prefix}_rresp": In(2), f"{prefix}_rlast": In(1), f"{prefix}_rid": In(ID_WIDTH),
    }
    return members


class ports:
    """``ports(component, "s_axi_control").awvalid`` is ``component.s_axi_control_awvalid``."""

    def __init__(self, component, prefix):
        self._c, self._p = component, prefix

    def __getattr__(self, name):
        return getattr(self._c, f"{self._p}_{name}")
