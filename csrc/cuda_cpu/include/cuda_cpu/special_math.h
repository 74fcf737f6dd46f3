// special_math.h: CUDA's math functions that the C library lacks (sinpi, rcbrt, norm3d, erfinv, erfcx, normcdf,
// cyl_bessel_i0, ...), computed in double (the float forms round the double result once), to within CUDA's stated
// error bounds. The functions of both that take a whole period as 1 (sinpi, cospi) reduce their argument exactly,
// so sinpi(n) is exactly 0 and cospi(n + 1/2) exactly 0, as on a GPU.
#pragma once
#include <cmath>

namespace cuda_cpu {
inline double sinpi_reduced(double x) {  // x - (nearest integer) is exact; the sign of sin follows that integer
    double n = std::nearbyint(x), r = x - n;
    if (r == 0.0) return std::copysign(0.0, x);  // sinpi(+n) = +0, sinpi(-n) = -0 (IEEE 754's sinPi)
    double s = std::sin(M_PI * r);
    return std::fmod(n, 2.0) != 0.0 ? -s : s;
}
inline double cospi_reduced(double x) {
    double n = std::nearbyint(x), r = std::fabs(x - n);
    double c = r == 0.5 ? 0.0 : std::cos(M_PI * r);
    return std::fmod(n, 2.0) != 0.0 ? -c : c;
}
inline double erfinv_newton(double y) {  // erf(x) = y: Newton's steps from Giles' estimate
    if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
    if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
    double w = -std::log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                         -0.00417768164, 0.246640727, 1.50140941})
            x = c + x * w;
    } else {
        w = std::sqrt(w) - 3.0;
        x = -0.000200214257;
        for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                         1.00167406, 2.83297682})
            x = c + x * w;
    }
    x *= y;
    for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
    return x;
}
inline double erfcinv_newton(double y) {  // erfc(x) = y, accurate for small y too (Newton's steps on erfc)
    if (y <= 0.0) return y == 0.0 ? INFINITY : NAN;
    if (y >= 2.0) return y == 2.0 ? -INFINITY : NAN;
    double x = erfinv_newton(1.0 - y);
    if (!std::isfinite(x)) x = y < 1.0 ? 5.9 : -5.9;
    for (int i = 0; i < 4; ++i) x += (std::erfc(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
    return x;
}
inline double erfcx_scaled(double x) {  // exp(x^2) erfc(x), without its overflow: long double, then the series
    if (x < 26.0) return static_cast<double>(std::exp(static_cast<long double>(x) * x) * std::erfc(static_cast<long double>(x)));
    double t = 1.0 / (2.0 * x * x);  // erfcx(x) ~ 1/(x sqrt(pi)) (1 - t + 3t^2 - 15t^3 + 105t^4 - 945t^5)
    return (1.0 - t * (1.0 - 3.0 * t * (1.0 - 5.0 * t * (1.0 - 7.0 * t * (1.0 - 9.0 * t))))) / (x * std::sqrt(M_PI));
}
}  // namespace cuda_cpu

inline double sinpi(double x) { return cuda_cpu::sinpi_reduced(x); }
inline float sinpif(float x) { return static_cast<float>(cuda_cpu::sinpi_reduced(x)); }
inline double cospi(double x) { return cuda_cpu::cospi_reduced(x); }
inline float cospif(float x) { return static_cast<float>(cuda_cpu::cospi_reduced(x)); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x), *c = cospi(x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x), *c = cospif(x); }
// sin(2 pi x) and cos(2 pi x), the argument a GPU's special function unit takes (within its error: these are exact)
inline float __sin2pif(float x) { return static_cast<float>(cuda_cpu::sinpi_reduced(2.0 * x)); }
inline float __cos2pif(float x) { return static_cast<float>(cuda_cpu::cospi_reduced(2.0 * x)); }
inline void __sincos2pif(float x, float* s, float* c) { *s = __sin2pif(x), *c = __cos2pif(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float rcbrtf(float x) { return static_cast<float>(1.0 / std::cbrt(static_cast<double>(x))); }
inline double rhypot(double x, double y) { return 1.0 / std::hypot(x, y); }
inline float rhypotf(float x, float y) { return static_cast<float>(1.0 / std::hypot(static_cast<double>(x), y)); }
inline double norm3d(double a, double b, double c) { return std::hypot(a, b, c); }
inline float norm3df(float a, float b, float c) { return static_cast<float>(std::hypot(double(a), double(b), double(c))); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / std::hypot(a, b, c); }
inline float rnorm3df(float a, float b, float c) { return static_cast<float>(1.0 / std::hypot(double(a), double(b), double(c))); }
inline double norm4d(double a, double b, double c, double d) { return std::hypot(std::hypot(a, b), std::hypot(c, d)); }
inline float norm4df(float a, float b, float c, float d) { return static_cast<float>(norm4d(a, b, c, d)); }
inline double rnorm4d(double a, double b, double c, double d) { return 1.0 / norm4d(a, b, c, d); }
inline float rnorm4df(float a, float b, float c, float d) { return static_cast<float>(1.0 / norm4d(a, b, c, d)); }
inline double norm(int n, const double* a) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = std::hypot(s, a[i]);
    return s;
}
inline float normf(int n, const float* a) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = std::hypot(s, static_cast<double>(a[i]));
    return static_cast<float>(s);
}
inline double rnorm(int n, const double* a) { return 1.0 / norm(n, a); }
inline float rnormf(int n, const float* a) { return static_cast<float>(1.0 / static_cast<double>(normf(n, a))); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x / M_SQRT2); }
inline float normcdff(float x) { return static_cast<float>(normcdf(x)); }
inline double normcdfinv(double p) { return -M_SQRT2 * cuda_cpu::erfcinv_newton(2.0 * p); }
inline float normcdfinvf(float p) { return static_cast<float>(normcdfinv(p)); }
inline double erfinv(double y) { return cuda_cpu::erfinv_newton(y); }
inline float erfinvf(float y) { return static_cast<float>(cuda_cpu::erfinv_newton(y)); }
inline double erfcinv(double y) { return cuda_cpu::erfcinv_newton(y); }
inline float erfcinvf(float y) { return static_cast<float>(cuda_cpu::erfcinv_newton(y)); }
inline double erfcx(double x) { return cuda_cpu::erfcx_scaled(x); }
inline float erfcxf(float x) { return static_cast<float>(cuda_cpu::erfcx_scaled(x)); }
inline double cyl_bessel_i0(double x) { return std::cyl_bessel_i(0.0, std::fabs(x)); }
inline float cyl_bessel_i0f(float x) { return static_cast<float>(cyl_bessel_i0(x)); }
inline double cyl_bessel_i1(double x) { return std::copysign(std::cyl_bessel_i(1.0, std::fabs(x)), x); }
inline float cyl_bessel_i1f(float x) { return static_cast<float>(cyl_bessel_i1(x)); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float fdividef(float a, float b) { return a / b; }
inline double fdivide(double a, double b) { return a / b; }
// the classification functions by their unqualified names in device code, as CUDA's math headers declare them
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;
