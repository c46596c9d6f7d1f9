/* SPDX-License-Identifier: MIT */
/* zesim modules and kernels: SPIR-V is scanned for kernel entry points and their parameter
 * counts (never compiled); a text format declares kernels for tests. Built-in kernels compute real
 * results; every kernel gets a duration from the model. */
#include "zs_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- build log */
static ze_module_build_log_handle_t make_log(const char *text) {
    struct _ze_module_build_log_handle_t *l = calloc(1, sizeof(*l));
    if (!l) return NULL;
    l->magic = ZS_MAGIC_BUILD_LOG;
    l->text = strdup(text ? text : "");
    if (!l->text) {
        free(l);
        return NULL;
    }
    return l;
}

static ze_result_t zs_zeModuleBuildLogDestroy(ze_module_build_log_handle_t l) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_BUILD_LOG);
    l->magic = ZS_MAGIC_DEAD;
    free(l->text);
    zs_defer_free(l);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleBuildLogGetString(ze_module_build_log_handle_t l, size_t *pSize, char *s) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_BUILD_LOG);
    if (!pSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    size_t need = strlen(l->text) + 1;
    if (!s || *pSize == 0) {
        *pSize = need;
        return ZE_RESULT_SUCCESS;
    }
    size_t n = *pSize < need ? *pSize : need;
    memcpy(s, l->text, n);
    s[n - 1] = 0;
    *pSize = n;
    return ZE_RESULT_SUCCESS;
}

void zs_fill_build_log_table(ze_module_build_log_dditable_t *t) {
    t->pfnDestroy = zs_zeModuleBuildLogDestroy;
    t->pfnGetString = zs_zeModuleBuildLogGetString;
}

/* ---------------------------------------------------------------- parsers */
struct kd_vec {
    struct zs_kdecl *v;
    uint32_t n, cap;
};

static int kd_push(struct kd_vec *k, const char *name, uint32_t nargs, double ns, double per) {
    if (k->n == k->cap) {
        uint32_t ncap = k->cap ? 2 * k->cap : 8;
        struct zs_kdecl *n = realloc(k->v, ncap * sizeof(*n));
        if (!n) return -1;
        k->v = n;
        k->cap = ncap;
    }
    const char *in = zs_intern(name);
    if (!in) return -1;
    k->v[k->n++] = (struct zs_kdecl){in, nargs, ns, per};
    return 0;
}

#define SPV_MAGIC 0x07230203u
#define SPV_OP_ENTRY_POINT 15
#define SPV_OP_FUNCTION 54
#define SPV_OP_FUNCTION_PARAMETER 55
#define SPV_EXEC_MODEL_KERNEL 6

static uint32_t bswap32(uint32_t x) { return __builtin_bswap32(x); }

/* Collect OpEntryPoint Kernel names, then count OpFunctionParameter per OpFunction id. */
static int parse_spirv(const uint8_t *bytes, size_t size, struct kd_vec *out, char *err, size_t errsz) {
    if (size < 20 || size % 4) {
        snprintf(err, errsz, "zesim: SPIR-V module size %zu is not a multiple of 4 words header", size);
        return -1;
    }
    size_t nw = size / 4;
    uint32_t *w = malloc(size);
    if (!w) return -1;
    memcpy(w, bytes, size);
    if (w[0] != SPV_MAGIC) {
        if (bswap32(w[0]) != SPV_MAGIC) {
            snprintf(err, errsz, "zesim: not a SPIR-V module (magic 0x%08x)", w[0]);
            free(w);
            return -1;
        }
        for (size_t i = 0; i < nw; i++) w[i] = bswap32(w[i]);
    }
    struct { uint32_t fn; char name[256]; } eps[256];
    uint32_t neps = 0;
    struct { uint32_t id, params; } fns[1024];
    uint32_t nfns = 0;
    int cur_fn = -1;
    size_t i = 5;
    while (i < nw) {
        uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
        if (wc == 0 || i + wc > nw) {
            snprintf(err, errsz, "zesim: malformed SPIR-V instruction at word %zu", i);
            free(w);
            return -1;
        }
        if (op == SPV_OP_ENTRY_POINT && wc >= 4 && w[i + 1] == SPV_EXEC_MODEL_KERNEL && neps < 256) {
            eps[neps].fn = w[i + 2];
            size_t maxb = (size_t)(wc - 3) * 4;
            const char *s = (const char *)&w[i + 3];
            size_t len = strnlen(s, maxb);
            if (len >= sizeof(eps[0].name)) len = sizeof(eps[0].name) - 1;
            memcpy(eps[neps].name, s, len);
            eps[neps].name[len] = 0;
            neps++;
        } else if (op == SPV_OP_FUNCTION && wc >= 5 && nfns < 1024) {
            fns[nfns].id = w[i + 2];
            fns[nfns].params = 0;
            cur_fn = (int)nfns++;
        } else if (op == SPV_OP_FUNCTION_PARAMETER && cur_fn >= 0) {
            fns[cur_fn].params++;
        }
        i += wc;
    }
    free(w);
    if (neps == 0) {
        snprintf(err, errsz, "zesim: SPIR-V module declares no kernel entry point");
        return -1;
    }
    for (uint32_t e = 0; e < neps; e++) {
        uint32_t params = 0;
        for (uint32_t f = 0; f < nfns; f++)
            if (fns[f].id == eps[e].fn) params = fns[f].params;
        if (kd_push(out, eps[e].name, params, -1, -1)) return -1;
    }
    return 0;
}

