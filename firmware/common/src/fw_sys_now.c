/* fw_sys_now.c - lwIP's clock for NO_SYS=1 ports, from the port's microsecond clock. */
#include "fw_platform.h"
#include "lwip/sys.h"

u32_t sys_now(void)
{
    return (u32_t)(fw_platform_time_us() / 1000u);
}
