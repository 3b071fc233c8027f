// Builds a model in code as Keras's functional API does (Input, layers called on symbolic tensors,
// Model(inputs, outputs)), trains it, saves it as a .keras file Keras loads, and writes its predictions
// on a fixed input beside it (one value per line) for Keras to compare with.
//
//   build_and_train model.keras predictions.txt
#include <kerascpp/kerascpp.h>

#include <fstream>
#include <iomanip>
#include <iostream>

namespace layers = kerascpp::layers;

// Rows of a fixed pattern: the inputs the predictions are written for.
kerascpp::Tensor pattern(int64_t rows, int64_t cols) {
  kerascpp::Tensor t = kerascpp::Tensor::zeros({rows, cols});
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  return t;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " MODEL.keras PREDICTIONS.txt\n";
    return 2;
  }
  try {
    auto x = layers::Input({8}, {{"name", "features"}});
    auto h = layers::Dense({{"units", 16}, {"activation", "relu"}, {"kernel_initializer", "he_normal"}})(x);
    h = layers::BatchNormalization()(h);
    h = layers::Dropout({{"rate", 0.1}})(h);
    auto y = layers::Dense({{"units", 1}, {"name", "score"}})(h);
    kerascpp::Model model({x}, {y}, "built_in_cpp");
    std::cout << model.summary();

    // Targets: a fixed function of the inputs (the sum of the first half minus the second).
    kerascpp::Tensor data = pattern(256, 8), target = kerascpp::Tensor::zeros({256, 1});
    for (int64_t r = 0; r < 256; ++r)
      for (int64_t c = 0; c < 8; ++c) target.data<float>()[r] += (c < 4 ? 1.f : -1.f) * data.data<float>()[r * 8 + c];
    model.compile({.optimizer = "adam", .loss = "mse", .metrics = {"mae"}});
    auto history = model.fit({data}, {target}, {.epochs = 5, .verbose = 0, .validation_split = 0.2});
    const auto& loss = history->history.at("loss");
    std::cout << "loss " << loss.front() << " -> " << loss.back() << "\n";
    if (!(loss.back() < loss.front())) throw std::runtime_error("training did not lower the loss");

    model.save(argv[1]);
    std::ofstream out(argv[2]);
    out << std::setprecision(9);
    const kerascpp::Tensor p = model.predict({pattern(16, 8)}).at(0);
    for (int64_t i = 0; i < p.size(); ++i) out << p.data<float>()[i] << "\n";
    std::cout << "saved " << argv[1] << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
