"""``scripts/alveo/kernel_xml.py``: the kernel.xml that Vitis packs into the xclbin.

XRT (2.12 and later; Debian's libxrt-dev is 2.13) takes a compute unit's register window --
the offsets ``xrt::ip::read_register``/``write_register`` accept -- from the ``range`` of the
kernel's ``s_axi_control`` port in this file; it falls back to 64 KiB only when the XML is
missing (Xilinx/XRT#5401, #5428, #6113). The window must therefore span the whole register
map, TENANT block included, and the argument offsets must be the KERNEL block's registers.
"""

import importlib.util
import pathlib
import xml.etree.ElementTree as ET

from burstgate.regmap import REGMAP

_SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "alveo" / "kernel_xml.py"


def _render():
    spec = importlib.util.spec_from_file_location("kernel_xml", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ET.fromstring(module.render())


def test_control_window_spans_the_whole_register_map():
    root = _render()
    (port,) = [p for p in root.iter("port") if p.get("name") == "s_axi_control"]
    tenant = REGMAP.block("TENANT")
    span = max(b.base + b.size for b in REGMAP.blocks)
    assert int(port.get("range"), 16) == span
    assert span >= tenant.base + tenant.size > 0x10000  # beyond XRT's 64 KiB fallback


def test_argument_offsets_are_the_kernel_registers():
    kernel = REGMAP.block("KERNEL")
    args = {a.get("name"): a for a in _render().iter("arg")}
    assert int(args["desc_ring"].get("offset"), 16) == kernel.base + kernel.register("DESC_BASE_LO").offset
    assert int(args["decision_log2"].get("offset"), 16) == kernel.base + kernel.register("DECISION_LOG2").offset
    assert all(a.get("port") == ("m_axi_gmem" if a.get("addressQualifier") == "1" else "s_axi_control")
               for a in args.values())
