// Stands in for CUDA's vector_functions.h on the CPU path: make_float4 and friends are in vector_types.h.
#pragma once
#include "vector_types.h"
