// A run's peak memory, estimated before anything runs (docs/harness.md, "What survives what"):
// what a run process holds at its largest — the parameters, the optimiser state (gradients and
// AdamW's two moments), the activations the model keeps for the backward pass, and the
// workspaces (one layer's gradients, attention scratch, logits and their gradient) — at the
// largest batch and sequence length it meets: its training batches (train.batch examples of its
// longest training length) and its evaluation batches (64 examples of its longest evaluation
// length, shifts included). The sweep refuses a suite whose runs cannot fit in the machine's
// memory divided by --jobs, naming the entry and the estimate; `--dry-run` prints the estimates.
//
// The model reports what a call allocates (model/memory.hpp), every variant's buffers included;
// for P parameters (float32):
//   parameters   4P;  optimiser 12P (gradients, AdamW m and v)
//   activations  a transformer's saved activations for a training batch (forward_backward_memory)
//   workspaces   its other buffers and the logits for that batch, and beside them what a
//                forward-only evaluation batch allocates (infer_memory)
//   process      64 MiB for the binary, its libraries, the data and evaluation sets
// A recurrent arch (recurrent.md) counts its whole workspace as activations, for a training batch
// with gradients plus for an evaluation batch without (its buffers only grow, and what growing
// frees stays with the process), as workspaces the logits, their gradient, the losses and
// sgemm's packing buffers.
// An estimate, not a bound: the measured peak of a run stays below it, by a factor of up to 3
// for a transformer and 1.3-1.5 for lstm and stack_rnn (tests/harness/test_resources.cpp).
// A spline search counts its population's models each in full (estimate_search_memory).
#pragma once

#include <cstdint>
#include <string>

#include "harness/core/specs.hpp"

namespace srbench::harness {

struct MemoryEstimate {
  uint64_t parameters = 0, optimiser = 0, activations = 0, workspaces = 0, process = 0;
  int64_t batch = 0, tokens = 0;  // the batch whose activations are held: B examples of T tokens
  uint64_t total() const { return parameters + optimiser + activations + workspaces + process; }
};

// The estimate for one run (its resolved model, task, training and evaluation settings), with
// `threads` OpenMP threads.
MemoryEstimate estimate_memory(const RunSpec& run, int threads = 1);

// The estimate for one spline search (stage 1): its population of M models, each with its own
// parameters, optimiser state and buffers, at the search's training batch and its validation
// batches (64 examples of the training lengths): M times a run's terms, one process.
MemoryEstimate estimate_search_memory(const SearchSpec& search, int threads = 1);

// "1.5 GiB", "312 MiB", "13.2 TiB".
std::string bytes_text(uint64_t bytes);

// "3.1 GiB (parameters 12 MiB, optimiser 36 MiB, activations 2.9 GiB at 64 × 130 tokens, workspaces 80 MiB)".
std::string describe_estimate(const MemoryEstimate& e);

// The memory this machine gives a process: MemTotal of /proc/meminfo, or the cgroup's memory.max
// when that is lower; 0 when neither can be read.
uint64_t machine_memory();

}  // namespace srbench::harness
