// FarmHash's Fingerprint64 (farmhashna::Hash64, its short-string paths) and SipHash-2-4, written from
// their published algorithms; checked against TensorFlow's buckets by the hashing fixtures.
#include "layers/preprocessing/string_hash.h"

#include <cstring>

#include "kerascpp/error.h"

namespace kerascpp::layers {
namespace {

constexpr uint64_t k0 = 0xc3a5c85c97cb3127ULL, k1 = 0xb492b66fbe98f273ULL, k2 = 0x9ae16a3b2f90404fULL;

uint64_t fetch64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // little-endian hosts only (x86-64, aarch64), as FarmHash's fast path
  return v;
}
uint32_t fetch32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t rotate_right(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }
uint64_t hash_len16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t hash_len0to16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = k2 + len * 2, a = fetch64(s) + k2, b = fetch64(s + len - 8);
    const uint64_t c = rotate_right(b, 37) * mul + a, d = (rotate_right(a, 25) + b) * mul;
    return hash_len16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = k2 + len * 2, a = fetch32(s);
    return hash_len16(len + (a << 3), fetch32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint8_t a = static_cast<uint8_t>(s[0]), b = static_cast<uint8_t>(s[len >> 1]),
                  c = static_cast<uint8_t>(s[len - 1]);
    const uint32_t y = static_cast<uint32_t>(a) + (static_cast<uint32_t>(b) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(c) << 2);
    return shift_mix(y * k2 ^ z * k0) * k2;
  }
  return k2;
}

uint64_t hash_len17to32(const char* s, size_t len) {
  const uint64_t mul = k2 + len * 2, a = fetch64(s) * k1, b = fetch64(s + 8);
  const uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * k2;
  return hash_len16(rotate_right(a + b, 43) + rotate_right(c, 30) + d, a + rotate_right(b + k2, 18) + c, mul);
}

uint64_t rotl(uint64_t v, int s) { return (v << s) | (v >> (64 - s)); }
void sip_round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
  v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
  v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
  v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
  v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
}

}  // namespace

uint64_t farmhash_fingerprint64(const std::string& s) {
  KCPP_CHECK(s.size() <= 32, ValueError, "farmhash_fingerprint64 takes at most 32 bytes (received ", s.size(), ")");
  return s.size() <= 16 ? hash_len0to16(s.data(), s.size()) : hash_len17to32(s.data(), s.size());
}

uint64_t siphash24(uint64_t key0, uint64_t key1, const std::string& s) {
  uint64_t v0 = 0x736f6d6570736575ULL ^ key0, v1 = 0x646f72616e646f6dULL ^ key1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ key0, v3 = 0x7465646279746573ULL ^ key1;
  const size_t full = s.size() / 8 * 8;
  for (size_t i = 0; i < full; i += 8) {
    const uint64_t m = fetch64(s.data() + i);
    v3 ^= m;
    sip_round(v0, v1, v2, v3), sip_round(v0, v1, v2, v3);
    v0 ^= m;
  }
  uint64_t last = static_cast<uint64_t>(s.size()) << 56;
  for (size_t i = full; i < s.size(); ++i) last |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * (i - full));
  v3 ^= last;
  sip_round(v0, v1, v2, v3), sip_round(v0, v1, v2, v3);
  v0 ^= last;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) sip_round(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

std::string decimal(int64_t v) { return std::to_string(v); }

IntegerHash IntegerHash::from_salt(const Json& salt, const std::string& who) {
  IntegerHash h;
  if (salt.is_null()) return h;
  h.strong = true;
  if (salt.is_number_integer()) {
    h.key[0] = h.key[1] = static_cast<uint64_t>(salt.get<int64_t>());
  } else {
    KCPP_CHECK(salt.is_array() && salt.size() == 2 && salt[0].is_number_integer() && salt[1].is_number_integer(),
               ValueError, who, ": `salt` can only be a tuple of size 2 integers, or a single integer. Received: salt=",
               salt.dump());
    h.key[0] = static_cast<uint64_t>(salt[0].get<int64_t>());
    h.key[1] = static_cast<uint64_t>(salt[1].get<int64_t>());
  }
  return h;
}

int64_t IntegerHash::bucket(int64_t v, int64_t buckets) const {
  const std::string s = decimal(v);
  const uint64_t h = strong ? siphash24(key[0], key[1], s) : farmhash_fingerprint64(s);
  return static_cast<int64_t>(h % static_cast<uint64_t>(buckets));
}

}  // namespace kerascpp::layers
