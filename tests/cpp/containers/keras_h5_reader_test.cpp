// kerascpp's own reader for Keras's HDF5 subset (src/io/hdf5/keras_h5_reader.h) against libhdf5:
// the same answers on every HDF5 file among the fixtures, fallback to libhdf5 for other features,
// and only kerascpp errors on damaged files.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "containers_test_util.h"
#include "io/hdf5/hdf5_file.h"
#include "io/hdf5/keras_h5_reader.h"
#include "io/zip/zip_archive.h"

namespace kerascpp::io {
namespace {

using testing::error_of;
using testing::fixture;
using testing::read_bytes;

// Every public answer about `g` and everything below it, as text.
void dump(const H5Object& o, std::string* out) {
  for (const std::string& a : o.attr_names()) {
    *out += "  attr " + a + " =";
    try {
      for (const std::string& s : o.attr_strings(a)) *out += " [" + s + "]";
    } catch (const Error& e) {
      *out += std::string(" error: ") + e.what();
    }
    *out += "\n";
  }
}

void dump(const H5Group& g, std::string* out, int depth = 0) {
  *out += "group " + g.path() + "\n";
  dump(static_cast<const H5Object&>(g), out);
  if (depth > 20) return;
  for (const std::string& m : g.members()) {
    *out += " member " + m + (g.has(m) ? "" : " (dangling)") + "\n";
    if (g.is_group(m)) {
      dump(g.group(m), out, depth + 1);
    } else if (g.is_dataset(m)) {
      try {
        H5Dataset d = g.dataset(m);
        *out += "dataset " + d.path() + " " + shape_str(d.shape());
        dump(static_cast<const H5Object&>(d), out);
        Tensor t = d.read();
        *out += std::string(" ") + std::string(dtype_name(t.dtype())) + " " +
                std::string(static_cast<const char*>(t.raw_data()), t.nbytes()) + "\n";
      } catch (const Error& e) {
        *out += std::string(" error: ") + e.what() + "\n";
      }
    }
  }
}

struct Image {
  std::string name;
  std::vector<char> bytes;
};

// Every .h5 file under tests/fixtures, and the HDF5 member of every .keras archive.
std::vector<Image> all_hdf5_fixtures() {
  std::vector<Image> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(KCPP_SOURCE_DIR) + "/tests/fixtures")) {
    std::string p = e.path().string();
    if (p.ends_with(".h5")) out.push_back({p, read_bytes(p)});
    if (p.ends_with(".keras")) {
      ZipArchive zip = ZipArchive::open(p);
      if (!zip.has("model.weights.h5")) continue;
      ZipMember m = zip.member("model.weights.h5");
      out.push_back({p + "/model.weights.h5", std::vector<char>(m.data, m.data + m.size)});
    }
  }
  return out;
}

TEST(KerasH5Reader, SameAnswersAsLibhdf5OnEveryFixture) {
  std::vector<Image> images = all_hdf5_fixtures();
  ASSERT_GT(images.size(), 50u);
  int fast = 0;
  int foreign = 0;
  for (const Image& im : images) {
    if (im.bytes.size() < 8 || std::memcmp(im.bytes.data(), "\x89HDF\r\n\x1a\n", 8) != 0) {
      // Not HDF5 (tests/fixtures/damaged): both refuse it the same way.
      std::string msg = error_of<IOError>([&] { H5File::open_image(im.bytes.data(), im.bytes.size(), im.name); });
      EXPECT_EQ(msg, error_of<IOError>([&] { detail::open_image_libhdf5(im.bytes.data(), im.bytes.size(), im.name); }));
      ++foreign;
      continue;
    }
    H5File a = H5File::open_image(im.bytes.data(), im.bytes.size(), im.name);
    H5File b = detail::open_image_libhdf5(im.bytes.data(), im.bytes.size(), im.name);
    EXPECT_EQ(b.backend(), "libhdf5");
    bool keras = im.name.find("/containers/h5py_types") == std::string::npos;
    EXPECT_EQ(a.backend(), keras ? "keras-subset" : "libhdf5") << im.name;
    fast += a.backend() == "keras-subset";
    std::string da, db;
    dump(a.root(), &da);
    dump(b.root(), &db);
    EXPECT_EQ(da, db) << im.name;
    EXPECT_GT(da.size(), 20u);
  }
  EXPECT_EQ(fast + foreign + 1, static_cast<int>(images.size()));
}

