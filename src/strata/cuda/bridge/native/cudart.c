/* strata's replacement CUDA runtime (libcudart.so.13) for whole CUDA programs.
 *
 * A program built with `strata nvcc` (-cudart shared) loads this library instead of NVIDIA's. Each call is
 * forwarded over two pipes to the strata runtime process that `strata run` started (fds named by
 * STRATA_CUDART_FDS="write,read"); device memory, modules and kernels live there, on the virtual GPU.
 * Kernel launches are pipelined (no reply): a launch error is reported by the next cudaGetLastError, a
 * kernel fault by the next synchronizing call, as in CUDA. Device printf output and the memcheck report
 * come back in the reply of a call and are written to the program's own stdout/stderr FILEs, so they
 * interleave with the program's output in order. The wire format is in strata/cuda/bridge/protocol.py.
 * Exported names this file does not define are weak stubs (cudart_stubs.c) that return
 * cudaErrorNotSupported and print their name once.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- wire protocol (mirror of protocol.py) ------------------------------------------------------------ */
enum {
    OP_REGISTER = 1, OP_FUNC_INFO = 2, OP_LAUNCH = 3, OP_MALLOC = 4, OP_FREE = 5, OP_HTOD = 6, OP_DTOH = 7,
    OP_DTOD = 8, OP_MEMSET = 9, OP_SYNC = 10, OP_LAST_ERROR = 11, OP_SYMBOL = 12, OP_STREAM_CREATE = 13,
    OP_STREAM_DESTROY = 14, OP_STREAM_SYNC = 15, OP_STREAM_QUERY = 16, OP_STREAM_WAIT_EVENT = 17,
    OP_EVENT_CREATE = 18, OP_EVENT_DESTROY = 19, OP_EVENT_RECORD = 20, OP_EVENT_SYNC = 21, OP_EVENT_QUERY = 22,
    OP_EVENT_ELAPSED = 23, OP_PROPS = 24, OP_MEM_INFO = 25, OP_SET_DEVICE = 26, OP_RESET = 27,
    OP_FUNC_ATTRS = 28, OP_FUNC_SET_ATTR = 29, OP_POINTER_KIND = 30, OP_UNREGISTER = 31, OP_HTOD_SHM = 32,
    OP_DTOH_SHM = 33, OP_MANAGED = 34, OP_LAUNCH_COOP = 35, OP_LIMIT = 36, OP_OCCUPANCY = 37, OP_REGISTER_PTX = 38,
    OP_ARRAY_CREATE = 39, OP_ARRAY_FREE = 40, OP_ARRAY_COPY = 41, OP_TEX_CREATE = 42, OP_TEX_DESTROY = 43,
    OP_MALLOC_PITCH = 44, OP_PEER = 45, OP_MEMCPY_PEER = 46, OP_ARRAY_COPY_OUT = 47, OP_SURF_CREATE = 48,
    OP_SURF_DESTROY = 49, OP_ARRAY3D_CREATE = 57, OP_MEMCPY_3D = 58, OP_HTOD_MAPPED = 59, OP_DTOH_MAPPED = 60
};
/* Host memory shared with the runtime process (a memfd it created; STRATA_CUDART_SHM="fd,size"): the first
 * STAGING bytes stage copies of pageable memory, the rest is the heap of cudaMallocHost/cudaHostAlloc, so
 * copies from and to pinned memory move no bytes between the processes at all. Copies of pageable memory
 * from SHM_MIN_BYTES on are made here, one copy, through this process's mapping of device memory (the
 * runtime process shares it: STRATA_CUDART_VRAM="fd,base,size", device address base + i is byte i), as a
 * CPU writes GPU memory through a PCIe BAR; without it they go through the staging area. Smaller ones ride
 * in the pipe. */
#define STAGING (64u << 20)
#define SHM_MIN_BYTES (64u << 10)
#define PAGE 4096u
static char* shm_base;
static size_t shm_size;
static int shm_fd = -1;
static pthread_mutex_t staging_lock = PTHREAD_MUTEX_INITIALIZER;
static void* must(void* p);
static char* vram_map;  /* device memory, mapped (NULL: pageable copies are staged) */
static uint64_t vram_base, vram_size;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct block { size_t off, len; struct block* next; } block_t;
static block_t* free_blocks;  /* sorted by offset, coalesced */
typedef struct used { size_t off, len; struct used* next; } used_t;
static used_t* used_blocks;
typedef struct { uint32_t op, device; uint64_t len; } req_t;  /* device: low 16 bits the calling thread's device
                                                                  plus 1, high 16 bits thread_tag() */
typedef struct { int32_t err; uint32_t out_len; uint64_t len; uint32_t err_len, pad; } rep_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int wfd = -1, rfd = -1, connected = 0;
static pid_t owner;
static __thread cudaError_t last_error = cudaSuccess;

static cudaError_t note(cudaError_t e) { if (e != cudaSuccess) last_error = e; return e; }

/* a * b * c into *r; 1 if it does not fit a size_t (a 2-D/3-D size the program got wrong: without the check
 * the product wraps, a small buffer is allocated and the rows are copied past its end). */
static int size_overflows(size_t a, size_t b, size_t c, size_t* r) {
    size_t ab;
    return __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, r);
}

/* cudaSuccess once connected; cudaErrorNoDevice when not started by `strata run`; in a forked child,
 * cudaErrorInitializationError (as CUDA: a child may not use the parent's context). */
static pthread_mutex_t connect_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaError_t connect_locked(void);
static cudaError_t connect_server(void) {
    if (__atomic_load_n(&connected, __ATOMIC_ACQUIRE)) {
        if (getpid() != owner) {  /* a forked child: the pipes belong to the parent */
            static int warned;
            if (!warned++) fprintf(stderr, "strata: CUDA used in a forked child process (pid %d); only the process "
                                           "`strata run` started may use the device\n", (int)getpid());
            return cudaErrorInitializationError;
        }
        return cudaSuccess;
    }
    /* The first call may come from several host threads at once (a program whose first CUDA call is in its
     * worker threads): one of them connects, the others wait and then see `connected` (unlocked, a second
     * thread could read STRATA_CUDART_FDS after the first unset it and get cudaErrorNoDevice). */
    pthread_mutex_lock(&connect_lock);
    cudaError_t e = connected ? cudaSuccess : connect_locked();
    pthread_mutex_unlock(&connect_lock);
    return e;
}

static cudaError_t connect_locked(void) {
    const char* fds = getenv("STRATA_CUDART_FDS");
    if (!fds || sscanf(fds, "%d,%d", &wfd, &rfd) != 2) {
        static int warned;
        if (!warned++) fprintf(stderr, "strata: this program was built for strata's CUDA runtime; start it with "
                                       "`strata run PROGRAM` (STRATA_CUDART_FDS is not set)\n");
        return cudaErrorNoDevice;
    }
    owner = getpid();
    /* The connection is this process's alone: programs it starts must not inherit it (they would interleave
     * their requests with ours); a CUDA program it runs gets "not started by strata run" instead. */
    fcntl(wfd, F_SETFD, FD_CLOEXEC);
    fcntl(rfd, F_SETFD, FD_CLOEXEC);
    unsetenv("STRATA_CUDART_FDS");
    const char* shm = getenv("STRATA_CUDART_SHM");
    const char* vram = getenv("STRATA_CUDART_VRAM"), *staged = getenv("STRATA_STAGE_PAGEABLE");
    int vram_fd = -1;
    if (vram && sscanf(vram, "%d,%" SCNu64 ",%" SCNu64, &vram_fd, &vram_base, &vram_size) == 3) {
        fcntl(vram_fd, F_SETFD, FD_CLOEXEC);
        if (!(staged && *staged == '1')) {  /* "1": pageable copies always go through staging */
            void* p = mmap(NULL, vram_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, vram_fd, 0);
            if (p != MAP_FAILED) vram_map = p;
        }
        close(vram_fd);
    }
    size_t size = 0;
    if (shm && sscanf(shm, "%d,%zu", &shm_fd, &size) == 2 && size > STAGING) {
        fcntl(shm_fd, F_SETFD, FD_CLOEXEC);
        void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
        if (p != MAP_FAILED) {
            shm_base = p; shm_size = size;
            free_blocks = must(calloc(1, sizeof *free_blocks));
            free_blocks->off = STAGING; free_blocks->len = size - STAGING;
        }
    }
    unsetenv("STRATA_CUDART_SHM");
    __atomic_store_n(&connected, 1, __ATOMIC_RELEASE);  /* after the arena is mapped: others use it at once */
    return cudaSuccess;
}

/* Connect when the library is loaded (no request is sent: the pipes and the arena are only taken over), so the
 * process `strata run` started owns the connection before its main can fork. Connecting at the first call
 * instead let a child forked before any CUDA call take the pipes (it still had STRATA_CUDART_FDS) and then
 * share them with its parent, their requests and replies interleaved. Silent when not started by `strata run`:
 * the first CUDA call says so. */
__attribute__((constructor)) static void connect_at_load(void) {
    if (getenv("STRATA_CUDART_FDS")) connect_server();
}

static int in_shm(const void* p, size_t n) {  /* (p + n is not formed: it could wrap past the address space) */
    return shm_base && (const char*)p >= shm_base && n <= shm_size &&
           (size_t)((const char*)p - shm_base) <= shm_size - n;
}

/* First fit over the free list, whole pages. */
static void* shm_alloc(size_t n) {
    if (n > shm_size) return NULL;  /* rounding it up to pages would wrap to 0 for sizes near SIZE_MAX */
    n = (n + PAGE - 1) / PAGE * PAGE;
    if (!n) n = PAGE;
    pthread_mutex_lock(&heap_lock);
    void* r = NULL;
    for (block_t **pp = &free_blocks, *b; (b = *pp); pp = &b->next) {
        if (b->len < n) continue;
        used_t* u = must(malloc(sizeof *u));
        u->off = b->off; u->len = n; u->next = used_blocks; used_blocks = u;
        r = shm_base + b->off;
        b->off += n; b->len -= n;
        if (!b->len) { *pp = b->next; free(b); }
        break;
    }
    pthread_mutex_unlock(&heap_lock);
    return r;
}

static int shm_free(void* p) {
    size_t off = (size_t)((char*)p - shm_base), len = 0;
    pthread_mutex_lock(&heap_lock);
    for (used_t **pp = &used_blocks, *u; (u = *pp); pp = &u->next)
        if (u->off == off) { len = u->len; *pp = u->next; free(u); break; }
    if (!len) { pthread_mutex_unlock(&heap_lock); return 0; }
    fallocate(shm_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);  /* give pages back */
    block_t** pp = &free_blocks;
    while (*pp && (*pp)->off < off) pp = &(*pp)->next;
    block_t* b = must(malloc(sizeof *b));
    b->off = off; b->len = len; b->next = *pp; *pp = b;
    if (b->next && b->off + b->len == b->next->off) {  /* merge with the next */
        block_t* n = b->next; b->len += n->len; b->next = n->next; free(n);
    }
    for (block_t* a = free_blocks; a && a != b; a = a->next)  /* and with the previous */
        if (a->next == b && a->off + a->len == b->off) { a->len += b->len; a->next = b->next; free(b); break; }
    pthread_mutex_unlock(&heap_lock);
    return 1;
}

static int write_all(const void* p, size_t n) {
    const char* c = p;
    while (n) {
        ssize_t k = write(wfd, c, n);
        if (k < 0) { if (errno == EINTR) continue; return 0; }
        c += k; n -= (size_t)k;
    }
    return 1;
}

static int read_all(void* p, size_t n) {
    char* c = p;
    while (n) {
        ssize_t k = read(rfd, c, n);
        if (k < 0) { if (errno == EINTR) continue; return 0; }
        if (k == 0) return 0;
        c += k; n -= (size_t)k;
    }
    return 1;
}

static void lost(void) {
    fprintf(stderr, "strata: lost the connection to the strata runtime process\n");
    connected = 0;
    _exit(70);
}

/* The library's own bookkeeping (registrations, graph nodes, launch buffers) cannot go on without its memory:
 * running out of host memory there ends the program with a message, never a NULL dereference. Buffers sized
 * by a call's arguments are checked where they are made and fail that call with cudaErrorMemoryAllocation. */
static void* must(void* p) {
    if (!p) {
        fprintf(stderr, "strata: libcudart ran out of host memory for its own bookkeeping\n");
        _exit(70);
    }
    return p;
}

static __thread int current_device;

/* A small number naming the calling host thread in its requests (1..65535, handed out in order): CUDA keeps
 * the last error per host thread, so the runtime process keeps a launch's error for the thread that launched
 * (it was one error for all threads: another thread's cudaGetLastError took it). */
static uint32_t thread_tag(void) {
    static uint32_t next;
    static __thread uint32_t tag;
    if (!tag) tag = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED) % 0xFFFF + 1;
    return tag;
}

