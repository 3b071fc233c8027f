// kerascpp: the command-line tool. `kerascpp help` lists the commands.
#include <cstring>
#include <iostream>

#include "commands.h"
#include "kerascpp/error.h"

namespace kerascpp::cli {

std::string take_option(Args& args, const std::string& name, const std::string& fallback) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == name) {
      KCPP_CHECK(i + 1 < args.size(), ValueError, "Option ", name, " needs a value");
      std::string v = args[i + 1];
      args.erase(args.begin() + i, args.begin() + i + 2);
      return v;
    }
  return fallback;
}

std::vector<std::string> take_all(Args& args, const std::string& name) {
  std::vector<std::string> out;
  for (std::string v; !(v = take_option(args, name, "\x01")).empty() && v != "\x01";) out.push_back(v);
  return out;
}

bool take_flag(Args& args, const std::string& name) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == name) {
      args.erase(args.begin() + i);
      return true;
    }
  return false;
}

}  // namespace kerascpp::cli

static const char* kUsage =
    "usage: kerascpp <command> [options]\n"
    "  info FILE                                      summary of a Keras model file\n"
    "  predict FILE --input X.npy [--input ...] --output Y.npy [--output ...] [--batch-size N]\n"
    "  verify DIR [--tol 1e-5] [--relative-to output|element]\n"
    "                                                 load every model form in fixture folders under DIR,\n"
    "                                                 compare with Keras's outputs\n"
    "  convert IN OUT [--keras2] [--weights W]         any model form to any other (.keras, .h5, .json)\n"
    "  bench-load FILE --copies N [--json] [--check DIR]\n"
    "                                                 load N copies, all kept alive; time and memory\n";

int main(int argc, char** argv) {
  using namespace kerascpp;
  if (argc < 2 || !std::strcmp(argv[1], "help") || !std::strcmp(argv[1], "--help")) {
    std::cout << kUsage;
    return argc < 2 ? 1 : 0;
  }
  const std::string cmd = argv[1];
  cli::Args args(argv + 2, argv + argc);
  try {
    if (cmd == "info") return cli::info(args);
    if (cmd == "predict") return cli::predict(args);
    if (cmd == "verify") return cli::verify(args);
    if (cmd == "bench-load") return cli::bench_load(args);
    if (cmd == "convert") return cli::convert(args);
    std::cerr << "kerascpp: unknown command '" << cmd << "'\n" << kUsage;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kerascpp " << cmd << ": error: " << e.what() << "\n";
    return 1;
  }
}
