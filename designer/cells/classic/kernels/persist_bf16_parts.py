"""The tensor-core kernels' constants and device helpers (persist_tc.SOURCE puts them first):
the tile arithmetic derived from the compile-time constants, bf16 in 16-bit integers, the
``mma.m16n8k16`` bf16 instruction, split accumulators, and cluster mode's barrier and push into
the other blocks' shared memory."""

HELPERS = r"""
typedef unsigned short bf16;
#define P_R (4 * P_U)                    /* forward: the block's rows of W_hh */
#define P_WARPS (P_THREADS / 32)
#define P_NBP (((P_NB + 7) / 8) * 8)     /* the batch block's sequences, in n-tiles of 8 */
#define P_NT (P_NBP / 8)
#define P_MT (P_R / 16)                  /* forward m-tiles */
#define P_WKF (P_WARPS / P_MT)           /* forward k-groups */
#define P_KT (P_H / 16)
#define P_KPWF ((P_KT + P_WKF - 1) / P_WKF)
#define P_HSTR (P_H + 8)                 /* bf16 stride of a staged row of h */
#define P_RP (P_R + 4)                   /* fp32 stride of a row of partial sums (banks) */
#define P_MTB (P_U / 16)                 /* backward m-tiles */
#define P_WKB (P_WARPS / P_MTB)          /* backward k-groups */
#define P_KTB (P_H / 4)                  /* 4H / 16 */
#define P_KPWB ((P_KTB + P_WKB - 1) / P_WKB)
#define P_ZSTR (4 * P_H + 8)             /* bf16 stride of a staged row of dz */
#define P_NTC (P_NBC / 8)                /* backward n-tiles a chunk */
#define P_UP (P_U + 4)
#define P_PAIRS (P_NB * P_U)
#define P_PPT ((P_PAIRS + P_THREADS - 1) / P_THREADS)   /* pairs a thread */

#ifndef P_SPLIT
#define P_SPLIT 2
#endif
#if P_U % 16 || P_H % 16 || P_WARPS % P_MT || P_WARPS % P_MTB || P_NBC % 8
#error "the tensor-core kernels need U and H multiples of 16 and whole warps a tile"
#endif

__device__ __forceinline__ float wide(bf16 v) { return __uint_as_float(((unsigned int)v) << 16); }
__device__ __forceinline__ bf16 narrow(float x) {
    bf16 r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ unsigned int pack(bf16 lo, bf16 hi) {
    return (unsigned int)lo | ((unsigned int)hi << 16);
}
__device__ __forceinline__ void mma(float (&c)[4], const unsigned int (&a)[4], unsigned int b0,
                                    unsigned int b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/* 16 bytes (8 bf16) from global src to shared dst through L2; zeros where not valid. */
__device__ __forceinline__ void stage8(bf16* dst, const bf16* src, bool valid) {
    stage4((float*)dst, (const float*)src, valid);
}
__device__ __forceinline__ unsigned int pair_at(const bf16* x) { return *(const unsigned int*)x; }

#ifndef P_CLUSTER
#define P_CLUSTER 0
#endif
#if P_CLUSTER
/* Cluster mode: the unit blocks of a batch block form one thread-block cluster. Each block
   pushes its slice of h_t (dz_t) into the shared memory of every block of the cluster, and
   the step's barrier is the cluster's hardware barrier: nothing goes through L2 or global
   atomics, and clusters need not all be resident at once. */
#define KERNEL extern "C" __global__ void __cluster_dims__(P_CLUSTER, 1, 1) __launch_bounds__(P_THREADS, 1)
#define BUFS 2
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
/* 16 bytes of this block's shared memory at p to the same place in every other block of the
   cluster; each thread takes its share of the (peer, chunk) pairs. */
__device__ __forceinline__ void push_all(const bf16* base, int stride, int rows, int segs,
                                         int seg_stride, int u0, int tid) {
    unsigned int me;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(me));
    const int chunks = P_U / 8, per_peer = rows * segs * chunks;
    for (int i = tid; i < P_CLUSTER * per_peer; i += P_THREADS) {
        const unsigned int peer = i / per_peer;
        const int rem = i % per_peer, b = rem / (segs * chunks), sg = (rem / chunks) % segs;
        if (peer == me) continue;
        const bf16* p = base + b * stride + sg * seg_stride + u0 + 8 * (rem % chunks);
        const uint4 v = *(const uint4*)p;
        unsigned int a, r;
        asm volatile("{ .reg .u64 g; cvta.to.shared.u64 g, %1; cvt.u32.u64 %0, g; }"
                     : "=r"(a) : "l"(p));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(peer));
        asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};"
                     :: "r"(r), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
    }
}
#else
#define KERNEL extern "C" __global__ void __launch_bounds__(P_THREADS, 1)
#define BUFS 1
#endif
/* SPLIT accumulators a tile, every SPLIT-th k-tile into each: shorter chains of dependent mmas */
template <int S, int NTILES>
__device__ __forceinline__ void zero(float (&acc)[S][NTILES][4]) {
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
        for (int nt = 0; nt < NTILES; ++nt)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[s][nt][j] = 0.0f;
}
template <int S, int NTILES>
__device__ __forceinline__ void fold(float (&out)[NTILES][4], const float (&acc)[S][NTILES][4]) {
#pragma unroll
    for (int nt = 0; nt < NTILES; ++nt)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            float v = acc[0][nt][j];
#pragma unroll
            for (int s = 1; s < S; ++s) v += acc[s][nt][j];
            out[nt][j] = v;
        }
}
"""
