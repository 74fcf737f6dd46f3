// Stands in for CUDA's own cuda_runtime.h on the CPU path: everything it would declare comes from cuda_cpu.h.
#pragma once
#include "cuda_cpu.h"
