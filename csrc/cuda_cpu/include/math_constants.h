// Stands in for CUDA's math_constants.h on the CPU path: the CUDART_ constants kernels use most.
#pragma once
#include <cfloat>
#include <cmath>

#define CUDART_INF_F HUGE_VALF
#define CUDART_NAN_F NAN
#define CUDART_MIN_DENORM_F 1.40129846e-45f
#define CUDART_MAX_NORMAL_F FLT_MAX
#define CUDART_NEG_ZERO_F (-0.0f)
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_TWO_F 1.414213562f
#define CUDART_PI_F 3.141592654f
#define CUDART_L2E_F 1.442695041f
#define CUDART_LN2_F 0.693147181f
#define CUDART_INF HUGE_VAL
#define CUDART_NAN NAN
#define CUDART_PI 3.1415926535897931e+0
