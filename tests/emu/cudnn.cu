// Emulator test program: cuDNN's backend API by hand, as cudnn-frontend drives it, and the calls a
// stand-in must refuse without crashing. A grouped BF16 convolution forward (x 2x8x16x16, w 16x4x3x3,
// 2 groups, y 2x16x16x16) is built, planned on the first engine the heuristics give and executed
// on a stream; then: a descriptor used after it was destroyed, a pointer that is no descriptor, an
// attribute the emulator does not model, an operation graph it cannot time (a lone matmul), a
// second finalize, descriptors nested past the limit, an execute without a plan. cuDNN is opened
// with dlopen (the program needs no cuDNN to build); the values are those of cuDNN 9's
// cudnn_graph.h.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <initializer_list>

#include "check.h"

typedef int (*create_t)(int, void **);
typedef int (*destroy_t)(void *);
typedef int (*set_t)(void *, int, int, int64_t, const void *);
typedef int (*get_t)(void *, int, int, int64_t, int64_t *, void *);
typedef int (*finalize_t)(void *);
typedef int (*execute_t)(void *, void *, void *);
typedef int (*handle_t)(void **);
typedef int (*stream_t)(void *, cudaStream_t);
typedef size_t (*version_t)(void);

static create_t Create;
static destroy_t Destroy;
static set_t Set;
static get_t Get;
static finalize_t Finalize;

enum { T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_HEUR_MODE = 8, T_BACKEND_DESCRIPTOR = 15 };
enum { D_CONVOLUTION = 1, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_EXECUTION_PLAN = 5, D_OP_CONV_FWD = 10,
       D_OPERATIONGRAPH = 15, D_VARIANT_PACK = 16, D_TENSOR = 17, D_OP_MATMUL = 19 };
enum { DT_BFLOAT16 = 9 };

// A tensor of 4 dimensions, packed (NCHW).
static int tensor(void **t, int64_t uid, const int64_t dims[4])
{
    int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1}, align = 16;
    int dt = DT_BFLOAT16;
    CHECK(Create(D_TENSOR, t));
    CHECK(Set(*t, 901, T_DATA_TYPE, 1, &dt));
    CHECK(Set(*t, 902, T_INT64, 4, dims));
    CHECK(Set(*t, 903, T_INT64, 4, strides));
    CHECK(Set(*t, 906, T_INT64, 1, &uid));
    CHECK(Set(*t, 900, T_INT64, 1, &align));
    CHECK(Finalize(*t));
    return 0;
}

