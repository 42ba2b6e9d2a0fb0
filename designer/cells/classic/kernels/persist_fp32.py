"""CUDA C++ source of the PERSIST engine's kernels (compiled at first use by NVRTC, persist_cuda).

One launch runs one LSTM level through all its time steps. Block (ub, bb) of the grid owns the
hidden units ``ub*U .. ub*U+U-1`` and the sequences ``bb*NB .. bb*NB+NB-1``. All blocks are
resident at once (one per SM). Once a step, the blocks of one batch block (which exchange h
forward and dz backward among themselves, and nothing with the other batch blocks) meet at a
barrier on their own counter.

The recurrent weights never leave the chip: each thread holds its slice of them in registers for
the whole launch (``KW`` floats forward, ``RW`` backward; the compile-time constants are chosen
by ``persist_launch.plan``), so a step reads only what other blocks wrote in the step before (h
forward, the pre-activation gradients backward) from L2, staged into shared memory with
``cp.async`` together with the block's own inputs of that step, so that one wait covers them.

Forward, per step t and chunk of NBC sequences:
  z[n, r] = pre[t, n, r] + sum_k h_{t-1}[n, k] W_hh[r, k]  for the block's 4U rows r;
  thread (r, ks) sums over its k slice; the KS partial sums meet in shared memory;
  then the cell for (n, u): i, f, g, o, c_t = f c_{t-1} + i g, h_t = o tanh(c_t).
Backward, per step (T-1 .. 0), two phases around one barrier:
  A. the gradient reaching h_t and c_t of the block's units -> dz[t] of their 4 gate rows
     (its inputs were staged during the previous phase B; dh and dc stay in shared memory);
  B. dh_{t-1}[n, u] = sum_r dz[t, n, r] W_hh[r, u] over all 4H rows, for the block's units;
     thread (u, rs) sums over its row slice.
Everything is fp32 (the accumulation too); gate order is torch's (i, f, g, o).
"""

COMMON = r"""
#ifndef P_H
#error "compile with -DP_H=... (persist_cuda.plan gives the constants)"
#endif
typedef unsigned long long idx_t;   /* no headers under NVRTC: no size_t */

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* Every block arrives (a release add: the block's writes, ordered before it by the CTA
   barrier, become visible with it) and waits until all P have arrived for this step (an
   acquire poll: later reads see what the others wrote). */
__device__ __forceinline__ void grid_sync(unsigned int* bar, unsigned int target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(bar) : "memory");
        unsigned int seen;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(bar) : "memory");
        } while (seen < target);
    }
    __syncthreads();
}

/* The blocks that exchange data: with P_GBAR, the unit blocks of one batch block (the others
   never read what it writes), each group with its own counter on its own 128-byte line; else
   the whole grid. */
#if P_GBAR
#define GROUP_BAR(BAR) ((BAR) + 32 * blockIdx.y)
#define GROUP_SIZE (gridDim.x)
#else
#define GROUP_BAR(BAR) (BAR)
#define GROUP_SIZE (gridDim.x * gridDim.y)
#endif

extern "C" __global__ void persist_barriers(unsigned int* BAR, int T) {
    /* T barriers and nothing else: what one step's synchronisation costs. */
    unsigned int* bar = GROUP_BAR(BAR);
    const unsigned int P = GROUP_SIZE;
    for (int t = 0; t < T; ++t) grid_sync(bar, (t + 1) * P);
}

/* 16 bytes from global src to shared dst through L2 only (other SMs wrote src); zeros where
   not valid (src must still be a valid address). */
__device__ __forceinline__ void stage4(float* dst, const float* src, bool valid) {
    unsigned int d;
    asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
                 : "=r"(d) : "l"(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :: "r"(d), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

__device__ __forceinline__ void stage_wait() {
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
}
"""

