// Stands in for CUDA's cuda.h on the CPU path: what it would declare comes from cuda_cpu.h.
#pragma once
#include "cuda_cpu.h"
