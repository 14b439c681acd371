/* strata's replacement cuBLAS host library (libcublas.so.13). A handle lives in the strata runtime process
 * (strata.libs.blas.native, over strata.libs.blas); every call is one request on libcudart's connection that
 * queues the routine's kernels on the handle's stream there and answers with the cublasStatus_t (and the
 * result of a reduction). alpha/beta and results follow the handle's pointer mode: host memory, or device
 * memory read and written with stream-ordered copies. The header is strata's own (include/cublas_api.h);
 * names it declares that this file does not define are weak stubs (build.py) returning
 * CUBLAS_STATUS_NOT_SUPPORTED. */
#include <cublas_v2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cudaError_t strata_call(uint32_t op, const void* a, size_t na, void* out, size_t cap);
int strata_capture_request(cudaStream_t s, uint32_t op, const void* a, size_t na, size_t stream_at);
enum { OP_CUBLAS_CREATE = 54, OP_CUBLAS_DESTROY = 55, OP_CUBLAS_CALL = 56 };
/* routines of OP_CUBLAS_CALL (mirror of strata/libs/blas/native.py) */
enum { R_GEMM = 1, R_AXPY, R_SCAL, R_DOT, R_NRM2, R_ASUM, R_IAMAX, R_GEMV, R_GER, R_SYRK, R_TRSM, R_GEMM_BATCHED };

struct cublasContext {
    uint64_t id;
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasMath_t math_mode;
    cublasAtomicsMode_t atomics;
};

typedef struct {
    uint64_t handle, stream;
    uint32_t routine, dtype;  /* dtype: a cudaDataType (CUDA_R_32F, ...) */
    int64_t i[20];
    double alpha, beta;
} call_t;
typedef struct { int32_t status, pad; double value; int64_t index; } reply_t;

/* A call on a capturing stream becomes a node of the graph (its arguments are checked when the graph runs);
 * one that returns a result to the host cannot be captured, as in cuBLAS. */
static cublasStatus_t send_call(cublasHandle_t h, call_t* c, reply_t* r) {
    c->handle = h->id;
    c->stream = (uint64_t)(uintptr_t)h->stream;
    memset(r, 0, sizeof *r);
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (h->stream && cudaStreamIsCapturing(h->stream, &cs) == cudaSuccess && cs == cudaStreamCaptureStatusActive) {
        int returns = c->routine == R_DOT || c->routine == R_NRM2 || c->routine == R_ASUM || c->routine == R_IAMAX;
        if (returns) return CUBLAS_STATUS_NOT_SUPPORTED;
        return strata_capture_request(h->stream, OP_CUBLAS_CALL, c, sizeof *c, offsetof(call_t, stream))
                   ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INTERNAL_ERROR;
    }
    if (strata_call(OP_CUBLAS_CALL, c, sizeof *c, r, sizeof *r) != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;  /* a fault of earlier work (sticky) or no runtime process */
    return (cublasStatus_t)r->status;
}

/* ---- the handle ------------------------------------------------------------------------------------------ */
cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    reply_t r = {0};
    uint32_t unused = 0;
    if (strata_call(OP_CUBLAS_CREATE, &unused, 4, &r, sizeof r) != cudaSuccess) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (r.status != CUBLAS_STATUS_SUCCESS) return (cublasStatus_t)r.status;
    struct cublasContext* c = calloc(1, sizeof *c);
    if (!c) return CUBLAS_STATUS_ALLOC_FAILED;
    c->id = (uint64_t)r.index;
    *handle = c;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    reply_t r = {0};
    cudaError_t e = strata_call(OP_CUBLAS_DESTROY, &handle->id, 8, &r, sizeof r);
    free(handle);
    return e != cudaSuccess ? CUBLAS_STATUS_EXECUTION_FAILED : (cublasStatus_t)r.status;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
    (void)handle;
    if (!version) return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
    if (!value) return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

size_t cublasGetCudartVersion(void) { return CUDART_VERSION; }

/* The library's kernels need no workspace of the program's: accepted and not used. */
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
    (void)workspace; (void)bytes;
    return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream) return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t* mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->atomics;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->atomics = mode;  /* strata's kernels give the same results either way */
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

