/* sim_copy.c -- memory copies and memsets: every cuMemcpy* / cuMemset*
 * export (synchronous and Async, 1-D, 2-D, 3-D, peer) becomes one MEMCPY or
 * MEMSET operation submitted to a stream, and the conversions from the
 * CUDA_MEMCPY2D / CUDA_MEMCPY3D / CUDA_MEMSET_NODE_PARAMS structures that
 * explicit graph nodes share.  The device side of an operation must lie inside
 * one allocation (CUDA_ERROR_INVALID_VALUE otherwise); arrays are not simulated.
 * Addressing is unified: any copy may join two devices (the log calls a
 * device-to-device copy between two devices PtoP), on a stream of either or
 * of a third, without peer access.  cuMemcpyPeer's pointers must lie on the
 * devices of the contexts it names.
 */
#include "sim_internal.h"

#include <string.h>

/* dev: 1 must be device-side (inside an allocation), 0 host, -1 inferred */
static CUresult check_side(uintptr_t p, size_t n, int dev)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev == 1 || (dev < 0 && sim_mem_find(p)))
        return sim_mem_check_range(p, n);
    return CUDA_SUCCESS;
}

static CUresult sim_copy_1d(CUstream h, uintptr_t dst, uintptr_t src, size_t n,
                            int dst_dev, int src_dev, int sync)
{
    sim_stream *s;
    sim_op op = { .kind = SIM_OP_MEMCPY };
    CUresult rc = sim_stream_resolve(h, &s);
    if (rc || !n)
        return rc;
    if ((rc = check_side(dst, n, dst_dev)) || (rc = check_side(src, n, src_dev)))
        return rc;
    op.u.cpy = (struct sim_cpy){ .dst = dst, .src = src, .width = n, .height = 1, .depth = 1,
                                 .dpitch = n, .spitch = n, .dheight = 1, .sheight = 1 };
    return sim_submit(s, &op, sync);
}

static CUresult set_op(sim_op *op, uintptr_t dst, size_t pitch, unsigned value, unsigned elem,
                       size_t width, size_t height)
{
    size_t row = width * elem;
    CUresult rc;
    if (elem != 1 && elem != 2 && elem != 4)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dst || dst % elem || !height || (height > 1 && pitch < row))
        return CUDA_ERROR_INVALID_VALUE;
    if (width && (rc = sim_mem_check_range(dst, (height - 1) * pitch + row)) != CUDA_SUCCESS)
        return rc;
    op->kind = SIM_OP_MEMSET;
    op->u.set = (struct sim_set){ .dst = dst, .pitch = height > 1 ? pitch : row,
                                  .width = width, .height = height, .value = value,
                                  .elem = elem };
    return CUDA_SUCCESS;
}

static CUresult sim_set_2d(CUstream h, uintptr_t dst, size_t pitch, unsigned value,
                           unsigned elem, size_t width, size_t height, int sync)
{
    sim_stream *s;
    sim_op op = { 0 };
    CUresult rc = sim_stream_resolve(h, &s);
    if (rc || !width)
        return rc;
    if ((rc = set_op(&op, dst, pitch, value, elem, width, height)) != CUDA_SUCCESS)
        return rc;
    return sim_submit(s, &op, sync);
}

CUresult sim_op_from_memset_params(sim_op *op, const CUDA_MEMSET_NODE_PARAMS *p)
{
    if (!p || !p->width)
        return CUDA_ERROR_INVALID_VALUE;
    return set_op(op, (uintptr_t)p->dst, p->pitch, p->value, p->elementSize, p->width,
                  p->height);
}

/* ---- CUDA_MEMCPY3D (and 2-D through it) */

static CUresult locate(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array,
                       size_t offset, size_t span, uintptr_t *out)
{
    uintptr_t base;
    int device = type == CU_MEMORYTYPE_DEVICE ? 1 : type == CU_MEMORYTYPE_UNIFIED ? -1 : 0;
    if (type == CU_MEMORYTYPE_ARRAY || array)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE &&
        type != CU_MEMORYTYPE_UNIFIED)
        return CUDA_ERROR_INVALID_VALUE;
    base = type == CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)dev;
    if (!base)
        return CUDA_ERROR_INVALID_VALUE;
    *out = base + offset;
    return span ? check_side(*out, span, device) : CUDA_SUCCESS;
}