/* SIGPIPE is blocked in the calling thread while it writes a request: if the runtime process has died, the
 * write fails with EPIPE and lost() says so and exits 70, where the signal would kill the program without a
 * word. lost() exits at once, so the SIGPIPE left pending is never delivered; the program's own handling of
 * SIGPIPE (its mask and handler) is back as it was otherwise. */
static int send_req(uint32_t op, const void* a, size_t na, const void* b, size_t nb) {
    req_t h = {op, ((uint32_t)current_device + 1) | thread_tag() << 16, na + nb};
    sigset_t pipe_only, saved;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &saved);
    if (!write_all(&h, sizeof h) || (na && !write_all(a, na)) || (nb && !write_all(b, nb))) lost();
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return 1;
}

static void drain_text(uint32_t n, FILE* f) {
    if (!n) return;
    char* buf = malloc(n);
    if (!buf || !read_all(buf, n)) lost();
    fwrite(buf, 1, n, f);
    if (f == stderr) fflush(f);
    free(buf);
}

/* The reply to the oldest request still unanswered (with `lock` held). Its payload (at most `cap` bytes are
 * kept) goes to `out`; the text it carries to the program's stdout and stderr. */
static cudaError_t recv_reply(void* out, size_t cap, size_t* got) {
    rep_t r;
    if (!read_all(&r, sizeof r)) lost();
    size_t keep = r.len < cap ? r.len : cap;
    if (keep && !read_all(out, keep)) lost();
    for (uint64_t rest = r.len - keep; rest;) {  /* more than asked for: discard */
        char junk[4096];
        size_t k = rest < sizeof junk ? rest : sizeof junk;
        if (!read_all(junk, k)) lost();
        rest -= k;
    }
    if (got) *got = keep;
    drain_text(r.out_len, stdout);
    drain_text(r.err_len, stderr);
    return (cudaError_t)r.err;
}

/* One request, one reply. The reply payload (at most `cap` bytes are kept) goes to `out`. */
static cudaError_t rpc(uint32_t op, const void* a, size_t na, const void* b, size_t nb, void* out, size_t cap,
                       size_t* got) {
    cudaError_t c = connect_server();
    if (c != cudaSuccess) return note(c);
    pthread_mutex_lock(&lock);
    send_req(op, a, na, b, nb);
    cudaError_t e = recv_reply(out, cap, got);
    pthread_mutex_unlock(&lock);
    return note(e);
}

#define RPC0(op) rpc(op, NULL, 0, NULL, 0, NULL, 0, NULL)
#define RPCIN(op, x) rpc(op, &(x), sizeof(x), NULL, 0, NULL, 0, NULL)

/* ---- registration --------------------------------------------------------------------------------------- */
typedef struct { int magic, version; const unsigned long long* data; void* prelinked; } wrapper_t;
typedef struct module { uint64_t id; struct module* next; } module_t;
typedef struct func {
    const void* stub; char* name; module_t* mod; uint64_t fid; int nparams; uint32_t* sizes; size_t argbytes;
    struct func* next;
} func_t;
typedef struct var { const void* host; char* name; module_t* mod; uint64_t addr, size; struct var* next; } var_t;
static func_t* funcs;
static var_t* vars;

#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243b1

static size_t blob_size(const void* p) {
    const uint32_t* h = p;
    if (!p || h[0] != FATBIN_MAGIC) return 0;
    return (size_t)((const uint16_t*)p)[3] + (size_t)((const uint64_t*)p)[1];
}

/* Gather every fat binary container the wrapper reaches (its own and, version 2, the prelinked list). */
static size_t gather(const void* p, char** buf, size_t* len, size_t* cap, uint32_t* count, int depth) {
    if (!p || depth > 4) return 0;
    const uint32_t* w = p;
    if (w[0] == WRAPPER_MAGIC) {
        const wrapper_t* wr = p;
        gather(wr->data, buf, len, cap, count, depth + 1);
        if (wr->version == 2 && wr->prelinked)
            for (void* const* l = wr->prelinked; *l; l++) gather(*l, buf, len, cap, count, depth + 1);
        return *len;
    }
    size_t n = blob_size(p);
    if (!n || n == 16) return 0;  /* not a container, or an empty one */
    while (*len + 8 + n > *cap) { *cap = (*cap + 8 + n) * 2; *buf = must(realloc(*buf, *cap)); }
    uint64_t n64 = n;
    memcpy(*buf + *len, &n64, 8);
    memcpy(*buf + *len + 8, p, n);
    *len += 8 + n;
    (*count)++;
    return *len;
}

void** __cudaRegisterFatBinary(void* fatCubin) {
    module_t* m = must(calloc(1, sizeof *m));
    char* buf = NULL; size_t len = 0, cap = 0; uint32_t count = 0;
    gather(fatCubin, &buf, &len, &cap, &count, 0);
    if (connect_server() == cudaSuccess) {
        uint64_t id = 0;
        if (rpc(OP_REGISTER, &count, 4, buf, len, &id, 8, NULL) == cudaSuccess) m->id = id;
        last_error = cudaSuccess;  /* a bad image is reported at first use, not as a stray last error */
    }
    free(buf);
    return (void**)m;
}

void __cudaRegisterFatBinaryEnd(void** handle) { (void)handle; }

void __cudaUnregisterFatBinary(void** handle) {
    (void)handle;  /* modules live until the runtime process ends; nothing to send at exit */
}

void __cudaRegisterFunction(void** handle, const char* hostFun, char* deviceFun, const char* deviceName,
                            int thread_limit, uint3* tid, uint3* bid, dim3* bDim, dim3* gDim, int* wSize) {
    (void)deviceFun; (void)thread_limit; (void)tid; (void)bid; (void)bDim; (void)gDim; (void)wSize;
    func_t* f = must(calloc(1, sizeof *f));
    f->stub = hostFun; f->name = strdup(deviceName); f->mod = (module_t*)handle; f->nparams = -1;
    pthread_mutex_lock(&lock); f->next = funcs; funcs = f; pthread_mutex_unlock(&lock);
}

void __cudaRegisterVar(void** handle, char* hostVar, char* deviceAddress, const char* deviceName, int ext,
                       size_t size, int constant, int global) {
    (void)deviceAddress; (void)ext; (void)constant; (void)global;
    var_t* v = must(calloc(1, sizeof *v));
    v->host = hostVar; v->name = strdup(deviceName); v->mod = (module_t*)handle; v->size = size;
    pthread_mutex_lock(&lock); v->next = vars; vars = v; pthread_mutex_unlock(&lock);
}

typedef struct mvar { module_t* mod; void** hostptr; char* name; int ready; struct mvar* next; } mvar_t;
static mvar_t* mvars;

void __cudaRegisterManagedVar(void** handle, void** hostVarPtrAddress, char* deviceAddress, const char* deviceName,
                              int ext, size_t size, int constant, int global) {
    (void)deviceAddress; (void)ext; (void)size; (void)constant; (void)global;
    mvar_t* m = must(calloc(1, sizeof *m));
    m->mod = (module_t*)handle; m->hostptr = hostVarPtrAddress; m->name = strdup(deviceName);
    pthread_mutex_lock(&lock); m->next = mvars; mvars = m; pthread_mutex_unlock(&lock);
}

static cudaError_t map_managed(uint64_t addr, size_t size, int from_device);

/* Called by the host code before its first use of a __managed__ variable: load the module, map the
 * variable's device address in the program and fill it with the variable's initial value. */
char __cudaInitModule(void** handle) {
    char ok = 1;
    for (mvar_t* m = mvars; m; m = m->next) {
        if (m->ready || m->mod != (module_t*)handle) continue;
        uint64_t r[2] = {0, 0};
        /* {u64 module; name}: the name goes as the request's second part, whatever its length */
        if (rpc(OP_SYMBOL, &m->mod->id, 8, m->name, strlen(m->name), r, 16, NULL) != cudaSuccess || map_managed(r[0], r[1], 1) != cudaSuccess) {
            fprintf(stderr, "strata: cannot set up the __managed__ variable %s\n", m->name);
            ok = 0;
            continue;
        }
        *m->hostptr = (void*)(uintptr_t)r[0];
        m->ready = 1;
    }
    return ok;
}

static func_t* find_func(const void* stub) {
    for (func_t* f = funcs; f; f = f->next) if (f->stub == stub) return f;
    return NULL;
}

/* The kernel's parameter sizes (from its PTX .param list, which the runtime process knows). */
static cudaError_t func_info(func_t* f) {
    if (__atomic_load_n(&f->nparams, __ATOMIC_ACQUIRE) >= 0) return cudaSuccess;
    /* The request: {u64 module; name}, the name as its second part: a C++ template kernel's mangled name can
     * be kilobytes long (a fixed 1 KiB buffer refused those with cudaErrorInvalidDeviceFunction).
     * The reply: {u64 fid; u32 n; u32 sizes[n]}: a kernel's parameters fill at most 32764 bytes (CUDA's limit), so at most
     * that many; the reply must hold all n sizes (more parameters than a fixed buffer held were read past it) */
    enum { MAX_PARAMS = 32764 };
    uint32_t* rep = malloc((3 + MAX_PARAMS) * sizeof *rep);
    size_t got = 0;
    if (!rep) return note(cudaErrorMemoryAllocation);
    cudaError_t e = rpc(OP_FUNC_INFO, &f->mod->id, 8, f->name, strlen(f->name), rep, (3 + MAX_PARAMS) * sizeof *rep, &got);
    uint32_t n = got >= 12 ? rep[2] : 0;
    if (e == cudaSuccess && (got < 12 || n > MAX_PARAMS || got < 12 + 4 * (size_t)n)) {
        fprintf(stderr, "strata: the parameter list of kernel %s does not fit the runtime's reply\n", f->name);
        e = note(cudaErrorInvalidDeviceFunction);
    }
    if (e != cudaSuccess) { free(rep); return e; }
    uint64_t fid; memcpy(&fid, rep, 8);
    f->sizes = must(calloc((size_t)n + 1, 4));
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) { f->sizes[i] = rep[3 + i]; total += rep[3 + i]; }
    free(rep);
    f->argbytes = total; f->fid = fid;
    __atomic_store_n(&f->nparams, (int)n, __ATOMIC_RELEASE);  /* another thread may launch it at once */
    return cudaSuccess;
}

/* ---- graphs: stream capture and node building --------------------------------------------------------- */
/* Work queued on a capturing stream is recorded, not run; cudaGraphLaunch replays it in order on the
 * stream it is launched into. Captured copies read and write host memory when the graph runs, as in CUDA.
 * A capture spans several streams as in CUDA: a stream that waits on an event recorded in a capturing
 * stream joins its capture (fork), and the origin stream must wait on an event recorded after the last
 * work of every stream that joined (join) before cudaStreamEndCapture. Nodes are kept in the order they
 * were captured or added, which respects every dependency (a node's dependencies exist before it), so the
 * replay runs them in that order. */
enum { NODE_LAUNCH, NODE_COPY, NODE_MEMSET, NODE_HOST, NODE_EMPTY, NODE_COPY3D, NODE_REQUEST };
typedef struct {
    int kind;
    uint32_t op; char* buf; size_t n;                     /* a launch (or a host library's request, the
                                                             stream at byte `count`): patched at replay */
    void* dst; const void* src; size_t count; int mkind;  /* a copy */
    int value;                                            /* a memset (dst, value, count) */
    size_t pitch, width, height;                          /* a 2-D memset (node API); height 0: 1-D */
    cudaHostFn_t fn; void* user;                          /* a host node */
    struct cudaMemcpy3DParms p3;                          /* a memcpy node (node API) */
} node_t;
static cudaError_t copy_3d(const struct cudaMemcpy3DParms* p, cudaStream_t s);
struct CUgraph_st { node_t* nodes; size_t n, cap; };
struct CUgraphExec_st { struct CUgraph_st g; };
/* one entry per stream taking part in a capture: the origin (began it) and the streams that joined */
typedef struct { cudaStream_t s; struct CUgraph_st* g; int origin; size_t work, joined; } capture_t;
static capture_t captures[128];  /* streams taking part in captures at once */
/* events recorded in a capturing stream: which stream, and how much of its work they cover */
static struct { cudaEvent_t ev; struct CUgraph_st* g; cudaStream_t s; size_t work; } captured_events[1024];
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
#define NCAPTURES (sizeof captures / sizeof captures[0])
#define NEVENTS (sizeof captured_events / sizeof captured_events[0])

static capture_t* capture_entry(cudaStream_t s) {  /* with capture_lock held */
    if (!s) return NULL;  /* the legacy default stream cannot be captured */
    for (size_t i = 0; i < NCAPTURES; i++) if (captures[i].g && captures[i].s == s) return &captures[i];
    return NULL;
}

static struct CUgraph_st* capturing(cudaStream_t s) {
    pthread_mutex_lock(&capture_lock);
    capture_t* c = capture_entry(s);
    struct CUgraph_st* g = c ? c->g : NULL;
    pthread_mutex_unlock(&capture_lock);
    return g;
}