/* CUBLAS_TF32_TENSOR_OP_MATH makes single-precision GEMMs round their inputs to TF32, as on a GPU. */
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    int base = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (base < 0 || base > (int)CUBLAS_TF32_TENSOR_OP_MATH) return CUBLAS_STATUS_INVALID_VALUE;
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

static const struct { int code; const char* name; const char* text; } statuses[] = {
    {0, "CUBLAS_STATUS_SUCCESS", "success"},
    {1, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
    {3, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {7, "CUBLAS_STATUS_INVALID_VALUE", "an invalid numeric value was used as an argument"},
    {8, "CUBLAS_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required"},
    {11, "CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
    {13, "CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
    {14, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {15, "CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
    {16, "CUBLAS_STATUS_LICENSE_ERROR", "an error was detected when checking the current licensing"},
};

const char* cublasGetStatusName(cublasStatus_t status) {
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (statuses[i].code == (int)status) return statuses[i].name;
    return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (statuses[i].code == (int)status) return statuses[i].text;
    return "unknown error";
}

/* ---- moving vectors and matrices: strided copies through the runtime ---------------------------------- */
static cublasStatus_t strided(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows,
                              enum cudaMemcpyKind kind, cudaStream_t s, int async) {
    if (!rows || !width) return CUBLAS_STATUS_SUCCESS;
    cudaError_t e = async ? cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, kind, s)
                          : cudaMemcpy2D(dst, dpitch, src, spitch, width, rows, kind);
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_MAPPING_ERROR;
}

static cublasStatus_t vec(int n, int es, const void* x, int incx, void* y, int incy, enum cudaMemcpyKind kind,
                          cudaStream_t s, int async) {
    if (n < 0 || es <= 0 || incx <= 0 || incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    return strided(y, (size_t)incy * es, x, (size_t)incx * es, (size_t)es, (size_t)n, kind, s, async);
}

static cublasStatus_t mat(int rows, int cols, int es, const void* a, int lda, void* b, int ldb,
                          enum cudaMemcpyKind kind, cudaStream_t s, int async) {
    if (rows < 0 || cols < 0 || es <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows)
        return CUBLAS_STATUS_INVALID_VALUE;
    return strided(b, (size_t)ldb * es, a, (size_t)lda * es, (size_t)rows * es, (size_t)cols, kind, s, async);
}

cublasStatus_t cublasSetVector(int n, int es, const void* x, int incx, void* y, int incy) {
    return vec(n, es, x, incx, y, incy, cudaMemcpyHostToDevice, 0, 0);
}
cublasStatus_t cublasGetVector(int n, int es, const void* x, int incx, void* y, int incy) {
    return vec(n, es, x, incx, y, incy, cudaMemcpyDeviceToHost, 0, 0);
}
cublasStatus_t cublasSetVectorAsync(int n, int es, const void* x, int incx, void* y, int incy, cudaStream_t s) {
    return vec(n, es, x, incx, y, incy, cudaMemcpyHostToDevice, s, 1);
}
cublasStatus_t cublasGetVectorAsync(int n, int es, const void* x, int incx, void* y, int incy, cudaStream_t s) {
    return vec(n, es, x, incx, y, incy, cudaMemcpyDeviceToHost, s, 1);
}
cublasStatus_t cublasSetMatrix(int rows, int cols, int es, const void* a, int lda, void* b, int ldb) {
    return mat(rows, cols, es, a, lda, b, ldb, cudaMemcpyHostToDevice, 0, 0);
}
cublasStatus_t cublasGetMatrix(int rows, int cols, int es, const void* a, int lda, void* b, int ldb) {
    return mat(rows, cols, es, a, lda, b, ldb, cudaMemcpyDeviceToHost, 0, 0);
}
cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int es, const void* a, int lda, void* b, int ldb,
                                    cudaStream_t s) {
    return mat(rows, cols, es, a, lda, b, ldb, cudaMemcpyHostToDevice, s, 1);
}
cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int es, const void* a, int lda, void* b, int ldb,
                                    cudaStream_t s) {
    return mat(rows, cols, es, a, lda, b, ldb, cudaMemcpyDeviceToHost, s, 1);
}

/* ---- scalars and results in the handle's pointer mode ------------------------------------------------- */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (man << 13);
    else if (exp) bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man) bits = sign;
    else {  /* subnormal: normalize */
        int e = -1;
        do { man <<= 1; e++; } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3FF) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* *p as a double; `size`: 2 (half), 4 (float) or 8 (double). 0 for a NULL pointer (the routine checks). */
static int scalar(cublasHandle_t h, const void* p, int size, double* out) {
    unsigned char buf[8] = {0};
    if (!p) { *out = 0; return 1; }
    if (h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
        if (cudaMemcpyAsync(buf, p, (size_t)size, cudaMemcpyDeviceToHost, h->stream) != cudaSuccess) return 0;
    } else {
        memcpy(buf, p, (size_t)size);
    }
    if (size == 8) { double d; memcpy(&d, buf, 8); *out = d; }
    else if (size == 4) { float f; memcpy(&f, buf, 4); *out = f; }
    else { uint16_t x; memcpy(&x, buf, 2); *out = half_to_float(x); }
    return 1;
}

static cublasStatus_t result(cublasHandle_t h, void* p, const void* value, size_t size) {
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    if (h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE)
        return cudaMemcpyAsync(p, value, size, cudaMemcpyHostToDevice, h->stream) == cudaSuccess
                   ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
    memcpy(p, value, size);
    return CUBLAS_STATUS_SUCCESS;
}

#define P(x) ((int64_t)(uintptr_t)(x))
#define CHECK_HANDLE(h) do { if (!(h)) return CUBLAS_STATUS_NOT_INITIALIZED; } while (0)

/* ---- GEMM ---------------------------------------------------------------------------------------------- */
/* `compute` -1: the type's own (Sgemm/Dgemm: with the handle's math mode). */
static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const void* alpha, const void* A, int at, int lda, long long sa, const void* B, int bt,
                           int ldb, long long sb, const void* beta, void* C, int ct, int ldc, long long sc,
                           int batch, int compute) {
    CHECK_HANDLE(h);
    int size = 4;  /* alpha/beta: the compute type's scalars */
    if (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC || (compute < 0 && at == CUDA_R_64F))
        size = 8;
    else if (compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC)
        size = 2;
    call_t c = {.routine = R_GEMM, .dtype = (uint32_t)at};
    int64_t v[20] = {ta, tb, m, n, k, P(A), lda, sa, P(B), ldb, sb, P(C), ldc, sc, batch, at, bt, ct, compute,
                     h->math_mode};
    memcpy(c.i, v, sizeof v);
    if (!scalar(h, alpha, size, &c.alpha) || !scalar(h, beta, size, &c.beta)) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
    reply_t r;
    return send_call(h, &c, &r);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
    return gemm(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C, CUDA_R_32F, ldc, 0,
                1, -1);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
    return gemm(h, ta, tb, m, n, k, alpha, A, CUDA_R_64F, lda, 0, B, CUDA_R_64F, ldb, 0, beta, C, CUDA_R_64F, ldc, 0,
                1, -1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int batch) {
    return gemm(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, sa, B, CUDA_R_32F, ldb, sb, beta, C, CUDA_R_32F, ldc,
                sc, batch, -1);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sa,
                                         const double* B, int ldb, long long sb, const double* beta, double* C,
                                         int ldc, long long sc, int batch) {
    return gemm(h, ta, tb, m, n, k, alpha, A, CUDA_R_64F, lda, sa, B, CUDA_R_64F, ldb, sb, beta, C, CUDA_R_64F, ldc,
                sc, batch, -1);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType at, int lda, const void* B, cudaDataType bt,
                            int ldb, const void* beta, void* C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
    (void)algo;  /* strata's heuristic picks the kernel */
    return gemm(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct, ldc, 0, 1, compute);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType at, int lda,
                                          long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
                                          const void* beta, void* C, cudaDataType ct, int ldc, long long sc,
                                          int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
    (void)algo;
    return gemm(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, batch, compute);
}

/* Batches as device arrays of matrix pointers (read in the runtime process, on the handle's stream). */
static cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void* alpha, const void* A, int at, int lda, const void* B, int bt, int ldb,
                                   const void* beta, const void* C, int ct, int ldc, int batch, int compute) {
    CHECK_HANDLE(h);
    int size = 4;
    if (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC || (compute < 0 && at == CUDA_R_64F))
        size = 8;
    else if (compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC)
        size = 2;
    call_t c = {.routine = R_GEMM_BATCHED, .dtype = (uint32_t)at};
    int64_t v[20] = {ta, tb, m, n, k, P(A), lda, 0, P(B), ldb, 0, P(C), ldc, 0, batch, at, bt, ct, compute,
                     h->math_mode};
    memcpy(c.i, v, sizeof v);
    if (!scalar(h, alpha, size, &c.alpha) || !scalar(h, beta, size, &c.beta)) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
    reply_t r;
    return send_call(h, &c, &r);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float* alpha, const float* const A[], int lda, const float* const B[], int ldb,
                                  const float* beta, float* const C[], int ldc, int batch) {
    return gemm_batched(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, beta, C, CUDA_R_32F, ldc,
                        batch, -1);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double* alpha, const double* const A[], int lda, const double* const B[],
                                  int ldb, const double* beta, double* const C[], int ldc, int batch) {
    return gemm_batched(h, ta, tb, m, n, k, alpha, A, CUDA_R_64F, lda, B, CUDA_R_64F, ldb, beta, C, CUDA_R_64F, ldc,
                        batch, -1);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void* alpha, const void* const A[], cudaDataType at, int lda,
                                   const void* const B[], cudaDataType bt, int ldb, const void* beta, void* const C[],
                                   cudaDataType ct, int ldc, int batch, cublasComputeType_t compute,
                                   cublasGemmAlgo_t algo) {
    (void)algo;
    return gemm_batched(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, batch, compute);
}

/* ---- levels 1 and 2, syrk, trsm ------------------------------------------------------------------------ */
static cublasStatus_t level(cublasHandle_t h, uint32_t routine, int dtype, const void* alpha, const void* beta,
                            const int64_t* v, size_t nv, reply_t* r) {
    CHECK_HANDLE(h);
    call_t c = {.routine = routine, .dtype = (uint32_t)dtype};
    memcpy(c.i, v, nv * sizeof *v);
    int size = dtype == CUDA_R_64F ? 8 : 4;
    if ((alpha && !scalar(h, alpha, size, &c.alpha)) || (beta && !scalar(h, beta, size, &c.beta)))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return send_call(h, &c, r);
}

#define AXPY(name, T, DT)                                                                                     \
    cublasStatus_t name(cublasHandle_t h, int n, const T* alpha, const T* x, int incx, T* y, int incy) {      \
        if (!alpha) return CUBLAS_STATUS_INVALID_VALUE;                                                         \
        int64_t v[] = {n, P(x), incx, P(y), incy};                                                            \
        reply_t r;                                                                                            \
        return level(h, R_AXPY, DT, alpha, NULL, v, 5, &r);                                                   \
    }
AXPY(cublasSaxpy_v2, float, CUDA_R_32F)
AXPY(cublasDaxpy_v2, double, CUDA_R_64F)

#define SCAL(name, T, DT)                                                                                     \
    cublasStatus_t name(cublasHandle_t h, int n, const T* alpha, T* x, int incx) {                            \
        if (!alpha) return CUBLAS_STATUS_INVALID_VALUE;                                                         \
        int64_t v[] = {n, P(x), incx};                                                                        \
        reply_t r;                                                                                            \
        return level(h, R_SCAL, DT, alpha, NULL, v, 3, &r);                                                   \
    }
SCAL(cublasSscal_v2, float, CUDA_R_32F)
SCAL(cublasDscal_v2, double, CUDA_R_64F)

#define DOT(name, T, DT)                                                                                      \
    cublasStatus_t name(cublasHandle_t h, int n, const T* x, int incx, const T* y, int incy, T* res) {        \
        int64_t v[] = {n, P(x), incx, P(y), incy};                                                            \
        reply_t r;                                                                                            \
        cublasStatus_t s = level(h, R_DOT, DT, NULL, NULL, v, 5, &r);                                         \
        if (s != CUBLAS_STATUS_SUCCESS) return s;                                                             \
        T out = (T)r.value;                                                                                   \
        return result(h, res, &out, sizeof out);                                                              \
    }
DOT(cublasSdot_v2, float, CUDA_R_32F)
DOT(cublasDdot_v2, double, CUDA_R_64F)

#define REDUCE(name, T, DT, R)                                                                                \
    cublasStatus_t name(cublasHandle_t h, int n, const T* x, int incx, T* res) {                              \
        int64_t v[] = {n, P(x), incx};                                                                        \
        reply_t r;                                                                                            \
        cublasStatus_t s = level(h, R, DT, NULL, NULL, v, 3, &r);                                             \
        if (s != CUBLAS_STATUS_SUCCESS) return s;                                                             \
        T out = (T)r.value;                                                                                   \
        return result(h, res, &out, sizeof out);                                                              \
    }
REDUCE(cublasSnrm2_v2, float, CUDA_R_32F, R_NRM2)
REDUCE(cublasDnrm2_v2, double, CUDA_R_64F, R_NRM2)
REDUCE(cublasSasum_v2, float, CUDA_R_32F, R_ASUM)
REDUCE(cublasDasum_v2, double, CUDA_R_64F, R_ASUM)

#define IAMAX(name, T, DT)                                                                                    \
    cublasStatus_t name(cublasHandle_t h, int n, const T* x, int incx, int* res) {                            \
        int64_t v[] = {n, P(x), incx};                                                                        \
        reply_t r;                                                                                            \
        cublasStatus_t s = level(h, R_IAMAX, DT, NULL, NULL, v, 3, &r);                                       \
        if (s != CUBLAS_STATUS_SUCCESS) return s;                                                             \
        int out = (int)r.index;                                                                               \
        return result(h, res, &out, sizeof out);                                                              \
    }
IAMAX(cublasIsamax_v2, float, CUDA_R_32F)
IAMAX(cublasIdamax_v2, double, CUDA_R_64F)

#define GEMV(name, T, DT)                                                                                     \
    cublasStatus_t name(cublasHandle_t h, cublasOperation_t trans, int m, int n, const T* alpha, const T* A,  \
                        int lda, const T* x, int incx, const T* beta, T* y, int incy) {                       \
        if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;                                                \
        int64_t v[] = {trans, m, n, P(A), lda, P(x), incx, P(y), incy};                                       \
        reply_t r;                                                                                            \
        return level(h, R_GEMV, DT, alpha, beta, v, 9, &r);                                                   \
    }
GEMV(cublasSgemv_v2, float, CUDA_R_32F)
GEMV(cublasDgemv_v2, double, CUDA_R_64F)

#define GER(name, T, DT)                                                                                      \
    cublasStatus_t name(cublasHandle_t h, int m, int n, const T* alpha, const T* x, int incx, const T* y,     \
                        int incy, T* A, int lda) {                                                            \
        if (!alpha) return CUBLAS_STATUS_INVALID_VALUE;                                                         \
        int64_t v[] = {m, n, P(x), incx, P(y), incy, P(A), lda};                                              \
        reply_t r;                                                                                            \
        return level(h, R_GER, DT, alpha, NULL, v, 8, &r);                                                    \
    }
GER(cublasSger_v2, float, CUDA_R_32F)
GER(cublasDger_v2, double, CUDA_R_64F)

#define SYRK(name, T, DT)                                                                                     \
    cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,       \
                        const T* alpha, const T* A, int lda, const T* beta, T* C, int ldc) {                  \
        if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;                                                \
        int64_t v[] = {uplo, trans, n, k, P(A), lda, P(C), ldc};                                              \
        reply_t r;                                                                                            \
        return level(h, R_SYRK, DT, alpha, beta, v, 8, &r);                                                   \
    }
SYRK(cublasSsyrk_v2, float, CUDA_R_32F)
SYRK(cublasDsyrk_v2, double, CUDA_R_64F)

#define TRSM(name, T, DT)                                                                                     \
    cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,                       \
                        cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T* alpha,         \
                        const T* A, int lda, T* B, int ldb) {                                                 \
        if (!alpha) return CUBLAS_STATUS_INVALID_VALUE;                                                         \
        int64_t v[] = {side, uplo, trans, diag, m, n, P(A), lda, P(B), ldb};                                  \
        reply_t r;                                                                                            \
        return level(h, R_TRSM, DT, alpha, NULL, v, 10, &r);                                                  \
    }
TRSM(cublasStrsm_v2, float, CUDA_R_32F)
TRSM(cublasDtrsm_v2, double, CUDA_R_64F)
