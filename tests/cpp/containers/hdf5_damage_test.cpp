// Damaged and foreign files, leaked HDF5 ids, and loads from several threads at once.
#include <hdf5.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "containers_test_util.h"
#include "io/hdf5/hdf5_driver.h"
#include "io/hdf5/hdf5_file.h"
#include "io/hdf5/hdf5_writer.h"

namespace kerascpp::io {
namespace {

using testing::error_of;
using testing::fixture;
using testing::read_bytes;
using testing::temp_path;
using testing::write_bytes;

// Reads everything reachable; kerascpp errors are fine, anything else fails the test. Returns the
// number of datasets read. Depth-limited because a damaged file may link a group into itself.
int walk(const H5Group& g, int depth = 0) {
  if (depth > 12) return 0;
  int n = 0;
  try {
    for (const std::string& a : g.attr_names()) {
      try {
        g.attr_strings(a);
      } catch (const Error&) {
      }
    }
    for (const std::string& m : g.members()) {
      try {
        if (g.is_group(m)) {
          n += walk(g.group(m), depth + 1);
        } else if (g.is_dataset(m)) {
          g.dataset(m).read();
          ++n;
        }
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return n;
}

// Opens an image and walks it; true if the open succeeded.
bool load(const std::vector<char>& bytes, const std::string& name) {
  try {
    H5File f = H5File::open_image(bytes.data(), bytes.size(), name);
    walk(f.root());
    return true;
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    return false;
  }
}

TEST(H5Damage, ForeignAndMissingFiles) {
  std::string msg = error_of<IOError>([] { H5File::open(temp_path("no_such_file.h5")); });
  EXPECT_NE(msg.find("no_such_file.h5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
  msg = error_of<IOError>([] { H5File::open(std::string(KCPP_SOURCE_DIR) + "/tests"); });
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
  write_bytes(temp_path("empty.h5"), {});
  msg = error_of<IOError>([] { H5File::open(temp_path("empty.h5")); });
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
  msg = error_of<IOError>([] { H5File::open(fixture("keras3_mlp.keras")); });  // a zip
  EXPECT_NE(msg.find("not an HDF5 file"), std::string::npos) << msg;
  std::mt19937 rng(7);
  std::vector<char> noise(4096);
  for (char& c : noise) c = static_cast<char>(rng());
  write_bytes(temp_path("noise.h5"), noise);
  for (H5Driver d : {H5Driver::sec2, H5Driver::core, H5Driver::whole_read}) {
    msg = error_of<IOError>([&] { H5File::open(temp_path("noise.h5"), d); });
    EXPECT_NE(msg.find("noise.h5"), std::string::npos) << msg;
  }
  error_of<IOError>([] { H5File::open_image(nullptr, 0, "nothing"); });
}

TEST(H5Damage, TruncatedAtEveryFiftieth) {
  std::vector<char> whole = read_bytes(fixture("keras3_mlp.h5"));
  ASSERT_GT(whole.size(), 1000u);
  for (int k = 1; k < 50; ++k) {
    std::vector<char> part(whole.begin(), whole.begin() + whole.size() * k / 50);
    std::string name = "truncated_" + std::to_string(k) + ".h5";
    // libhdf5 compares the stored end-of-file address with the real size.
    EXPECT_FALSE(load(part, name)) << name;
    if (k % 10 == 0) {
      write_bytes(temp_path(name), part);
      for (H5Driver d : {H5Driver::sec2, H5Driver::whole_read}) {
        std::string msg = error_of<IOError>([&] { H5File::open(temp_path(name), d); });
        EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
      }
    }
  }
}

TEST(H5Damage, ZeroedAndScrambledRegions) {
  std::vector<char> whole = read_bytes(fixture("keras3_mlp.h5"));
  std::mt19937 rng(11);
  for (int k = 0; k < 50; ++k) {
    size_t at = whole.size() * k / 50;
    std::vector<char> zeroed = whole;
    std::fill(zeroed.begin() + at, zeroed.begin() + std::min(at + 256, whole.size()), 0);
    load(zeroed, "zeroed_" + std::to_string(k) + ".h5");
    std::vector<char> scrambled = whole;
    for (size_t i = at; i < std::min(at + 64, whole.size()); ++i) scrambled[i] = static_cast<char>(rng());
    load(scrambled, "scrambled_" + std::to_string(k) + ".h5");
  }
  EXPECT_TRUE(load(whole, "whole.h5"));
}

// libhdf5 1.10 loops forever on a zero-filled object header inside a global heap collection (where
// variable-length strings live); kerascpp's driver checks each collection before libhdf5 sees it.
TEST(H5Damage, ZeroedGlobalHeapIsAnErrorNotAHang) {
  std::string big_config(20000, 'c');  // a collection larger than libhdf5's first 4 KB read
  H5Writer w = H5Writer::create(temp_path("heap.h5"));
  w.root().write_attr_string("model_config", big_config, H5StringType::vlen_ascii);
  w.root().write_attr_string("backend", "tensorflow");
  w.root().write_dataset("weights", Tensor::zeros({400, 400}));  // 640 KB: mapped
  w.finish();
  std::vector<char> good = read_bytes(temp_path("heap.h5"));
  EXPECT_EQ(H5File::open(temp_path("heap.h5")).root().attr_string("model_config"), big_config);
  size_t heap = std::string_view(good.data(), good.size()).find("GCOL\1");
  ASSERT_NE(heap, std::string_view::npos);
  std::vector<char> bad = good;
  std::fill(bad.begin() + heap + 16, bad.begin() + heap + 32, 0);  // the first object's header
  write_bytes(temp_path("heap_bad.h5"), bad);
  for (H5Driver d : {H5Driver::automatic, H5Driver::on_demand, H5Driver::whole_read, H5Driver::mapped,
                     H5Driver::mapped_views}) {
    H5File f = H5File::open(temp_path("heap_bad.h5"), d);
    std::string msg = error_of<IOError>([&] { f.root().attr_string("model_config"); });
    EXPECT_NE(msg.find("damaged global heap collection"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"model_config\""), std::string::npos) << msg;
    EXPECT_EQ(f.root().dataset("weights").read().size(), 160000);  // the rest still reads
  }
  EXPECT_TRUE(detail::heap_collection_ok(good.data() + heap, good.size() - heap));  // not whole
  EXPECT_TRUE(detail::heap_collection_ok("not a heap at all", 17));
}

TEST(H5Damage, NoIdsLeakOverAThousandLoads) {
  auto open_ids = [] { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); };
  std::vector<char> bytes = read_bytes(fixture("keras3_mlp.h5"));
  walk(H5File::open(fixture("keras3_mlp.h5")).root());  // warm up
  ssize_t before = open_ids();
  for (int i = 0; i < 1000; ++i) {
    H5File f = i % 2 ? H5File::open(fixture("keras3_mlp.h5"))
                     : H5File::open_image(bytes.data(), bytes.size(), "image");
    H5Group w = f.root().group("model_weights");
    f.root().attr_string("model_config");
    w.dataset("dense/sequential/dense/kernel").read();
    if (i % 100 == 0) {
      EXPECT_EQ(walk(f.root()), 6);
      error_of<ValueError>([&] { w.group("missing/group"); });
    }
  }
  EXPECT_EQ(open_ids(), before);
  EXPECT_EQ(before, 0);
}

TEST(H5Damage, LoadsFromFourThreadsAtOnce) {
  std::vector<char> bytes = read_bytes(fixture("keras3_mlp.h5"));
  Tensor want = H5File::open(fixture("keras3_mlp.h5")).root().dataset(
      "model_weights/dense_1/sequential/dense_1/kernel").read();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        try {
          H5File f = (i + t) % 3 == 0 ? H5File::open(fixture("keras3_mlp.h5"), H5Driver::sec2)
                     : (i + t) % 3 == 1 ? H5File::open(fixture("keras3_mlp.h5"))
                                        : H5File::open_image(bytes.data(), bytes.size(), "image");
          if (f.root().attr_string("backend") != "tensorflow") ++bad;
          Tensor k = f.root().dataset("model_weights/dense_1/sequential/dense_1/kernel").read();
          if (std::memcmp(k.raw_data(), want.raw_data(), want.nbytes()) != 0) ++bad;
          if (f.root().group("model_weights").attr_strings_split("layer_names").size() != 3) ++bad;
          if (walk(f.root()) != 6) ++bad;
          if (i % 8 == 0) {  // writers too: each in-memory file has its own name
            H5Writer w = H5Writer::create_in_memory();
            w.root().write_dataset("t", Tensor::from_vector({1}, {float(t)}));
            std::vector<char> out = w.finish();
            H5File back = H5File::open_image(out.data(), out.size(), "written");
            if (back.root().dataset("t").read().data<float>()[0] != float(t)) ++bad;
          }
          // Errors on other threads must not disturb anyone (the error stack is per thread).
          try {
            f.root().dataset("model_weights/nope");
            ++bad;
          } catch (const ValueError&) {
          }
        } catch (const std::exception& e) {
          ++bad;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace kerascpp::io
