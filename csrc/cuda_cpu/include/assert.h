/* assert.h: the C library's assert, and in a kernel CUDA's device-side assert (faults.cpp: cuda_cpu_assert_fail):
   a failed assert prints what a GPU prints, ends the thread and fails the launch with cudaErrorAssert. Outside a
   kernel it is the C library's. No include guard, as the standard's own: each inclusion redefines assert (NDEBUG
   may have changed). */
#include_next <assert.h>
#if defined(__cplusplus) && !defined(NDEBUG)
#undef assert
[[noreturn]] void cuda_cpu_assert_fail(const char* expr, const char* file, int line, const char* function);
#define assert(expr) \
    (static_cast<bool>(expr) ? void(0) : cuda_cpu_assert_fail(#expr, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif
