/* sim_launch.c -- kernel launches: cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel (and their _ptsz twins), the pre-4.0 launch API
 * (cuFuncSetBlockShape, cuParamSet*, cuLaunch, cuLaunchGrid[Async]), and
 * argument packing from kernelParams or an `extra` buffer into the kernel's
 * parameter layout.  Validation follows the driver: a zero dimension, a block
 * of more than 1024 threads or too much shared memory is
 * CUDA_ERROR_INVALID_VALUE; an unknown function is CUDA_ERROR_INVALID_HANDLE, and
 * so is a function of one context launched into a stream of another (a library's
 * context-less kernels run in the stream's context).
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

static CUresult check_dims(const sim_func *f, const unsigned g[3], const unsigned b[3],
                           unsigned smem)
{
    if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2])
        return CUDA_ERROR_INVALID_VALUE;
    if (b[0] > 1024 || b[1] > 1024 || b[2] > 64 ||
        (unsigned long long)b[0] * b[1] * b[2] > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (g[0] > 2147483647u || g[1] > 65535 || g[2] > 65535)
        return CUDA_ERROR_INVALID_VALUE;
    if (smem > (unsigned)f->max_dynamic_smem)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult pack_extra(const sim_kernel *k, void **extra, unsigned char *buf)
{
    const void *ptr = NULL;
    size_t size = 0;
    int have_size = 0;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
            ptr = extra[i + 1];
        } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
            if (!extra[i + 1])
                return CUDA_ERROR_INVALID_VALUE;
            size = *(const size_t *)extra[i + 1];
            have_size = 1;
        } else {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (!k->args_size)
        return CUDA_SUCCESS;
    if (!ptr || !have_size || size < k->args_size)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(buf, ptr, k->args_size);
    return CUDA_SUCCESS;
}

static CUresult sim_kernel_pack(sim_func *f, void **params, void **extra, unsigned char **out)
{
    const sim_kernel *k = f->k;
    unsigned char *buf = sim_xcalloc(1, k->args_size);
    CUresult rc = CUDA_SUCCESS;

    if (params && extra) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (params) {
        for (int i = 0; i < k->nparams && !rc; i++) {
            if (!params[i])
                rc = CUDA_ERROR_INVALID_VALUE;
            else
                memcpy(buf + k->offsets[i], params[i], k->sizes[i]);
        }
    } else if (extra) {
        rc = pack_extra(k, extra, buf);
    } else if (k->nparams) {
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return CUDA_SUCCESS;
}

CUresult sim_launch_op(sim_func *f, const unsigned grid[3], const unsigned block[3],
                       unsigned smem, void **params, void **extra, sim_op *op)
{
    CUresult rc;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if ((rc = check_dims(f, grid, block, smem)) != CUDA_SUCCESS)
        return rc;
    memset(op, 0, sizeof *op);
    op->kind = SIM_OP_KERNEL;
    op->dev1 = f->o.ctx ? f->o.ctx->dev + 1 : 0;
    op->u.k.fn = f;
    op->u.k.kern = f->k;
    memcpy(op->u.k.grid, grid, sizeof op->u.k.grid);
    memcpy(op->u.k.block, block, sizeof op->u.k.block);
    op->u.k.smem = smem;
    return sim_kernel_pack(f, params, extra, &op->u.k.args);
}

static CUresult launch(CUfunction h, const unsigned g[3], const unsigned b[3], unsigned smem,
                       CUstream hs, void **params, void **extra, int cooperative)
{
    sim_func *f;
    sim_stream *s;
    sim_op op;
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    if (!(f = sim_func_check(h)))
        return CUDA_ERROR_INVALID_HANDLE;
    if ((rc = sim_stream_resolve(hs, &s)) != CUDA_SUCCESS)
        return rc;
    if (f->o.ctx && f->o.ctx != s->o.ctx)
        return CUDA_ERROR_INVALID_HANDLE;
    if ((rc = sim_launch_op(f, g, b, smem, params, extra, &op)) != CUDA_SUCCESS)
        return rc;
    if (cooperative) {
        unsigned long long blocks = (unsigned long long)g[0] * g[1] * g[2];
        unsigned per_sm = 2048 / (b[0] * b[1] * b[2]);
        if (blocks > 132ULL * (per_sm > 32 ? 32 : per_sm ? per_sm : 1)) {
            sim_op_release(&op);
            return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
        }
    }
    sim_pace_launch();
    return sim_submit(s, &op, 0);
}

CUresult sim_api_launch_kernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                               unsigned int gridDimZ, unsigned int blockDimX,
                               unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream,
                               void **kernelParams, void **extra)
{
    const unsigned g[3] = { gridDimX, gridDimY, gridDimZ };
    const unsigned b[3] = { blockDimX, blockDimY, blockDimZ };
    return launch(f, g, b, sharedMemBytes, hStream, kernelParams, extra, 0);
}

CUresult sim_api_launch_cooperative_kernel(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams)
{
    const unsigned g[3] = { gridDimX, gridDimY, gridDimZ };
    const unsigned b[3] = { blockDimX, blockDimY, blockDimZ };
    return launch(f, g, b, sharedMemBytes, hStream, kernelParams, NULL, 1);
}

/* Launch attributes are accepted and ignored once they make sense. */
static CUresult check_attributes(const CUlaunchConfig *c, int *cooperative)
{
    if (c->numAttrs && !c->attrs)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *a = &c->attrs[i];
        if ((int)a->id < 0 || a->id > CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING)
            return CUDA_ERROR_INVALID_VALUE;
        if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            *cooperative = a->value.cooperative != 0;
        if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            unsigned x = a->value.clusterDim.x, y = a->value.clusterDim.y,
                     z = a->value.clusterDim.z;
            if (!x || !y || !z || x * y * z > 16 || c->gridDimX % x || c->gridDimY % y ||
                c->gridDimZ % z)
                return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        }
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_launch_kernel_ex(const CUlaunchConfig *config, CUfunction f,
                                  void **kernelParams, void **extra)
{
    int cooperative = 0;
    CUresult rc;
    if (!config)
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_attributes(config, &cooperative)) != CUDA_SUCCESS)
        return rc;
    const unsigned g[3] = { config->gridDimX, config->gridDimY, config->gridDimZ };
    const unsigned b[3] = { config->blockDimX, config->blockDimY, config->blockDimZ };
    return launch(f, g, b, config->sharedMemBytes, config->hStream, kernelParams, extra,
                  cooperative);
}

