/* The common application's modules, in console (help) order: a new module is one line here. */
#include "fw_module.h"

#include "fw_device_cmds.h"
#include "iperf.h"
#include "ping.h"
#include "serial_xfer.h"
#include "stream.h"

const struct fw_module *const fw_common_modules[] = {
    &iperf_module,
    &ping_module,
    &stream_module,
    &serial_xfer_module,
    &fw_device_module,
};

const size_t fw_common_module_count = sizeof fw_common_modules / sizeof fw_common_modules[0];
