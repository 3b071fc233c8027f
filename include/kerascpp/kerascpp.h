// kerascpp: load, run, train and save Keras models natively. This header includes the whole public
// API; a program outside the tree finds it with find_package(kerascpp) (target kerascpp::kerascpp) or
// `pkg-config --cflags --libs kerascpp` after `cmake --install build --prefix P`.
//
//   #include <kerascpp/kerascpp.h>
//   kerascpp::Model model = kerascpp::load_model("model.keras");
//   std::vector<kerascpp::Tensor> y = model.predict({kerascpp::Tensor::zeros({1, 8})});
#pragma once

#include "kerascpp/autodiff.h"
#include "kerascpp/callbacks.h"
#include "kerascpp/distribute.h"
#include "kerascpp/dtype.h"
#include "kerascpp/error.h"
#include "kerascpp/initializers.h"
#include "kerascpp/keras_tensor.h"
#include "kerascpp/layer.h"
#include "kerascpp/layers.h"
#include "kerascpp/losses.h"
#include "kerascpp/metrics.h"
#include "kerascpp/model.h"
#include "kerascpp/optimizers.h"
#include "kerascpp/tensor.h"
#include "kerascpp/threading.h"
#include "kerascpp/variable.h"
#include "kerascpp/warnings.h"
