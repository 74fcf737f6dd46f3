// clusters.h: sm_90's thread block cluster functions for the launches the CPU runtime runs, which have no cluster
// dimensions (__cluster_dims__ and cudaLaunchKernelEx are refused by name: grader/cuda/not_emulated.py). On a GPU
// such a launch's every block is a cluster of one: its dimensions are 1 x 1 x 1, its index is the block's, the
// cluster barrier is the block's, and the only shared memory a block can map is its own (rank 0).
#pragma once

inline unsigned __clusterDimIsSpecified() { return 0; }
inline dim3 __clusterDim() { return dim3(1, 1, 1); }
inline dim3 __clusterRelativeBlockIdx() { return dim3(0, 0, 0); }
inline dim3 __clusterGridDimInClusters() { return gridDim; }
inline dim3 __clusterIdx() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
inline unsigned __clusterRelativeBlockRank() { return 0; }
inline unsigned __clusterSizeInBlocks() { return 1; }
// arrive, then wait: with one block, the wait is the block's barrier (every thread arrived before it waits)
inline void __cluster_barrier_arrive() {}
inline void __cluster_barrier_arrive_relaxed() {}
inline void __cluster_barrier_wait(int line = __builtin_LINE()) { cuda_cpu::syncthreads(line); }
inline void __threadfence_cluster() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
namespace cuda_cpu {
bool in_block_shared(const void* p);  // shared_memory.cpp: p lies in one of this block's __shared__ arrays
}
inline unsigned __isCtaShared(const void* p) { return cuda_cpu::in_block_shared(p); }
inline unsigned __isClusterShared(const void* p) { return cuda_cpu::in_block_shared(p); }
// rank 0 is the block itself; a cluster of one has no other (a GPU's result for another rank is undefined)
inline void* __cluster_map_shared_rank(const void* p, unsigned rank) {
    return rank == 0 ? const_cast<void*>(p) : nullptr;
}
inline unsigned __cluster_query_shared_rank(const void*) { return 0; }
// the address, and the blocks of the mask that hold it: of a cluster of one, only block 0
inline uint2 __cluster_map_shared_multicast(const void* p, unsigned mask) {
    return make_uint2(static_cast<unsigned>(reinterpret_cast<uintptr_t>(p)), mask & 1u);
}