static const char TEXT_MAGIC[] = "ZESIM-MODULE";

static int parse_text(const uint8_t *bytes, size_t size, struct kd_vec *out, char *err, size_t errsz) {
    char *text = malloc(size + 1);
    if (!text) return -1;
    memcpy(text, bytes, size);
    text[size] = 0;
    int lineno = 0, rc = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (lineno == 1) continue; /* the magic line */
        char *tok_save = NULL;
        char *word = strtok_r(line, " \t\r", &tok_save);
        if (!word || word[0] == '#') continue;
        if (strcmp(word, "kernel") != 0) {
            snprintf(err, errsz, "zesim: module line %d: expected 'kernel <name> [args=N] [ns=X] [ns_per_item=Y]'", lineno);
            rc = -1;
            break;
        }
        char *name = strtok_r(NULL, " \t\r", &tok_save);
        if (!name) {
            snprintf(err, errsz, "zesim: module line %d: kernel without a name", lineno);
            rc = -1;
            break;
        }
        uint32_t nargs = 0;
        double ns = -1, per = -1;
        for (char *kv = strtok_r(NULL, " \t\r", &tok_save); kv; kv = strtok_r(NULL, " \t\r", &tok_save)) {
            char *end = NULL;
            if (strncmp(kv, "args=", 5) == 0) nargs = (uint32_t)strtoul(kv + 5, &end, 10);
            else if (strncmp(kv, "ns=", 3) == 0) ns = strtod(kv + 3, &end);
            else if (strncmp(kv, "ns_per_item=", 12) == 0) per = strtod(kv + 12, &end);
            if (!end || *end) {
                snprintf(err, errsz, "zesim: module line %d: bad attribute '%s'", lineno, kv);
                rc = -1;
                break;
            }
        }
        if (rc) break;
        if (nargs > ZS_MAX_KERNEL_ARGS) {
            snprintf(err, errsz, "zesim: module line %d: at most %d arguments", lineno, ZS_MAX_KERNEL_ARGS);
            rc = -1;
            break;
        }
        if (ns >= 0 && per < 0) per = 0;
        if (per >= 0 && ns < 0) ns = 0;
        if (kd_push(out, name, nargs, ns, per)) {
            rc = -1;
            break;
        }
    }
    free(text);
    if (rc == 0 && out->n == 0) {
        snprintf(err, errsz, "zesim: module declares no kernels");
        rc = -1;
    }
    return rc;
}

