// ClusterSpec::from_environment (kerascpp/distribute.h): TF_CONFIG as Keras users write it for
// MultiWorkerMirroredStrategy, the launcher's KERASCPP_* variables, or mpirun's rank and size.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "kerascpp/distribute.h"
#include "kerascpp/error.h"

namespace kerascpp {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int int_env(const char* name, const char* value) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  KCPP_CHECK(end && *end == '\0' && v >= 0 && v < (1 << 20), ValueError, "Expected a non-negative integer in ", name,
             ". Received: \"", value, "\"");
  return static_cast<int>(v);
}

// TF_CONFIG: the cluster's tasks in TensorFlow's order (chief first, then the workers); this task's rank
// is its place there, and the first address serves the rendezvous.
void from_tf_config(const std::string& text, ClusterSpec* spec) {
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    KCPP_THROW(ValueError, "TF_CONFIG is not JSON: ", e.what());
  }
  auto bad = [&](const std::string& why) { KCPP_THROW(ValueError, "TF_CONFIG: ", why, ". Received: ", text); };
  if (!c.is_object() || !c.contains("cluster") || !c["cluster"].is_object()) bad("expected a \"cluster\" object");
  if (!c.contains("task") || !c["task"].is_object() || !c["task"].contains("type") || !c["task"]["type"].is_string() ||
      !c["task"].contains("index") || !c["task"]["index"].is_number_integer())
    bad("expected a \"task\" object with a \"type\" and an integer \"index\"");
  std::vector<std::pair<std::string, std::string>> tasks;  // (type, address)
  for (const char* type : {"chief", "worker"}) {
    if (!c["cluster"].contains(type)) continue;
    const nlohmann::json& list = c["cluster"][type];
    if (!list.is_array()) bad(std::string("cluster.") + type + " must be a list of \"host:port\"");
    for (const auto& a : list) {
      if (!a.is_string()) bad(std::string("cluster.") + type + " must be a list of \"host:port\"");
      tasks.emplace_back(type, a.get<std::string>());
    }
  }
  for (const auto& [type, list] : c["cluster"].items())
    if (type != "chief" && type != "worker")
      bad("kerascpp trains on \"chief\" and \"worker\" tasks; a \"" + type + "\" task (parameter servers, evaluators) "
          "has no part in MultiWorkerMirroredStrategy");
  const std::string type = c["task"]["type"].get<std::string>();
  const int64_t index = c["task"]["index"].get<int64_t>();
  int rank = -1, seen = 0;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].first == type && seen++ == index) rank = static_cast<int>(i);
  if (rank < 0) bad("task " + type + " " + std::to_string(index) + " is not in the cluster");
  spec->rank = rank;
  spec->world_size = static_cast<int>(tasks.size());
  spec->master = tasks[0].second;
  const std::string own = tasks[static_cast<size_t>(rank)].second;
  spec->host = own.substr(0, own.rfind(':'));  // where the others reach this task
}

}  // namespace

ClusterSpec ClusterSpec::from_environment() {
  ClusterSpec spec;
  if (const char* tf = env("TF_CONFIG")) {
    from_tf_config(tf, &spec);
  } else if (const char* size = env("KERASCPP_WORLD_SIZE")) {
    spec.world_size = int_env("KERASCPP_WORLD_SIZE", size);
    const char* rank = env("KERASCPP_RANK");
    KCPP_CHECK(rank, ValueError, "KERASCPP_WORLD_SIZE is set but KERASCPP_RANK is not");
    spec.rank = int_env("KERASCPP_RANK", rank);
  } else if (const char* size = env("OMPI_COMM_WORLD_SIZE")) {  // started by Open MPI's mpirun
    spec.world_size = int_env("OMPI_COMM_WORLD_SIZE", size);
    const char* rank = env("OMPI_COMM_WORLD_RANK");
    spec.rank = rank ? int_env("OMPI_COMM_WORLD_RANK", rank) : 0;
  }
  if (const char* master = env("KERASCPP_MASTER")) spec.master = master;
  if (const char* host = env("KERASCPP_HOST")) spec.host = host;
  if (const char* t = env("KERASCPP_DISTRIBUTED_TIMEOUT")) {
    char* end = nullptr;
    const double s = std::strtod(t, &end);
    KCPP_CHECK(end && *end == '\0' && s > 0 && s < 1e7, ValueError, "Expected KERASCPP_DISTRIBUTED_TIMEOUT in seconds "
               "(a positive number). Received: \"", t, "\"");
    spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  }
  KCPP_CHECK(spec.rank >= 0 && spec.rank < spec.world_size, ValueError, "The environment gives rank ", spec.rank,
             " of ", spec.world_size, " workers: a rank is in 0..world_size-1");
  return spec;
}

}  // namespace kerascpp
