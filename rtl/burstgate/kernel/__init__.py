"""The Vitis RTL kernel shell around the datapath: AXI4-Lite control, ring engines in device
memory over one AXI4 master, and the ``bg_kernel`` top with flat Vitis port names."""

from .top import BgKernel, DatapathSignature

__all__ = ["BgKernel", "DatapathSignature"]
