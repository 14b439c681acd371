/* strata HIP headers: hip_complex.h. HIP's complex numbers are CUDA's cuComplex.h types under HIP names:
 * hipFloatComplex (= hipComplex) is cuFloatComplex, hipDoubleComplex is cuDoubleComplex, and each
 * hipC* function is its cuC* twin (hipCsqabs*, |z|^2, has none and is written out).
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_COMPLEX_H
#define STRATA_HIP_COMPLEX_H
#include <hip/hip_common.h>
#include <cuComplex.h>

typedef cuFloatComplex hipFloatComplex;
typedef cuDoubleComplex hipDoubleComplex;
typedef cuFloatComplex hipComplex;

#define STRATA_HIP_CX static __host__ __device__ __forceinline__

STRATA_HIP_CX float hipCrealf(hipFloatComplex z) { return cuCrealf(z); }
STRATA_HIP_CX float hipCimagf(hipFloatComplex z) { return cuCimagf(z); }
STRATA_HIP_CX hipFloatComplex make_hipFloatComplex(float re, float im) { return make_cuFloatComplex(re, im); }
STRATA_HIP_CX hipFloatComplex hipConjf(hipFloatComplex z) { return cuConjf(z); }
STRATA_HIP_CX float hipCsqabsf(hipFloatComplex z) { return cuCrealf(z) * cuCrealf(z) + cuCimagf(z) * cuCimagf(z); }
STRATA_HIP_CX hipFloatComplex hipCaddf(hipFloatComplex a, hipFloatComplex b) { return cuCaddf(a, b); }
STRATA_HIP_CX hipFloatComplex hipCsubf(hipFloatComplex a, hipFloatComplex b) { return cuCsubf(a, b); }
STRATA_HIP_CX hipFloatComplex hipCmulf(hipFloatComplex a, hipFloatComplex b) { return cuCmulf(a, b); }
STRATA_HIP_CX hipFloatComplex hipCdivf(hipFloatComplex a, hipFloatComplex b) { return cuCdivf(a, b); }
STRATA_HIP_CX float hipCabsf(hipFloatComplex z) { return cuCabsf(z); }
STRATA_HIP_CX hipFloatComplex hipCfmaf(hipFloatComplex a, hipFloatComplex b, hipFloatComplex c) {
    return cuCfmaf(a, b, c);
}

STRATA_HIP_CX double hipCreal(hipDoubleComplex z) { return cuCreal(z); }
STRATA_HIP_CX double hipCimag(hipDoubleComplex z) { return cuCimag(z); }
STRATA_HIP_CX hipDoubleComplex make_hipDoubleComplex(double re, double im) { return make_cuDoubleComplex(re, im); }
STRATA_HIP_CX hipDoubleComplex hipConj(hipDoubleComplex z) { return cuConj(z); }
STRATA_HIP_CX double hipCsqabs(hipDoubleComplex z) { return cuCreal(z) * cuCreal(z) + cuCimag(z) * cuCimag(z); }
STRATA_HIP_CX hipDoubleComplex hipCadd(hipDoubleComplex a, hipDoubleComplex b) { return cuCadd(a, b); }
STRATA_HIP_CX hipDoubleComplex hipCsub(hipDoubleComplex a, hipDoubleComplex b) { return cuCsub(a, b); }
STRATA_HIP_CX hipDoubleComplex hipCmul(hipDoubleComplex a, hipDoubleComplex b) { return cuCmul(a, b); }
STRATA_HIP_CX hipDoubleComplex hipCdiv(hipDoubleComplex a, hipDoubleComplex b) { return cuCdiv(a, b); }
STRATA_HIP_CX double hipCabs(hipDoubleComplex z) { return cuCabs(z); }
STRATA_HIP_CX hipDoubleComplex hipCfma(hipDoubleComplex a, hipDoubleComplex b, hipDoubleComplex c) {
    return cuCfma(a, b, c);
}

STRATA_HIP_CX hipComplex make_hipComplex(float re, float im) { return make_cuComplex(re, im); }
STRATA_HIP_CX hipFloatComplex hipComplexDoubleToFloat(hipDoubleComplex z) { return cuComplexDoubleToFloat(z); }
STRATA_HIP_CX hipDoubleComplex hipComplexFloatToDouble(hipFloatComplex z) { return cuComplexFloatToDouble(z); }

#undef STRATA_HIP_CX
#endif /* STRATA_HIP_COMPLEX_H */
