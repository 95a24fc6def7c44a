/* sim_peer.c -- peer access between devices: cuDeviceCanAccessPeer,
 * cuDeviceGetP2PAttribute, cuCtxEnablePeerAccess and cuCtxDisablePeerAccess.
 *
 * Every two distinct simulated devices can access each other (a device cannot
 * be its own peer, as on a GPU).  Access is granted from one context to
 * another, one way, and is forgotten when either context goes away.  Peer
 * copies (sim_copy.c) need none of it, as with the driver.
 */
#include "sim_internal.h"

#include <stdlib.h>

int sim_peer_enabled(const sim_ctx *from, const sim_ctx *to)
{
    for (size_t i = 0; from && i < from->npeers; i++) {
        if (from->peers[i] == to)
            return 1;
    }
    return 0;
}

static void peer_remove(sim_ctx *from, const sim_ctx *to)
{
    for (size_t i = 0; i < from->npeers; i++) {
        if (from->peers[i] == to) {
            from->peers[i] = from->peers[--from->npeers];
            return;
        }
    }
}

void sim_peer_forget(sim_ctx *c)
{
    void **v;
    size_t n = sim_obj_list(SIM_K_CTX, NULL, &v);
    for (size_t i = 0; i < n; i++)
        peer_remove(v[i], c);
    free(v);
    free(c->peers);
    c->peers = NULL;
    c->npeers = 0;
}

CUresult sim_api_device_can_access_peer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    CUresult rc = sim_need_device(dev);
    if (rc || (rc = sim_need_device(peerDev)) != CUDA_SUCCESS)
        return rc;
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    *canAccessPeer = dev != peerDev;
    return CUDA_SUCCESS;
}

CUresult sim_api_device_get_p2p_attribute(int *value, CUdevice_P2PAttribute attrib,
                                          CUdevice srcDevice, CUdevice dstDevice)
{
    CUresult rc = sim_need_device(srcDevice);
    if (rc || (rc = sim_need_device(dstDevice)) != CUDA_SUCCESS)
        return rc;
    if (!value || srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:          *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:          *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:   *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; break;
    default:                                                return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* The current context and a valid peer context other than it. */
static CUresult peer_pair(CUcontext peerContext, sim_ctx **cur, sim_ctx **peer)
{
    CUresult rc = sim_need_ctx(cur);
    if (rc)
        return rc;
    *peer = sim_ctx_check(peerContext);
    return *peer && *peer != *cur ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult sim_api_ctx_enable_peer_access(CUcontext peerContext, unsigned int Flags)
{
    sim_ctx *c, *p;
    CUresult rc = peer_pair(peerContext, &c, &p);
    if (rc)
        return rc;
    if (Flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->dev == p->dev)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (sim_peer_enabled(c, p))
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    c->peers = sim_xrealloc(c->peers, (c->npeers + 1) * sizeof *c->peers);
    c->peers[c->npeers++] = p;
    return CUDA_SUCCESS;
}

CUresult sim_api_ctx_disable_peer_access(CUcontext peerContext)
{
    sim_ctx *c, *p;
    CUresult rc = peer_pair(peerContext, &c, &p);
    if (rc)
        return rc;
    if (!sim_peer_enabled(c, p))
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    peer_remove(c, p);
    return CUDA_SUCCESS;
}
