/*
 * board_config.h - QEMU mps2-an500's own sizes. fw_config.h includes it (FW_BOARD_MPS2_AN500,
 * with this directory on the include path: cortex-m/CMakeLists.txt) before its defaults.
 *
 * The emulated LAN9118 holds about six full received frames in its RX FIFO and drops what does
 * not fit; every word the firmware writes into its TX FIFO is an emulated bus access. A UDP
 * client that catches up on its schedule with a burst of 64 datagrams keeps the main loop in the
 * TX path for milliseconds while frames keep arriving: in bidirectional UDP at 43 Mbit/s each
 * way the board lost 2.6-4.1 % of what the PC sent in one run of five. Two datagrams per poll let
 * the loop drain the RX FIFO between them; the client still catches up (the loop polls again at
 * once).
 */
#ifndef BOARD_CONFIG_H
#define BOARD_CONFIG_H

#define FW_IPERF_UDP_BURST_MAX 2

#endif