CUresult sim_op_from_memcpy3d(sim_op *op, const CUDA_MEMCPY3D *p)
{
    size_t w, h, d, sp, dp, sh, dh;
    uintptr_t src, dst;
    CUresult rc;
    if (!p || !p->Height || !p->Depth)
        return CUDA_ERROR_INVALID_VALUE;
    w = p->WidthInBytes, h = p->Height, d = p->Depth;
    sp = p->srcPitch ? p->srcPitch : w;
    dp = p->dstPitch ? p->dstPitch : w;
    sh = p->srcHeight ? p->srcHeight : h;
    dh = p->dstHeight ? p->dstHeight : h;
    if ((h > 1 || d > 1) && (sp < w || dp < w))
        return CUDA_ERROR_INVALID_VALUE;
    if (d > 1 && (sh < h || dh < h))
        return CUDA_ERROR_INVALID_VALUE;
    rc = locate(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
                p->srcXInBytes + (p->srcZ * sh + p->srcY) * sp,
                w ? ((d - 1) * sh + h - 1) * sp + w : 0, &src);
    if (rc == CUDA_SUCCESS)
        rc = locate(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray,
                    p->dstXInBytes + (p->dstZ * dh + p->dstY) * dp,
                    w ? ((d - 1) * dh + h - 1) * dp + w : 0, &dst);
    if (rc)
        return rc;
    op->kind = SIM_OP_MEMCPY;
    op->u.cpy = (struct sim_cpy){ .dst = dst, .src = src, .width = w, .height = h, .depth = d,
                                  .dpitch = dp, .spitch = sp, .dheight = dh, .sheight = sh };
    return CUDA_SUCCESS;
}

static CUresult copy_3d(const CUDA_MEMCPY3D *p, CUstream h, int sync)
{
    sim_stream *s;
    sim_op op = { 0 };
    CUresult rc = sim_stream_resolve(h, &s);
    if (rc || (rc = sim_op_from_memcpy3d(&op, p)) != CUDA_SUCCESS)
        return rc;
    return op.u.cpy.width ? sim_submit(s, &op, sync) : CUDA_SUCCESS;
}

static CUresult copy_2d(const CUDA_MEMCPY2D *p, CUstream h, int sync)
{
    CUDA_MEMCPY3D q;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    memset(&q, 0, sizeof q);
    q.srcXInBytes = p->srcXInBytes, q.srcY = p->srcY, q.srcMemoryType = p->srcMemoryType;
    q.srcHost = p->srcHost, q.srcDevice = p->srcDevice, q.srcArray = p->srcArray;
    q.srcPitch = p->srcPitch;
    q.dstXInBytes = p->dstXInBytes, q.dstY = p->dstY, q.dstMemoryType = p->dstMemoryType;
    q.dstHost = p->dstHost, q.dstDevice = p->dstDevice, q.dstArray = p->dstArray;
    q.dstPitch = p->dstPitch;
    q.WidthInBytes = p->WidthInBytes, q.Height = p->Height, q.Depth = 1;
    return copy_3d(&q, h, sync);
}

/* ---- the exports: one shared body each for the sync and Async forms, for the
 * modern ABI and the pre-3.2 one (32-bit CUdeviceptr_v1 and sizes) */

#define SIM_COPY_FNS(name, dst_t, src_t, count_t, ddev, sdev)                           \
    CUresult name(dst_t dst, src_t src, count_t n)                                      \
    {                                                                                   \
        return sim_copy_1d(NULL, (uintptr_t)dst, (uintptr_t)src, n, ddev, sdev, 1);     \
    }                                                                                   \
    CUresult name##_async(dst_t dst, src_t src, count_t n, CUstream h)                  \
    {                                                                                   \
        return sim_copy_1d(h, (uintptr_t)dst, (uintptr_t)src, n, ddev, sdev, 0);        \
    }
SIM_COPY_FNS(sim_api_memcpy_htod, CUdeviceptr, const void *, size_t, 1, 0)
SIM_COPY_FNS(sim_api_memcpy_dtoh, void *, CUdeviceptr, size_t, 0, 1)
SIM_COPY_FNS(sim_api_memcpy_dtod, CUdeviceptr, CUdeviceptr, size_t, 1, 1)
SIM_COPY_FNS(sim_api_memcpy, CUdeviceptr, CUdeviceptr, size_t, -1, -1)
SIM_COPY_FNS(sim_api_v1_memcpy_htod, CUdeviceptr_v1, const void *, unsigned int, 1, 0)
SIM_COPY_FNS(sim_api_v1_memcpy_dtoh, void *, CUdeviceptr_v1, unsigned int, 0, 1)
SIM_COPY_FNS(sim_api_v1_memcpy_dtod, CUdeviceptr_v1, CUdeviceptr_v1, unsigned int, 1, 1)

