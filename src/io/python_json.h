// JSON as Python's json module writes it: Keras's configs may hold NaN, Infinity and -Infinity as bare
// tokens (keras.ops.norm(x, ord=numpy.inf) is saved as "ord": Infinity), which strict JSON has not.
// Read, such a token becomes a non-finite float (a number to every reader); written, a non-finite float
// becomes the bare token again, so that Keras reads back the float it saved. Strings are never touched.
//
//   Json config = io::parse_python_json(text);        // "ord": Infinity -> the double +inf
//   std::string text = io::dump_python_json(config);  // and back
#pragma once

#include <string>
#include <string_view>

#include "kerascpp/layer.h"
#include "kerascpp/model.h"

namespace kerascpp::io {

// Json::parse of text with Python's bare NaN / Infinity / -Infinity outside strings read as those
// doubles, in one pass (python_json_reader.cpp). Throws Json::parse_error as Json::parse does, and a
// ValueError naming `where`, the byte and the limit when [ ] and { } nest deeper than max_depth
// (LoadLimits::max_json_depth): the reader, like every walk of a config, recurses once per level.
Json parse_python_json(std::string_view text, int max_depth = LoadLimits{}.max_json_depth,
                       std::string_view where = "The JSON text");
// j.dump() with non-finite floats written as Python's bare tokens (Json::dump writes null for them).
std::string dump_python_json(const Json& j);

}  // namespace kerascpp::io
