/* fw_fault_hooks.c - the port's planted-defect hooks (fw_fault_hooks.h). Pure C without lwIP, so
 * that the parts built into the lwIP library (fw_tcp_guard.c) reach them too. */
#include "fw_fault_hooks.h"

#include <stddef.h>

static const struct fw_fault_hooks *fault_hooks;

void fw_app_set_fault_hooks(const struct fw_fault_hooks *hooks)
{
    fault_hooks = hooks;
}

const struct fw_fault_hooks *fw_app_fault_hooks(void)
{
    return fault_hooks;
}

bool fw_guard_on(enum fw_guard guard)
{
    return fault_hooks == NULL || fault_hooks->guard_off == NULL || !fault_hooks->guard_off(guard);
}
