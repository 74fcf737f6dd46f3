// cuda_cpu/detail/function_ref.h: a reference to a callable, what the runtime's entry points take (run_grid and its
// kin, the occupancy calculator's block-size-to-shared-memory function).
//
// Why not std::function: every CUDA file is compiled with cuda_cpu.h precompiled, but a precompiled header keeps no
// template instantiations, so each kernel compile instantiated anew what <functional>, <atomic>, <algorithm> and
// <chrono> need under C++20 (their constexpr strings, system_error, waits): in a file with nothing but the header,
// 0.49 s of g++'s 0.63 (-ftime-report). The headers a CUDA file sees include none of the four (nvcc's cuda_runtime.h
// does not either), and a kernel's build takes 0.2-0.3 s less (docs/benchmarks.md).
//
// Non-owning: the callable must outlive the call that is given it. The runtime's entry points use it only until
// they return (a launch runs to its end before it returns), and never keep it.
#pragma once

#include <type_traits>
#include <utility>

namespace cuda_cpu {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
public:
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
    FunctionRef(F&& f) noexcept  // NOLINT: converts implicitly, as std::function does
        : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* callable, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(callable))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }

private:
    void* callable_;
    R (*call_)(void*, Args...);
};

}  // namespace cuda_cpu
