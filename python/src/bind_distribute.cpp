// keras.distribute's native side (kerascpp/distribute.h): the cluster the environment describes and
// a connected DistributedContext, which fit and evaluate take (python/kerascpp/distribute).
#include "common.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "kerascpp/distribute.h"

namespace kcpy {

void bind_distribute(nb::module_& m) {
  nb::class_<ClusterSpec>(m, "ClusterSpec")
      .def(nb::init<>())
      .def_rw("rank", &ClusterSpec::rank)
      .def_rw("world_size", &ClusterSpec::world_size)
      .def_rw("master", &ClusterSpec::master)
      .def_rw("host", &ClusterSpec::host)
      .def_prop_rw("timeout", [](const ClusterSpec& s) { return s.timeout.count() / 1000.0; },
                   [](ClusterSpec& s, double seconds) {
                     s.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
                   })
      .def_static("from_environment", &ClusterSpec::from_environment);
  nb::class_<DistributedContext>(m, "DistributedContext")
      .def_prop_ro("rank", &DistributedContext::rank)
      .def_prop_ro("world_size", &DistributedContext::world_size)
      .def("barrier", [](DistributedContext& c) {
        nb::gil_scoped_release release;
        c.barrier();
      })
      // Sums a float32 array over the workers, in place (every worker passes one of the same size).
      .def("all_reduce_sum", [](DistributedContext& c, nb::ndarray<float, nb::c_contig, nb::device::cpu> a) {
        nb::gil_scoped_release release;
        c.all_reduce_sum(a.data(), a.size());
      }, nb::arg("array"));
  // Waits for every worker with the GIL released (other Python threads go on).
  m.def("distributed_connect", [](const ClusterSpec& spec) {
    nb::gil_scoped_release release;
    return DistributedContext::connect(spec);
  });
}

}  // namespace kcpy
