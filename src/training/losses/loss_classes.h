// The loss classes kerascpp implements, one factory each, and what they share. get.cpp holds the
// one list of names; the families live in regression_losses.cpp, probabilistic_losses.cpp,
// hinge_losses.cpp and overlap_losses.cpp, as in keras/src/losses/losses.py.
#pragma once

#include <initializer_list>
#include <string>

#include "kerascpp/losses.h"

namespace kerascpp::losses::detail {

// ValueError naming the class and the key when config holds a key that is neither common to all
// losses (name, reduction, dtype, fn) nor one of `options`.
void check_keys(const Json& config, const std::string& class_name, std::initializer_list<const char*> options);
// config[key] when present and not null, else fallback; ValueError naming the class when the type is wrong.
double number_option(const Json& config, const std::string& class_name, const char* key, double fallback);
bool bool_option(const Json& config, const std::string& class_name, const char* key, bool fallback);

LossPtr make_mean_squared_error(const Json& config);
LossPtr make_mean_absolute_error(const Json& config);
LossPtr make_mean_absolute_percentage_error(const Json& config);
LossPtr make_mean_squared_logarithmic_error(const Json& config);
LossPtr make_huber(const Json& config);
LossPtr make_log_cosh(const Json& config);
LossPtr make_cosine_similarity(const Json& config);
LossPtr make_binary_crossentropy(const Json& config);
LossPtr make_binary_focal_crossentropy(const Json& config);
LossPtr make_categorical_focal_crossentropy(const Json& config);
LossPtr make_categorical_crossentropy(const Json& config);
LossPtr make_sparse_categorical_crossentropy(const Json& config);
LossPtr make_kl_divergence(const Json& config);
LossPtr make_poisson(const Json& config);
LossPtr make_hinge(const Json& config);
LossPtr make_squared_hinge(const Json& config);
LossPtr make_categorical_hinge(const Json& config);
LossPtr make_dice(const Json& config);
LossPtr make_tversky(const Json& config);
LossPtr make_ctc(const Json& config);  // ctc_loss.cpp

}  // namespace kerascpp::losses::detail
