// Loads a Keras model, predicts, fine-tunes it for a few epochs on data derived from its own
// predictions, saves it as a .keras file that Keras loads, and checks that the saved file predicts
// what the trained model does.
//
//   train_and_save model.keras trained.keras
#include <kerascpp/kerascpp.h>

#include <cmath>
#include <iostream>
#include <random>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " MODEL TRAINED.keras\n";
    return 2;
  }
  try {
    kerascpp::Model model = kerascpp::load_model(argv[1]);
    std::cout << model.summary();

    // 64 random samples of the model's (single) input shape; targets: its own predictions, doubled.
    kerascpp::Shape shape = model.input_shapes().at(0);
    shape[0] = 64;
    kerascpp::Tensor x = kerascpp::Tensor::zeros(shape);
    std::mt19937 rng(0);
    std::normal_distribution<float> normal;
    for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = normal(rng);
    kerascpp::Tensor y = model.predict({x}).at(0);
    for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] *= 2.f;

    model.compile({.optimizer = "adam", .loss = "mse"});
    auto history = model.fit({x}, {y}, {.batch_size = 16, .epochs = 3, .verbose = 0, .shuffle = false});
    const std::vector<double>& loss = history->history.at("loss");
    std::cout << "loss per epoch:";
    for (double l : loss) std::cout << " " << l;
    std::cout << "\n";

    model.save(argv[2]);
    kerascpp::Model again = kerascpp::load_model(argv[2]);
    kerascpp::Tensor a = model.predict({x}).at(0), b = again.predict({x}).at(0);
    for (int64_t i = 0; i < a.size(); ++i)
      if (a.data<float>()[i] != b.data<float>()[i]) {
        std::cerr << "the saved model predicts differently at " << i << "\n";
        return 1;
      }
    if (!(loss.back() < loss.front())) {
      std::cerr << "training did not lower the loss\n";
      return 1;
    }
    std::cout << "ok: trained, saved to " << argv[2] << " and reloaded\n";
  } catch (const kerascpp::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
