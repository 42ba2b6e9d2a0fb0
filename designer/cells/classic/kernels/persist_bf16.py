"""CUDA C++ source of the PERSIST engine's bf16 kernels: the recurrent products on tensor cores.

Same grid, barriers and data flow as the fp32 kernels (persist_cu): block (ub, bb) owns the hidden
units ``ub*U .. ub*U+U-1`` and the sequences ``bb*NB .. bb*NB+NB-1``, one block an SM, one barrier
a step among the blocks of a batch block. What differs:
- the recurrent weights are held in registers as bf16 ``mma.m16n8k16`` A fragments (forward:
  the block's 4U rows of W_hh; backward: its U columns, i.e. rows of W_hh^T), so a 512-wide
  layer's W_hh takes 64 registers a thread at 256 threads, half the fp32 kernels' bytes;
- h_t (forward) and dz_t (backward) travel between blocks in bf16, staged into shared memory
  with ``cp.async``; the B fragments are read from there as 32-bit pairs (rows padded by 8
  so that the 32 lanes of a warp hit 32 banks);
- products accumulate in fp32; the cell state, the activated gates and the gradients on h and c
  stay fp32; a thread keeps its (sequence, unit) pairs' c (forward) and dh, dc (backward) in
  registers for the whole sequence and prefetches the next step's inputs of the cell into
  registers before the barrier.

Warp w of the forward owns m-tile ``w % MT`` (16 of the block's 4U rows) and k-group ``w / MT``
(KPWF k-tiles of 16); the k-groups' partial sums meet in shared memory, where the cell reads
them. The backward's phase B is the same with the U units as rows and all 4H gate rows as k,
over the batch block's sequences in chunks of NBC.

With ``P_CLUSTER`` (cluster mode, only on request: ``persist_launch.plan_for``), the unit blocks
of a batch block form a thread-block cluster: each pushes its slice of h_t or dz_t into the
others' shared memory (two buffers, used in turn) and they meet at the cluster's barrier, in
place of staging from L2 and the global counter.

Gate order is torch's (i, f, g, o). bf16 values are passed as 16-bit integers (no headers under
NVRTC): widened with a shift, narrowed with ``cvt.rn.bf16.f32`` (round to nearest even).
"""
from designer.cells.classic.kernels.persist_fp32 import COMMON
from designer.cells.classic.kernels.persist_bf16_parts import HELPERS