static cudaGraphNode_t push_node(struct CUgraph_st* g, node_t nd) {
    if (g->n == g->cap) { g->cap = g->cap ? 2 * g->cap : 8; g->nodes = must(realloc(g->nodes, g->cap * sizeof *g->nodes)); }
    g->nodes[g->n++] = nd;
    return (cudaGraphNode_t)(uintptr_t)g->n;  /* a node is its 1-based position (stable while the graph grows) */
}

/* A node captured from stream s (its capture counts the work, for the join check). */
static void add_node(cudaStream_t s, struct CUgraph_st* g, node_t nd) {
    pthread_mutex_lock(&capture_lock);
    capture_t* c = capture_entry(s);
    if (c) c->work++;
    pthread_mutex_unlock(&capture_lock);
    push_node(g, nd);
}

/* ---- launch --------------------------------------------------------------------------------------------- */
typedef struct { dim3 grid, block; size_t shmem; cudaStream_t stream; } callcfg_t;
static __thread callcfg_t cfg_stack[16];
static __thread int cfg_depth;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st* stream) {
    if (cfg_depth >= 16) return 1;
    callcfg_t c = {gridDim, blockDim, sharedMem, stream};
    cfg_stack[cfg_depth++] = c;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream) {
    if (cfg_depth <= 0) return cudaErrorMissingConfiguration;
    callcfg_t c = cfg_stack[--cfg_depth];
    *gridDim = c.grid; *blockDim = c.block; *sharedMem = c.shmem; *(cudaStream_t*)stream = c.stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* funcAddr) {
    func_t* f = find_func(funcAddr);
    if (!f) return note(cudaErrorInvalidDeviceFunction);
    *kernel = (cudaKernel_t)f;
    return cudaSuccess;
}

static cudaError_t launch_op(uint32_t op, func_t* f, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s);
static cudaError_t launch(func_t* f, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return launch_op(OP_LAUNCH, f, g, b, args, shmem, s);
}

static cudaError_t launch_op(uint32_t op, func_t* f, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    if (!f) return note(cudaErrorInvalidDeviceFunction);
    cudaError_t c = connect_server();
    if (c != cudaSuccess) return note(c);
    cudaError_t e = func_info(f);
    if (e != cudaSuccess) return e;
    size_t head = 8 + 24 + 16, n = head + f->argbytes;
    char stackbuf[4096];
    char* buf = n <= sizeof stackbuf ? stackbuf : must(malloc(n));
    uint32_t dims[6] = {g.x, g.y, g.z, b.x, b.y, b.z};
    uint64_t sh = shmem, st = (uint64_t)(uintptr_t)s;
    memcpy(buf, &f->fid, 8); memcpy(buf + 8, dims, 24); memcpy(buf + 32, &sh, 8); memcpy(buf + 40, &st, 8);
    size_t off = head;
    for (int i = 0; i < f->nparams; i++) { memcpy(buf + off, args[i], f->sizes[i]); off += f->sizes[i]; }
    struct CUgraph_st* g0 = capturing(s);
    if (g0) {
        node_t nd = {.kind = NODE_LAUNCH, .op = op, .buf = must(malloc(n)), .n = n};
        memcpy(nd.buf, buf, n);
        add_node(s, g0, nd);
        if (buf != stackbuf) free(buf);
        return cudaSuccess;
    }
    pthread_mutex_lock(&lock);
    send_req(op, buf, n, NULL, 0);  /* pipelined: errors come back from the next call that asks */
    pthread_mutex_unlock(&lock);
    if (buf != stackbuf) free(buf);
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return launch((func_t*)kernel, g, b, args, shmem, s);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b, void** args, size_t shmem,
                                    cudaStream_t s) {
    return launch((func_t*)kernel, g, b, args, shmem, s);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return launch(find_func(func), g, b, args, shmem, s);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return launch(find_func(func), g, b, args, shmem, s);
}

/* ---- memory --------------------------------------------------------------------------------------------- */
cudaError_t cudaMalloc(void** devPtr, size_t size) {
    uint64_t sz = size, p = 0;
    if (!devPtr) return note(cudaErrorInvalidValue);
    cudaError_t e = rpc(OP_MALLOC, &sz, 8, NULL, 0, &p, 8, NULL);
    *devPtr = e == cudaSuccess ? (void*)(uintptr_t)p : NULL;
    return e;
}

/* Managed memory: device memory at address A, and the same bytes mapped in the program at the same address
 * A (pages of the shared arena mapped with MAP_FIXED_NOREPLACE). The runtime process copies the host side
 * to the device before kernels and copies back at synchronizing calls (see server.py), so host code and
 * kernels see the same bytes through the same pointer. */
typedef struct managed { uint64_t addr, off, len; struct managed* next; } managed_t;
static managed_t* managed_list;
static pthread_mutex_t managed_lock = PTHREAD_MUTEX_INITIALIZER;

/* Map `size` bytes of the arena at the device address `addr` in the program and tell the runtime process;
 * `from_device`: the device holds the initial bytes (a __managed__ variable's initializer). */
static cudaError_t map_managed(uint64_t addr, size_t size, int from_device) {
    char* host = shm_base ? shm_alloc(size) : NULL;
    size_t len = (size + PAGE - 1) / PAGE * PAGE;
    void* dev = (void*)(uintptr_t)addr;
    void* at = host ? mmap(dev, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, shm_fd,
                           (off_t)(host - shm_base)) : MAP_FAILED;
    if (at != dev) {
        if (at != MAP_FAILED) munmap(at, len);
        if (host) shm_free(host);
        fprintf(stderr, "strata: managed memory: cannot map %zu bytes at the device address %p in the program\n",
                size, dev);
        return note(cudaErrorMemoryAllocation);
    }
    managed_t* m = must(malloc(sizeof *m));
    m->addr = addr; m->off = (uint64_t)(host - shm_base); m->len = size;
    pthread_mutex_lock(&managed_lock); m->next = managed_list; managed_list = m; pthread_mutex_unlock(&managed_lock);
    uint64_t v[4] = {m->addr, m->off, size, (uint64_t)from_device};
    return rpc(OP_MANAGED, v, sizeof v, NULL, 0, NULL, 0, NULL);
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
    (void)flags;
    if (!devPtr || !size) return note(cudaErrorInvalidValue);
    void* dev = NULL;
    cudaError_t e = cudaMalloc(&dev, size);
    if (e != cudaSuccess) return e;
    e = map_managed((uint64_t)(uintptr_t)dev, size, 0);
    if (e != cudaSuccess) { cudaFree(dev); return note(e); }
    *devPtr = dev;
    return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream) {
    (void)devPtr; (void)count; (void)location; (void)flags; (void)stream;
    return cudaSuccess;  /* a hint: the runtime process moves managed memory when kernels need it */
}

cudaError_t cudaMemAdvise(const void* devPtr, size_t count, enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location) {
    (void)devPtr; (void)count; (void)advice; (void)location;
    return cudaSuccess;
}

cudaError_t cudaFree(void* devPtr) {
    uint64_t p = (uint64_t)(uintptr_t)devPtr;
    cudaError_t e = RPCIN(OP_FREE, p);
    pthread_mutex_lock(&managed_lock);
    for (managed_t **pp = &managed_list, *m; (m = *pp); pp = &m->next)
        if (m->addr == p) {
            *pp = m->next;
            munmap((void*)(uintptr_t)m->addr, (m->len + PAGE - 1) / PAGE * PAGE);
            shm_free(shm_base + m->off);
            free(m);
            break;
        }
    pthread_mutex_unlock(&managed_lock);
    return e;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (!ptr) return note(cudaErrorInvalidValue);
    connect_server();
    *ptr = shm_base ? shm_alloc(size) : NULL;
    if (!*ptr && posix_memalign(ptr, PAGE, size ? size : 1)) { *ptr = NULL; return note(cudaErrorMemoryAllocation); }
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) { (void)flags; return cudaMallocHost(pHost, size); }
/* Synchronizing, as in CUDA: an asynchronous copy may still be reading or writing the pages, which a later
 * cudaMallocHost would hand out again. */
cudaError_t cudaFreeHost(void* ptr) {
    cudaError_t e = cudaSuccess;
    if (ptr && in_shm(ptr, 1)) e = RPC0(OP_SYNC);
    if (ptr && !(in_shm(ptr, 1) && shm_free(ptr))) free(ptr);
    return e;
}
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) { (void)ptr; (void)size; (void)flags; return cudaSuccess; }
cudaError_t cudaHostUnregister(void* ptr) { (void)ptr; return cudaSuccess; }

/* 0: host, 1: device (asks the runtime process, which owns the device address ranges). */
static int is_device(const void* p) {
    uint64_t a = (uint64_t)(uintptr_t)p; uint32_t kind = 0;
    if (rpc(OP_POINTER_KIND, &a, 8, NULL, 0, &kind, 4, NULL) != cudaSuccess) { last_error = cudaSuccess; return 0; }
    return (int)kind;
}

/* Copies of pageable memory through the staging area, in chunks of half of it, pipelined: this side copies
 * one chunk into (or out of) one half while the runtime process moves the other half to (or from) the
 * device, as a GPU driver pipelines pageable copies through its pinned buffers. */
#define CHUNK (STAGING / 2)
static cudaError_t staged_htod(void* dst, const void* src, size_t count, uint64_t st) {
    cudaError_t e = cudaSuccess, r;
    pthread_mutex_lock(&staging_lock);
    pthread_mutex_lock(&lock);
    size_t i = 0;
    for (size_t done = 0; done < count; done += CHUNK, i++) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        memcpy(shm_base + (i % 2) * CHUNK, (const char*)src + done, n);  /* while chunk i-1 goes to the device */
        if (i && (r = recv_reply(NULL, 0, NULL)) != cudaSuccess && e == cudaSuccess) e = r;
        uint64_t v[4] = {(uint64_t)(uintptr_t)dst + done, st, (i % 2) * CHUNK, n};
        send_req(OP_HTOD_SHM, v, sizeof v, NULL, 0);
    }
    if (i && (r = recv_reply(NULL, 0, NULL)) != cudaSuccess && e == cudaSuccess) e = r;
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&staging_lock);
    return note(e);
}

static cudaError_t staged_dtoh(void* dst, const void* src, size_t count, uint64_t st) {
    cudaError_t e = cudaSuccess, r;
    size_t chunks = (count + CHUNK - 1) / CHUNK;
    pthread_mutex_lock(&staging_lock);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i <= chunks; i++) {
        if (i < chunks) {  /* ask for chunk i into half i % 2 ... */
            size_t n = count - i * CHUNK < CHUNK ? count - i * CHUNK : CHUNK;
            uint64_t v[4] = {(uint64_t)(uintptr_t)src + i * CHUNK, n, st, (i % 2) * CHUNK};
            send_req(OP_DTOH_SHM, v, sizeof v, NULL, 0);
        }
        if (i) {  /* ... while chunk i-1, arrived in the other half, is copied out here */
            size_t k = i - 1, n = count - k * CHUNK < CHUNK ? count - k * CHUNK : CHUNK;
            if ((r = recv_reply(NULL, 0, NULL)) != cudaSuccess && e == cudaSuccess) e = r;
            if (e == cudaSuccess) memcpy((char*)dst + k * CHUNK, shm_base + (k % 2) * CHUNK, n);
        }
    }
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&staging_lock);
    return note(e);
}

/* A pageable copy made here through the mapping of device memory, one copy: the runtime process queues it
 * for its copy engine (range check, modeled time, stream order) and answers once earlier work on the stream
 * is done. The connection stays held until the bytes have moved, so another host thread's launch cannot
 * reach the stream between the answer and the copy (CUDA orders it after the copy). 0 if the range is not
 * in the mapping (the caller stages the copy). */
static int mapped_copy(int to_device, void* host, uint64_t dev, size_t count, uint64_t st, cudaError_t* e) {
    if (!vram_map || dev < vram_base || dev - vram_base > vram_size || count > vram_size - (dev - vram_base))
        return 0;
    uint64_t v[3] = {dev, count, st};
    pthread_mutex_lock(&lock);
    send_req(to_device ? OP_HTOD_MAPPED : OP_DTOH_MAPPED, v, sizeof v, NULL, 0);
    cudaError_t r = recv_reply(NULL, 0, NULL);
    if (r == cudaSuccess) {
        if (to_device) memcpy(vram_map + (dev - vram_base), host, count);
        else memcpy(host, vram_map + (dev - vram_base), count);
    }
    pthread_mutex_unlock(&lock);
    *e = note(r);
    return 1;
}

