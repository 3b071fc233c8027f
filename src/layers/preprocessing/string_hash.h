// TensorFlow's string hashes as Keras's Hashing and IntegerLookup use them on integers written in
// decimal (tf.strings.as_string): tf.strings.to_hash_bucket_fast is FarmHash's Fingerprint64 modulo the
// bucket count, to_hash_bucket_strong SipHash-2-4 keyed by the layer's two salt integers. Integers only:
// their decimal form is at most 20 bytes.
#pragma once

#include <cstdint>
#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

uint64_t farmhash_fingerprint64(const std::string& s);  // s of at most 32 bytes
uint64_t siphash24(uint64_t k0, uint64_t k1, const std::string& s);
std::string decimal(int64_t v);  // tf.strings.as_string of an integer

// The bucket of integer v among `buckets`: FarmHash without a salt, SipHash with one.
// Read from a layer's `salt` config: null (FarmHash), an integer k (SipHash keyed (k, k)) or [k0, k1].
struct IntegerHash {
  bool strong = false;
  uint64_t key[2] = {0, 0};
  static IntegerHash from_salt(const Json& salt, const std::string& who);  // ValueError naming `who`
  int64_t bucket(int64_t v, int64_t buckets) const;
};

}  // namespace kerascpp::layers