int main()
{
    void *lib = dlopen("libcudnn.so.9", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "dlopen libcudnn.so.9: %s\n", dlerror());
        return 1;
    }
    Create = (create_t)dlsym(lib, "cudnnBackendCreateDescriptor");
    Destroy = (destroy_t)dlsym(lib, "cudnnBackendDestroyDescriptor");
    Set = (set_t)dlsym(lib, "cudnnBackendSetAttribute");
    Get = (get_t)dlsym(lib, "cudnnBackendGetAttribute");
    Finalize = (finalize_t)dlsym(lib, "cudnnBackendFinalize");
    execute_t Execute = (execute_t)dlsym(lib, "cudnnBackendExecute");
    handle_t CreateHandle = (handle_t)dlsym(lib, "cudnnCreate");
    stream_t SetStream = (stream_t)dlsym(lib, "cudnnSetStream");
    version_t Version = (version_t)dlsym(lib, "cudnnGetVersion");
    if (!Create || !Destroy || !Set || !Get || !Finalize || !Execute || !CreateHandle || !SetStream || !Version) return 1;
    if (Version() / 10000 != 9) return 1;

    void *h;
    cudaStream_t s;
    CHECK(CreateHandle(&h));
    CHECK(cudaStreamCreate(&s));
    CHECK(SetStream(h, s));
    static const int64_t xd[4] = {2, 8, 16, 16}, wd[4] = {16, 4, 3, 3}, yd[4] = {2, 16, 16, 16};
    void *x, *w, *y, *conv, *op, *graph, *heur, *cfg[2], *plan, *pack;
    CHECK(tensor(&x, 'x', xd));
    CHECK(tensor(&w, 'w', wd));
    CHECK(tensor(&y, 'y', yd));
    int64_t two = 2, ones[2] = {1, 1};
    CHECK(Create(D_CONVOLUTION, &conv));
    CHECK(Set(conv, 106, T_INT64, 1, &two));       // spatial dims
    CHECK(Set(conv, 103, T_INT64, 2, ones));       // strides
    CHECK(Set(conv, 105, T_INT64, 2, ones));       // pre-paddings
    CHECK(Set(conv, 104, T_INT64, 2, ones));       // post-paddings
    CHECK(Set(conv, 102, T_INT64, 2, ones));       // dilations
    CHECK(Finalize(conv));
    CHECK(Create(D_OP_CONV_FWD, &op));
    CHECK(Set(op, 704, T_BACKEND_DESCRIPTOR, 1, &x));
    CHECK(Set(op, 703, T_BACKEND_DESCRIPTOR, 1, &w));
    CHECK(Set(op, 705, T_BACKEND_DESCRIPTOR, 1, &y));
    CHECK(Set(op, 702, T_BACKEND_DESCRIPTOR, 1, &conv));
    CHECK(Finalize(op));
    CHECK(Create(D_OPERATIONGRAPH, &graph));
    CHECK(Set(graph, 800, 0, 1, &h));
    CHECK(Set(graph, 801, T_BACKEND_DESCRIPTOR, 1, &op));
    CHECK(Finalize(graph));
    // the graph holds what it references: the program's descriptors may go
    CHECK(Destroy(x));
    CHECK(Destroy(op));
    int mode = 0;
    CHECK(Create(D_ENGINEHEUR, &heur));
    CHECK(Set(heur, 201, T_BACKEND_DESCRIPTOR, 1, &graph));
    CHECK(Set(heur, 200, T_HEUR_MODE, 1, &mode));
    CHECK(Finalize(heur));
    int64_t n = 0;
    CHECK(Get(heur, 202, T_BACKEND_DESCRIPTOR, 0, &n, NULL));
    if (n < 1 || n > 2) return 1;
    for (int i = 0; i < 2; i++) CHECK(Create(D_ENGINECFG, &cfg[i]));
    CHECK(Get(heur, 202, T_BACKEND_DESCRIPTOR, 2, &n, cfg));
    int64_t ws = -1;
    CHECK(Get(cfg[0], 303, T_INT64, 1, NULL, &ws));
    if (ws != 0) return 1;
    CHECK(Create(D_EXECUTION_PLAN, &plan));
    CHECK(Set(plan, 400, 0, 1, &h));
    CHECK(Set(plan, 401, T_BACKEND_DESCRIPTOR, 1, &cfg[0]));
    CHECK(Finalize(plan));
    void *ptrs[3];
    int64_t uids[3] = {'x', 'w', 'y'};
    for (int i = 0; i < 3; i++) CHECK(cudaMalloc(&ptrs[i], 1 << 16));
    CHECK(Create(D_VARIANT_PACK, &pack));
    CHECK(Set(pack, 1000, T_INT64, 3, uids));
    CHECK(Set(pack, 1001, 6, 3, ptrs));
    CHECK(Finalize(pack));
    CHECK(Execute(h, plan, pack));
    CHECK(cudaStreamSynchronize(s));

    // refused, never a crash: each status is cuDNN's own
    int bad = 0, nope = 0;
    bad |= Set(x, 906, T_INT64, 1, &two) != 2000;       // destroyed: CUDNN_STATUS_BAD_PARAM
    bad |= Set(&nope, 906, T_INT64, 1, &two) != 2000;   // no descriptor at all
    bad |= Get(plan, 405, 24, 0, &n, NULL) != 3000;     // JSON: CUDNN_STATUS_NOT_SUPPORTED
    bad |= Finalize(plan) != 2000;                      // finalized twice
    bad |= Execute(h, NULL, pack) != 2000;
    bad |= Execute(&nope, plan, pack) != 1001;          // CUDNN_STATUS_NOT_INITIALIZED
    void *mm, *lone;
    CHECK(Create(D_OP_MATMUL, &mm));
    CHECK(Set(mm, 1520, T_BACKEND_DESCRIPTOR, 1, &w));
    CHECK(Finalize(mm));
    CHECK(Create(D_OPERATIONGRAPH, &lone));
    CHECK(Set(lone, 801, T_BACKEND_DESCRIPTOR, 1, &mm));
    bad |= Finalize(lone) != 3001;                      // CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN
    void *chain[40];
    int deep = 0;
    for (int i = 0; i < 40; i++) {
        CHECK(Create(D_OP_MATMUL, &chain[i]));
        if (i && Set(chain[i], 1520, T_BACKEND_DESCRIPTOR, 1, &chain[i - 1]) != 0) deep = i;
        if (deep) break;
    }
    bad |= deep != 32;                                   // nested at most 32 deep
    if (bad) {
        fprintf(stderr, "a refusal gave the wrong status\n");
        return 1;
    }
    for (int i = 0; i <= deep; i++) CHECK(Destroy(chain[i]));
    CHECK(Destroy(lone));
    CHECK(Destroy(mm));
    for (void *d : {w, y, conv, graph, heur, cfg[0], cfg[1], plan, pack}) CHECK(Destroy(d));
    printf("cudnn ok\n");
    return 0;
}
