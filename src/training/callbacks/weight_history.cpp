// WeightHistory (kerascpp's own callback): the model's weights every `every` epochs, appended to an
// HDF5 file of growing datasets (io/hdf5/hdf5_rows.h): each weight is (snapshots, *weight shape), so
// a snapshot costs the weights' bytes, however many snapshots the file holds; nothing is rewritten.
// "epoch" (snapshots,) is written last and is the commit mark: after a crash mid-snapshot, rows past
// its length are dropped on reopen.
#include <algorithm>
#include <set>

#include "io/hdf5/hdf5_rows.h"
#include "kerascpp/error.h"
#include "kerascpp/model.h"

namespace kerascpp::callbacks {

struct WeightHistory::File {
  io::H5RowFile file;
  std::vector<VariablePtr> vars;
  std::vector<io::H5Rows> weights;  // one per var
  io::H5Rows epoch;
  int64_t rows = 0;  // snapshots written

  void reopen(const std::string& filename);
};

WeightHistory::WeightHistory(std::string filename, int every) : filename_(std::move(filename)), every_(every) {
  KCPP_CHECK(every_ >= 1, ValueError, "WeightHistory: `every` must be at least 1. Received: every=", every_);
}

WeightHistory::~WeightHistory() = default;

// The file must hold exactly this model's weights, by path, shape and dtype; rows past "epoch" (a
// snapshot cut short) are dropped.
void WeightHistory::File::reopen(const std::string& filename) {
  File* f = this;
  std::set<std::string> in_file;
  for (const std::string& p : f->file.dataset_paths())
    if (p != "epoch") in_file.insert(p);
  std::vector<std::string> paths = f->file.dataset_paths();
  KCPP_CHECK(std::find(paths.begin(), paths.end(), "epoch") != paths.end(), ValueError, "WeightHistory: \"",
             filename, "\" is not a weight history: it has no \"epoch\" dataset.");
  f->epoch = f->file.open_rows("epoch");
  f->rows = f->epoch.rows();
  for (const auto& v : f->vars) {
    KCPP_CHECK(in_file.erase(v->path()) == 1, ValueError, "WeightHistory: \"", filename,
               "\" holds the weights of another model: it has no weight \"", v->path(), "\".");
    io::H5Rows rows = f->file.open_rows(v->path());
    const Shape dims = rows.shape();
    Shape want{f->rows};
    want.insert(want.end(), v->shape().begin(), v->shape().end());
    KCPP_CHECK(dims.size() == want.size() && std::equal(dims.begin() + 1, dims.end(), want.begin() + 1) &&
                   dims[0] >= f->rows,
               ValueError, "WeightHistory: \"", filename, "\" holds the weights of another model: weight \"",
               v->path(), "\" has shape ", shape_str(dims), " there, expected (", f->rows, ", *", shape_str(v->shape()),
               ") for this model.");
    KCPP_CHECK(rows.dtype() == v->dtype(), ValueError, "WeightHistory: \"", filename, "\" holds weight \"",
               v->path(), "\" as ", dtype_name(rows.dtype()), ", expected ", dtype_name(v->dtype()), ".");
    if (dims[0] > f->rows) rows.truncate(f->rows);
    f->weights.push_back(std::move(rows));
  }
  if (!in_file.empty())
    KCPP_THROW(ValueError, "WeightHistory: \"", filename, "\" holds the weights of another model: weight \"",
               *in_file.begin(), "\" is not a weight of this model.");
}

void WeightHistory::on_train_begin(Logs&) {
  KCPP_CHECK(model() != nullptr, ValueError, "WeightHistory has no model: call set_model() first.");
  file_.reset();
  io::H5RowFile file = io::H5RowFile::open_or_create(filename_);
  auto f = std::unique_ptr<File>(new File{file, model()->weights(), {}, {}, 0});
  if (!file.created()) {
    f->reopen(filename_);
  } else {
    for (const auto& v : f->vars) f->weights.push_back(file.create_rows(v->path(), v->dtype(), v->shape()));
    f->epoch = file.create_rows("epoch", DType::int64, Shape{});
    file.flush();
  }
  file_ = std::move(f);
}

void WeightHistory::on_epoch_end(int epoch, Logs&) {
  if ((epoch + 1) % every_ != 0) return;
  KCPP_CHECK(file_ != nullptr, ValueError, "WeightHistory: on_epoch_end before on_train_begin (\"", filename_, "\").");
  File& f = *file_;
  for (size_t i = 0; i < f.vars.size(); ++i)
    f.weights[i].append(f.vars[i]->value().copy());  // a copy: consistent if another thread assigns
  Tensor e = Tensor::empty({}, DType::int64);
  *static_cast<int64_t*>(e.raw_data()) = epoch;
  f.epoch.append(e);
  f.rows += 1;
  f.file.flush();
}

void WeightHistory::on_train_end(Logs&) {
  file_.reset();  // closes the datasets, then the file
}

}  // namespace kerascpp::callbacks
