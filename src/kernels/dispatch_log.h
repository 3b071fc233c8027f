// KERASCPP_VERBOSE=dispatch: why each kernel was chosen, as ONEDNN_VERBOSE does for oneDNN's.
//
// A choice between candidates (oneDNN or the reference kernel for a convolution or a pooling, the
// instruction set of kerascpp's own kernels, a matmul's loop, BLAS or reference) is printed when it is
// made: once per plan (a layer's, per input shape and weight version), once per process for the
// instruction set and for each matmul problem and convolution gradient (made per call), never per call.
// One line each on std::cerr:
//   kerascpp_verbose,dispatch,<family>,<problem>,<chosen>[,why: <reason>]
// KERASCPP_VERBOSE is a comma-separated list ("dispatch", or "all").
//
//   kernels::log_dispatch("conv", "x=(1, 28, 28, 1)", "ref", "oneDNN refused: ...");
#pragma once

#include <string_view>

namespace kerascpp::kernels {

// Whether KERASCPP_VERBOSE asks for dispatch lines. Read once, at the first call (matmul asks at
// every call); reread_dispatch_verbose() reads it again (tests that set it later).
bool dispatch_verbose();
void reread_dispatch_verbose();
// Prints the line when dispatch_verbose(); `why` may be empty.
void log_dispatch(std::string_view family, std::string_view problem, std::string_view chosen,
                  std::string_view why = {});
// The same, once per process for each distinct line: for choices made at every call.
void log_dispatch_once(std::string_view family, std::string_view problem, std::string_view chosen,
                       std::string_view why = {});

}  // namespace kerascpp::kernels