SOURCE = COMMON + HELPERS + r"""
KERNEL
persist_fwd_tc(const bf16* __restrict__ PRE, const bf16* __restrict__ W, bf16* HS, float* CS,
               float* __restrict__ ACTS, unsigned int* BAR, int T, int N) {
    /* PRE (T, N, 4H) bf16: x W_ih^T + biases. W (4H, H) bf16. HS (T+1, N, H) bf16, CS
       (T+1, N, H) fp32: [0] the initial state in, h_t and c_t out at t+1. ACTS (T, N, 4H)
       fp32: the activated gates. */
    extern __shared__ float4 smem4[];
    bf16* hs = (bf16*)smem4;                          /* [BUFS][NBP][HSTR] h_{t-1} (, h_t) */
    float* red = (float*)(hs + BUFS * P_NBP * P_HSTR);  /* [WKF][NBP][RP] partial sums */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int grp = lane >> 2, tig = lane & 3, mw = warp % P_MT, kg = warp / P_MT;
    const int u0 = blockIdx.x * P_U, n_lo = blockIdx.y * P_NB, n_hi = min(n_lo + P_NB, N);
#if !P_CLUSTER
    unsigned int* bar = GROUP_BAR(BAR);
    const unsigned int P = GROUP_SIZE;
#endif
    const idx_t NH = (idx_t)N * P_H, N4H = 4 * NH;
    unsigned int a[P_KPWF][4];
    {
        int rows[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int lr = mw * 16 + grp + 8 * h, unit = u0 + lr % P_U;
            rows[h] = unit < P_H ? (lr / P_U) * P_H + unit : -1;
        }
#pragma unroll
        for (int kk = 0; kk < P_KPWF; ++kk) {
            const int k0 = (kg * P_KPWF + kk) * 16 + 2 * tig;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int row = rows[j & 1], k = k0 + 8 * (j >> 1);
                a[kk][j] = (row >= 0 && k < P_H) ? pair_at(W + (idx_t)row * P_H + k) : 0u;
            }
        }
    }
    float creg[P_PPT], preg[P_PPT][4];
#pragma unroll
    for (int j = 0; j < P_PPT; ++j) {
        const int p = tid + j * P_THREADS, n = n_lo + p / P_U, unit = u0 + p % P_U;
        const bool ok = p < P_PAIRS && n < n_hi && unit < P_H;
        creg[j] = ok ? CS[(idx_t)n * P_H + unit] : 0.0f;
#pragma unroll
        for (int q = 0; q < 4; ++q) preg[j][q] = ok ? wide(PRE[(idx_t)n * 4 * P_H + q * P_H + unit]) : 0.0f;
    }
#if P_CLUSTER
    for (int i = tid; i < BUFS * P_NBP * P_HSTR / 2; i += P_THREADS) ((unsigned int*)hs)[i] = 0u;
    __syncthreads();
#endif
    for (int t = 0; t < T; ++t) {
        const bf16* hprev = HS + t * NH;
#if P_CLUSTER
        bf16* cur = hs + (t & 1) * P_NBP * P_HSTR;   /* h_{t-1}: pushed by the cluster */
        bf16* nxt = hs + ((t + 1) & 1) * P_NBP * P_HSTR;
        if (t == 0)
#else
        bf16* cur = hs;
#endif
        {
            for (int i = tid; i < P_NBP * (P_H / 8); i += P_THREADS) {
                const int b = i / (P_H / 8), k = 8 * (i % (P_H / 8)), n = n_lo + b;
                stage8(cur + b * P_HSTR + k, hprev + (idx_t)(n < n_hi ? n : n_lo) * P_H + k,
                       n < n_hi);
            }
            stage_wait();
#if P_CLUSTER
            cluster_sync();   /* every block of the cluster runs before any pushes */
#endif
        }
        float acc[P_NT][4], acc2[P_SPLIT][P_NT][4];
        zero(acc2);
#pragma unroll
        for (int kk = 0; kk < P_KPWF; ++kk) {
            const int kt = kg * P_KPWF + kk;
            if (kt < P_KT) {
#pragma unroll
                for (int nt = 0; nt < P_NT; ++nt) {
                    const bf16* x = cur + (nt * 8 + grp) * P_HSTR + kt * 16 + 2 * tig;
                    mma(acc2[kk % P_SPLIT][nt], a[kk], pair_at(x), pair_at(x + 8));
                }
            }
        }
        fold(acc, acc2);
#pragma unroll
        for (int nt = 0; nt < P_NT; ++nt) {
            const int n = nt * 8 + 2 * tig, r = mw * 16 + grp;
            float* o = red + (kg * P_NBP + n) * P_RP + r;
            o[0] = acc[nt][0]; o[P_RP] = acc[nt][1]; o[8] = acc[nt][2]; o[P_RP + 8] = acc[nt][3];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < P_PPT; ++j) {   /* the cell, for the thread's pairs */
            const int p = tid + j * P_THREADS, b = p / P_U, uu = p % P_U;
            const int n = n_lo + b, unit = u0 + uu;
            if (p >= P_PAIRS || n >= n_hi || unit >= P_H) continue;
            float z[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                float s = preg[j][q];
#pragma unroll
                for (int g = 0; g < P_WKF; ++g) s += red[(g * P_NBP + b) * P_RP + q * P_U + uu];
                z[q] = s;
            }
            const float i = sigm(z[0]), f = sigm(z[1]), gg = tanhf(z[2]), o = sigm(z[3]);
            const float c = f * creg[j] + i * gg;
            const idx_t g = (idx_t)t * N4H + (idx_t)n * 4 * P_H + unit, sp = (idx_t)n * P_H + unit;
            ACTS[g] = i; ACTS[g + P_H] = f; ACTS[g + 2 * P_H] = gg; ACTS[g + 3 * P_H] = o;
            CS[(t + 1) * NH + sp] = c;
            const bf16 hv = narrow(o * tanhf(c));
            HS[(t + 1) * NH + sp] = hv;
#if P_CLUSTER
            nxt[b * P_HSTR + unit] = hv;
#endif
            creg[j] = c;
            if (t + 1 < T) {   /* the next step's pre-activations, in flight over the barrier */
#pragma unroll
                for (int q = 0; q < 4; ++q) preg[j][q] = wide(PRE[g + N4H + q * P_H]);
            }
        }
#if P_CLUSTER
        if (t + 1 < T) {
            __syncthreads();
            push_all(nxt, P_HSTR, n_hi - n_lo, 1, 0, u0, tid);
            cluster_sync();
        }
#else
        if (t + 1 < T) grid_sync(bar, (t + 1) * P);
#endif
    }
}

KERNEL
persist_bwd_tc(const bf16* __restrict__ DY, const float* __restrict__ ACTS,
               const float* __restrict__ CS, const bf16* __restrict__ W, bf16* DZ, float* DH,
               float* DC, unsigned int* BAR, int T, int N) {
    /* DY (T, N, H) bf16: the loss's gradient on each h_t. DH, DC (N, H) fp32: in, the gradient
       on the last state; out, on the initial one. DZ (T, N, 4H) bf16: out, the pre-activations'
       gradient. */
    extern __shared__ float4 smem4[];
    bf16* zs = (bf16*)smem4;                          /* [BUFS][NBC][ZSTR] dz[t], a chunk */
    float* red = (float*)(zs + BUFS * P_NBC * P_ZSTR);  /* [WKB][NBC][UP] partial sums */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int grp = lane >> 2, tig = lane & 3, mb = warp % P_MTB, kg = warp / P_MTB;
    const int u0 = blockIdx.x * P_U, n_lo = blockIdx.y * P_NB, n_hi = min(n_lo + P_NB, N);
#if !P_CLUSTER
    unsigned int* bar = GROUP_BAR(BAR);
    const unsigned int P = GROUP_SIZE;
#endif
    const idx_t NH = (idx_t)N * P_H, N4H = 4 * NH;
    unsigned int a[P_KPWB][4];
#pragma unroll
    for (int kk = 0; kk < P_KPWB; ++kk) {
        const int r0 = (kg * P_KPWB + kk) * 16 + 2 * tig;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int unit = u0 + mb * 16 + grp + 8 * (j & 1), r = r0 + 8 * (j >> 1);
            const bool ok = unit < P_H && r < 4 * P_H;
            a[kk][j] = ok ? pack(W[(idx_t)r * P_H + unit], W[(idx_t)(r + 1) * P_H + unit]) : 0u;
        }
    }
    /* the thread's pairs: dh, dc, and phase A's inputs of the coming step */
    float dh[P_PPT], dc[P_PPT], in[P_PPT][7];
#pragma unroll
    for (int j = 0; j < P_PPT; ++j) {
        const int p = tid + j * P_THREADS, n = n_lo + p / P_U, unit = u0 + p % P_U;
        const bool ok = p < P_PAIRS && n < n_hi && unit < P_H;
        const idx_t sp = (idx_t)n * P_H + unit, t = T - 1;
        dh[j] = ok ? DH[sp] : 0.0f;
        dc[j] = ok ? DC[sp] : 0.0f;
#pragma unroll
        for (int q = 0; q < 4; ++q) in[j][q] = ok ? ACTS[t * N4H + (idx_t)n * 4 * P_H + q * P_H + unit] : 0.0f;
        in[j][4] = ok ? wide(DY[t * NH + sp]) : 0.0f;
        in[j][5] = ok ? CS[(t + 1) * NH + sp] : 0.0f;
        in[j][6] = ok ? CS[t * NH + sp] : 0.0f;
    }
#if P_CLUSTER
#if P_NBC != P_NBP
#error "cluster mode holds the batch block's dz in one chunk"
#endif
    for (int i = tid; i < BUFS * P_NBC * P_ZSTR / 2; i += P_THREADS) ((unsigned int*)zs)[i] = 0u;
    cluster_sync();   /* zeroed, and every block of the cluster runs before any pushes */
#endif
    for (int s = 0; s < T; ++s) {
        const int t = T - 1 - s;
#if P_CLUSTER
        bf16* zcur = zs + (s & 1) * P_NBC * P_ZSTR;
#else
        bf16* zcur = zs;
#endif
        /* A: the cell backward for the thread's pairs -> dz[t] of their 4 gate rows */
#pragma unroll
        for (int j = 0; j < P_PPT; ++j) {
            const int p = tid + j * P_THREADS, n = n_lo + p / P_U, unit = u0 + p % P_U;
            if (p >= P_PAIRS || n >= n_hi || unit >= P_H) continue;
            const float i = in[j][0], f = in[j][1], gg = in[j][2], o = in[j][3];
            const float dhv = in[j][4] + dh[j], c = in[j][5], cp = in[j][6];
            const float tc = tanhf(c);
            const float dcv = dc[j] + dhv * o * (1.0f - tc * tc);
            const idx_t g = (idx_t)t * N4H + (idx_t)n * 4 * P_H + unit, sp = (idx_t)n * P_H + unit;
            const bf16 d0 = narrow(dcv * gg * i * (1.0f - i)), d1 = narrow(dcv * cp * f * (1.0f - f));
            const bf16 d2 = narrow(dcv * i * (1.0f - gg * gg)), d3 = narrow(dhv * tc * o * (1.0f - o));
            DZ[g] = d0; DZ[g + P_H] = d1; DZ[g + 2 * P_H] = d2; DZ[g + 3 * P_H] = d3;
#if P_CLUSTER
            bf16* zrow = zcur + (p / P_U) * P_ZSTR + unit;
            zrow[0] = d0; zrow[P_H] = d1; zrow[2 * P_H] = d2; zrow[3 * P_H] = d3;
#endif
            dc[j] = dcv * f;
            if (t > 0) {   /* the previous step's inputs, in flight over the barrier */
#pragma unroll
                for (int q = 0; q < 4; ++q) in[j][q] = ACTS[g - N4H + q * P_H];
                in[j][4] = wide(DY[(t - 1) * NH + sp]);
                in[j][5] = cp;
                in[j][6] = CS[(t - 1) * NH + sp];
            }
        }
#if P_CLUSTER
        __syncthreads();
        push_all(zcur, P_ZSTR, n_hi - n_lo, 4, P_H, u0, tid);
        cluster_sync();
#else
        grid_sync(bar, (s + 1) * P);
#endif
        /* B: dh_{t-1}[n, u] = sum over the 4H gate rows r of dz[t, n, r] W[r, u] */
#if !P_CLUSTER
        const bf16* dzt = DZ + (idx_t)t * N4H;
#endif
        for (int c0 = 0; c0 < P_NBP; c0 += P_NBC) {
#if !P_CLUSTER
            for (int i = tid; i < P_NBC * (P_H / 2); i += P_THREADS) {
                const int b = i / (P_H / 2), k = 8 * (i % (P_H / 2)), n = n_lo + c0 + b;
                stage8(zs + b * P_ZSTR + k, dzt + (idx_t)(n < n_hi ? n : n_lo) * 4 * P_H + k,
                       n < n_hi);
            }
            stage_wait();
#endif
            float acc[P_NTC][4], acc2[P_SPLIT][P_NTC][4];
            zero(acc2);
#pragma unroll
            for (int kk = 0; kk < P_KPWB; ++kk) {
                const int kt = kg * P_KPWB + kk;
                if (kt < P_KTB) {
#pragma unroll
                    for (int nt = 0; nt < P_NTC; ++nt) {
                        const bf16* x = zcur + (nt * 8 + grp) * P_ZSTR + kt * 16 + 2 * tig;
                        mma(acc2[kk % P_SPLIT][nt], a[kk], pair_at(x), pair_at(x + 8));
                    }
                }
            }
            fold(acc, acc2);
#pragma unroll
            for (int nt = 0; nt < P_NTC; ++nt) {
                const int n = nt * 8 + 2 * tig, m = mb * 16 + grp;
                float* o = red + (kg * P_NBC + n) * P_UP + m;
                o[0] = acc[nt][0]; o[P_UP] = acc[nt][1]; o[8] = acc[nt][2]; o[P_UP + 8] = acc[nt][3];
            }
            __syncthreads();
#pragma unroll
            for (int j = 0; j < P_PPT; ++j) {
                const int p = tid + j * P_THREADS, b = p / P_U - c0, uu = p % P_U;
                if (p >= P_PAIRS || b < 0 || b >= P_NBC) continue;
                float s2 = 0.0f;
#pragma unroll
                for (int g = 0; g < P_WKB; ++g) s2 += red[(g * P_NBC + b) * P_UP + uu];
                dh[j] = s2;
            }
            if (c0 + P_NBC < P_NBP) __syncthreads();   /* the next chunk reuses zs, red */
        }
    }
#pragma unroll
    for (int j = 0; j < P_PPT; ++j) {
        const int p = tid + j * P_THREADS, n = n_lo + p / P_U, unit = u0 + p % P_U;
        if (p < P_PAIRS && n < n_hi && unit < P_H) {
            DH[(idx_t)n * P_H + unit] = dh[j];
            DC[(idx_t)n * P_H + unit] = dc[j];
        }
    }
}
"""
