#pragma once
// The old names of a struct's renamed fields, kept one release (CHANGELOG.md lists them with their new names), so
// that code reading or writing `p.fftGrid` keeps compiling, with a deprecation warning that names the new field.
//
// The struct's fields live in a base (its name + "Fields"); the struct adds one reference per old name, bound to the
// field of its own object, and copies and moves the base only, so that a copy's old names refer to the copy:
//
//   struct ReconProblemFields { std::array<std::size_t, 3> fft_grid{}; ... };
//   FORGE_FIELD_ALIASES_BEGIN
//   struct ReconProblem : ReconProblemFields {
//       FORGE_FIELD_ALIAS(fftGrid, fft_grid)
//       FORGE_FIELD_ALIAS_COPIES(ReconProblem, ReconProblemFields)
//   };
//   FORGE_FIELD_ALIASES_END
//
// Each old name costs a pointer; the struct is no longer an aggregate (its fields are set one by one, as before).
// BEGIN/END keep the warnings to the code that names an old field: the struct's own constructors initialise them.
#include <utility>

#define FORGE_FIELD_ALIAS(old_name, new_name) \
    [[deprecated("renamed: use " #new_name)]] decltype(new_name)& old_name = new_name;

#define FORGE_FIELD_ALIAS_COPIES(Self, Base)                  \
    Self() = default;                                         \
    Self(const Base& fields) : Base(fields) {}                \
    Self(Base&& fields) noexcept : Base(std::move(fields)) {} \
    Self(const Self& other) : Base(other) {}                  \
    Self(Self&& other) noexcept : Base(std::move(other)) {}   \
    Self& operator=(const Self& other) {                      \
        Base::operator=(other);                               \
        return *this;                                         \
    }                                                         \
    Self& operator=(Self&& other) noexcept {                  \
        Base::operator=(std::move(other));                    \
        return *this;                                         \
    }                                                         \
    ~Self() = default;

#if defined(__NVCC__) || defined(__CUDACC__)
#define FORGE_FIELD_ALIASES_BEGIN                                                                   \
    _Pragma("nv_diagnostic push") _Pragma("nv_diag_suppress 1215") _Pragma("nv_diag_suppress 1444") \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define FORGE_FIELD_ALIASES_END _Pragma("GCC diagnostic pop") _Pragma("nv_diagnostic pop")
#else
#define FORGE_FIELD_ALIASES_BEGIN \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define FORGE_FIELD_ALIASES_END _Pragma("GCC diagnostic pop")
#endif