static cudaError_t copy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s) {
    struct CUgraph_st* g = capturing(s);
    if (g) {
        node_t nd = {.kind = NODE_COPY, .dst = dst, .src = src, .count = count, .mkind = kind};
        add_node(s, g, nd);
        return cudaSuccess;
    }
    uint64_t st = (uint64_t)(uintptr_t)s;
    cudaError_t c = connect_server();
    if (c != cudaSuccess) return note(c);
    if (kind == cudaMemcpyDefault) {
        int dd = is_device(dst), sd = is_device(src);
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    }
    switch (kind) {
    case cudaMemcpyHostToHost:
        if (count) memmove(dst, src, count);
        return cudaSuccess;
    case cudaMemcpyHostToDevice: {
        if (in_shm(src, count)) {
            uint64_t v[4] = {(uint64_t)(uintptr_t)dst, st, (uint64_t)((const char*)src - shm_base), count};
            return rpc(OP_HTOD_SHM, v, sizeof v, NULL, 0, NULL, 0, NULL);
        }
        cudaError_t e;
        if (count >= SHM_MIN_BYTES && mapped_copy(1, (void*)src, (uint64_t)(uintptr_t)dst, count, st, &e)) return e;
        if (count >= SHM_MIN_BYTES && shm_base) return staged_htod(dst, src, count, st);
        uint64_t h[2] = {(uint64_t)(uintptr_t)dst, st};
        return rpc(OP_HTOD, h, 16, src, count, NULL, 0, NULL);
    }
    case cudaMemcpyDeviceToHost: {
        if (in_shm(dst, count)) {
            uint64_t v[4] = {(uint64_t)(uintptr_t)src, count, st, (uint64_t)((char*)dst - shm_base)};
            return rpc(OP_DTOH_SHM, v, sizeof v, NULL, 0, NULL, 0, NULL);
        }
        cudaError_t e;
        if (count >= SHM_MIN_BYTES && mapped_copy(0, dst, (uint64_t)(uintptr_t)src, count, st, &e)) return e;
        if (count >= SHM_MIN_BYTES && shm_base) return staged_dtoh(dst, src, count, st);
        uint64_t h[3] = {(uint64_t)(uintptr_t)src, count, st};
        return rpc(OP_DTOH, h, 24, NULL, 0, dst, count, NULL);
    }
    case cudaMemcpyDeviceToDevice: {
        uint64_t h[4] = {(uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, count, st};
        return rpc(OP_DTOD, h, 32, NULL, 0, NULL, 0, NULL);
    }
    default:
        return note(cudaErrorInvalidMemcpyDirection);
    }
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    return copy(dst, src, count, kind, NULL);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s) {
    return copy(dst, src, count, kind, s ? s : (cudaStream_t)0);
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s) {
    return copy(dst, src, count, kind, s);
}
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    return copy(dst, src, count, kind, NULL);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
    uint64_t h[4] = {(uint64_t)(uintptr_t)devPtr, (uint64_t)value, count, 0};
    return rpc(OP_MEMSET, h, 32, NULL, 0, NULL, 0, NULL);
}
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t s) {
    struct CUgraph_st* g = capturing(s);
    if (g) {
        node_t nd = {.kind = NODE_MEMSET, .dst = devPtr, .count = count, .value = value};
        add_node(s, g, nd);
        return cudaSuccess;
    }
    uint64_t h[4] = {(uint64_t)(uintptr_t)devPtr, (uint64_t)value, count, (uint64_t)(uintptr_t)s};
    return rpc(OP_MEMSET, h, 32, NULL, 0, NULL, 0, NULL);
}

cudaError_t cudaMemGetInfo(size_t* free_, size_t* total) {
    uint64_t r[2] = {0, 0};
    cudaError_t e = rpc(OP_MEM_INFO, NULL, 0, NULL, 0, r, 16, NULL);
    if (e != cudaSuccess) return e;  /* outputs untouched on error, as CUDA leaves them */
    if (free_) *free_ = r[0];
    if (total) *total = r[1];
    return e;
}

static var_t* find_var(const void* symbol) {
    for (var_t* v = vars; v; v = v->next) if (v->host == symbol) return v;
    return NULL;
}

static cudaError_t symbol_address(const void* symbol, uint64_t* addr, uint64_t* size) {
    var_t* v = find_var(symbol);
    if (!v) return note(cudaErrorInvalidSymbol);
    if (!v->addr) {
        uint64_t r[2] = {0, 0};
        cudaError_t e = rpc(OP_SYMBOL, &v->mod->id, 8, v->name, strlen(v->name), r, 16, NULL);
        if (e != cudaSuccess) return e;
        v->addr = r[0]; v->size = r[1];
    }
    *addr = v->addr; *size = v->size;
    return cudaSuccess;
}

cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
    uint64_t a, n;
    if (!devPtr) return note(cudaErrorInvalidValue);
    cudaError_t e = symbol_address(symbol, &a, &n);
    if (e == cudaSuccess) *devPtr = (void*)(uintptr_t)a;
    return e;
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
    uint64_t a, n;
    if (!size) return note(cudaErrorInvalidValue);
    cudaError_t e = symbol_address(symbol, &a, &n);
    if (e == cudaSuccess) *size = n;
    return e;
}

static cudaError_t symbol_copy(void* host, const void* symbol, size_t count, size_t offset, int to_symbol,
                               enum cudaMemcpyKind kind, cudaStream_t s) {
    uint64_t a, n;
    cudaError_t e = symbol_address(symbol, &a, &n);
    if (e != cudaSuccess) return e;
    if (offset > n || count > n - offset) return note(cudaErrorInvalidValue);  /* (offset + count could wrap) */
    void* dev = (void*)(uintptr_t)(a + offset);
    if (to_symbol)
        return copy(dev, host, count, kind == cudaMemcpyDefault ? cudaMemcpyDefault : kind, s);
    return copy(host, dev, count, kind, s);
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind) {
    return symbol_copy((void*)src, symbol, count, offset, 1, kind, NULL);
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind) {
    return symbol_copy(dst, symbol, count, offset, 0, kind, NULL);
}
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t s) {
    return symbol_copy((void*)src, symbol, count, offset, 1, kind, s);
}
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t s) {
    return symbol_copy(dst, symbol, count, offset, 0, kind, s);
}

/* ---- devices -------------------------------------------------------------------------------------------- */
/* The order of these values must match protocol.PROP_FIELDS. */
enum { P_TOTAL_GLOBAL, P_SMEM_BLOCK, P_REGS_BLOCK, P_WARP, P_MAX_THREADS, P_TDIM0, P_TDIM1, P_TDIM2, P_GRID0,
       P_GRID1, P_GRID2, P_CONST, P_MAJOR, P_MINOR, P_SMS, P_BUS_WIDTH, P_L2, P_THREADS_SM, P_SMEM_SM,
       P_REGS_SM, P_SMEM_OPTIN, P_BLOCKS_SM, P_RESERVED_SMEM, P_PCI_BUS, P_PCI_DEV, P_PCI_DOMAIN, P_ASYNC_ENGINES,
       P_CONCURRENT, P_COOPERATIVE, P_UNIFIED, P_MANAGED, P_ECC, P_CLOCK_KHZ, P_MEM_CLOCK_KHZ, P_COUNT, P_N };

static cudaError_t props(int device, int64_t* v, char* name) {
    int32_t d = device;
    char rep[P_N * 8 + 256];
    memset(rep, 0, sizeof rep);
    cudaError_t e = rpc(OP_PROPS, &d, 4, NULL, 0, rep, sizeof rep, NULL);
    if (e != cudaSuccess) return e;
    memcpy(v, rep, P_N * 8);
    if (name) { memcpy(name, rep + P_N * 8, 255); name[255] = 0; }
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
    int64_t v[P_N];
    cudaError_t e = props(-1, v, NULL);
    if (!count) return note(cudaErrorInvalidValue);
    if (e != cudaSuccess) { *count = 0; return e; }  /* CUDA reports 0 devices with the error */
    *count = (int)v[P_COUNT];
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* out, int device) {
    int64_t v[P_N];
    if (!out) return note(cudaErrorInvalidValue);
    struct cudaDeviceProp prop, *p = &prop;  /* filled here and copied out on success: an error leaves *out alone */
    memset(p, 0, sizeof *p);
    cudaError_t e = props(device, v, p->name);
    if (e != cudaSuccess) return e;
    p->totalGlobalMem = (size_t)v[P_TOTAL_GLOBAL]; p->sharedMemPerBlock = (size_t)v[P_SMEM_BLOCK];
    p->regsPerBlock = (int)v[P_REGS_BLOCK]; p->warpSize = (int)v[P_WARP]; p->memPitch = 2147483647;
    p->maxThreadsPerBlock = (int)v[P_MAX_THREADS];
    p->maxThreadsDim[0] = (int)v[P_TDIM0]; p->maxThreadsDim[1] = (int)v[P_TDIM1]; p->maxThreadsDim[2] = (int)v[P_TDIM2];
    p->maxGridSize[0] = (int)v[P_GRID0]; p->maxGridSize[1] = (int)v[P_GRID1]; p->maxGridSize[2] = (int)v[P_GRID2];
    p->totalConstMem = (size_t)v[P_CONST]; p->major = (int)v[P_MAJOR]; p->minor = (int)v[P_MINOR];
    p->textureAlignment = 512; p->texturePitchAlignment = 32; p->multiProcessorCount = (int)v[P_SMS];
    p->memoryBusWidth = (int)v[P_BUS_WIDTH]; p->l2CacheSize = (int)v[P_L2];
    p->maxThreadsPerMultiProcessor = (int)v[P_THREADS_SM]; p->sharedMemPerMultiprocessor = (size_t)v[P_SMEM_SM];
    p->regsPerMultiprocessor = (int)v[P_REGS_SM]; p->sharedMemPerBlockOptin = (size_t)v[P_SMEM_OPTIN];
    p->maxBlocksPerMultiProcessor = (int)v[P_BLOCKS_SM]; p->reservedSharedMemPerBlock = (size_t)v[P_RESERVED_SMEM];
    p->pciBusID = (int)v[P_PCI_BUS]; p->pciDeviceID = (int)v[P_PCI_DEV]; p->pciDomainID = (int)v[P_PCI_DOMAIN];
    p->asyncEngineCount = (int)v[P_ASYNC_ENGINES]; p->concurrentKernels = (int)v[P_CONCURRENT];
    p->cooperativeLaunch = (int)v[P_COOPERATIVE]; p->unifiedAddressing = (int)v[P_UNIFIED];
    p->managedMemory = shm_base != NULL; p->ECCEnabled = (int)v[P_ECC]; p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1; p->localL1CacheSupported = 1; p->clusterLaunch = 1; p->hostNumaId = -1;
    p->surfaceAlignment = 512;
    *out = prop;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
    int64_t v[P_N];
    if (!value) return note(cudaErrorInvalidValue);
    cudaError_t e = props(device, v, NULL);
    if (e != cudaSuccess) return e;
    int64_t r;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: r = v[P_MAX_THREADS]; break;
    case cudaDevAttrMaxBlockDimX: r = v[P_TDIM0]; break;
    case cudaDevAttrMaxBlockDimY: r = v[P_TDIM1]; break;
    case cudaDevAttrMaxBlockDimZ: r = v[P_TDIM2]; break;
    case cudaDevAttrMaxGridDimX: r = v[P_GRID0]; break;
    case cudaDevAttrMaxGridDimY: r = v[P_GRID1]; break;
    case cudaDevAttrMaxGridDimZ: r = v[P_GRID2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: r = v[P_SMEM_BLOCK]; break;
    case cudaDevAttrTotalConstantMemory: r = v[P_CONST]; break;
    case cudaDevAttrWarpSize: r = v[P_WARP]; break;
    case cudaDevAttrMaxRegistersPerBlock: r = v[P_REGS_BLOCK]; break;
    case cudaDevAttrClockRate: r = v[P_CLOCK_KHZ]; break;
    case cudaDevAttrMemoryClockRate: r = v[P_MEM_CLOCK_KHZ]; break;
    case cudaDevAttrMultiProcessorCount: r = v[P_SMS]; break;
    case cudaDevAttrComputeCapabilityMajor: r = v[P_MAJOR]; break;
    case cudaDevAttrComputeCapabilityMinor: r = v[P_MINOR]; break;
    case cudaDevAttrGlobalMemoryBusWidth: r = v[P_BUS_WIDTH]; break;
    case cudaDevAttrL2CacheSize: r = v[P_L2]; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: r = v[P_THREADS_SM]; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: r = v[P_SMEM_SM]; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: r = v[P_REGS_SM]; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: r = v[P_SMEM_OPTIN]; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: r = v[P_BLOCKS_SM]; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: r = v[P_RESERVED_SMEM]; break;
    case cudaDevAttrPciBusId: r = v[P_PCI_BUS]; break;
    case cudaDevAttrPciDeviceId: r = v[P_PCI_DEV]; break;
    case cudaDevAttrPciDomainId: r = v[P_PCI_DOMAIN]; break;
    case cudaDevAttrAsyncEngineCount: r = v[P_ASYNC_ENGINES]; break;
    case cudaDevAttrConcurrentKernels: r = v[P_CONCURRENT]; break;
    case cudaDevAttrCooperativeLaunch: r = v[P_COOPERATIVE]; break;
    case cudaDevAttrUnifiedAddressing: r = v[P_UNIFIED]; break;
    case cudaDevAttrManagedMemory: r = shm_base != NULL; break;
    case cudaDevAttrConcurrentManagedAccess: r = 0; break;
    case cudaDevAttrEccEnabled: r = v[P_ECC]; break;
    case cudaDevAttrIntegrated: case cudaDevAttrCanMapHostMemory: case cudaDevAttrComputeMode: r = 0; break;
    case cudaDevAttrGlobalL1CacheSupported: case cudaDevAttrLocalL1CacheSupported:
    case cudaDevAttrStreamPrioritiesSupported: r = 1; break;
    default:
        fprintf(stderr, "strata: cudaDeviceGetAttribute: attribute %d is not modeled\n", (int)attr);
        return note(cudaErrorInvalidValue);
    }
    *value = (int)r;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    int32_t d = device;
    cudaError_t e = rpc(OP_SET_DEVICE, &d, 4, NULL, 0, NULL, 0, NULL);
    if (e == cudaSuccess) current_device = device;
    return e;
}
cudaError_t cudaGetDevice(int* device) { if (!device) return note(cudaErrorInvalidValue); *device = current_device; return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return RPC0(OP_SYNC); }
cudaError_t cudaDeviceReset(void) { return RPC0(OP_RESET); }
cudaError_t cudaThreadSynchronize(void) { return RPC0(OP_SYNC); }
cudaError_t cudaSetDeviceFlags(unsigned int flags) { (void)flags; return cudaSuccess; }
cudaError_t cudaGetDeviceFlags(unsigned int* flags) { if (flags) *flags = 0; return cudaSuccess; }
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache c) { (void)c; return cudaSuccess; }
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* c) { if (c) *c = cudaFuncCachePreferNone; return cudaSuccess; }
cudaError_t cudaFuncSetCacheConfig(const void* f, enum cudaFuncCache c) { (void)f; (void)c; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int* v) { if (!v) return note(cudaErrorInvalidValue); *v = CUDART_VERSION; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int* v) { if (!v) return note(cudaErrorInvalidValue); *v = CUDART_VERSION; return cudaSuccess; }
cudaError_t cudaChooseDevice(int* device, const struct cudaDeviceProp* prop) {
    if (!device || !prop) return note(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

/* ---- errors --------------------------------------------------------------------------------------------- */
cudaError_t cudaGetLastError(void) {
    uint32_t peek = 0;
    cudaError_t mine = last_error;
    last_error = cudaSuccess;
    cudaError_t theirs = connected ? rpc(OP_LAST_ERROR, &peek, 4, NULL, 0, NULL, 0, NULL) : cudaSuccess;
    last_error = cudaSuccess;
    return mine != cudaSuccess ? mine : theirs;
}

cudaError_t cudaPeekAtLastError(void) {
    uint32_t peek = 1;
    cudaError_t mine = last_error;
    cudaError_t theirs = connected ? rpc(OP_LAST_ERROR, &peek, 4, NULL, 0, NULL, 0, NULL) : cudaSuccess;
    last_error = mine;
    return mine != cudaSuccess ? mine : theirs;
}

#include "errors.inc"

const char* cudaGetErrorName(cudaError_t e) {
    for (size_t i = 0; i < sizeof error_table / sizeof error_table[0]; i++)
        if (error_table[i].code == (int)e) return error_table[i].name;
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
    for (size_t i = 0; i < sizeof error_table / sizeof error_table[0]; i++)
        if (error_table[i].code == (int)e) return error_table[i].text;
    return "unrecognized error code";
}

/* ---- streams and events --------------------------------------------------------------------------------- */
static cudaError_t create_handle(uint32_t op, uint32_t flags, void** out) {
    uint64_t h = 0;
    if (!out) return note(cudaErrorInvalidValue);
    cudaError_t e = rpc(op, &flags, 4, NULL, 0, &h, 8, NULL);
    *out = e == cudaSuccess ? (void*)(uintptr_t)h : NULL;
    return e;
}

static cudaError_t on_handle(uint32_t op, const void* h) {
    uint64_t v = (uint64_t)(uintptr_t)h;
    return rpc(op, &v, 8, NULL, 0, NULL, 0, NULL);
}

cudaError_t cudaStreamCreate(cudaStream_t* s) { return create_handle(OP_STREAM_CREATE, 0, (void**)s); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) { return create_handle(OP_STREAM_CREATE, flags, (void**)s); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int priority) {
    (void)priority; return create_handle(OP_STREAM_CREATE, flags, (void**)s);
}
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) { return on_handle(OP_STREAM_DESTROY, s); }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return on_handle(OP_STREAM_SYNC, s); }
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { return on_handle(OP_STREAM_SYNC, s); }
cudaError_t cudaStreamQuery(cudaStream_t s) { return on_handle(OP_STREAM_QUERY, s); }
/* The capture tables have fixed sizes: past them a call fails, saying so once, rather than leaving a stream
 * or an event out of the graph. */
