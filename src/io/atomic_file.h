// Writing a file so that a crash never leaves a half-written target: the bytes go to a temporary
// file in the target's folder, are flushed to disk, and the temporary file is renamed over the
// target (then the folder is flushed too). On any error the temporary file is removed, the target is
// untouched, and IOError names the path and the reason (no such folder, permission, disk full).
//
//   io::write_file_atomically("model.keras", bytes.data(), bytes.size());
#pragma once

#include <cstddef>
#include <string>

namespace kerascpp::io {

void write_file_atomically(const std::string& path, const void* data, size_t size);

}  // namespace kerascpp::io