#define SIM_SET_FNS(name, ptr_t, value_t, count_t, elem)                                \
    CUresult name(ptr_t dst, value_t v, count_t n)                                      \
    {                                                                                   \
        return sim_set_2d(NULL, (uintptr_t)dst, (size_t)n * elem, v, elem, n, 1, 1);    \
    }                                                                                   \
    CUresult name##_2d(ptr_t dst, count_t pitch, value_t v, count_t w, count_t hgt)     \
    {                                                                                   \
        return sim_set_2d(NULL, (uintptr_t)dst, pitch, v, elem, w, hgt, 1);             \
    }
#define SIM_SET_ASYNC_FNS(name, value_t, elem)                                          \
    CUresult name##_async(CUdeviceptr dst, value_t v, size_t n, CUstream h)             \
    {                                                                                   \
        return sim_set_2d(h, (uintptr_t)dst, n * elem, v, elem, n, 1, 0);               \
    }                                                                                   \
    CUresult name##_2d_async(CUdeviceptr dst, size_t pitch, value_t v, size_t w,        \
                             size_t hgt, CUstream h)                                    \
    {                                                                                   \
        return sim_set_2d(h, (uintptr_t)dst, pitch, v, elem, w, hgt, 0);                \
    }
SIM_SET_FNS(sim_api_memset_d8, CUdeviceptr, unsigned char, size_t, 1)
SIM_SET_FNS(sim_api_memset_d16, CUdeviceptr, unsigned short, size_t, 2)
SIM_SET_FNS(sim_api_memset_d32, CUdeviceptr, unsigned int, size_t, 4)
SIM_SET_ASYNC_FNS(sim_api_memset_d8, unsigned char, 1)
SIM_SET_ASYNC_FNS(sim_api_memset_d16, unsigned short, 2)
SIM_SET_ASYNC_FNS(sim_api_memset_d32, unsigned int, 4)
SIM_SET_FNS(sim_api_v1_memset_d8, CUdeviceptr_v1, unsigned char, unsigned int, 1)
SIM_SET_FNS(sim_api_v1_memset_d16, CUdeviceptr_v1, unsigned short, unsigned int, 2)
SIM_SET_FNS(sim_api_v1_memset_d32, CUdeviceptr_v1, unsigned int, unsigned int, 4)

/* A peer copy's contexts are valid and its pointers lie on their devices. */
static CUresult peer_check(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                           CUcontext src_ctx)
{
    const sim_ctx *d = sim_ctx_check(dst_ctx), *s = sim_ctx_check(src_ctx);
    if (sim_need_init())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!d || !s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (sim_mem_dev((uintptr_t)dst) != d->dev || sim_mem_dev((uintptr_t)src) != s->dev)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult sim_api_memcpy_peer_async(CUdeviceptr dstDevice, CUcontext dstContext,
                                   CUdeviceptr srcDevice, CUcontext srcContext,
                                   size_t ByteCount, CUstream hStream)
{
    CUresult rc = peer_check(dstDevice, dstContext, srcDevice, srcContext);
    if (rc)
        return rc;
    return sim_copy_1d(hStream, (uintptr_t)dstDevice, (uintptr_t)srcDevice, ByteCount, 1, 1,
                       0);
}

CUresult sim_api_memcpy_peer(CUdeviceptr dstDevice, CUcontext dstContext,
                             CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
{
    CUresult rc = peer_check(dstDevice, dstContext, srcDevice, srcContext);
    if (rc)
        return rc;
    return sim_copy_1d(NULL, (uintptr_t)dstDevice, (uintptr_t)srcDevice, ByteCount, 1, 1, 1);
}

CUresult sim_api_memcpy_2d(const CUDA_MEMCPY2D *pCopy)
{
    return copy_2d(pCopy, NULL, 1);
}

CUresult sim_api_memcpy_2d_async(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    return copy_2d(pCopy, hStream, 0);
}

CUresult sim_api_memcpy_3d(const CUDA_MEMCPY3D *pCopy)
{
    return copy_3d(pCopy, NULL, 1);
}

CUresult sim_api_memcpy_3d_async(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    return copy_3d(pCopy, hStream, 0);
}