static int capture_table_full(const char* what, size_t n) {
    static int said_streams, said_events;
    int* said = n == NCAPTURES ? &said_streams : &said_events;
    if (!(*said)++) fprintf(stderr, "strata: libcudart captures at most %zu %s at once\n", n, what);
    return -1;
}

/* In a capture, an event recorded in a capturing stream is a dependency, not work: a stream waiting on it
 * joins the capture, and the origin waiting on it marks the recording stream's work up to it as joined.
 * 1: handled, 0: not a captured event, -1: the capture tables are full. */
static int capture_wait(cudaStream_t s, cudaEvent_t ev) {
    int handled = 0;
    pthread_mutex_lock(&capture_lock);
    for (size_t i = 0; i < NEVENTS && !handled; i++) {
        if (captured_events[i].ev != ev || !captured_events[i].g) continue;
        handled = 1;
        struct CUgraph_st* g = captured_events[i].g;
        capture_t* from = capture_entry(captured_events[i].s);
        capture_t* c = capture_entry(s);
        if (!c) {  /* fork: s joins the capture */
            size_t k = 0;
            while (k < NCAPTURES && captures[k].g) k++;
            if (k < NCAPTURES) captures[k] = (capture_t){s, g, 0, 0, 0};
            else handled = capture_table_full("streams", NCAPTURES);
        } else if (c->g == g && from && from != c && from->joined < captured_events[i].work) {
            from->joined = captured_events[i].work;  /* join: the waiting stream now follows that work */
        }
    }
    pthread_mutex_unlock(&capture_lock);
    return handled;
}

static int capture_record(cudaEvent_t ev, cudaStream_t s) {
    int handled = 0;
    pthread_mutex_lock(&capture_lock);
    capture_t* c = capture_entry(s);
    if (c) {
        handled = 1;
        size_t slot = NEVENTS;
        for (size_t i = 0; i < NEVENTS; i++) {
            if (captured_events[i].ev == ev) { slot = i; break; }
            if (!captured_events[i].g && slot == NEVENTS) slot = i;
        }
        if (slot < NEVENTS) {
            captured_events[slot].ev = ev; captured_events[slot].g = c->g;
            captured_events[slot].s = s; captured_events[slot].work = c->work;
        } else {
            handled = capture_table_full("recorded events", NEVENTS);
        }
    }
    pthread_mutex_unlock(&capture_lock);
    return handled;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned int flags) {
    (void)flags;
    int captured = capture_wait(s, ev);
    if (captured) return captured > 0 ? cudaSuccess : note(cudaErrorStreamCaptureUnsupported);
    uint64_t h[2] = {(uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)ev};
    return rpc(OP_STREAM_WAIT_EVENT, h, 16, NULL, 0, NULL, 0, NULL);
}
cudaError_t cudaEventCreate(cudaEvent_t* ev) { return create_handle(OP_EVENT_CREATE, 0, (void**)ev); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* ev, unsigned int flags) { return create_handle(OP_EVENT_CREATE, flags, (void**)ev); }
cudaError_t cudaEventDestroy(cudaEvent_t ev) { return on_handle(OP_EVENT_DESTROY, ev); }
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s) {
    int captured = capture_record(ev, s);
    if (captured) return captured > 0 ? cudaSuccess : note(cudaErrorStreamCaptureUnsupported);
    uint64_t h[2] = {(uint64_t)(uintptr_t)ev, (uint64_t)(uintptr_t)s};
    return rpc(OP_EVENT_RECORD, h, 16, NULL, 0, NULL, 0, NULL);
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t ev, cudaStream_t s, unsigned int flags) { (void)flags; return cudaEventRecord(ev, s); }
cudaError_t cudaEventSynchronize(cudaEvent_t ev) { return on_handle(OP_EVENT_SYNC, ev); }
cudaError_t cudaEventQuery(cudaEvent_t ev) { return on_handle(OP_EVENT_QUERY, ev); }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    uint64_t h[2] = {(uint64_t)(uintptr_t)start, (uint64_t)(uintptr_t)end};
    float r = 0;
    if (!ms) return note(cudaErrorInvalidValue);
    cudaError_t e = rpc(OP_EVENT_ELAPSED, h, 16, NULL, 0, &r, 4, NULL);
    if (e == cudaSuccess) *ms = r;  /* on an error (an event not recorded, ...) CUDA leaves *ms as it was */
    return e;
}

/* ---- functions ------------------------------------------------------------------------------------------ */
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func) {
    func_t* f = find_func(func);
    if (!attr) return note(cudaErrorInvalidValue);
    if (!f) return note(cudaErrorInvalidDeviceFunction);
    cudaError_t e = func_info(f);
    if (e != cudaSuccess) return e;
    int64_t r[8] = {0};
    e = rpc(OP_FUNC_ATTRS, &f->fid, 8, NULL, 0, r, sizeof r, NULL);
    if (e != cudaSuccess) return e;
    memset(attr, 0, sizeof *attr);
    attr->numRegs = (int)r[0]; attr->sharedSizeBytes = (size_t)r[1]; attr->constSizeBytes = (size_t)r[2];
    attr->localSizeBytes = (size_t)r[3]; attr->maxThreadsPerBlock = (int)r[4];
    attr->maxDynamicSharedSizeBytes = (int)r[5]; attr->ptxVersion = (int)r[6]; attr->binaryVersion = (int)r[7];
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value) {
    func_t* f = find_func(func);
    if (!f) return note(cudaErrorInvalidDeviceFunction);
    cudaError_t e = func_info(f);
    if (e != cudaSuccess) return e;
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;  /* hints: accepted */
    int64_t req[2] = {(int64_t)f->fid, value};
    return rpc(OP_FUNC_SET_ATTR, req, 16, NULL, 0, NULL, 0, NULL);
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 g, dim3 b, void** args, size_t shmem, cudaStream_t s) {
    return launch_op(OP_LAUNCH_COOP, find_func(func), g, b, args, shmem, s);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags) {
    (void)flags;
    func_t* f = find_func(func);
    if (!f || !numBlocks) return note(!f ? cudaErrorInvalidDeviceFunction : cudaErrorInvalidValue);
    cudaError_t e = func_info(f);
    if (e != cudaSuccess) return e;
    int64_t req[3] = {(int64_t)f->fid, blockSize, (int64_t)dynamicSMemSize};
    int32_t r = 0;
    e = rpc(OP_OCCUPANCY, req, sizeof req, NULL, 0, &r, 4, NULL);
    if (e == cudaSuccess) *numBlocks = r;  /* untouched on an error */
    return e;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

static cudaError_t limit(uint32_t set, enum cudaLimit which, uint64_t value, size_t* out) {
    uint64_t req[2] = {((uint64_t)which << 32) | set, value}, r = 0;
    cudaError_t e = rpc(OP_LIMIT, req, sizeof req, NULL, 0, &r, 8, NULL);
    if (out && e == cudaSuccess) *out = (size_t)r;
    return e;
}
cudaError_t cudaDeviceSetLimit(enum cudaLimit which, size_t value) { return limit(1, which, value, NULL); }
cudaError_t cudaDeviceGetLimit(size_t* pValue, enum cudaLimit which) {
    if (!pValue) return note(cudaErrorInvalidValue);
    return limit(0, which, 0, pValue);
}

/* Host functions in a stream run once the work before them is done; running them here, after
 * synchronizing the stream and before returning, keeps that order and holds back later work too. */
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* userData) {
    if (!fn) return note(cudaErrorInvalidValue);
    struct CUgraph_st* g = capturing(s);
    if (g) {  /* captured: a host node, run when the graph gets there */
        node_t nd = {.kind = NODE_HOST, .fn = fn, .user = userData};
        add_node(s, g, nd);
        return cudaSuccess;
    }
    cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return e;
    fn(userData);
    return cudaSuccess;
}

cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* userData, unsigned int flags) {
    (void)flags;
    if (!cb) return note(cudaErrorInvalidValue);
    cudaError_t e = cudaStreamSynchronize(s);
    cb(s, e, userData);
    return cudaSuccess;
}

