#pragma once
// One list of the explicit instantiations of forge/Core/DeviceOps.h, shared by the CUDA implementation
// (DeviceOps.cu) and the CPU-only build's stubs (NoCuda.cpp) so they never drift: FORGE_DEVICE_OPS_INSTANTIATE_ALL
// instantiates everything. Private to forge/CUDA (detail/ is not installed).
#include "forge/Core/DeviceOps.h"

#define FORGE_DEVICE_OPS_INSTANTIATE_ELEM(T)                                                      \
    template void binary<T, T, T>(BinOp, const T*, const T*, T*, uword);                          \
    template void binary_scalar<T>(BinOp, const T*, T, T*, uword, bool);                          \
    template void fill<T>(T*, T, uword);                                                          \
    template void axpby<T>(T, const T*, T, T*, uword);                                            \
    template void conj<T>(const T*, T*, uword);                                                   \
    template void real_part<T>(const T*, real_t<T>*, uword);                                      \
    template void imag_part<T>(const T*, real_t<T>*, uword);                                      \
    template void abs<T>(const T*, real_t<T>*, uword);                                            \
    template T dot<T>(const T*, const T*, uword);                                                 \
    template std::pair<double, double> re_dot2<T>(const T*, const T*, const T*, const T*, uword); \
    template real_t<T> norm2_squared<T>(const T*, uword);                                         \
    template T sum<T>(const T*, uword);

#define FORGE_DEVICE_OPS_INSTANTIATE_MIXED(R)                                                          \
    template void binary<forgeComplex<R>, forgeComplex<R>, R>(BinOp, const forgeComplex<R>*, const R*, \
                                                              forgeComplex<R>*, uword);                \
    template void binary<forgeComplex<R>, R, forgeComplex<R>>(BinOp, const R*, const forgeComplex<R>*, \
                                                              forgeComplex<R>*, uword);

#define FORGE_DEVICE_OPS_INSTANTIATE_ALL                    \
    FORGE_DEVICE_OPS_INSTANTIATE_ELEM(float)                \
    FORGE_DEVICE_OPS_INSTANTIATE_ELEM(double)               \
    FORGE_DEVICE_OPS_INSTANTIATE_ELEM(forgeComplex<float>)  \
    FORGE_DEVICE_OPS_INSTANTIATE_ELEM(forgeComplex<double>) \
    FORGE_DEVICE_OPS_INSTANTIATE_MIXED(float)               \
    FORGE_DEVICE_OPS_INSTANTIATE_MIXED(double)
