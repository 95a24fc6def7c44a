/* sim_module.c -- kernels, modules and libraries.
 *
 * Owns the kernel registry (sim_register_kernel: name, CPU function and
 * parameter layout) and the module / library / function / kernel handles.
 * Any module image (data, file, fat binary) or library exposes every registered
 * kernel; cuModuleGetFunction of an unregistered name is CUDA_ERROR_NOT_FOUND.
 * A library is a context-less module, and its CUkernel handles are the same
 * objects as the CUfunction handles cuKernelGetFunction returns.
 */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sim_kernel *kernels;

static size_t default_align(size_t size)
{
    size_t a = 1;
    while (a < 8 && size % (2 * a) == 0)
        a *= 2;
    return a;
}

static int same_layout(const sim_kernel *k, int nparams, const size_t *sizes,
                       const size_t *offsets)
{
    if (k->nparams != nparams)
        return 0;
    for (int i = 0; i < nparams; i++) {
        if (k->sizes[i] != sizes[i] || k->offsets[i] != offsets[i])
            return 0;
    }
    return 1;
}

int sim_kernel_register(const char *name, sim_kernel_fn fn, int nparams,
                        const size_t *sizes, const size_t *aligns)
{
    sim_kernel *k;
    size_t *offsets, end = 0;
    int ok;

    if (!name || !*name || !fn || nparams < 0 || nparams > 4096 || (nparams && !sizes))
        return -1;
    offsets = sim_xcalloc((size_t)nparams + 1, sizeof *offsets);
    for (int i = 0; i < nparams; i++) {
        size_t a = aligns ? aligns[i] : default_align(sizes[i]);
        if (!sizes[i] || !a || (a & (a - 1))) {
            free(offsets);
            return -1;
        }
        offsets[i] = (end + a - 1) / a * a;
        end = offsets[i] + sizes[i];
    }
    HASH_FIND_STR(kernels, name, k);
    if (k) {
        ok = same_layout(k, nparams, sizes, offsets);
        if (ok)
            k->fn = fn;
        free(offsets);
        return ok ? 0 : -1;
    }
    k = sim_xcalloc(1, sizeof *k);
    k->name = sim_xstrdup(name);
    k->fn = fn;
    k->nparams = nparams;
    k->sizes = sim_xcalloc((size_t)nparams + 1, sizeof *k->sizes);
    memcpy(k->sizes, sizes, (size_t)nparams * sizeof *sizes);
    k->offsets = offsets;
    k->args_size = end;
    HASH_ADD_KEYPTR(hh, kernels, k->name, strlen(k->name), k);
    return 0;
}

/* ---- modules and libraries */

void sim_module_free(sim_module *m)
{
    sim_func *f, *tmp;
    HASH_ITER(fh, m->funcs, f, tmp) {
        HASH_DELETE(fh, m->funcs, f);
        free(f->pbuf);
        sim_obj_free(f);
    }
    sim_obj_free(m);
}

static CUresult module_new(void **out, int library)
{
    sim_ctx *c = NULL;
    sim_module *m;
    CUresult rc = library ? sim_need_init() : sim_need_ctx(&c);
    if (rc)
        return rc;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    m = sim_obj_new(SIM_K_MODULE, sizeof *m, c);
    m->library = library;
    *out = m;
    return CUDA_SUCCESS;
}

static CUresult module_from_file(void **out, const char *path, int library)
{
    FILE *f;
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(f = fopen(path, "rb")))
        return sim_need_init() ? CUDA_ERROR_NOT_INITIALIZED : CUDA_ERROR_FILE_NOT_FOUND;
    fclose(f);
    return module_new(out, library);
}

CUresult sim_api_module_load(CUmodule *module, const char *fname)
{
    return module_from_file((void **)module, fname, 0);
}

CUresult sim_api_module_load_data(CUmodule *module, const void *image)
{
    return image ? module_new((void **)module, 0) : CUDA_ERROR_INVALID_VALUE;
}

CUresult sim_api_module_load_data_ex(CUmodule *module, const void *image,
                                     unsigned int numOptions, CUjit_option *options,
                                     void **optionValues)
{
    if (numOptions && (!options || !optionValues))
        return CUDA_ERROR_INVALID_VALUE;
    return sim_api_module_load_data(module, image);
}

CUresult sim_api_module_load_fat_binary(CUmodule *module, const void *fatCubin)
{
    return sim_api_module_load_data(module, fatCubin);
}

static CUresult module_unload(void *h, int library)
{
    CUresult rc;
    sim_module *m = sim_obj_need(h, SIM_K_MODULE, CUDA_ERROR_INVALID_HANDLE, &rc);
    if (rc)
        return rc;
    if (m->library != library)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_module_free(m);
    return CUDA_SUCCESS;
}

CUresult sim_api_module_unload(CUmodule hmod)
{
    return module_unload(hmod, 0);
}

CUresult sim_api_library_load_data(CUlibrary *library, const void *code,
                                   CUjit_option *jitOptions, void **jitOptionsValues,
                                   unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions,
                                   void **libraryOptionValues, unsigned int numLibraryOptions)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return code ? module_new((void **)library, 1) : CUDA_ERROR_INVALID_VALUE;
}

CUresult sim_api_library_load_from_file(CUlibrary *library, const char *fileName,
                                        CUjit_option *jitOptions, void **jitOptionsValues,
                                        unsigned int numJitOptions,
                                        CUlibraryOption *libraryOptions,
                                        void **libraryOptionValues,
                                        unsigned int numLibraryOptions)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return module_from_file((void **)library, fileName, 1);
}