SOURCE = COMMON + r"""
#define P_R (4 * P_U)                /* forward: rows of W_hh a block owns */
#define P_KS (P_THREADS / P_R)       /* forward: k slices */
#define P_KWP (P_KW + 4)             /* shared-memory stride of a k slice (spreads the banks) */
#define P_HROW (P_KS * P_KWP)        /* shared-memory floats of one staged row of h_{t-1} */
#define P_RS (P_THREADS / P_U)       /* backward: row slices */
#define P_RWP (P_RW + 4)
#define P_ZROW (P_RS * P_RWP)        /* shared-memory floats of one staged row of dz[t] */
#define P_VEC (P_H % 4 == 0)         /* rows are 16-byte aligned: stage with cp.async */
#define P_PAIRS (P_NB * P_U)         /* backward: the block's (sequence, unit) pairs */

/* A thread's partial sums for the chunk's NBC rows of shared memory x (stride `row`): for each
   row b, the dot product of its LEN values with the thread's weights w, written to
   out[b * out_row]. Four rows at a time: each float4 of x feeds four FMAs. */
template <int LEN>
__device__ __forceinline__ void partial_sums(const float (&w)[LEN], const float* x, int row,
                                             float* out, int out_row) {
    for (int b0 = 0; b0 < P_NBC; b0 += 4) {
        float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
        const float* xb = x + b0 * row;
#pragma unroll
        for (int k4 = 0; k4 < LEN / 4; ++k4) {
            const float4 x0 = *(const float4*)(xb + 4 * k4);
            const float4 x1 = *(const float4*)(xb + row + 4 * k4);
            const float4 x2 = *(const float4*)(xb + 2 * row + 4 * k4);
            const float4 x3 = *(const float4*)(xb + 3 * row + 4 * k4);
            const float w0 = w[4 * k4], w1 = w[4 * k4 + 1], w2 = w[4 * k4 + 2],
                        w3 = w[4 * k4 + 3];
            a0 = fmaf(w0, x0.x, a0); a1 = fmaf(w0, x1.x, a1);
            a2 = fmaf(w0, x2.x, a2); a3 = fmaf(w0, x3.x, a3);
            a0 = fmaf(w1, x0.y, a0); a1 = fmaf(w1, x1.y, a1);
            a2 = fmaf(w1, x2.y, a2); a3 = fmaf(w1, x3.y, a3);
            a0 = fmaf(w2, x0.z, a0); a1 = fmaf(w2, x1.z, a1);
            a2 = fmaf(w2, x2.z, a2); a3 = fmaf(w2, x3.z, a3);
            a0 = fmaf(w3, x0.w, a0); a1 = fmaf(w3, x1.w, a1);
            a2 = fmaf(w3, x2.w, a2); a3 = fmaf(w3, x3.w, a3);
        }
        float* o = out + b0 * out_row;
        o[0] = a0; o[out_row] = a1; o[2 * out_row] = a2; o[3 * out_row] = a3;
    }
}

extern "C" __global__ void __launch_bounds__(P_THREADS, 1)
persist_fwd(const float* __restrict__ PRE, const float* __restrict__ W, float* HS, float* CS,
            float* __restrict__ ACTS, unsigned int* BAR, int T, int N, int NB) {
    /* PRE (T, N, 4H): x W_ih^T + biases. W (4H, H). HS, CS (T+1, N, H): [0] the initial
       state in, h_t and c_t out at t+1. ACTS (T, N, 4H): the activated gates. */
    extern __shared__ float4 smem4[];
    float* hs = (float*)smem4;                  /* [NBC][HROW]   h_{t-1}, this chunk */
    float* red = hs + P_NBC * P_HROW;           /* [KS][NBC][R]  partial sums */
    float* pres = red + P_THREADS * P_NBC;      /* [NBC][R]      pre[t], the block's rows */
    float* cps = pres + P_NBC * P_R;            /* [NBC][U]      c_{t-1}, the block's units */
    (void)cps;
    const int tid = threadIdx.x, r = tid % P_R, ks = tid / P_R;
    const int u0 = blockIdx.x * P_U, n_lo = blockIdx.y * NB;
    const int n_hi = min(n_lo + NB, N);
    unsigned int* bar = GROUP_BAR(BAR);
    const unsigned int P = GROUP_SIZE;
    float w[P_KW];
    {
        const int unit = u0 + r % P_U, row = (r / P_U) * P_H + unit;
#pragma unroll
        for (int kk = 0; kk < P_KW; ++kk) {
            const int k = ks * P_KW + kk;
            w[kk] = (unit < P_H && k < P_H) ? W[(idx_t)row * P_H + k] : 0.0f;
        }
    }
    for (int i = tid; i < P_NBC * P_HROW; i += P_THREADS) hs[i] = 0.0f;  /* padding stays 0 */
    __syncthreads();
    const idx_t NH = (idx_t)N * P_H;
    for (int t = 0; t < T; ++t) {
        const float* hprev = HS + t * NH;
        for (int n0 = n_lo; n0 < n_hi; n0 += P_NBC) {
#if P_VEC
            for (int i = tid; i < P_NBC * (P_H / 4); i += P_THREADS) {   /* h_{t-1} */
                const int b = i / (P_H / 4), k = 4 * (i % (P_H / 4)), n = n0 + b;
                stage4(hs + b * P_HROW + (k / P_KW) * P_KWP + k % P_KW,
                       hprev + (idx_t)(n < n_hi ? n : n_lo) * P_H + k, n < n_hi);
            }
            for (int i = tid; i < P_NBC * P_U; i += P_THREADS) {   /* pre[t] (4 per unit) */
                const int b = i / P_U, q = (i % P_U) / (P_U / 4), k = 4 * (i % (P_U / 4));
                const int n = n0 + b;
                const bool ok = n < n_hi && u0 + k < P_H;
                stage4(pres + b * P_R + q * P_U + k,
                       ok ? PRE + ((idx_t)t * N + n) * 4 * P_H + q * P_H + u0 + k : PRE, ok);
            }
            for (int i = tid; i < P_NBC * (P_U / 4); i += P_THREADS) {   /* c_{t-1} */
                const int b = i / (P_U / 4), k = 4 * (i % (P_U / 4)), n = n0 + b;
                const bool ok = n < n_hi && u0 + k < P_H;
                stage4(cps + b * P_U + k, ok ? CS + t * NH + (idx_t)n * P_H + u0 + k : CS, ok);
            }
            stage_wait();
#else
            for (int i = tid; i < P_NBC * P_H; i += P_THREADS) {
                const int b = i / P_H, k = i % P_H, n = n0 + b;
                hs[b * P_HROW + (k / P_KW) * P_KWP + k % P_KW] =
                    n < n_hi ? __ldcg(hprev + (idx_t)n * P_H + k) : 0.0f;
            }
            __syncthreads();
#endif
            partial_sums<P_KW>(w, hs + ks * P_KWP, P_HROW, red + ks * P_NBC * P_R + r, P_R);
            __syncthreads();
            for (int p = tid; p < P_NBC * P_U; p += P_THREADS) {   /* the cell */
                const int b = p / P_U, uu = p % P_U, n = n0 + b, unit = u0 + uu;
                if (n >= n_hi || unit >= P_H) continue;
                const idx_t g = ((idx_t)t * N + n) * 4 * P_H + unit, sp = (idx_t)n * P_H + unit;
                float z[4];
#pragma unroll
                for (int q = 0; q < 4; ++q) {
#if P_VEC
                    float s = pres[b * P_R + q * P_U + uu];
#else
                    float s = PRE[g + q * P_H];
#endif
#pragma unroll
                    for (int j = 0; j < P_KS; ++j) s += red[(j * P_NBC + b) * P_R + q * P_U + uu];
                    z[q] = s;
                }
#if P_VEC
                const float cprev = cps[b * P_U + uu];
#else
                const float cprev = __ldcg(CS + t * NH + sp);
#endif
                const float i = sigm(z[0]), f = sigm(z[1]), gg = tanhf(z[2]), o = sigm(z[3]);
                const float c = f * cprev + i * gg;
                ACTS[g] = i; ACTS[g + P_H] = f; ACTS[g + 2 * P_H] = gg; ACTS[g + 3 * P_H] = o;
                CS[(t + 1) * NH + sp] = c;
                HS[(t + 1) * NH + sp] = o * tanhf(c);
            }
            if (n0 + P_NBC < n_hi) __syncthreads();   /* the next chunk reuses hs, red, pres */
        }
        if (t + 1 < T) grid_sync(bar, (t + 1) * P);
    }
}

#if P_APRE
/* Phase A's inputs for step t, for the block's pairs, into shared memory: as[j][pair] for
   j = dy, i, f, g, o, c_t, c_{t-1} */
__device__ __forceinline__ void stage_a(float* as, const float* DY, const float* ACTS,
                                        const float* CS, int t, int N, int n_lo, int n_hi,
                                        int u0, int tid) {
    const idx_t NH = (idx_t)N * P_H;
    for (int i = tid; i < 7 * P_PAIRS / 4; i += P_THREADS) {
        const int j = i / (P_PAIRS / 4), pr = 4 * (i % (P_PAIRS / 4));
        const int n = n_lo + pr / P_U, k = u0 + pr % P_U;
        const bool ok = n < n_hi && k < P_H;
        const float* src;
        if (j == 0) src = DY + t * NH + (idx_t)n * P_H + k;
        else if (j < 5) src = ACTS + ((idx_t)t * N + n) * 4 * P_H + (j - 1) * P_H + k;
        else src = CS + (t + (j == 5 ? 1 : 0)) * NH + (idx_t)n * P_H + k;
        stage4(as + j * P_PAIRS + pr, ok ? src : DY, ok);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(P_THREADS, 1)
persist_bwd(const float* __restrict__ DY, const float* __restrict__ ACTS,
            const float* __restrict__ CS, const float* __restrict__ W, float* DZ, float* DH,
            float* DC, unsigned int* BAR, int T, int N, int NB) {
    /* DY (T, N, H): the loss's gradient on each h_t. DH, DC (N, H): in, the gradient on the
       last state; out, on the initial one. DZ (T, N, 4H): out, the pre-activations' gradient. */
    extern __shared__ float4 smem4[];
    float* zs = (float*)smem4;                  /* [NBC][ZROW]  dz[t], this chunk */
    float* red = zs + P_NBC * P_ZROW;           /* [RS][NBC][U] partial sums */
    const int tid = threadIdx.x, uu = tid % P_U, rs = tid / P_U;
    const int u0 = blockIdx.x * P_U, n_lo = blockIdx.y * NB, unit = u0 + uu;
    const int n_hi = min(n_lo + NB, N);
    unsigned int* bar = GROUP_BAR(BAR);
    const unsigned int P = GROUP_SIZE;
#if P_APRE
    float* as = red + P_THREADS * P_NBC;        /* [7][PAIRS]   phase A's inputs */
    float* dhs = as + 7 * P_PAIRS;              /* [PAIRS]      dh of the block's pairs */
    float* dcs = dhs + P_PAIRS;                 /* [PAIRS]      dc */
    for (int p = tid; p < P_PAIRS; p += P_THREADS) {
        const int n = n_lo + p / P_U, k = u0 + p % P_U;
        const bool ok = n < n_hi && k < P_H;
        dhs[p] = ok ? DH[(idx_t)n * P_H + k] : 0.0f;
        dcs[p] = ok ? DC[(idx_t)n * P_H + k] : 0.0f;
    }
    stage_a(as, DY, ACTS, CS, T - 1, N, n_lo, n_hi, u0, tid);
#endif
    float w[P_RW];
#pragma unroll
    for (int kk = 0; kk < P_RW; ++kk) {
        const int row = rs * P_RW + kk;
        w[kk] = (unit < P_H && row < 4 * P_H) ? W[(idx_t)row * P_H + unit] : 0.0f;
    }
    for (int i = tid; i < P_NBC * P_ZROW; i += P_THREADS) zs[i] = 0.0f;
#if P_APRE
    stage_wait();
#else
    __syncthreads();
    const idx_t NH = (idx_t)N * P_H;
#endif
    for (int s = 0; s < T; ++s) {
        const int t = T - 1 - s;
        /* A: this block's units, through the cell */
        for (int p = tid; p < (n_hi - n_lo) * P_U; p += P_THREADS) {
            const int n = n_lo + p / P_U, un = u0 + p % P_U;
            if (un >= P_H) continue;
            const idx_t g = ((idx_t)t * N + n) * 4 * P_H + un;
#if P_APRE
            const float dh = as[p] + dhs[p], dcin = dcs[p];
            const float i = as[P_PAIRS + p], f = as[2 * P_PAIRS + p],
                        gg = as[3 * P_PAIRS + p], o = as[4 * P_PAIRS + p];
            const float c = as[5 * P_PAIRS + p], cp = as[6 * P_PAIRS + p];
#else
            const idx_t sp = (idx_t)n * P_H + un;
            const float dh = DY[t * NH + sp] + DH[sp], dcin = DC[sp];
            const float i = ACTS[g], f = ACTS[g + P_H], gg = ACTS[g + 2 * P_H],
                        o = ACTS[g + 3 * P_H];
            const float c = CS[(t + 1) * NH + sp], cp = CS[t * NH + sp];
#endif
            const float tc = tanhf(c);
            const float dc = dcin + dh * o * (1.0f - tc * tc);
            DZ[g] = dc * gg * i * (1.0f - i);
            DZ[g + P_H] = dc * cp * f * (1.0f - f);
            DZ[g + 2 * P_H] = dc * i * (1.0f - gg * gg);
            DZ[g + 3 * P_H] = dh * tc * o * (1.0f - o);
#if P_APRE
            dcs[p] = dc * f;
#else
            DC[sp] = dc * f;
#endif
        }
        grid_sync(bar, (s + 1) * P);
        /* B: dh_{t-1}[n, u] = sum over all 4H rows of dz[t, n, row] W[row, u] */
        const float* dzt = DZ + (idx_t)t * N * 4 * P_H;
        for (int n0 = n_lo; n0 < n_hi; n0 += P_NBC) {
#if P_VEC
            for (int i = tid; i < P_NBC * P_H; i += P_THREADS) {
                const int b = i / P_H, k = 4 * (i % P_H), n = n0 + b;
                stage4(zs + b * P_ZROW + (k / P_RW) * P_RWP + k % P_RW,
                       dzt + (idx_t)(n < n_hi ? n : n_lo) * 4 * P_H + k, n < n_hi);
            }
#if P_APRE
            if (n0 == n_lo && t > 0) stage_a(as, DY, ACTS, CS, t - 1, N, n_lo, n_hi, u0, tid);
#endif
            stage_wait();
#else
            for (int i = tid; i < P_NBC * 4 * P_H; i += P_THREADS) {
                const int b = i / (4 * P_H), k = i % (4 * P_H), n = n0 + b;
                zs[b * P_ZROW + (k / P_RW) * P_RWP + k % P_RW] =
                    n < n_hi ? __ldcg(dzt + (idx_t)n * 4 * P_H + k) : 0.0f;
            }
            __syncthreads();
#endif
            partial_sums<P_RW>(w, zs + rs * P_RWP, P_ZROW, red + rs * P_NBC * P_U + uu, P_U);
            __syncthreads();
            for (int p = tid; p < P_NBC * P_U; p += P_THREADS) {
                const int b = p / P_U, up = p % P_U, n = n0 + b;
                if (n >= n_hi || u0 + up >= P_H) continue;
                float s2 = 0.0f;
#pragma unroll 8
                for (int j = 0; j < P_RS; ++j) s2 += red[(j * P_NBC + b) * P_U + up];
#if P_APRE
                dhs[(n - n_lo) * P_U + up] = s2;
#else
                DH[(idx_t)n * P_H + u0 + up] = s2;
#endif
            }
            __syncthreads();
        }
    }
#if P_APRE
    for (int p = tid; p < P_PAIRS; p += P_THREADS) {
        const int n = n_lo + p / P_U, k = u0 + p % P_U;
        if (n < n_hi && k < P_H) {
            DH[(idx_t)n * P_H + k] = dhs[p];
            DC[(idx_t)n * P_H + k] = dcs[p];
        }
    }
#endif
}
"""