static cudaError_t copy_3d_array(const struct cudaMemcpy3DParms* p, cudaStream_t s);
static cudaError_t copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                           enum cudaMemcpyKind kind, cudaStream_t s) {
    size_t bytes;
    if (width > dpitch || width > spitch) return note(cudaErrorInvalidPitchValue);
    if (size_overflows(dpitch, height, 1, &bytes) || size_overflows(spitch, height, 1, &bytes))
        return note(cudaErrorInvalidValue);
    if (dpitch == width && spitch == width) return copy(dst, src, width * height, kind, s);
    if (height > 1 && kind != cudaMemcpyHostToHost && !capturing(s)) {  /* the rows in one request */
        struct cudaMemcpy3DParms p = {0};
        p.srcPtr = (struct cudaPitchedPtr){(void*)src, spitch, width, height};
        p.dstPtr = (struct cudaPitchedPtr){dst, dpitch, width, height};
        p.extent = (struct cudaExtent){width, height, 1};
        p.kind = kind;
        return copy_3d_array(&p, s);
    }
    for (size_t r = 0; r < height; ++r) {  /* captured: one copy node per row */
        cudaError_t e = copy((char*)dst + r * dpitch, (const char*)src + r * spitch, width, kind, s);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) {
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL);
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s) {
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, s);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* a, const void* ptr) {
    if (!a) return note(cudaErrorInvalidValue);
    memset(a, 0, sizeof *a);
    a->device = current_device;
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    pthread_mutex_lock(&managed_lock);
    for (managed_t* m = managed_list; m; m = m->next)
        if (p >= m->addr && p < m->addr + m->len) {
            a->type = cudaMemoryTypeManaged; a->devicePointer = a->hostPointer = (void*)ptr;
            pthread_mutex_unlock(&managed_lock);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&managed_lock);
    if (in_shm(ptr, 1)) { a->type = cudaMemoryTypeHost; a->hostPointer = (void*)ptr; return cudaSuccess; }
    if (connected && is_device(ptr)) { a->type = cudaMemoryTypeDevice; a->devicePointer = (void*)ptr; return cudaSuccess; }
    a->type = cudaMemoryTypeUnregistered; a->device = -2;
    a->hostPointer = (void*)ptr;
    return cudaSuccess;
}

/* ---- graphs --------------------------------------------------------------------------------------------- */
cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
    (void)mode;
    if (!s) return note(cudaErrorStreamCaptureUnsupported);
    if (capturing(s)) return note(cudaErrorIllegalState);
    pthread_mutex_lock(&capture_lock);
    for (size_t i = 0; i < NCAPTURES; i++)
        if (!captures[i].g) {
            captures[i] = (capture_t){s, must(calloc(1, sizeof(struct CUgraph_st))), 1, 0, 0};
            pthread_mutex_unlock(&capture_lock);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&capture_lock);
    capture_table_full("streams", NCAPTURES);
    return note(cudaErrorStreamCaptureUnsupported);
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* pGraph) {
    if (!pGraph) return note(cudaErrorInvalidValue);
    pthread_mutex_lock(&capture_lock);
    capture_t* c = capture_entry(s);
    if (!c) { pthread_mutex_unlock(&capture_lock); return note(cudaErrorIllegalState); }
    if (!c->origin) { pthread_mutex_unlock(&capture_lock); return note(cudaErrorStreamCaptureUnmatched); }
    struct CUgraph_st* g = c->g;
    cudaError_t e = cudaSuccess;
    for (size_t i = 0; i < NCAPTURES; i++)  /* every stream that joined must have been joined back */
        if (captures[i].g == g && !captures[i].origin && captures[i].work > captures[i].joined)
            e = cudaErrorStreamCaptureUnjoined;
    for (size_t i = 0; i < NCAPTURES; i++)  /* the capture ends either way, as in CUDA */
        if (captures[i].g == g) captures[i] = (capture_t){0};
    for (size_t i = 0; i < NEVENTS; i++)
        if (captured_events[i].g == g) captured_events[i].g = NULL;
    pthread_mutex_unlock(&capture_lock);
    if (e != cudaSuccess) {
        for (size_t i = 0; i < g->n; i++) free(g->nodes[i].buf);  /* the invalidated graph */
        free(g->nodes); free(g);
        *pGraph = NULL;
        return note(e);
    }
    *pGraph = g;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus* status) {
    if (!status) return note(cudaErrorInvalidValue);
    *status = capturing(s) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
    (void)flags;
    if (!pGraph) return note(cudaErrorInvalidValue);
    *pGraph = must(calloc(1, sizeof(struct CUgraph_st)));
    return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* numNodes) {
    if (!g || !numNodes) return note(cudaErrorInvalidValue);
    if (nodes) {
        size_t k = *numNodes < g->n ? *numNodes : g->n;
        for (size_t i = 0; i < k; i++) nodes[i] = (cudaGraphNode_t)(uintptr_t)(i + 1);
        *numNodes = k;
    } else {
        *numNodes = g->n;
    }
    return cudaSuccess;
}

static void free_nodes(struct CUgraph_st* g) {
    for (size_t i = 0; i < g->n; i++) free(g->nodes[i].buf);
    free(g->nodes);
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
    if (!g) return note(cudaErrorInvalidValue);
    free_nodes(g);
    free(g);
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pExec, cudaGraph_t g, unsigned long long flags) {
    (void)flags;
    if (!pExec || !g) return note(cudaErrorInvalidValue);
    struct CUgraphExec_st* e = must(calloc(1, sizeof *e));
    e->g.n = e->g.cap = g->n;
    e->g.nodes = must(calloc(g->n ? g->n : 1, sizeof(node_t)));
    for (size_t i = 0; i < g->n; i++) {
        e->g.nodes[i] = g->nodes[i];
        if (g->nodes[i].buf) { e->g.nodes[i].buf = must(malloc(g->nodes[i].n)); memcpy(e->g.nodes[i].buf, g->nodes[i].buf, g->nodes[i].n); }
    }
    *pExec = e;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pExec, cudaGraph_t g, unsigned long long flags) {
    return cudaGraphInstantiate(pExec, g, flags);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
    if (!e) return note(cudaErrorInvalidValue);
    free_nodes(&e->g);
    free(e);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
    if (!e) return note(cudaErrorInvalidValue);
    cudaError_t c = connect_server();
    if (c != cudaSuccess) return note(c);
    for (size_t i = 0; i < e->g.n; i++) {
        node_t* nd = &e->g.nodes[i];
        cudaError_t r = cudaSuccess;
        if (nd->kind == NODE_LAUNCH) {
            uint64_t st = (uint64_t)(uintptr_t)s;
            memcpy(nd->buf + 40, &st, 8);  /* the stream field of the launch request */
            pthread_mutex_lock(&lock);
            send_req(nd->op, nd->buf, nd->n, NULL, 0);
            pthread_mutex_unlock(&lock);
        } else if (nd->kind == NODE_COPY) {
            r = copy(nd->dst, nd->src, nd->count, (enum cudaMemcpyKind)nd->mkind, s);
        } else if (nd->kind == NODE_REQUEST) {
            uint64_t st = (uint64_t)(uintptr_t)s;
            memcpy(nd->buf + nd->count, &st, 8);
            int32_t status = 0;
            r = rpc(nd->op, nd->buf, nd->n, NULL, 0, &status, 4, NULL);
            if (r == cudaSuccess && status) {  /* the library refused the call's arguments when the graph ran */
                static int said;
                if (!said++) fprintf(stderr, "strata: a library call captured in a graph failed when the graph ran "
                                             "(status %d)\n", (int)status);
                r = note(cudaErrorInvalidValue);
            }
        } else if (nd->kind == NODE_COPY3D) {
            r = copy_3d(&nd->p3, s);
        } else if (nd->kind == NODE_HOST) {  /* after the work before it, as a host node runs */
            r = cudaStreamSynchronize(s);
            if (r == cudaSuccess) nd->fn(nd->user);
        } else if (nd->kind == NODE_MEMSET && nd->height) {
            for (size_t row = 0; row < nd->height && r == cudaSuccess; row++)
                r = cudaMemsetAsync((char*)nd->dst + row * nd->pitch, nd->value, nd->width, s);
        } else if (nd->kind == NODE_MEMSET) {
            r = cudaMemsetAsync(nd->dst, nd->value, nd->count, s);
        }
        if (r != cudaSuccess) return r;
    }
    return cudaSuccess;
}

/* Graphs built node by node. Dependencies must be nodes of the same graph, which exist before the node
 * that names them, so insertion order is a valid order to run them in. */
static cudaError_t check_deps(cudaGraph_t g, const cudaGraphNode_t* deps, size_t n) {
    if (!g || (n && !deps)) return note(cudaErrorInvalidValue);
    for (size_t i = 0; i < n; i++) {
        uintptr_t k = (uintptr_t)deps[i];
        if (k < 1 || k > g->n) return note(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

static cudaError_t add_graph_node(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n,
                                  node_t nd) {
    if (!out) return note(cudaErrorInvalidValue);
    cudaError_t e = check_deps(g, deps, n);
    if (e != cudaSuccess) { free(nd.buf); return e; }
    *out = push_node(g, nd);
    return cudaSuccess;
}

/* A kernel node: the launch request, its argument values copied now (as CUDA copies kernelParams). */
static cudaError_t kernel_node(const struct cudaKernelNodeParams* p, node_t* nd) {
    if (!p) return note(cudaErrorInvalidValue);
    func_t* f = find_func(p->func);
    if (!f) return note(cudaErrorInvalidDeviceFunction);
    cudaError_t e = connect_server();
    if (e == cudaSuccess) e = func_info(f);
    if (e != cudaSuccess) return note(e);
    if (f->nparams && !p->kernelParams) return note(cudaErrorInvalidValue);  /* `extra` packing: not supported */
    size_t head = 8 + 24 + 16, size = head + f->argbytes;
    *nd = (node_t){.kind = NODE_LAUNCH, .op = OP_LAUNCH, .buf = must(malloc(size)), .n = size};
    uint32_t dims[6] = {p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z};
    uint64_t sh = p->sharedMemBytes, st = 0;
    memcpy(nd->buf, &f->fid, 8); memcpy(nd->buf + 8, dims, 24); memcpy(nd->buf + 32, &sh, 8); memcpy(nd->buf + 40, &st, 8);
    size_t off = head;
    for (int i = 0; i < f->nparams; i++) { memcpy(nd->buf + off, p->kernelParams[i], f->sizes[i]); off += f->sizes[i]; }
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n,
                                   const struct cudaKernelNodeParams* p) {
    node_t nd;
    cudaError_t e = kernel_node(p, &nd);
    return e != cudaSuccess ? e : add_graph_node(out, g, deps, n, nd);
}

/* An instantiated graph keeps its nodes in the graph's order, so a node of the graph names its copy here. */
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node, const struct cudaKernelNodeParams* p) {
    uintptr_t k = (uintptr_t)node;
    if (!e || k < 1 || k > e->g.n || e->g.nodes[k - 1].kind != NODE_LAUNCH) return note(cudaErrorInvalidValue);
    node_t nd;
    cudaError_t r = kernel_node(p, &nd);
    if (r != cudaSuccess) return r;
    nd.op = e->g.nodes[k - 1].op;
    free(e->g.nodes[k - 1].buf);
    e->g.nodes[k - 1] = nd;
    return cudaSuccess;
}

cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t g) {
    if (!clone || !g) return note(cudaErrorInvalidValue);
    struct CUgraph_st* c = must(calloc(1, sizeof *c));
    c->n = c->cap = g->n;
    c->nodes = must(calloc(g->n ? g->n : 1, sizeof(node_t)));
    for (size_t i = 0; i < g->n; i++) {
        c->nodes[i] = g->nodes[i];
        if (g->nodes[i].buf) { c->nodes[i].buf = must(malloc(g->nodes[i].n)); memcpy(c->nodes[i].buf, g->nodes[i].buf, g->nodes[i].n); }
    }
    *clone = c;
    return cudaSuccess;
}

/* The capture's status, id and graph; its dependency set is not tracked (reported empty). */
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                                     size_t* ndeps) {
    if (!status) return note(cudaErrorInvalidValue);
    struct CUgraph_st* g = capturing(s);
    *status = g ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    if (id) *id = (unsigned long long)(uintptr_t)g;
    if (graph) *graph = g;
    if (deps) *deps = NULL;
    if (edges) *edges = NULL;
    if (ndeps) *ndeps = 0;
    return cudaSuccess;
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t s, enum cudaStreamCaptureStatus* status, unsigned long long* id,
                                          cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                          const cudaGraphEdgeData** edges, size_t* ndeps) {
    return cudaStreamGetCaptureInfo(s, status, id, graph, deps, edges, ndeps);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n,
                                   const struct cudaMemcpy3DParms* p) {
    if (!p) return note(cudaErrorInvalidValue);
    node_t nd = {.kind = NODE_COPY3D, .p3 = *p};
    return add_graph_node(out, g, deps, n, nd);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n,
                                     void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    node_t nd = {.kind = NODE_COPY, .dst = dst, .src = src, .count = count, .mkind = kind};
    return add_graph_node(out, g, deps, n, nd);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n,
                                   const struct cudaMemsetParams* p) {
    if (!p || !p->dst || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        return note(cudaErrorInvalidValue);
    unsigned v = p->value, b = v & 0xFF;
    /* the device sets bytes: a wider element's value must be one byte repeated */
    if ((p->elementSize >= 2 && ((v >> 8) & 0xFF) != b) || (p->elementSize == 4 && (v >> 16) != (b | (b << 8)))) {
        static int said;
        if (!said++) fprintf(stderr, "strata: cudaGraphAddMemsetNode: a %u-byte value that is not one byte repeated "
                                     "is not implemented\n", p->elementSize);
        return note(cudaErrorNotSupported);
    }
    size_t h = p->height ? p->height : 1, w = p->width * p->elementSize;
    if (h > 1 && p->pitch < w) return note(cudaErrorInvalidPitchValue);
    node_t nd = {.kind = NODE_MEMSET, .dst = p->dst, .value = (int)b, .count = w,
                 .pitch = p->pitch, .width = w, .height = h > 1 ? h : 0};
    return add_graph_node(out, g, deps, n, nd);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n,
                                 const struct cudaHostNodeParams* p) {
    if (!p || !p->fn) return note(cudaErrorInvalidValue);
    node_t nd = {.kind = NODE_HOST, .fn = p->fn, .user = p->userData};
    return add_graph_node(out, g, deps, n, nd);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t n) {
    node_t nd = {.kind = NODE_EMPTY};
    return add_graph_node(out, g, deps, n, nd);
}

/* An edge from an earlier node to a later one holds already; one the other way round would need reordering. */
cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edgeData, size_t n) {
    (void)edgeData;
    cudaError_t e = check_deps(g, from, n);
    if (e == cudaSuccess) e = check_deps(g, to, n);
    if (e != cudaSuccess) return e;
    for (size_t i = 0; i < n; i++)
        if ((uintptr_t)from[i] >= (uintptr_t)to[i]) {
            static int said;
            if (!said++) fprintf(stderr, "strata: cudaGraphAddDependencies: an edge to a node added before its "
                                         "source is not implemented\n");
            return note(cudaErrorNotSupported);
        }
    return cudaSuccess;
}

