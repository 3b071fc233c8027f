// The table of this instruction set's kernels (see isa_set.h).
#include "kernels/isa/isa_set.h"

#define KCPP_STR2(x) #x
#define KCPP_STR(x) KCPP_STR2(x)

namespace kerascpp::kernels::KCPP_ISA {

#define KCPP_ISA_ENTRY(f) &KCPP_ISA::f,
extern const IsaKernels table = {Isa::KCPP_ISA, KCPP_STR(KCPP_ISA) " (" KCPP_ISA_LEVEL ")",
                                 KCPP_ISA_KERNELS(KCPP_ISA_ENTRY)};
#undef KCPP_ISA_ENTRY

}  // namespace kerascpp::kernels::KCPP_ISA
