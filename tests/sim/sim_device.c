/* sim_device.c -- initialisation, driver version, the simulated devices
 * (H100-like compute capability 9.0 parts, all alike) and error names / strings.
 *
 * SIM_DEVICES=N (1 to SIM_MAX_DEVICES, default 1) sets how many devices there
 * are.  With one device every answer is what it always was; with several, the
 * name, UUID and PCI bus id of each carry its ordinal.
 */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int initialized;
static int device_count;          /* 0: SIM_DEVICES not read yet */

int sim_device_count(void)
{
    const char *env;
    char *end;
    long n;
    if (device_count)
        return device_count;
    env = getenv("SIM_DEVICES");
    n = env && *env ? strtol(env, &end, 10) : 1;
    if (env && *env && (*end || n < 1 || n > SIM_MAX_DEVICES)) {
        fprintf(stderr, "sim: ignoring SIM_DEVICES='%s' (1..%d)\n", env, SIM_MAX_DEVICES);
        n = 1;
    }
    device_count = (int)n;
    return device_count;
}

int sim_ctx_dev(const sim_ctx *c)
{
    return c ? c->dev : 0;
}

CUresult sim_need_init(void)
{
    return initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult sim_need_device(CUdevice dev)
{
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    return dev >= 0 && dev < sim_device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult sim_api_init(unsigned int Flags)
{
    if (Flags)
        return CUDA_ERROR_INVALID_VALUE;
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult sim_api_driver_get_version(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

CUresult sim_api_device_get(CUdevice *device, int ordinal)
{
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= sim_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult sim_api_device_get_count(int *count)
{
    CUresult rc = sim_need_init();
    if (rc)
        return rc;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = sim_device_count();
    return CUDA_SUCCESS;
}

static CUresult device_string(char *out, int len, CUdevice dev, const char *value)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!out || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(out, (size_t)len, "%s", value);
    return CUDA_SUCCESS;
}

CUresult sim_api_device_get_name(char *name, int len, CUdevice dev)
{
    char value[64];
    if (sim_device_count() == 1)
        return device_string(name, len, dev, "libautograph CPU simulator (sm_90)");
    snprintf(value, sizeof value, "libautograph CPU simulator %d (sm_90)", (int)dev);
    return device_string(name, len, dev, value);
}

static int attribute(CUdevice_attribute a)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:          return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:                return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:                return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:                return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:                 return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:                 return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:                 return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:    return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:          return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:                      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:                      return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:        return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:                     return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:              return 512;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:           return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:            return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:             return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:                    return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:                     return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:              return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:        return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:                  return 52428800;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:             return 2;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:             return 1;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:        return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:       return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:       return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:    return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:      return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:       return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:                 return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:      return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:   return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:             return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:        return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:  return 32;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:         return 1;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:                 return 1;
    default:                                                 return 0;
    }
}

CUresult sim_api_device_get_attribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    *pi = attribute(attrib);
    return CUDA_SUCCESS;
}

CUresult sim_api_device_total_mem(size_t *bytes, CUdevice dev)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = SIM_TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult sim_api_device_get_uuid(CUuuid *uuid, CUdevice dev)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid->bytes, "libautograph-sim", sizeof uuid->bytes);
    if (dev > 0)
        uuid->bytes[sizeof uuid->bytes - 1] = (char)('0' + dev);   /* "...-si1" */
    return CUDA_SUCCESS;
}

CUresult sim_api_device_compute_capability(int *major, int *minor, CUdevice dev)
{
    CUresult rc = sim_need_device(dev);
    if (rc)
        return rc;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}

CUresult sim_api_device_get_pci_bus_id(char *pciBusId, int len, CUdevice dev)
{
    char value[16];
    snprintf(value, sizeof value, "0000:%02x:00.0", (unsigned)(dev + 1) & 0xffu);
    return device_string(pciBusId, len, dev, value);
}

/* ---- errors */

static const struct { CUresult code; const char *name; } error_names[] = {
#define SIM_ERR(e) { e, #e },
#include "sim_errors.h"
#undef SIM_ERR
};

static const struct { CUresult code; const char *text; } error_texts[] = {
    { CUDA_SUCCESS, "no error" },
    { CUDA_ERROR_INVALID_VALUE, "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "initialization error" },
    { CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal" },
    { CUDA_ERROR_INVALID_CONTEXT, "invalid device context" },
    { CUDA_ERROR_FILE_NOT_FOUND, "file not found" },
    { CUDA_ERROR_INVALID_HANDLE, "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "named symbol not found" },
    { CUDA_ERROR_NOT_READY, "device not ready" },
    { CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
      "part or all of the requested memory range is already mapped" },
    { CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
      "pointer does not correspond to a registered memory region" },
    { CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch" },
    { CUDA_ERROR_NOT_SUPPORTED, "operation not supported" },
    { CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
      "peer access is not supported between these two devices" },
    { CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled" },
    { CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled" },
    { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
      "operation not permitted when stream is capturing" },
    { CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
      "operation failed due to a previous error during capture" },
    { CUDA_ERROR_STREAM_CAPTURE_MERGE,
      "operation would result in a merge of separate capture sequences" },
    { CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
      "capture was not ended in the same stream as it began" },
    { CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work" },
    { CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
      "dependency created on uncaptured work in another stream" },
    { CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
      "operation would make the legacy stream depend on a capturing blocking stream" },
    { CUDA_ERROR_CAPTURED_EVENT,
      "operation not permitted on an event last recorded in a capturing stream" },
    { CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
      "attempt to terminate a thread-local capture sequence from another thread" },
    { CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
      "the graph update was not performed because it included changes which violated "
      "constraints specific to instantiated graph update" },
    { CUDA_ERROR_UNKNOWN, "unknown error" },
};

CUresult sim_api_get_error_name(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof error_names / sizeof *error_names; i++) {
        if (error_names[i].code == error) {
            *pStr = error_names[i].name;
            return CUDA_SUCCESS;
        }
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult sim_api_get_error_string(CUresult error, const char **pStr)
{
    CUresult rc = sim_api_get_error_name(error, pStr);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof error_texts / sizeof *error_texts; i++) {
        if (error_texts[i].code == error)
            *pStr = error_texts[i].text;
    }
    return CUDA_SUCCESS;
}
