/*
 * fw_stack_info.h - the stack configuration the firmware reports (boot banner, `version`).
 *
 * By default the values of the lwIP build (lwipopts.h through lwip/opt.h). A port whose lwIP is
 * configured elsewhere defines the FW_STACK_* macros itself (e.g. as compile definitions), such
 * as ESP-IDF, where the TCP defaults come from sdkconfig and pools are heap-allocated: a size of
 * 0 means "no fixed pool, allocated from the heap".
 */
#ifndef FW_STACK_INFO_H
#define FW_STACK_INFO_H

#include "lwip/opt.h"

#ifndef FW_STACK_TCP_MSS
#define FW_STACK_TCP_MSS TCP_MSS
#endif
#ifndef FW_STACK_TCP_WND
#define FW_STACK_TCP_WND TCP_WND
#endif
#ifndef FW_STACK_TCP_SND_BUF
#define FW_STACK_TCP_SND_BUF TCP_SND_BUF
#endif
#ifndef FW_STACK_PBUF_POOL_SIZE
#define FW_STACK_PBUF_POOL_SIZE PBUF_POOL_SIZE
#endif
#ifndef FW_STACK_MEM_SIZE
#define FW_STACK_MEM_SIZE MEM_SIZE
#endif
#ifndef FW_STACK_MEMP_NUM_TCP_SEG
#define FW_STACK_MEMP_NUM_TCP_SEG MEMP_NUM_TCP_SEG
#endif
#ifndef FW_STACK_MEMP_NUM_PBUF
#define FW_STACK_MEMP_NUM_PBUF MEMP_NUM_PBUF
#endif

#endif /* FW_STACK_INFO_H */
