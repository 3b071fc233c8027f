// JSON as Python's json module writes it: Keras's configs may hold NaN, Infinity and -Infinity as bare
// tokens (keras.ops.norm(x, ord=numpy.inf) is saved as "ord": Infinity), which strict JSON has not.
// Read, such a token becomes the string "NaN", "Infinity" or "-Infinity" (the readers of numbers that
// may be infinite take these strings: op nodes' arguments); written, those strings become bare tokens
// again, so that Keras reads back the float it saved.
//
//   Json config = io::parse_python_json(text);        // "ord": Infinity -> "ord": "Infinity"
//   std::string text = io::dump_python_json(config);  // and back
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::io {

// Json::parse of text with Python's bare NaN / Infinity / -Infinity outside strings read as strings.
// Throws Json::parse_error as Json::parse does.
Json parse_python_json(const std::string& text);
// j.dump() with the strings "NaN", "Infinity" and "-Infinity" written as Python's bare tokens.
std::string dump_python_json(const Json& j);

}  // namespace kerascpp::io
