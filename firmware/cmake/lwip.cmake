# lwIP 2.1.3, fetched and verified at configure time by tools/fetch-lwip.sh (never committed).
set(FW_LWIP_DIR "${CMAKE_CURRENT_LIST_DIR}/../.deps/lwip-2.1.3" CACHE PATH "lwIP source tree (fetched if missing)")
get_filename_component(FW_LWIP_DIR "${FW_LWIP_DIR}" ABSOLUTE)

execute_process(
  COMMAND "${CMAKE_CURRENT_LIST_DIR}/../tools/fetch-lwip.sh" "${FW_LWIP_DIR}"
  RESULT_VARIABLE _lwip_fetch_result)
if(NOT _lwip_fetch_result EQUAL 0)
  message(FATAL_ERROR "lwIP could not be fetched and verified (see the fetch-lwip messages above)")
endif()

# The parts of lwIP the firmware uses: core, IPv4, Ethernet/ARP. No apps, no sockets.
set(_core "${FW_LWIP_DIR}/src/core")
set(FW_LWIP_SOURCES
  ${_core}/init.c ${_core}/def.c ${_core}/inet_chksum.c ${_core}/ip.c ${_core}/mem.c ${_core}/memp.c
  ${_core}/netif.c ${_core}/pbuf.c ${_core}/raw.c ${_core}/stats.c ${_core}/sys.c ${_core}/tcp.c
  ${_core}/tcp_in.c ${_core}/tcp_out.c ${_core}/timeouts.c ${_core}/udp.c
  ${_core}/ipv4/etharp.c ${_core}/ipv4/icmp.c ${_core}/ipv4/ip4.c ${_core}/ipv4/ip4_addr.c
  ${_core}/ipv4/ip4_frag.c
  "${FW_LWIP_DIR}/src/netif/ethernet.c")
set(FW_LWIP_INCLUDE_DIR "${FW_LWIP_DIR}/src/include")

# The layer-2 bridge variants (FW_IS_BRIDGE) add lwIP's bridgeif; its learning FDB is the
# project's own static table (common/src/fw_bridge_fdb.c), so bridgeif_fdb.c is not built.
if(FW_IS_BRIDGE)
  list(APPEND FW_LWIP_SOURCES "${FW_LWIP_DIR}/src/netif/bridgeif.c")
endif()