TEST(KerasH5Reader, FilesReadWholeUseIt) {
  EXPECT_EQ(H5File::open(fixture("keras3_mlp.h5")).backend(), "keras-subset");
  EXPECT_EQ(H5File::open(fixture("keras3_mlp.h5"), H5Driver::whole_read).backend(), "keras-subset");
  EXPECT_EQ(H5File::open(fixture("keras3_mlp.h5"), H5Driver::on_demand).backend(), "libhdf5");
  // gzip, a soft link and big-endian data: libhdf5 serves the whole file.
  H5File types = H5File::open(fixture("h5py_types.h5"));
  EXPECT_EQ(types.backend(), "libhdf5");
  EXPECT_EQ(types.root().dataset("gzip").read().data<float>()[99], 99.f);
  EXPECT_EQ(types.root().attr_string("str_utf8"), "h\xc3\xa9llo");
}

// An unread member of the root group (the optimizer's, on a load with compile=False) is neither
// walked nor listed; the rest of the file reads as before. A member of that name deeper down is read.
TEST(KerasH5Reader, AnUnreadRootMemberIsNeitherWalkedNorListed) {
  ZipArchive zip =
      ZipArchive::open(std::string(KCPP_SOURCE_DIR) + "/tests/fixtures/seed_mlp_2x10/keras3/model.keras");
  ZipMember m = zip.member("model.weights.h5");
  H5File all = H5File::open_image(m.data, m.size, "w.h5");
  H5File part = H5File::open_image(m.data, m.size, "w.h5", {}, true, "optimizer");
  EXPECT_EQ(part.backend(), "keras-subset");
  ASSERT_TRUE(all.root().has("optimizer"));
  EXPECT_FALSE(part.root().has("optimizer"));
  std::vector<std::string> members = all.root().members();
  members.erase(std::find(members.begin(), members.end(), "optimizer"));
  EXPECT_EQ(part.root().members(), members);
  for (const char* kept : {"layers", "vars"}) {
    std::string a, b;
    dump(all.root().group(kept), &a);
    dump(part.root().group(kept), &b);
    EXPECT_EQ(a, b) << kept;
  }
  H5File deeper = H5File::open_image(m.data, m.size, "w.h5", {}, true, "vars");  // optimizer/vars stays
  EXPECT_FALSE(deeper.root().has("vars"));
  EXPECT_TRUE(deeper.root().group("optimizer").has("vars"));
}

TEST(KerasH5Reader, AllowLibhdf5FalseKeepsLibhdf5Out) {
  // Valid HDF5 outside the subset (gzip, a soft link, big-endian data): refused, naming what and why.
  for (H5Driver driver : {H5Driver::automatic, H5Driver::on_demand, H5Driver::sec2}) {
    std::string msg = error_of<IOError>([&] { H5File::open(fixture("h5py_types.h5"), driver, false); });
    EXPECT_NE(msg.find("h5py_types.h5\" as an HDF5 file: it has "), std::string::npos) << msg;
    EXPECT_NE(msg.find("outside the HDF5 subset"), std::string::npos) << msg;
    EXPECT_NE(msg.find("LoadLimits::allow_libhdf5 is false"), std::string::npos) << msg;
  }
  std::vector<char> types = read_bytes(fixture("h5py_types.h5"));
  EXPECT_NE(error_of<IOError>([&] { H5File::open_image(types.data(), types.size(), "t.h5", {}, false); })
                .find("allow_libhdf5"), std::string::npos);
  // A file of the subset is read whole by kerascpp's reader, whatever driver was asked for.
  H5File f = H5File::open(fixture("keras3_mlp.h5"), H5Driver::on_demand, false);
  EXPECT_EQ(f.backend(), "keras-subset");
  std::string a, b;
  dump(f.root(), &a);
  dump(H5File::open(fixture("keras3_mlp.h5")).root(), &b);
  EXPECT_EQ(a, b);
}

// Inputs on which libhdf5 1.10 read past a heap buffer (found by fuzz_load_model, kept in
// fuzz/regressions/load_model/libhdf5_*): each is outside the subset, and each is refused as damaged
// by kerascpp's reader before libhdf5 is given it, with libhdf5 allowed.
TEST(KerasH5Reader, DamageLibhdf5WouldTrustIsRefusedFirst) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(KCPP_SOURCE_DIR) + "/fuzz/regressions/load_model")) {
    if (!e.path().filename().string().starts_with("libhdf5_")) continue;
    ++n;
    std::vector<char> bytes = read_bytes(e.path().string());
    std::string msg = error_of<IOError>([&] { H5File::open_image(bytes.data(), bytes.size(), "crash.h5"); });
    EXPECT_NE(msg.find("Unable to open \"crash.h5\" as an HDF5 file: damaged at \""), std::string::npos)
        << e.path() << ": " << msg;
  }
  EXPECT_GE(n, 10);
}