/* ---- the pre-4.0 launch API: block shape and parameters live on the function */

static CUresult legacy_func(CUfunction h, sim_func **out)
{
    CUresult rc = sim_need_ctx(NULL);
    if (rc)
        return rc;
    *out = sim_func_check(h);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult sim_api_func_set_block_shape(CUfunction hfunc, int x, int y, int z)
{
    sim_func *f;
    CUresult rc = legacy_func(hfunc, &f);
    if (rc)
        return rc;
    if (x <= 0 || y <= 0 || z <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    f->block[0] = (unsigned)x, f->block[1] = (unsigned)y, f->block[2] = (unsigned)z;
    return CUDA_SUCCESS;
}

CUresult sim_api_func_set_shared_size(CUfunction hfunc, unsigned int bytes)
{
    sim_func *f;
    CUresult rc = legacy_func(hfunc, &f);
    if (rc == CUDA_SUCCESS)
        f->smem = bytes;
    return rc;
}

CUresult sim_api_param_set_size(CUfunction hfunc, unsigned int numbytes)
{
    sim_func *f;
    CUresult rc = legacy_func(hfunc, &f);
    if (rc)
        return rc;
    f->pbuf = sim_xrealloc(f->pbuf, numbytes + 1);
    if (numbytes > f->psize)
        memset(f->pbuf + f->psize, 0, numbytes - f->psize);
    f->psize = numbytes;
    return CUDA_SUCCESS;
}

CUresult sim_api_param_setv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes)
{
    sim_func *f;
    CUresult rc = legacy_func(hfunc, &f);
    if (rc)
        return rc;
    if (offset < 0 || !ptr || (size_t)offset + numbytes > f->psize)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(f->pbuf + offset, ptr, numbytes);
    return CUDA_SUCCESS;
}

CUresult sim_api_param_seti(CUfunction hfunc, int offset, unsigned int value)
{
    return sim_api_param_setv(hfunc, offset, &value, sizeof value);
}

CUresult sim_api_param_setf(CUfunction hfunc, int offset, float value)
{
    return sim_api_param_setv(hfunc, offset, &value, sizeof value);
}

CUresult sim_api_launch_grid_async(CUfunction f, int grid_width, int grid_height,
                                   CUstream hStream)
{
    sim_func *fn;
    CUresult rc = legacy_func(f, &fn);
    if (rc)
        return rc;
    if (grid_width <= 0 || grid_height <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned g[3] = { (unsigned)grid_width, (unsigned)grid_height, 1 };
    const unsigned b[3] = { fn->block[0], fn->block[1], fn->block[2] };
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, fn->pbuf, CU_LAUNCH_PARAM_BUFFER_SIZE,
                      &fn->psize, CU_LAUNCH_PARAM_END };
    return launch(f, g, b, fn->smem, hStream, NULL, extra, 0);
}

CUresult sim_api_launch_grid(CUfunction f, int grid_width, int grid_height)
{
    return sim_api_launch_grid_async(f, grid_width, grid_height, NULL);
}

CUresult sim_api_launch(CUfunction f)
{
    return sim_api_launch_grid_async(f, 1, 1, NULL);
}
