// losses::get over the one list of loss classes (loss_list.inc).
#include <algorithm>

#include "core/naming.h"
#include "training/losses/loss_classes.h"

namespace kerascpp::losses {
namespace {

using Factory = LossPtr (*)(const Json&);

struct Entry {
  const char* class_name;
  Factory make;
  const char* arguments;
  std::vector<std::string> functions;  // function names and aliases; the first is the Keras function
};

const std::vector<Entry>& table() {
  using namespace detail;
  static const std::vector<Entry> t = {
#define KCPP_LOSS(cls, factory, args, functions) {#cls, make_##factory, args, split_words(functions)},
#include "training/losses/loss_list.inc"
#undef KCPP_LOSS
  };
  return t;
}

std::string known_list() {
  std::string s;
  for (const Entry& e : table()) {
    s += s.empty() ? "" : ", ";
    s += e.class_name;
    for (const std::string& f : e.functions) s += ", " + f;
  }
  return s;
}

// A function name or alias: the class, named after the identifier as
// keras/src/trainers/compile_utils.py get_loss names the wrapper of a loss function.
LossPtr from_name(const std::string& id, const std::string& shown) {
  for (const Entry& e : table()) {
    if (id == e.class_name) return e.make(Json::object());
    for (const std::string& f : e.functions)
      if (id == f) return e.make(Json{{"name", id}});
  }
  KCPP_THROW(ValueError, "Could not interpret loss identifier: ", shown, ". Known losses: ", known_list());
}

}  // namespace

LossPtr get(const Json& identifier) {
  if (identifier.is_string()) return from_name(identifier.get<std::string>(), identifier.get<std::string>());
  KCPP_CHECK(identifier.is_object() && identifier.contains("class_name") && identifier["class_name"].is_string(),
             ValueError, "Could not interpret loss identifier: ", identifier.dump(),
             ". Expected a name or a dict with 'class_name' and 'config'.");
  const std::string cls = identifier["class_name"].get<std::string>();
  const Json config = identifier.contains("config") ? identifier["config"] : Json::object();
  // Keras 3 serialises a loss function as {"class_name": "function", "config": "mean_squared_error"}.
  if (cls == "function") {
    KCPP_CHECK(config.is_string(), ValueError, "Could not interpret loss identifier: ", identifier.dump());
    return from_name(config.get<std::string>(), identifier.dump());
  }
  for (const Entry& e : table())
    if (cls == e.class_name) return e.make(config.is_null() ? Json::object() : config);
  KCPP_THROW(ValueError, "Could not interpret loss identifier: ", identifier.dump(), ". Unknown class_name '", cls,
             "'. Known losses: ", known_list());
}

std::vector<std::string> known_losses() {
  std::vector<std::string> names;
  for (const Entry& e : table()) names.emplace_back(e.class_name);
  return names;
}

std::vector<ClassInfo> loss_classes() {
  std::vector<ClassInfo> out;
  for (const Entry& e : table()) out.push_back({e.class_name, split_words(e.arguments), e.functions});
  return out;
}

}  // namespace kerascpp::losses