/* ---- for strata's libcuda.so.1 (the driver API shares this library's connection) ---------------------- */
/* A module from an image as cuModuleLoadData takes it: PTX text, a fat binary, or a fat binary wrapper. */
void* strata_module_load(const void* image, cudaError_t* err) {
    uint32_t magic = image ? *(const uint32_t*)image : 0;
    module_t* m = must(calloc(1, sizeof *m));
    uint64_t id = 0;
    if (magic == FATBIN_MAGIC || magic == WRAPPER_MAGIC) {
        char* buf = NULL; size_t len = 0, cap = 0; uint32_t count = 0;
        gather(image, &buf, &len, &cap, &count, 0);
        *err = rpc(OP_REGISTER, &count, 4, buf, len, &id, 8, NULL);
        free(buf);
    } else if (image) {
        *err = rpc(OP_REGISTER_PTX, image, strlen(image), NULL, 0, &id, 8, NULL);
    } else {
        *err = cudaErrorInvalidValue;
    }
    if (*err != cudaSuccess) { free(m); return NULL; }
    m->id = id;
    return m;
}

/* A kernel of a loaded module by name (its parameter sizes fetched at once, so a bad name fails here). */
void* strata_module_function(void* mod, const char* name, cudaError_t* err) {
    func_t* f = must(calloc(1, sizeof *f));
    f->name = strdup(name); f->mod = mod; f->nparams = -1;
    *err = func_info(f);
    if (*err != cudaSuccess) { free(f->name); free(f); return NULL; }
    return f;
}

cudaError_t strata_module_global(void* mod, const char* name, uint64_t* addr, uint64_t* size) {
    uint64_t r[2] = {0, 0};
    cudaError_t e = rpc(OP_SYMBOL, &((module_t*)mod)->id, 8, name, strlen(name), r, 16, NULL);
    if (e != cudaSuccess) return e;  /* outputs untouched on an error */
    if (addr) *addr = r[0];
    if (size) *size = r[1];
    return e;
}

cudaError_t strata_launch(void* func, dim3 g, dim3 b, size_t shmem, cudaStream_t s, void** params) {
    return launch((func_t*)func, g, b, params, shmem, s);
}

/* The driver API has no "last error": it clears the runtime's before a call whose own error it wants. */
void strata_clear_local_error(void) { last_error = cudaSuccess; }

/* ---- CUDA arrays and texture objects (served by strata.cuda.arrays / textures) --------------------------- */
struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f) {
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

/* What the program's arrays are (cudaArrayGetInfo, and element sizes for 3-D copies to and from them). */
typedef struct arrinfo {
    cudaArray_t h; struct cudaChannelFormatDesc desc; struct cudaExtent extent; unsigned flags; struct arrinfo* next;
} arrinfo_t;
static arrinfo_t* arrays;
static pthread_mutex_t arrays_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember_array(cudaArray_t h, const struct cudaChannelFormatDesc* d, struct cudaExtent e, unsigned flags) {
    arrinfo_t* a = must(malloc(sizeof *a));
    a->h = h; a->desc = *d; a->extent = e; a->flags = flags;
    pthread_mutex_lock(&arrays_lock); a->next = arrays; arrays = a; pthread_mutex_unlock(&arrays_lock);
}

static int array_info(cudaArray_const_t h, arrinfo_t* out) {
    int found = 0;
    pthread_mutex_lock(&arrays_lock);
    for (arrinfo_t* a = arrays; a; a = a->next)
        if (a->h == h) { *out = *a; found = 1; break; }
    pthread_mutex_unlock(&arrays_lock);
    return found;
}

static size_t element_bytes(const struct cudaChannelFormatDesc* d) { return (size_t)(d->x + d->y + d->z + d->w) / 8; }

cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* d, size_t width, size_t height,
                            unsigned int flags) {
    if (!array || !d) return note(cudaErrorInvalidValue);
    int64_t req[8] = {d->x, d->y, d->z, d->w, d->f, (int64_t)width, (int64_t)height, flags};
    uint64_t h = 0;
    cudaError_t e = rpc(OP_ARRAY_CREATE, req, sizeof req, NULL, 0, &h, 8, NULL);
    *array = e == cudaSuccess ? (cudaArray_t)(uintptr_t)h : NULL;
    if (e == cudaSuccess) remember_array(*array, d, (struct cudaExtent){width, height, 0}, flags);
    return e;
}

/* 1-D, 2-D, 3-D, layered and cubemap arrays (strata.cuda.malloc_3d_array reads the extent as CUDA does). */
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const struct cudaChannelFormatDesc* d, struct cudaExtent e,
                              unsigned int flags) {
    if (!array || !d) return note(cudaErrorInvalidValue);
    int64_t req[9] = {d->x, d->y, d->z, d->w, d->f, (int64_t)e.width, (int64_t)e.height, (int64_t)e.depth, flags};
    uint64_t h = 0;
    cudaError_t r = rpc(OP_ARRAY3D_CREATE, req, sizeof req, NULL, 0, &h, 8, NULL);
    *array = r == cudaSuccess ? (cudaArray_t)(uintptr_t)h : NULL;
    if (r == cudaSuccess) remember_array(*array, d, e, flags);
    return r;
}

cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc* desc, struct cudaExtent* extent, unsigned int* flags,
                             cudaArray_t array) {
    arrinfo_t a;
    if (!array_info(array, &a)) return note(cudaErrorInvalidResourceHandle);
    if (desc) *desc = a.desc;
    if (extent) *extent = a.extent;
    if (flags) *flags = a.flags;
    return cudaSuccess;
}

cudaError_t cudaFreeArray(cudaArray_t array) {
    uint64_t h = (uint64_t)(uintptr_t)array;
    if (!array) return cudaSuccess;
    pthread_mutex_lock(&arrays_lock);
    for (arrinfo_t **pp = &arrays, *a; (a = *pp); pp = &a->next)
        if (a->h == array) { *pp = a->next; free(a); break; }
    pthread_mutex_unlock(&arrays_lock);
    return RPCIN(OP_ARRAY_FREE, h);
}

/* A box copy in one request (cudaMemcpy3D with a CUDA array on either side, or a pitched 2-D/3-D copy): the
 * runtime process copies it (strata.cuda.memcpy_3d); a host side travels packed (rows of the box's width, no
 * padding) in the request or the reply. With an array, widths and its x are in elements; otherwise bytes. */
static cudaError_t copy_3d_array(const struct cudaMemcpy3DParms* p, cudaStream_t s) {
    arrinfo_t sa, da;
    if ((p->srcArray && !array_info(p->srcArray, &sa)) || (p->dstArray && !array_info(p->dstArray, &da)))
        return note(cudaErrorInvalidResourceHandle);
    size_t elem = p->srcArray || p->dstArray ? element_bytes(p->srcArray ? &sa.desc : &da.desc) : 1;
    struct cudaExtent e = p->extent;
    size_t wb, box, rows = e.height ? e.height : 1, depth = e.depth ? e.depth : 1;
    if (size_overflows(e.width, elem, 1, &wb) || size_overflows(wb, rows, depth, &box))
        return note(cudaErrorInvalidValue);
    enum cudaMemcpyKind kind = p->kind;
    int src_host = !p->srcArray && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost ||
                                    (kind == cudaMemcpyDefault && !is_device(p->srcPtr.ptr)));
    int dst_host = !p->dstArray && (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost ||
                                    (kind == cudaMemcpyDefault && !is_device(p->dstPtr.ptr)));
    if (src_host && dst_host) return note(cudaErrorInvalidMemcpyDirection);
    int64_t v[19] = {
        p->srcArray ? 1 : src_host ? 2 : 0, p->srcArray ? (int64_t)(uintptr_t)p->srcArray : (int64_t)(uintptr_t)p->srcPtr.ptr,
        (int64_t)p->srcPtr.pitch, (int64_t)p->srcPtr.ysize,
        (int64_t)p->srcPos.x, (int64_t)p->srcPos.y, (int64_t)p->srcPos.z,
        p->dstArray ? 1 : dst_host ? 2 : 0, p->dstArray ? (int64_t)(uintptr_t)p->dstArray : (int64_t)(uintptr_t)p->dstPtr.ptr,
        (int64_t)p->dstPtr.pitch, (int64_t)p->dstPtr.ysize,
        (int64_t)p->dstPos.x, (int64_t)p->dstPos.y, (int64_t)p->dstPos.z,
        (int64_t)e.width, (int64_t)e.height, (int64_t)e.depth, (int64_t)(uintptr_t)s, 0};
    /* the packed host box goes through the shared staging area when it fits (no pipe transfer), else the pipe */
    int staged = (src_host || dst_host) && shm_base && box <= STAGING;
    if (staged) pthread_mutex_lock(&staging_lock);
    char* buf = staged ? shm_base : (src_host || dst_host) ? malloc(box ? box : 1) : NULL;
    if ((src_host || dst_host) && !buf) return note(cudaErrorMemoryAllocation);
    v[18] = staged;
    /* a host side's rows: pitch and rows per slice of its cudaPitchedPtr (ysize 0: the box's height) */
    const struct cudaPitchedPtr* hp = src_host ? &p->srcPtr : &p->dstPtr;
    const struct cudaPos* hpos = src_host ? &p->srcPos : &p->dstPos;
    size_t hpitch = hp->pitch ? hp->pitch : wb, hrows = hp->ysize ? hp->ysize : rows;
    if ((src_host || dst_host) && wb + hpos->x > hpitch) {
        if (staged) pthread_mutex_unlock(&staging_lock); else free(buf);
        return note(cudaErrorInvalidPitchValue);
    }
    if (src_host)
        for (size_t z = 0; z < depth; z++)
            for (size_t y = 0; y < rows; y++)
                memcpy(buf + (z * rows + y) * wb, (const char*)hp->ptr + (hpos->z + z) * hpitch * hrows +
                       (hpos->y + y) * hpitch + hpos->x, wb);
    int in_body = src_host && !staged, in_reply = dst_host && !staged;
    cudaError_t r = rpc(OP_MEMCPY_3D, v, sizeof v, in_body ? buf : NULL, in_body ? box : 0, in_reply ? buf : NULL,
                        in_reply ? box : 0, NULL);
    if (r == cudaSuccess && dst_host)
        for (size_t z = 0; z < depth; z++)
            for (size_t y = 0; y < rows; y++)
                memcpy((char*)hp->ptr + (hpos->z + z) * hpitch * hrows + (hpos->y + y) * hpitch + hpos->x,
                       buf + (z * rows + y) * wb, wb);
    if (staged) pthread_mutex_unlock(&staging_lock); else free(buf);
    return r;
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind) {
    size_t bytes;
    if (width > spitch) return note(cudaErrorInvalidPitchValue);
    if (size_overflows(width, height, 1, &bytes)) return note(cudaErrorInvalidValue);
    if (kind == cudaMemcpyDefault) kind = is_device(src) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    int from_device = kind == cudaMemcpyDeviceToDevice;
    int64_t req[7] = {(int64_t)(uintptr_t)dst, (int64_t)wOffset, (int64_t)hOffset, (int64_t)width, (int64_t)height,
                      from_device ? (int64_t)(uintptr_t)src : 0, (int64_t)spitch};
    if (from_device) return rpc(OP_ARRAY_COPY, req, sizeof req, NULL, 0, NULL, 0, NULL);
    char* rows = malloc(bytes ? bytes : 1);
    if (!rows) return note(cudaErrorMemoryAllocation);
    for (size_t r = 0; r < height; ++r) memcpy(rows + r * width, (const char*)src + r * spitch, width);
    req[6] = (int64_t)width;
    cudaError_t e = rpc(OP_ARRAY_COPY, req, sizeof req, rows, width * height, NULL, 0, NULL);
    free(rows);
    return e;
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              enum cudaMemcpyKind kind) {
    return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, count, count, 1, kind);
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* tex, const struct cudaResourceDesc* r,
                                    const struct cudaTextureDesc* t, const struct cudaResourceViewDesc* view) {
    if (!tex || !r || !t) return note(cudaErrorInvalidValue);
    if (view) fprintf(stderr, "strata: cudaCreateTextureObject: resource views are ignored\n");
    int64_t q[19] = {0};
    double border[4];
    q[0] = r->resType;
    const struct cudaChannelFormatDesc* d = NULL;
    if (r->resType == cudaResourceTypeArray) {
        q[1] = (int64_t)(uintptr_t)r->res.array.array;
    } else if (r->resType == cudaResourceTypeLinear) {
        q[2] = (int64_t)(uintptr_t)r->res.linear.devPtr; d = &r->res.linear.desc; q[8] = (int64_t)r->res.linear.sizeInBytes;
    } else if (r->resType == cudaResourceTypePitch2D) {
        q[2] = (int64_t)(uintptr_t)r->res.pitch2D.devPtr; d = &r->res.pitch2D.desc;
        q[9] = (int64_t)r->res.pitch2D.width; q[10] = (int64_t)r->res.pitch2D.height;
        q[11] = (int64_t)r->res.pitch2D.pitchInBytes;
    } else {
        return note(cudaErrorInvalidValue);
    }
    if (d) { q[3] = d->x; q[4] = d->y; q[5] = d->z; q[6] = d->w; q[7] = d->f; }
    q[12] = t->addressMode[0]; q[13] = t->addressMode[1]; q[14] = t->addressMode[2];
    q[15] = t->filterMode; q[16] = t->readMode; q[17] = t->normalizedCoords; q[18] = t->maxAnisotropy;
    for (int i = 0; i < 4; i++) border[i] = t->borderColor[i];
    uint64_t h = 0;
    cudaError_t e = rpc(OP_TEX_CREATE, q, sizeof q, border, sizeof border, &h, 8, NULL);
    *tex = e == cudaSuccess ? (cudaTextureObject_t)h : 0;
    return e;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t tex) {
    uint64_t h = tex;
    return RPCIN(OP_TEX_DESTROY, h);
}

