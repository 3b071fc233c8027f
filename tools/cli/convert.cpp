// kerascpp convert IN OUT [--keras2] [--weights W]: any supported form to any other.
//   IN:  a full model (.keras, .h5), or a JSON config with --weights (.weights.h5 or weights-only .h5)
//   OUT: .keras, .h5 (Keras 3 dialect, or Keras 2's with --keras2), or .json, which also writes its
//        weights beside it as <stem>.weights.h5 (Keras 3) or <stem>.h5 (--keras2), as `verify` expects.
#include <fstream>
#include <iostream>

#include "commands.h"
#include "io/atomic_file.h"
#include "kerascpp/model.h"

namespace kerascpp::cli {
int convert(const Args& a) {
  Args args = a;
  SaveOptions options;
  if (take_flag(args, "--keras2")) options.dialect = KerasDialect::keras2;
  const std::string weights = take_option(args, "--weights", "");
  KCPP_CHECK(args.size() == 2, ValueError, "usage: kerascpp convert IN OUT [--keras2] [--weights W]");
  const std::string& in = args[0];
  const std::string& out = args[1];
  Model m = [&] {
    if (!in.ends_with(".json")) return load_model(in);
    KCPP_CHECK(!weights.empty(), ValueError, "Converting a JSON config needs its weights: --weights FILE");
    std::ifstream f(in);
    KCPP_CHECK(f.good(), IOError, "No file found at ", in);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    Model model = model_from_json(text);
    model.load_weights(weights);
    return model;
  }();
  if (out.ends_with(".json")) {
    const std::string stem = out.substr(0, out.size() - 5);
    const bool k2 = options.dialect == KerasDialect::keras2;
    const std::string json = m.to_json(options.dialect);  // first: it refuses what the dialect cannot express
    m.save_weights(stem + (k2 ? ".h5" : ".weights.h5"), options);
    io::write_file_atomically(out, json.data(), json.size());
  } else {
    m.save(out, options);
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace kerascpp::cli