/* ---------------------------------------------------------------- modules */
static ze_result_t zs_zeModuleCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_module_desc_t *desc,
                                     ze_module_handle_t *phModule, ze_module_build_log_handle_t *phLog) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!desc || !desc->pInputModule || !phModule) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->format > ZE_MODULE_FORMAT_NATIVE) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct kd_vec k = {0};
    char err[256] = "";
    int rc;
    size_t ml = sizeof(TEXT_MAGIC) - 1;
    if (desc->inputSize >= ml && memcmp(desc->pInputModule, TEXT_MAGIC, ml) == 0)
        rc = parse_text(desc->pInputModule, desc->inputSize, &k, err, sizeof(err));
    else if (desc->format == ZE_MODULE_FORMAT_IL_SPIRV)
        rc = parse_spirv(desc->pInputModule, desc->inputSize, &k, err, sizeof(err));
    else {
        snprintf(err, sizeof(err), "zesim: native binary is not in the zesim text format");
        rc = -1;
    }
    if (phLog) *phLog = make_log(rc ? err : "");
    if (rc) {
        free(k.v);
        /* a text module that does not parse failed to build; foreign native bytes are invalid */
        bool text = desc->inputSize >= ml && memcmp(desc->pInputModule, TEXT_MAGIC, ml) == 0;
        return desc->format == ZE_MODULE_FORMAT_NATIVE && !text ? ZE_RESULT_ERROR_INVALID_NATIVE_BINARY
                                                                : ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    struct _ze_module_handle_t *m = calloc(1, sizeof(*m));
    void *bin = malloc(desc->inputSize);
    if (!m || !bin) {
        free(m);
        free(bin);
        free(k.v);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    memcpy(bin, desc->pInputModule, desc->inputSize);
    m->magic = ZS_MAGIC_MODULE;
    m->device = d;
    m->kernels = k.v;
    m->nkernels = k.n;
    m->binary = bin;
    m->binary_size = desc->inputSize;
    *phModule = m;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleDestroy(ze_module_handle_t m) {
    ZS_ENTER();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    m->magic = ZS_MAGIC_DEAD;
    free(m->kernels);
    free(m->binary);
    zs_defer_free(m);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleDynamicLink(uint32_t n, ze_module_handle_t *ph, ze_module_build_log_handle_t *phLog) {
    ZS_ENTER();
    if (n && !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (phLog) *phLog = make_log("");
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleGetNativeBinary(ze_module_handle_t m, size_t *pSize, uint8_t *out) {
    ZS_ENTER();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    if (!pSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!out) {
        *pSize = m->binary_size;
        return ZE_RESULT_SUCCESS;
    }
    size_t n = *pSize < m->binary_size ? *pSize : m->binary_size;
    memcpy(out, m->binary, n);
    *pSize = n;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleGetGlobalPointer(ze_module_handle_t m, const char *name, size_t *pSize, void **pptr) {
    ZS_ENTER();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    if (!name) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
}

static ze_result_t zs_zeModuleGetKernelNames(ze_module_handle_t m, uint32_t *pCount, const char **names) {
    ZS_ENTER();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*pCount == 0 || !names) {
        *pCount = m->nkernels;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > m->nkernels) *pCount = m->nkernels;
    for (uint32_t i = 0; i < *pCount; i++) names[i] = m->kernels[i].name;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleGetProperties(ze_module_handle_t m, ze_module_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeModuleGetFunctionPointer(ze_module_handle_t m, const char *name, void **pfn) {
    ZS_ENTER();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    if (!name || !pfn) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
}

void zs_fill_module_table(ze_module_dditable_t *t) {
    t->pfnCreate = zs_zeModuleCreate;
    t->pfnDestroy = zs_zeModuleDestroy;
    t->pfnDynamicLink = zs_zeModuleDynamicLink;
    t->pfnGetNativeBinary = zs_zeModuleGetNativeBinary;
    t->pfnGetGlobalPointer = zs_zeModuleGetGlobalPointer;
    t->pfnGetKernelNames = zs_zeModuleGetKernelNames;
    t->pfnGetProperties = zs_zeModuleGetProperties;
    t->pfnGetFunctionPointer = zs_zeModuleGetFunctionPointer;
}

/* ---------------------------------------------------------------- kernels */
/* Duration precedence: a ZESIM_KERNEL_MODEL entry naming the kernel, then the module's own
 * declaration, then the "*" entry / built-in default. */
static void resolve_model(const struct zs_kdecl *kd, double *ns, double *per) {
    const struct zs_kmodel *def = NULL;
    for (int i = 0; i < zs.cfg.nkmodel; i++) {
        const struct zs_kmodel *m = &zs.cfg.kmodel[i];
        if (m->name && strcmp(m->name, kd->name) == 0) {
            *ns = m->ns;
            *per = m->ns_per_item;
            return;
        }
        if (!m->name && !def) def = m;
    }
    if (kd->ns >= 0) {
        *ns = kd->ns;
        *per = kd->ns_per_item;
        return;
    }
    *ns = def ? def->ns : 5000;
    *per = def ? def->ns_per_item : 0.25;
}

static enum zs_builtin builtin_of(const char *name) {
    if (strcmp(name, "vector_add") == 0) return ZS_BI_VECTOR_ADD;
    if (strcmp(name, "scale_f32") == 0) return ZS_BI_SCALE_F32;
    if (strcmp(name, "fill_u32") == 0) return ZS_BI_FILL_U32;
    return ZS_BI_NONE;
}

static ze_result_t zs_zeKernelCreate(ze_module_handle_t m, const ze_kernel_desc_t *desc, ze_kernel_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(m, ZS_MAGIC_MODULE);
    if (!desc || !desc->pKernelName || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct zs_kdecl *kd = NULL;
    for (uint32_t i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, desc->pKernelName) == 0) kd = &m->kernels[i];
    if (!kd) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    struct _ze_kernel_handle_t *k = calloc(1, sizeof(*k));
    if (!k) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    k->magic = ZS_MAGIC_KERNEL;
    k->module = m;
    k->name = kd->name;
    k->nargs = kd->nargs;
    k->gx = k->gy = k->gz = 1;
    k->builtin = builtin_of(kd->name);
    resolve_model(kd, &k->ns, &k->ns_per_item);
    *ph = k;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelDestroy(ze_kernel_handle_t k) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    k->magic = ZS_MAGIC_DEAD;
    for (uint32_t i = 0; i < ZS_MAX_KERNEL_ARGS; i++) free(k->args[i].big);
    zs_defer_free(k);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelSetCacheConfig(ze_kernel_handle_t k, ze_cache_config_flags_t f) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (f > 0x3) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    k->cache = f;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!x || !y || !z || (uint64_t)x * y * z > 1024) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    k->gx = x;
    k->gy = y;
    k->gz = z;
    return ZE_RESULT_SUCCESS;
}

static uint32_t largest_divisor_le(uint32_t n, uint32_t cap) {
    for (uint32_t d = cap; d > 1; d--)
        if (n % d == 0) return d;
    return 1;
}

static ze_result_t zs_zeKernelSuggestGroupSize(ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t gz,
                                               uint32_t *x, uint32_t *y, uint32_t *z) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!x || !y || !z) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!gx || !gy || !gz) return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
    /* divisors keep groupCount = global / groupSize exact, as compute-runtime does */
    *x = largest_divisor_le(gx, 256);
    *y = largest_divisor_le(gy, 256 / *x ? 256 / *x : 1);
    uint32_t left = 256 / (*x * *y);
    *z = largest_divisor_le(gz, left ? left : 1);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelSuggestMaxCooperativeGroupCount(ze_kernel_handle_t k, uint32_t *count) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 64;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t idx, size_t size, const void *val) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (idx >= k->nargs) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (size == 0 || size > 4096) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    struct zs_arg *a = &k->args[idx];
    free(a->big);
    a->big = NULL;
    a->size = (uint32_t)size;
    a->set = true;
    memset(a->val, 0, sizeof(a->val));
    if (size > sizeof(a->val)) {
        a->big = calloc(1, size);
        if (!a->big) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        if (val) memcpy(a->big, val, size);
    } else if (val) {
        memcpy(a->val, val, size);
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelSetIndirectAccess(ze_kernel_handle_t k, ze_kernel_indirect_access_flags_t f) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (f > 0x7) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    k->indirect = f;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelGetIndirectAccess(ze_kernel_handle_t k, ze_kernel_indirect_access_flags_t *f) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!f) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *f = k->indirect;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelGetSourceAttributes(ze_kernel_handle_t k, uint32_t *pSize, char **pString) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!pSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*pSize == 0 || !pString) {
        *pSize = 1;
        return ZE_RESULT_SUCCESS;
    }
    if (*pString) (*pString)[0] = 0;
    *pSize = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelGetProperties(ze_kernel_handle_t k, ze_kernel_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->numKernelArgs = k->nargs;
    p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
    p->requiredNumSubGroups = 0;
    p->requiredSubgroupSize = 0;
    p->maxSubgroupSize = 32;
    p->maxNumSubgroups = 64;
    p->localMemSize = 0;
    p->privateMemSize = 0;
    p->spillMemSize = 0;
    memset(&p->uuid, 0, sizeof(p->uuid));
    size_t n = strlen(k->name);
    memcpy(p->uuid.kid, k->name, n < sizeof(p->uuid.kid) ? n : sizeof(p->uuid.kid));
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeKernelGetName(ze_kernel_handle_t k, size_t *pSize, char *name) {
    ZS_ENTER();
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!pSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    size_t need = strlen(k->name) + 1;
    if (!name || *pSize == 0) {
        *pSize = need;
        return ZE_RESULT_SUCCESS;
    }
    size_t n = *pSize < need ? *pSize : need;
    memcpy(name, k->name, n);
    name[n - 1] = 0;
    *pSize = n;
    return ZE_RESULT_SUCCESS;
}

void zs_fill_kernel_table(ze_kernel_dditable_t *t) {
    t->pfnCreate = zs_zeKernelCreate;
    t->pfnDestroy = zs_zeKernelDestroy;
    t->pfnSetCacheConfig = zs_zeKernelSetCacheConfig;
    t->pfnSetGroupSize = zs_zeKernelSetGroupSize;
    t->pfnSuggestGroupSize = zs_zeKernelSuggestGroupSize;
    t->pfnSuggestMaxCooperativeGroupCount = zs_zeKernelSuggestMaxCooperativeGroupCount;
    t->pfnSetArgumentValue = zs_zeKernelSetArgumentValue;
    t->pfnSetIndirectAccess = zs_zeKernelSetIndirectAccess;
    t->pfnGetIndirectAccess = zs_zeKernelGetIndirectAccess;
    t->pfnGetSourceAttributes = zs_zeKernelGetSourceAttributes;
    t->pfnGetProperties = zs_zeKernelGetProperties;
    t->pfnGetName = zs_zeKernelGetName;
}

/* ---------------------------------------------------------------- execution helpers */
double zs_kernel_duration(const struct zs_kcapture *kc, uint64_t items) {
    return kc->ns + kc->ns_per_item * (double)items;
}

static void *arg_ptr(const struct zs_kcapture *kc, uint32_t i) {
    if (i >= kc->nargs || kc->args[i].size < sizeof(void *)) return NULL;
    void *p;
    memcpy(&p, kc->args[i].val, sizeof(p));
    return p;
}

static uint64_t room(const void *p, size_t elem) {
    uint64_t r = zs_alloc_room(p);
    return r == UINT64_MAX ? r : r / elem;
}

/* Built-ins bound their writes by the allocations involved: an out-of-range launch is an app bug
 * that would fault on hardware, and must not corrupt the simulator. */
void zs_kernel_run_builtin(const struct zs_kcapture *kc, uint64_t items) {
    switch (kc->builtin) {
    case ZS_BI_VECTOR_ADD: {
        const float *a = arg_ptr(kc, 0), *b = arg_ptr(kc, 1);
        float *c = arg_ptr(kc, 2);
        if (!a || !b || !c) return;
        uint64_t n = items;
        if (room(a, 4) < n) n = room(a, 4);
        if (room(b, 4) < n) n = room(b, 4);
        if (room(c, 4) < n) n = room(c, 4);
        for (uint64_t i = 0; i < n; i++) c[i] = a[i] + b[i];
        break;
    }
    case ZS_BI_SCALE_F32: {
        float *x = arg_ptr(kc, 0);
        float s;
        if (!x || kc->nargs < 2 || kc->args[1].size != sizeof(float)) return;
        memcpy(&s, kc->args[1].val, sizeof(s));
        uint64_t n = items < room(x, 4) ? items : room(x, 4);
        for (uint64_t i = 0; i < n; i++) x[i] *= s;
        break;
    }
    case ZS_BI_FILL_U32: {
        uint32_t *p = arg_ptr(kc, 0), v;
        if (!p || kc->nargs < 2 || kc->args[1].size != sizeof(uint32_t)) return;
        memcpy(&v, kc->args[1].val, sizeof(v));
        uint64_t n = items < room(p, 4) ? items : room(p, 4);
        for (uint64_t i = 0; i < n; i++) p[i] = v;
        break;
    }
    case ZS_BI_NONE:
        break;
    }
}
