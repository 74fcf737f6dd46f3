// Arithmetic, conversions and bit intrinsics whose name gives their rounding: each mode's result, computed in a
// kernel and printed by the host in C's %a (every bit of it). The inputs are chosen so that the four modes differ
// (a sum whose exact value lies between two floats, 1/3, sqrt(2), 2^24 + 1 as a float); the conversions to an
// integer stay within the integer's range (CUDA leaves the rest undefined).
#include <climits>
#include <cmath>
#include <cstdio>

constexpr int kOut = 128;

__global__ void compute(const float* f, const double* d, double* out, long long* ints) {
    int k = 0;
#define MODES(expr_rn, expr_rz, expr_ru, expr_rd) out[k++] = expr_rn, out[k++] = expr_rz, out[k++] = expr_ru, out[k++] = expr_rd
    // f: 1, 2^-30, 1/3 (as a float), 3, 2, 1 + 2^-23, -1; d: 1, 2^-60, 1/3, 3, 2, 1 + 2^-52, -1
    MODES(__fadd_rn(f[0], f[1]), __fadd_rz(f[0], f[1]), __fadd_ru(f[0], f[1]), __fadd_rd(f[0], f[1]));
    MODES(__fadd_rn(f[6], -f[1]), __fadd_rz(f[6], -f[1]), __fadd_ru(f[6], -f[1]), __fadd_rd(f[6], -f[1]));
    MODES(__fsub_rn(f[0], f[1]), __fsub_rz(f[0], f[1]), __fsub_ru(f[0], f[1]), __fsub_rd(f[0], f[1]));
    MODES(__fmul_rn(f[2], f[3]), __fmul_rz(f[2], f[3]), __fmul_ru(f[2], f[3]), __fmul_rd(f[2], f[3]));
    MODES(__fdiv_rn(f[0], f[3]), __fdiv_rz(f[0], f[3]), __fdiv_ru(f[0], f[3]), __fdiv_rd(f[0], f[3]));
    MODES(__fdiv_rn(-f[4], f[3]), __fdiv_rz(-f[4], f[3]), __fdiv_ru(-f[4], f[3]), __fdiv_rd(-f[4], f[3]));
    MODES(__frcp_rn(f[3]), __frcp_rz(f[3]), __frcp_ru(f[3]), __frcp_rd(f[3]));
    MODES(__fsqrt_rn(f[4]), __fsqrt_rz(f[4]), __fsqrt_ru(f[4]), __fsqrt_rd(f[4]));
    MODES(__fmaf_rn(f[5], f[5], 0.0f), __fmaf_rz(f[5], f[5], 0.0f), __fmaf_ru(f[5], f[5], 0.0f), __fmaf_rd(f[5], f[5], 0.0f));
    MODES(__fmaf_rn(f[5], -f[5], 0.0f), __fmaf_rz(f[5], -f[5], 0.0f), __fmaf_ru(f[5], -f[5], 0.0f), __fmaf_rd(f[5], -f[5], 0.0f));
    MODES(__dadd_rn(d[0], d[1]), __dadd_rz(d[0], d[1]), __dadd_ru(d[0], d[1]), __dadd_rd(d[0], d[1]));
    MODES(__dsub_rn(d[6], d[1]), __dsub_rz(d[6], d[1]), __dsub_ru(d[6], d[1]), __dsub_rd(d[6], d[1]));
    MODES(__dmul_rn(d[2], d[3]), __dmul_rz(d[2], d[3]), __dmul_ru(d[2], d[3]), __dmul_rd(d[2], d[3]));
    MODES(__ddiv_rn(d[0], d[3]), __ddiv_rz(d[0], d[3]), __ddiv_ru(d[0], d[3]), __ddiv_rd(d[0], d[3]));
    MODES(__drcp_rn(-d[3]), __drcp_rz(-d[3]), __drcp_ru(-d[3]), __drcp_rd(-d[3]));
    MODES(__dsqrt_rn(d[4]), __dsqrt_rz(d[4]), __dsqrt_ru(d[4]), __dsqrt_rd(d[4]));
    MODES(__fma_rn(d[5], d[5], 0.0), __fma_rz(d[5], d[5], 0.0), __fma_ru(d[5], d[5], 0.0), __fma_rd(d[5], d[5], 0.0));
    MODES(__double2float_rn(d[2]), __double2float_rz(d[2]), __double2float_ru(d[2]), __double2float_rd(d[2]));
    MODES(__int2float_rn(16777217), __int2float_rz(16777217), __int2float_ru(16777217), __int2float_rd(16777217));
    MODES(__ll2float_rn(-16777217LL), __ll2float_rz(-16777217LL), __ll2float_ru(-16777217LL), __ll2float_rd(-16777217LL));
    MODES(__ull2float_rn(~0ULL), __ull2float_rz(~0ULL), __ull2float_ru(~0ULL), __ull2float_rd(~0ULL));
    MODES(__ll2double_rn((1LL << 53) + 1), __ll2double_rz((1LL << 53) + 1), __ll2double_ru((1LL << 53) + 1),
          __ll2double_rd((1LL << 53) + 1));
    out[k++] = __int2double_rn(-7), out[k++] = __uint2double_rn(4000000000u);
    out[k++] = __hiloint2double(0x3FF00000, 0), out[k++] = __longlong_as_double(0x4000000000000000LL);
    int i = 0;
    const float to_int[] = {2.5f, -2.5f, 3.7f, -3.7f, 1e9f, -0.5f};
    for (float v : to_int) {
        ints[i++] = __float2int_rn(v), ints[i++] = __float2int_rz(v), ints[i++] = __float2int_ru(v);
        ints[i++] = __float2int_rd(v);
    }
    ints[i++] = __float2uint_rn(3.5f), ints[i++] = __float2uint_rd(4.5e9f / 2), ints[i++] = __float2uint_ru(-0.5f);
    ints[i++] = __float2uint_rz(7.9f), ints[i++] = __float2ll_rd(1e18f), ints[i++] = __float2ll_ru(-2.5f);
    ints[i++] = (long long)__float2ull_rn(4.5f), ints[i++] = __double2int_rd(-0.5), ints[i++] = __double2uint_ru(0.25);
    ints[i++] = __double2ll_rn(-1e15 - 0.5), ints[i++] = (long long)(__double2ull_rz(1e19) >> 1);
    ints[i++] = __double2hiint(2.0), ints[i++] = __double2loint(__hiloint2double(1, 0x12345678));
    ints[i++] = __double_as_longlong(1.0);
    ints[i++] = __byte_perm(0x33221100u, 0x77665544u, 0x5410u), ints[i++] = __byte_perm(0x33221100u, 0x77665544u, 0x7);
    ints[i++] = __funnelshift_l(0x89abcdefu, 0x01234567u, 8), ints[i++] = __funnelshift_l(0x89abcdefu, 0x01234567u, 40);
    ints[i++] = __funnelshift_lc(0x89abcdefu, 0x01234567u, 40), ints[i++] = __funnelshift_r(0x89abcdefu, 0x01234567u, 8);
    ints[i++] = __funnelshift_r(0x89abcdefu, 0x01234567u, 40), ints[i++] = __funnelshift_rc(0x89abcdefu, 0x01234567u, 40);
    ints[i++] = (long long)(__brevll(1ULL) >> 1), ints[i++] = __dp4a(0x01FF0203, 0x02030405, 10);
    ints[i++] = __dp4a(0x01FF0203u, 0x02030405u, 10u), ints[i++] = __dp2a_lo((int)0xFFFF0002, 0x04030201, 5);
    ints[i++] = __dp2a_hi((int)0xFFFF0002, 0x04030201, 5), ints[i++] = (long long)__umul64hi(~0ULL, 2ULL);
    ints[i++] = __mul64hi(-3LL, 1LL << 62), ints[i++] = __rhadd(3, 4), ints[i++] = __rhadd(-3, -4);
    ints[i++] = __uhadd(0xFFFFFFFFu, 1u), ints[i++] = __urhadd(0xFFFFFFFFu, 0u);
    int cached = 41;
    __stcg(&cached, __ldcg(&cached) + 1);
    ints[i++] = __ldca(&cached) + __ldcs(&cached) + __ldlu(&cached) + __ldcv(&cached);
    out[kOut - 1] = k, ints[kOut - 1] = i;
#undef MODES
}

