// Explicit instantiations of SENSE over forge's exact DFT operators (the template lives in SENSE.h so
// that users can wrap their own operators).
#include "forge/Operators/SENSE.h"

#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

namespace forge {
template class SENSE<float, Gdft<float>>;
template class SENSE<double, Gdft<double>>;
template class SENSE<float, GdftR2<float>>;
template class SENSE<double, GdftR2<double>>;
}  // namespace forge
