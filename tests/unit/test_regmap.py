"""The register map is the single source: generated files must be current, and the
description must reject what the hardware could not implement."""

import pytest

from burstgate.regmap import REGMAP, Block, Register
from burstgate.regmap.command import OUTPUTS, main, stale_files

from ..conftest import ROOT


def test_generated_files_are_current():
    stale = stale_files(ROOT)
    assert not stale, f"stale generated files {stale}: run `make regs` and commit them"


def test_check_detects_a_stale_file(tmp_path):
    assert main(["--write", str(tmp_path)]) == 0
    assert main(["--check", str(tmp_path)]) == 0
    header = tmp_path / "fw/include/burstgate/regs.h"
    header.write_text(header.read_text().replace("0x4000u", "0x4004u", 1))
    assert main(["--check", str(tmp_path)]) == 1
    assert set(OUTPUTS) >= {"fw/include/burstgate/regs.h", "docs/registers.md"}


def test_every_register_is_in_the_header_and_the_docs():
    header = (ROOT / "fw/include/burstgate/regs.h").read_text()
    docs = (ROOT / "docs/registers.md").read_text()
    for block in REGMAP.blocks:
        for reg in block.registers:
            assert f"BG_{block.name}_{reg.name}" in header
            assert f"`{reg.name}`" in docs


@pytest.mark.parametrize("kwargs,message", [
    (dict(name="x", offset=0, width=8, doc=""), "upper-case"),
    (dict(name="X", offset=2, width=8, doc=""), "word aligned"),
    (dict(name="X", offset=0, width=33, doc=""), "width"),
    (dict(name="X", offset=0, width=4, reset=16, doc=""), "does not fit"),
    (dict(name="X", offset=0, width=4, access="wo", doc=""), "access"),
    (dict(name="X", offset=0, width=4, count=3, reset=(1, 2), doc=""), "reset values"),
])
def test_register_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Register(**kwargs).resets


def test_block_validation():
    a = Register("A", 0x0, 32, doc="", count=4)
    b = Register("B", 0x8, 32, doc="")
    with pytest.raises(ValueError, match="overlap"):
        Block("T", base=0, size=0x100, doc="", registers=(a, b))
    with pytest.raises(ValueError, match="past the block"):
        Block("T", base=0, size=0x10, doc="", registers=(Register("C", 0x10, 8, doc=""),))
    with pytest.raises(ValueError, match="power of two"):
        Block("T", base=0x10, size=0x100, doc="")