int main() {
    const float hf[] = {1.0f, 0x1p-30f, 1.0f / 3.0f, 3.0f, 2.0f, 1.0f + 0x1p-23f, -1.0f};
    const double hd[] = {1.0, 0x1p-60, 1.0 / 3.0, 3.0, 2.0, 1.0 + 0x1p-52, -1.0};
    float* f;
    double *d, *out;
    long long* ints;
    cudaMalloc(&f, sizeof hf);
    cudaMalloc(&d, sizeof hd);
    cudaMalloc(&out, kOut * sizeof(double));
    cudaMalloc(&ints, kOut * sizeof(long long));
    cudaMemcpy(f, hf, sizeof hf, cudaMemcpyHostToDevice);
    cudaMemcpy(d, hd, sizeof hd, cudaMemcpyHostToDevice);
    compute<<<1, 1>>>(f, d, out, ints);
    double h[kOut];
    long long n[kOut];
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(n, ints, sizeof n, cudaMemcpyDeviceToHost);
    const char* modes[] = {"rn", "rz", "ru", "rd"};
    int k = (int)h[kOut - 1];
    for (int j = 0; j < k; ++j) printf(j < 88 ? "%s %a\n" : "exact %a\n", modes[j % 4], h[j]);
    for (int j = 0; j < n[kOut - 1]; ++j) printf("int %lld\n", n[j]);
    return 0;
}
