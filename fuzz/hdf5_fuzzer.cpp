// libFuzzer harness: kerascpp's own HDF5 reader (the Keras subset, io/hdf5/keras_h5_reader.h) on any
// bytes. A file it accepts is walked whole through H5File as a loader would: every group, every
// attribute as strings, every dataset read. Anything but a clean IOError / ValueError /
// NotImplementedError is a finding (ASan / UBSan report the rest). Files outside the subset, which
// H5File hands to libhdf5, are not followed there: libhdf5 is not kerascpp's code.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "io/hdf5/hdf5_file.h"
#include "io/hdf5/keras_h5_reader.h"

namespace {

using namespace kerascpp;

// Hard links may make cycles and diamonds: the walk stops after `left` objects or 64 levels.
void walk(const io::H5Group& g, int* left, int depth = 0) {
  if (--*left < 0 || depth > 64) return;
  for (const std::string& a : g.attr_names()) fuzz::expected_errors([&] { g.attr_strings(a); });
  for (const std::string& name : g.members()) {
    fuzz::expected_errors([&] {
      if (g.is_group(name)) {
        walk(g.group(name), left, depth + 1);
      } else if (--*left >= 0) {
        io::H5Dataset d = g.dataset(name);
        for (const std::string& a : d.attr_names()) fuzz::expected_errors([&] { d.attr_strings(a); });
        d.read();
      }
    });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expected_errors([&] {
    std::string why;
    // As a load with compile=False opens it: the optimizer's group left out of the walk.
    fuzz::expected_errors([&] {
      io::detail::kh5::File::parse(reinterpret_cast<const char*>(data), size, "fuzz.h5", &why, "optimizer");
    });
    auto parsed = io::detail::kh5::File::parse(reinterpret_cast<const char*>(data), size, "fuzz.h5", &why);
    if (!parsed) return;  // outside the subset: libhdf5's, not followed
    io::H5File file = io::H5File::open_image(data, size, "fuzz.h5");
    int left = 10000;
    walk(file.root(), &left);
  });
  return 0;
}
