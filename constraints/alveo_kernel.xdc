# Out-of-context constraints packaged with bg_kernel (scripts/alveo/package_xo.tcl). The
# platform supplies ap_clk's period (kernel_frequency in scripts/alveo/*.cfg) and places the
# kernel (slr= in the same files); what is left is the kernel's own structure.

# ap_rst_n is synchronous and reaches every register of the datapath (1024 tenants' state):
# let Vivado replicate it rather than route one net across the SLR.
set_property MAX_FANOUT 256 [get_nets -quiet -hierarchical -filter {NAME =~ *rst*}]

# The ring FIFOs and the descriptor/decision staging are distributed or block RAM by depth;
# keep the 256-bit decision FIFO in block RAM (it sits on the AXI write path).
set_property RAM_STYLE block [get_cells -quiet -hierarchical -filter {NAME =~ *decision_writer/fifo/*storage*}]
