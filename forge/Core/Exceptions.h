#pragma once
// forge's exception types. Bad arguments derive from std::invalid_argument so callers can catch
// either; device failures carry the CUDA call, file and line in their message.
#include <stdexcept>
#include <string>

namespace forge {

struct invalid_argument : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// A value computed from finite inputs left the floating-point range (Inf) or became NaN: an operator or a
// penalty whose output overflows the element type. Derives from std::overflow_error (Python: OverflowError).
struct overflow_error : std::overflow_error {
    using std::overflow_error::overflow_error;
};

// A CUDA runtime or library call failed, or device memory ran out.
struct cuda_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A host operation met data that lives on the GPU (or the reverse) and forge will not copy silently.
struct residency_error : std::logic_error {
    using std::logic_error::logic_error;
};

}  // namespace forge
