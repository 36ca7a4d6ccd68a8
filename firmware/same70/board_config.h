/*
 * board_config.h - the SAME70 Xplained's own static sizes: its drivers' rings (gmac.c, board.c)
 * and lwIP pools for its RAM. fw_config.h includes it (FW_BOARD_SAME70_XPLAINED, with this
 * directory on the include path: cortex-m/CMakeLists.txt) before its defaults, which these
 * override.
 *
 * ATSAME70Q21B, 384 KB SRAM: 64 KB non-cacheable GMAC region (the rings below), >= 16 KB stack,
 * lwIP and the application in the rest (linker.ld).
 */
#ifndef BOARD_CONFIG_H
#define BOARD_CONFIG_H

/* ---- lwIP memory (smaller than the host's defaults) ----------------------------------------- */
#ifndef FW_MEM_SIZE
#define FW_MEM_SIZE (64 * 1024)
#endif
#ifndef FW_PBUF_POOL_SIZE
#define FW_PBUF_POOL_SIZE 64
#endif
#ifndef FW_MEMP_NUM_TCP_SEG
#define FW_MEMP_NUM_TCP_SEG 128
#endif
#ifndef FW_MEMP_NUM_PBUF
#define FW_MEMP_NUM_PBUF 128
#endif

/* ---- GMAC rings (gmac.c) ----------------------------------------------------------------------- */
#define FW_GMAC_RX_DESCS 32   /* receive descriptors, one buffer each: ~3.9 ms of full frames at 100 Mbit/s */
#define FW_GMAC_TX_DESCS 8    /* transmit descriptors, one buffer each */
#define FW_GMAC_BUF_SIZE 1536 /* one whole frame per buffer; a multiple of 64 (GMAC DCFGR.DRBS) */

/* ---- Console USART rings (board.c) ------------------------------------------------------------- */
#define FW_USART_RX_RING 512  /* console receive ring (bytes, power of two) */
#define FW_USART_TX_RING 4096 /* console transmit ring (bytes, power of two) */

#endif /* BOARD_CONFIG_H */
