#include "core/naming.h"

#include <cctype>
#include <map>
#include <algorithm>
#include <mutex>

namespace kerascpp {
namespace {
std::mutex mutex;
std::map<std::string, int, std::less<>>& counters() {
  static std::map<std::string, int, std::less<>> c;
  return c;
}
}  // namespace

std::string unique_name(std::string_view prefix) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = counters().try_emplace(std::string(prefix), 0);
  if (inserted) return std::string(prefix);
  return std::string(prefix) + "_" + std::to_string(++it->second);
}

// keras/src/utils/naming.py to_snake_case: drop non-word characters, then its two regex passes.
std::string to_snake_case(std::string_view in) {
  std::string s;
  for (char c : in)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') s += c;
  // re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
  std::string a;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && std::isupper(static_cast<unsigned char>(s[i + 1])) &&
        std::islower(static_cast<unsigned char>(s[i + 2]))) {
      size_t j = i + 2;
      while (j < s.size() && std::islower(static_cast<unsigned char>(s[j]))) ++j;
      a += s[i];
      a += '_';
      a.append(s, i + 1, j - i - 1);
      i = j;
    } else {
      a += s[i++];
    }
  }
  // re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()
  std::string b;
  for (size_t i = 0; i < a.size();) {
    if (i + 1 < a.size() && std::islower(static_cast<unsigned char>(a[i])) && std::isupper(static_cast<unsigned char>(a[i + 1]))) {
      b += a[i];
      b += '_';
      b += a[i + 1];
      i += 2;
    } else {
      b += a[i++];
    }
  }
  for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return b;
}

std::vector<std::string> split_words(std::string_view words) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < words.size()) {
    const size_t end = std::min(words.find(' ', i), words.size());
    if (end > i) out.emplace_back(words.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

void reset_automatic_names() {
  std::lock_guard<std::mutex> lock(mutex);
  counters().clear();
}

}  // namespace kerascpp
