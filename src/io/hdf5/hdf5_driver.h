// Internal: kerascpp's read-only libhdf5 file driver (VFD), through which H5File reads both files
// on disk (pread on demand, like libhdf5's sec2) and images in memory (in place, no copy).
//
//   std::string why;
//   hid_t fid = open_with_driver("/kerascpp-image", data, size, &why);   // an image
//   hid_t fid = open_with_driver("model.h5", nullptr, 0, &why);          // a file, read on demand
//
// Why our own driver: it sees every read, so it can check each global heap collection (where
// variable-length strings live) before libhdf5 parses it. libhdf5 1.10 loops forever on a heap
// object of size 0 (a zero-filled block) and copies heap objects without checking their sizes.
// It also makes an image need no file name, copy callbacks or getcwd() call.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <string>

namespace kerascpp::io::detail {

// Opens read-only: the image [data, data + size) if data is set, else the file `name`.
// Returns the file id, or a negative value with libhdf5's reason in *error. The caller holds
// H5Lock.
hid_t open_with_driver(const char* name, const void* data, size_t size, std::string* error);

// True unless [p, p + n) starts a global heap collection ("GCOL", version 1) of exactly n bytes
// whose objects do not tile it the way libhdf5 walks them. Exposed for tests.
bool heap_collection_ok(const char* p, size_t n);

}  // namespace kerascpp::io::detail
