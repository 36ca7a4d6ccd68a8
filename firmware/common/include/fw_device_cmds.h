/*
 * fw_device_cmds.h - the device's own console commands: `stats [reset]` (lwIP counters, heap and
 * pools) and `restart`.
 */
#ifndef FW_DEVICE_CMDS_H
#define FW_DEVICE_CMDS_H

#include "fw_module.h"

extern const struct fw_module fw_device_module;

#endif /* FW_DEVICE_CMDS_H */