// An object with a message outside the subset still has its other messages checked before libhdf5
// is given the file: keras3_mlp.h5's root with its "backend" attribute message retyped as a B-tree 'K'
// values message (valid HDF5, outside the subset), and model_config's global heap reference damaged.
TEST(KerasH5Reader, AnObjectOutsideTheSubsetStillHasItsAttributesChecked) {
  std::vector<char> bytes = read_bytes(fixture("keras3_mlp.h5"));
  auto message_of = [&](std::string_view attr) {  // the attribute message naming `attr`
    std::string name(attr);
    name.push_back('\0');
    auto it = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
    EXPECT_NE(it, bytes.end()) << attr;
    return static_cast<size_t>(it - bytes.begin()) - 16;  // 8 bytes of message header, 8 of attribute header
  };
  const size_t backend = message_of("backend"), config = message_of("model_config");
  ASSERT_EQ(bytes[backend], 0x0C);
  ASSERT_EQ(bytes[config], 0x0C);
  bytes[backend] = 0x13;
  H5File outside = H5File::open_image(bytes.data(), bytes.size(), "k.h5");  // undamaged: libhdf5 reads it
  EXPECT_EQ(outside.backend(), "libhdf5");
  EXPECT_FALSE(outside.root().has_attr("backend"));
  EXPECT_EQ(outside.root().attr_string("model_config").substr(0, 1), "{");
  auto pad8 = [](size_t n) { return (n + 7) & ~size_t{7}; };
  const char* m = bytes.data() + config + 8;
  uint16_t name_len, dt_len, ds_len;
  std::memcpy(&name_len, m + 2, 2), std::memcpy(&dt_len, m + 4, 2), std::memcpy(&ds_len, m + 6, 2);
  const size_t data = config + 8 + 8 + pad8(name_len) + pad8(dt_len) + pad8(ds_len);  // version-1 attribute
  uint32_t index = 999;  // length (4 bytes), collection address (8), object index (4)
  std::memcpy(bytes.data() + data + 12, &index, 4);
  std::string msg = error_of<IOError>([&] { H5File::open_image(bytes.data(), bytes.size(), "k.h5"); });
  EXPECT_NE(msg.find("Unable to open \"k.h5\" as an HDF5 file: damaged at \"/\": attribute \"model_config\": "
                     "damaged global heap collection at address"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no object 999"), std::string::npos) << msg;
}

// A file's global heap collections are walked once, into the file's own cache, by whichever read of
// a string attribute comes first: threads reading one file's attributes at once (the first of them
// filling the cache) all get the answers of a file read alone.
TEST(KerasH5Reader, StringAttributesReadFromManyThreadsAtOnce) {
  std::string want;
  dump(H5File::open(fixture("keras3_mlp.h5")).root(), &want);
  ASSERT_NE(want.find("attr layer_names = [dense]"), std::string::npos) << want;
  for (int round = 0; round < 20; ++round) {
    H5File f = H5File::open(fixture("keras3_mlp.h5"));
    ASSERT_EQ(f.backend(), "keras-subset");
    std::vector<std::string> got(4);
    std::vector<std::thread> threads;
    for (std::string& g : got) threads.emplace_back([&f, &g] { dump(f.root(), &g); });
    for (std::thread& t : threads) t.join();
    for (const std::string& g : got) ASSERT_EQ(g, want) << "round " << round;
  }
}

// An attribute whose strings all name one heap object is refused once they total more than the file.
TEST(KerasH5Reader, StringsReadAgainAndAgainAreBoundedByTheFile) {
  std::vector<char> bytes = read_bytes(fixture("h5py_subset.h5"));
  std::string why;
  auto parsed = detail::kh5::File::parse(bytes.data(), bytes.size(), "s.h5", &why);
  ASSERT_TRUE(parsed) << why;
  const detail::kh5::Attr* list = parsed->root().attr("list_vlen");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->type.cls, 9);
  // The same attribute, told it has as many elements as the file would fit, each a copy of the first
  // ("dense", 5 bytes): 5 bytes each total more than the file.
  const uint64_t n = bytes.size() / 4;
  std::vector<char> elements(16 * n);
  for (uint64_t i = 0; i < n; ++i) std::memcpy(elements.data() + 16 * i, list->data, 16);
  detail::kh5::Attr many = *list;
  many.space.points = n;
  many.data = elements.data();
  std::vector<std::string> out;
  EXPECT_EQ(parsed->read_strings(many, nullptr, &why), detail::StringsRead::ok) << why;  // the references are fine
  EXPECT_EQ(parsed->read_strings(many, &out, &why), detail::StringsRead::damaged);
  EXPECT_NE(why.find("the strings total more bytes than the file's"), std::string::npos) << why;
}

// libhdf5 takes the superblock's address (0) as the base address whatever is stored, and moves the
// end of file by the difference: the reader does the same, so a damaged base never sends the file on.
TEST(KerasH5Reader, StoredBaseAddressIsReadAsLibhdf5ReadsIt) {
  std::vector<char> bytes = read_bytes(fixture("keras3_mlp.h5"));
  uint64_t eof;  // superblock v0: the base address at byte 24, the end of file at byte 40
  std::memcpy(&eof, bytes.data() + 40, 8);
  ASSERT_EQ(eof, bytes.size());
  for (uint64_t base : {eof - 1, eof + 1}) {  // an end of file of 1 byte; one that wraps past 2^64
    std::vector<char> b = bytes;
    std::memcpy(b.data() + 24, &base, 8);
    std::string ours = error_of<IOError>([&] { H5File::open_image(b.data(), b.size(), "based.h5"); });
    // kerascpp's reader refuses it, not libhdf5 (whose messages say "stored_eof").
    EXPECT_TRUE(ours.find("Unable to open \"based.h5\" as an HDF5 file: damaged at \"") != std::string::npos ||
                ours.find("Unable to open \"based.h5\" as an HDF5 file: truncated file: eof = ") != std::string::npos)
        << base << ": " << ours;
  }
  std::vector<char> b = bytes;  // a base of 8 with the end of file moved by 8 as well: the same file
  uint64_t base = 8, moved = eof + 8;
  std::memcpy(b.data() + 24, &base, 8);
  std::memcpy(b.data() + 40, &moved, 8);
  H5File a = H5File::open_image(b.data(), b.size(), "based.h5");
  EXPECT_EQ(a.backend(), "keras-subset");
  std::string da, db;
  dump(a.root(), &da);
  dump(detail::open_image_libhdf5(b.data(), b.size(), "based.h5").root(), &db);
  EXPECT_EQ(da, db);
}

TEST(KerasH5Reader, EveryStructureOfTheSubset) {
  H5File f = H5File::open(fixture("h5py_subset.h5"));
  ASSERT_EQ(f.backend(), "keras-subset");
  H5Group r = f.root();
  EXPECT_EQ(r.attr_strings("list_vlen"), (std::vector<std::string>{"dense", "dense_1", "d\xc3\xa9", ""}));
  EXPECT_EQ(r.attr_strings("list_fixed"), (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_TRUE(r.attr_strings("list_empty").empty());
  EXPECT_TRUE(r.attr_strings("null_attr").empty());
  EXPECT_EQ(r.attr_strings_split("split"), (std::vector<std::string>{"l0", "l1", "l2"}));
  EXPECT_NE(error_of<ValueError>([&] { r.attr_strings("float_attr"); }).find("4-byte float array of 2"),
            std::string::npos);
  Tensor c = r.dataset("compact").read();
  EXPECT_EQ(std::vector<float>(c.data<float>(), c.data<float>() + 4), (std::vector<float>{1, 2, 3, 4}));
  Tensor u = r.dataset("unwritten").read();
  EXPECT_EQ(u.shape(), (Shape{2, 2}));
  EXPECT_EQ(u.data<float>()[3], 0.f);
  EXPECT_EQ(r.dataset("bf16").dtype(), DType::bfloat16);
  EXPECT_EQ(r.dataset("bool").dtype(), DType::bool_);
  EXPECT_EQ(r.dataset("f16").dtype(), DType::float16);
  EXPECT_NE(error_of<NotImplementedError>([&] { r.dataset("u16").dtype(); }).find("2-byte unsigned"),
            std::string::npos);
  std::vector<std::string> many = r.group("many").members();
  ASSERT_EQ(many.size(), 300u);
  EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
  EXPECT_EQ(r.dataset("many/w299").read().data<float>()[1], 299.f);
  EXPECT_EQ(r.group("many_attrs").attr_names().size(), 40u);
  EXPECT_EQ(r.group("many_attrs").attr_string("attr39"), std::string(79, 'x'));
  EXPECT_TRUE(r.is_group("a/again/c"));
  EXPECT_TRUE(r.group("a/again").has("/a/b/c"));  // absolute paths start at the root
  EXPECT_FALSE(r.has("f32/x"));
  std::string msg = error_of<ValueError>([&] { r.group("a/b/nope/deeper"); });
  EXPECT_NE(msg.find("group \"a/b\" has no member \"nope\"; its members are [c]"), std::string::npos) << msg;
  EXPECT_NE(error_of<ValueError>([&] { r.dataset("a"); }).find("it is a group, not a dataset"), std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] { r.group("f32"); }).find("it is a dataset, not a group"), std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] { r.dataset("f32/x"); }).find("\"f32\" is not a group"), std::string::npos);
}