/* ---- pitched and stream-ordered allocations, peers ------------------------------------------------------ */
cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
    if (!devPtr || !pitch) return note(cudaErrorInvalidValue);
    uint64_t req[2] = {width, height}, r[2] = {0, 0};
    cudaError_t e = rpc(OP_MALLOC_PITCH, req, sizeof req, NULL, 0, r, sizeof r, NULL);
    *devPtr = e == cudaSuccess ? (void*)(uintptr_t)r[0] : NULL;
    if (e == cudaSuccess) *pitch = (size_t)r[1];  /* (was written with 0 on an error) */
    return e;
}

cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
    size_t bytes;
    if (width > pitch) return note(cudaErrorInvalidPitchValue);
    if (size_overflows(pitch, height, 1, &bytes)) return note(cudaErrorInvalidValue);
    if (width == pitch) return cudaMemset(devPtr, value, width * height);
    for (size_t r = 0; r < height; ++r) {
        cudaError_t e = cudaMemset((char*)devPtr + r * pitch, value, width);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* ---- 3-D memory (linear, pitched): slices of rows ------------------------------------------------------- */
cudaError_t cudaMalloc3D(struct cudaPitchedPtr* p, struct cudaExtent e) {
    if (!p) return note(cudaErrorInvalidValue);
    void* ptr = NULL;
    size_t pitch = 0, rows;
    if (size_overflows(e.height, e.depth ? e.depth : 1, 1, &rows)) return note(cudaErrorInvalidValue);
    cudaError_t r = cudaMallocPitch(&ptr, &pitch, e.width, rows);
    if (r != cudaSuccess) return r;
    p->ptr = ptr; p->pitch = pitch; p->xsize = e.width; p->ysize = e.height;
    return cudaSuccess;
}

/* Between linear memory: extent and positions in bytes (x) and rows (y, z), copied here as 2-D slices. With
 * a CUDA array on either side, the runtime process copies the box (copy_3d_array). */
static cudaError_t copy_3d_array(const struct cudaMemcpy3DParms* p, cudaStream_t s);
static cudaError_t copy_3d(const struct cudaMemcpy3DParms* p, cudaStream_t s) {
    if (!p) return note(cudaErrorInvalidValue);
    struct CUgraph_st* g = capturing(s);
    if (g) {  /* captured: a memcpy node, copied when the graph runs */
        node_t nd = {.kind = NODE_COPY3D, .p3 = *p};
        add_node(s, g, nd);
        return cudaSuccess;
    }
    if (p->srcArray || p->dstArray) return copy_3d_array(p, s);
    const struct cudaPitchedPtr *sp = &p->srcPtr, *dp = &p->dstPtr;
    struct cudaExtent e = p->extent;
    if (!sp->ptr || !dp->ptr) return note(cudaErrorInvalidValue);
    size_t bytes;
    if (size_overflows(e.width, e.height, e.depth, &bytes)) return note(cudaErrorInvalidValue);
    if (e.width + p->srcPos.x > sp->pitch || e.width + p->dstPos.x > dp->pitch) return note(cudaErrorInvalidPitchValue);
    size_t sh = sp->ysize ? sp->ysize : e.height, dh = dp->ysize ? dp->ysize : e.height;
    if (e.height + p->srcPos.y > sh || e.height + p->dstPos.y > dh) return note(cudaErrorInvalidValue);
    size_t sslice = sp->pitch * sh, dslice = dp->pitch * dh;
    const char* src = (const char*)sp->ptr + p->srcPos.z * sslice + p->srcPos.y * sp->pitch + p->srcPos.x;
    char* dst = (char*)dp->ptr + p->dstPos.z * dslice + p->dstPos.y * dp->pitch + p->dstPos.x;
    /* whole slices on both sides, no padding: one copy */
    if (e.width == sp->pitch && e.width == dp->pitch && e.height == sh && e.height == dh)
        return copy(dst, src, e.width * e.height * e.depth, p->kind, s);
    if (p->kind != cudaMemcpyHostToHost && !capturing(s)) return copy_3d_array(p, s);  /* the box in one request */
    for (size_t z = 0; z < e.depth; ++z) {
        cudaError_t r = copy_2d(dst + z * dslice, dp->pitch, src + z * sslice, sp->pitch, e.width, e.height, p->kind, s);
        if (r != cudaSuccess) return r;
    }
    return cudaSuccess;
}
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms* p) { return copy_3d(p, NULL); }
cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t s) { return copy_3d(p, s); }

cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent e) {
    size_t rows = p.ysize ? p.ysize : e.height;
    if (e.height > rows) return note(cudaErrorInvalidValue);
    for (size_t z = 0; z < e.depth; ++z) {
        cudaError_t r = cudaMemset2D((char*)p.ptr + z * p.pitch * rows, p.pitch, value, e.width, e.height);
        if (r != cudaSuccess) return r;
    }
    return cudaSuccess;
}
cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t s) {
    cudaError_t r = cudaStreamSynchronize(s);  /* after the stream's earlier work, as in the stream */
    return r != cudaSuccess ? r : cudaMemset3D(p, value, e);
}

/* Stream-ordered allocation: allocated at once, freed once the stream's earlier work is done. */
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t s) { (void)s; return cudaMalloc(devPtr, size); }
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t s) {
    cudaError_t e = cudaStreamSynchronize(s);
    return e != cudaSuccess ? e : cudaFree(devPtr);
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
    int32_t req[3] = {1, peer, (int32_t)flags};
    return rpc(OP_PEER, req, sizeof req, NULL, 0, NULL, 0, NULL);
}
cudaError_t cudaDeviceDisablePeerAccess(int peer) {
    int32_t req[3] = {0, peer, 0};
    return rpc(OP_PEER, req, sizeof req, NULL, 0, NULL, 0, NULL);
}
cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
    uint64_t req[5] = {(uint64_t)(uintptr_t)dst, (uint64_t)dstDevice, (uint64_t)(uintptr_t)src, (uint64_t)srcDevice,
                       count};
    return rpc(OP_MEMCPY_PEER, req, sizeof req, NULL, 0, NULL, 0, NULL);
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count, cudaStream_t s) {
    cudaError_t e = cudaStreamSynchronize(s);  /* after the stream's earlier work, before its later work */
    return e != cudaSuccess ? e : cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count);
}
cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
    if (!can) return note(cudaErrorInvalidValue);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return e;
    if (device < 0 || device >= count || peer < 0 || peer >= count) return note(cudaErrorInvalidDevice);
    *can = device != peer;
    return cudaSuccess;
}

/* ---- copies out of CUDA arrays, surface objects --------------------------------------------------------- */
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, enum cudaMemcpyKind kind) {
    size_t bytes;
    if (width > dpitch) return note(cudaErrorInvalidPitchValue);
    if (size_overflows(width, height, 1, &bytes)) return note(cudaErrorInvalidValue);
    if (kind == cudaMemcpyDefault) kind = is_device(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
    int to_device = kind == cudaMemcpyDeviceToDevice;
    int64_t req[7] = {(int64_t)(uintptr_t)src, (int64_t)wOffset, (int64_t)hOffset, (int64_t)width, (int64_t)height,
                      to_device ? (int64_t)(uintptr_t)dst : 0, (int64_t)dpitch};
    if (to_device) return rpc(OP_ARRAY_COPY_OUT, req, sizeof req, NULL, 0, NULL, 0, NULL);
    char* rows = malloc(bytes ? bytes : 1);
    size_t got = 0;
    if (!rows) return note(cudaErrorMemoryAllocation);
    cudaError_t e = rpc(OP_ARRAY_COPY_OUT, req, sizeof req, NULL, 0, rows, width * height, &got);
    if (e == cudaSuccess)
        for (size_t r = 0; r < height; ++r) memcpy((char*)dst + r * dpitch, rows + r * width, width);
    free(rows);
    return e;
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                enum cudaMemcpyKind kind) {
    return cudaMemcpy2DFromArray(dst, count, src, wOffset, hOffset, count, 1, kind);
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surf, const struct cudaResourceDesc* r) {
    if (!surf || !r || r->resType != cudaResourceTypeArray) return note(cudaErrorInvalidValue);
    uint64_t a = (uint64_t)(uintptr_t)r->res.array.array, h = 0;
    cudaError_t e = rpc(OP_SURF_CREATE, &a, 8, NULL, 0, &h, 8, NULL);
    *surf = e == cudaSuccess ? (cudaSurfaceObject_t)h : 0;
    return e;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surf) {
    uint64_t h = surf;
    return RPCIN(OP_SURF_DESTROY, h);
}

/* For strata's host libraries (libcublas.so.13): if stream `s` is capturing, keep the request `a` (its
 * stream handle at byte `stream_at`) as a graph node, replayed on the graph's stream; 1 if it was kept. The
 * reply of such a request starts with the library's int32 status (0: success). */
int strata_capture_request(cudaStream_t s, uint32_t op, const void* a, size_t na, size_t stream_at) {
    struct CUgraph_st* g = capturing(s);
    if (!g || stream_at + 8 > na) return 0;
    node_t nd = {.kind = NODE_REQUEST, .op = op, .buf = must(malloc(na)), .n = na, .count = stream_at};
    memcpy(nd.buf, a, na);
    add_node(s, g, nd);
    return 1;
}

/* For strata's other host libraries (libcurand.so.10): one request on this library's connection. */
cudaError_t strata_call(uint32_t op, const void* a, size_t na, void* out, size_t cap) {
    return rpc(op, a, na, NULL, 0, out, cap, NULL);
}

/* For strata's libamdhip64.so.6: a module the runtime process registers from `image` with request `op` (a HIP
 * offload bundle), usable as the fat binary handle of __cudaRegisterFunction/__cudaRegisterVar. */
void** strata_register_image(uint32_t op, const void* image, size_t len) {
    module_t* m = must(calloc(1, sizeof *m));
    uint64_t id = 0;
    if (connect_server() == cudaSuccess && rpc(op, image, len, NULL, 0, &id, 8, NULL) == cudaSuccess) m->id = id;
    last_error = cudaSuccess;  /* a bad image is reported at first use, not as a stray last error */
    return (void**)m;
}