CUresult sim_api_library_unload(CUlibrary library)
{
    return module_unload(library, 1);
}

CUresult sim_api_library_get_module(CUmodule *pMod, CUlibrary library)
{
    CUresult rc;
    sim_module *m = sim_obj_need(library, SIM_K_MODULE, CUDA_ERROR_INVALID_HANDLE, &rc);
    if (rc)
        return rc;
    if (!m->library)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pMod)
        return CUDA_ERROR_INVALID_VALUE;
    *pMod = (CUmodule)m;
    return CUDA_SUCCESS;
}

/* ---- functions and kernels */

static CUresult function_lookup(void *h, const char *name, int library, void **out)
{
    CUresult rc;
    sim_module *m = sim_obj_need(h, SIM_K_MODULE, CUDA_ERROR_INVALID_HANDLE, &rc);
    sim_kernel *k;
    sim_func *f;
    if (rc)
        return rc;
    if (m->library != library)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    HASH_FIND_STR(kernels, name, k);
    if (!k)
        return CUDA_ERROR_NOT_FOUND;
    HASH_FIND(fh, m->funcs, k->name, strlen(k->name), f);
    if (!f) {
        f = sim_obj_new(SIM_K_FUNC, sizeof *f, m->o.ctx);
        f->mod = m;
        f->k = k;
        f->max_dynamic_smem = 48 * 1024;
        HASH_ADD_KEYPTR(fh, m->funcs, k->name, strlen(k->name), f);
    }
    *out = f;
    return CUDA_SUCCESS;
}

CUresult sim_api_module_get_function(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    return function_lookup(hmod, name, 0, (void **)hfunc);
}

CUresult sim_api_library_get_kernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    return function_lookup(library, name, 1, (void **)pKernel);
}

sim_func *sim_func_check(CUfunction h)
{
    return sim_obj_get(h, SIM_K_FUNC);
}

static CUresult func_get(const void *h, sim_func **out)
{
    CUresult rc;
    *out = sim_obj_need(h, SIM_K_FUNC, CUDA_ERROR_INVALID_HANDLE, &rc);
    return rc;
}

CUresult sim_api_kernel_get_function(CUfunction *pFunc, CUkernel kernel)
{
    sim_func *f;
    CUresult rc = func_get(kernel, &f);
    if (rc || (rc = sim_need_ctx(NULL)) != CUDA_SUCCESS)
        return rc;
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    *pFunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

CUresult sim_api_func_get_name(const char **name, CUfunction hfunc)
{
    sim_func *f;
    CUresult rc = func_get(hfunc, &f);
    if (rc)
        return rc;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    *name = f->k->name;
    return CUDA_SUCCESS;
}

CUresult sim_api_kernel_get_name(const char **name, CUkernel hfunc)
{
    return sim_api_func_get_name(name, (CUfunction)hfunc);
}

CUresult sim_api_func_get_param_info(CUfunction func, size_t paramIndex, size_t *paramOffset,
                                     size_t *paramSize)
{
    sim_func *f;
    CUresult rc = func_get(func, &f);
    if (rc)
        return rc;
    if (paramIndex >= (size_t)f->k->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (paramOffset)
        *paramOffset = f->k->offsets[paramIndex];
    if (paramSize)
        *paramSize = f->k->sizes[paramIndex];
    return CUDA_SUCCESS;
}

CUresult sim_api_kernel_get_param_info(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
                                       size_t *paramSize)
{
    return sim_api_func_get_param_info((CUfunction)kernel, paramIndex, paramOffset, paramSize);
}

CUresult sim_api_func_get_module(CUmodule *hmod, CUfunction hfunc)
{
    sim_func *f;
    CUresult rc = func_get(hfunc, &f);
    if (rc)
        return rc;
    if (!hmod)
        return CUDA_ERROR_INVALID_VALUE;
    *hmod = (CUmodule)f->mod;
    return CUDA_SUCCESS;
}

CUresult sim_api_func_get_attribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    sim_func *f;
    CUresult rc = func_get(hfunc, &f);
    if (rc)
        return rc;
    if (!pi || (int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:          *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:                       *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:                    *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:                 *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:  *pi = f->max_dynamic_smem; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    default:                                               *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult sim_api_func_set_attribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    sim_func *f;
    CUresult rc = func_get(hfunc, &f);
    if (rc)
        return rc;
    if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (value < 0 || value > 232448)
            return CUDA_ERROR_INVALID_VALUE;
        f->max_dynamic_smem = value;
    }
    return CUDA_SUCCESS;
}

/* A kernel is its function here (one context, one device): dev must be 0. */
CUresult sim_api_kernel_get_attribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
                                      CUdevice dev)
{
    return dev != 0 ? CUDA_ERROR_INVALID_DEVICE
                    : sim_api_func_get_attribute(pi, attrib, (CUfunction)kernel);
}

CUresult sim_api_kernel_set_attribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                      CUdevice dev)
{
    return dev != 0 ? CUDA_ERROR_INVALID_DEVICE
                    : sim_api_func_set_attribute((CUfunction)kernel, attrib, val);
}

CUresult sim_api_func_set_cache_config(CUfunction hfunc, CUfunc_cache config)
{
    sim_func *f;
    (void)config;
    return func_get(hfunc, &f);
}
