// How one call of a layer binds its arguments: which tensors become its inputs, in the layer's order
// (Layer::tensor_arguments), which masks it was given, and its keyword options. A graph read from a
// config (functional.cpp) and a call on symbolic tensors (keras_tensor.cpp) bind their calls alike.
//
// The call is in the canonical form {"args": [...], "kwargs": {...}}, tensors as
// {"class_name": "__keras_tensor__", "config": {...}} (what each one refers to is the caller's).
#pragma once

#include <string>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::models {

struct CallBinding {
  std::vector<const Json*> inputs;  // each input's tensor JSON (pointers into the call: keep it alive)
  // Per input, the mask the call was given (`mask=` or `<argument>_mask=`), when mask_given says one
  // was: nullptr when it was given as null (the call gets none).
  std::vector<const Json*> masks;
  std::vector<char> mask_given;
  // Per input, whether Keras 3 fills in its mask: every input of a call with one tensor argument, else
  // those of arguments with a `<name>_mask` parameter.
  std::vector<char> auto_mask;
  int tensor_arguments = 0;        // positional and keyword arguments that hold tensors
  Json options = Json::object();   // keyword arguments that are not tensors (CallContext::options)
  // The call's fixed `training=`: 1 or 0, or -1 when the call does not fix it (the run decides).
  int training = -1;
  // The call with its arguments after the first given by keyword (as both Keras dialects read them and
  // tf_keras writes them), when that differs from the call; else null.
  Json normalized;
};

// who: how messages name the call ("Layer 'd' in model 'm'"); where: which call it is, for messages
// about its form ("inbound node 0 of layer 'd' in model 'm'"). NotImplementedError / ValueError for an
// argument the layer does not take.
CallBinding bind_call(const Layer& layer, const Json& call, const std::string& who, const std::string& where);

// A {"class_name": "__keras_tensor__", "config": {"keras_history": [layer, node, tensor], ...}}.
bool is_keras_tensor(const Json& j);
// Every Keras tensor of a call's arguments, depth first, in order (pointers into j: keep j alive).
void flatten_tensors(const Json& j, std::vector<const Json*>* out);
// The call with each Keras tensor replaced by {"kerascpp_input": i}, i counting in flatten_tensors'
// order: an op node's arguments as its layer reads them (layers/op_nodes/op_node.h).
Json call_template(const Json& call);

}  // namespace kerascpp::models