// Reads everything reachable; only kerascpp errors may come out.
void walk(const H5Group& g, int depth = 0) {
  if (depth > 12) return;
  try {
    for (const std::string& a : g.attr_names()) {
      try {
        g.attr_strings(a);
      } catch (const Error&) {
      }
    }
    for (const std::string& m : g.members()) {
      try {
        if (g.is_group(m)) walk(g.group(m), depth + 1);
        else if (g.is_dataset(m)) g.dataset(m).read();
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
}

// Opens and walks a damaged image; returns 1 if kerascpp's reader served it.
int load_damaged(const std::vector<char>& bytes, const std::string& name) {
  try {
    H5File f = H5File::open_image(bytes.data(), bytes.size(), name);
    walk(f.root());
    return f.backend() == "keras-subset";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  } catch (const Error&) {
  }
  return 0;
}

std::vector<std::vector<char>> damage_sources() {
  std::vector<std::vector<char>> out{read_bytes(fixture("keras3_mlp.h5")),
                                     read_bytes(std::string(KCPP_SOURCE_DIR) + "/tests/fixtures/seed_mlp_2x10/keras3/model.h5")};
  ZipArchive zip = ZipArchive::open(fixture("keras3_mlp.keras"));
  ZipMember m = zip.member("model.weights.h5");
  out.emplace_back(m.data, m.data + m.size);
  return out;
}

TEST(KerasH5Reader, TruncatedAtManyLengths) {
  for (const std::vector<char>& whole : damage_sources()) {
    for (size_t n = 1; n < whole.size(); n += 1 + n / 64) {
      std::vector<char> part(whole.begin(), whole.begin() + n);
      std::string name = "truncated_" + std::to_string(n) + ".h5";
      std::string msg = error_of<IOError>([&] { H5File::open_image(part.data(), part.size(), name); });
      EXPECT_NE(msg.find(name), std::string::npos) << msg;
    }
  }
}

TEST(KerasH5Reader, ZeroedAndRandomRegionsAtManyOffsets) {
  std::mt19937 rng(5);
  int served = 0, loads = 0;
  for (const std::vector<char>& whole : damage_sources()) {
    for (size_t at = 0; at < whole.size(); at += 24) {
      for (size_t len : {size_t{1}, size_t{8}, size_t{64}}) {
        size_t end = std::min(at + len, whole.size());
        std::vector<char> zeroed = whole;
        std::fill(zeroed.begin() + at, zeroed.begin() + end, 0);
        served += load_damaged(zeroed, "zeroed_" + std::to_string(at) + ".h5");
        std::vector<char> noisy = whole;
        for (size_t i = at; i < end; ++i) noisy[i] = static_cast<char>(rng());
        served += load_damaged(noisy, "random_" + std::to_string(at) + ".h5");
        loads += 2;
      }
    }
  }
  // Most damage leaves a Keras-subset file (or is refused by it); few reach libhdf5.
  EXPECT_GT(served, loads / 2);
}

// Informational: a Keras load (open, config, layer and weight names, every dataset) both ways.
TEST(KerasH5Reader, LoadTime) {
  std::string path = std::string(KCPP_SOURCE_DIR) + "/tests/fixtures/seed_mlp_2x10/keras3/model.h5";
  std::vector<char> bytes = read_bytes(path);
  auto load = [&](bool fast) {
    H5File f = fast ? H5File::open_image(bytes.data(), bytes.size(), path)
                    : detail::open_image_libhdf5(bytes.data(), bytes.size(), path);
    f.root().attr_string("model_config");
    H5Group w = f.root().group("model_weights");
    size_t n = 0;
    for (const std::string& layer : w.attr_strings_split("layer_names")) {
      H5Group g = w.group(layer);
      for (const std::string& name : g.attr_strings_split("weight_names")) n += g.dataset(name).read().nbytes();
    }
    return n;
  };
  for (bool fast : {false, true}) {
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 200; ++i) load(fast);
      best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200);
    }
    std::printf("  %s: %.1f us per load\n", fast ? "keras-subset" : "libhdf5", best);
  }
  EXPECT_EQ(load(true), load(false));
}

}  // namespace
}  // namespace kerascpp::io
