// How many threads kerascpp computes with: its own big loops (elementwise kernels, pooling gradients)
// and oneDNN's convolutions on OpenMP's threads (one pool, libgomp), and OpenBLAS's products. Keras
// users know it as tf.config.threading.set_intra_op_parallelism_threads.
//
//   kerascpp::set_num_threads(1);   // a server that runs one model per core
//
// 0 (the default) leaves it to the environment: KERASCPP_NUM_THREADS when set, else OpenMP's
// (OMP_NUM_THREADS, else every core). Set it before or between calls; calls already running keep the
// count they started with, and a layer's convolution plan the count it was made with (oneDNN sizes
// its blocking by it): set it before a model's first call. Small calls run on the calling thread
// alone whatever the setting.
#pragma once

namespace kerascpp {

void set_num_threads(int n);  // n >= 0; ValueError for a negative count
// The count set (or KERASCPP_NUM_THREADS's), or 0 when the environment's OpenMP default applies.
int num_threads();

}  // namespace kerascpp
