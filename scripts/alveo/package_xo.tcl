# Package bg_kernel.v as a Vitis RTL kernel (.xo). Run by build_xclbin.sh:
#   vivado -mode batch -source package_xo.tcl -tclargs XO VERILOG KERNEL_XML XDC PART WORKDIR
# The kernel is user-managed (hwControlProtocol in kernel.xml): the host starts it with
# KERNEL.CTRL.AP_START through xrt::ip, and it runs until stopped.
if {[llength $argv] != 6} {
    error "usage: package_xo.tcl XO VERILOG KERNEL_XML XDC PART WORKDIR"
}
lassign $argv xo verilog kernel_xml xdc part workdir

create_project -force bg_kernel_pack $workdir/pack -part $part
add_files -norecurse $verilog
add_files -fileset constrs_1 -norecurse $xdc
set_property top bg_kernel [current_fileset]
update_compile_order -fileset sources_1

ipx::package_project -root_dir $workdir/ip -vendor burstgate.org -library kernel \
    -taxonomy /KernelIP -import_files -set_current false
ipx::unload_core $workdir/ip/component.xml
ipx::edit_ip_in_project -upgrade true -name bg_kernel_edit -directory $workdir/ip \
    $workdir/ip/component.xml
set core [ipx::current_core]
set_property core_revision 1 $core

# Vivado infers s_axi_control, m_axi_gmem, ap_clk, ap_rst_n from the port names; tie the
# interfaces to the kernel clock and declare the interrupt.
ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk $core
ipx::associate_bus_interfaces -busif m_axi_gmem -clock ap_clk $core
ipx::infer_bus_interface interrupt xilinx.com:signal:interrupt_rtl:1.0 $core

set_property sdx_kernel true $core
set_property sdx_kernel_type rtl $core
set_property ipi_drc {ignore_freq_hz true} $core
set_property vitis_drc {ctrl_protocol user_managed} $core
ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity -kernel $core
ipx::save_core $core
close_project -delete

package_xo -force -xo_path $xo -kernel_name bg_kernel -ip_directory $workdir/ip \
    -kernel_xml $kernel_xml
