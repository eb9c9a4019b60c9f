// Test-only: K training steps of a checkpoint on one fixed batch, with model/optim.hpp's
// train_step, for test_parity.py to compare against torch.optim.AdamW.
//
//   parity_train --checkpoint CK.h5 --batch IN.h5 --out CK2.h5 --steps-run K --steps S
//                --warmup W --schedule cosine --lr LR --weight-decay WD --clip C [--spline-lr SLR]
//
// Prints one line per step: "step s loss L grad_norm G lr X" (before the update, as StepResult).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "common/batch_file.hpp"
#include "model/checkpoint.hpp"
#include "model/optim.hpp"

namespace po = boost::program_options;
using namespace srbench::model;

int main(int argc, char** argv) {
  std::string checkpoint, batch_path, out, schedule = "cosine";
  int64_t run = 1;
  TrainSettings st;
  po::options_description opts("parity_train: K AdamW steps on one batch (test tool)\n\noptions");
  opts.add_options()
      ("help,h", "show this help")
      ("checkpoint", po::value(&checkpoint)->required(), "checkpoint to start from")
      ("batch", po::value(&batch_path)->required(), "batch file (`tokens`, `targets`, optional `lengths`)")
      ("out", po::value(&out)->required(), "checkpoint to write after the steps")
      ("steps-run", po::value(&run)->default_value(1), "K: steps to take (s = 0..K-1)")
      ("steps", po::value(&st.steps)->required(), "S: total steps of the schedule")
      ("warmup", po::value(&st.warmup)->required(), "W: warm-up steps")
      ("schedule", po::value(&schedule)->default_value("cosine"), "cosine | linear | constant")
      ("lr", po::value(&st.lr)->required(), "base learning rate")
      ("weight-decay", po::value(&st.weight_decay)->required(), "weight decay (matrices, embeddings)")
      ("clip", po::value(&st.clip)->required(), "global-norm clip (<= 0: none)")
      ("spline-lr", po::value(&st.spline_lr)->default_value(1e-2), "the splines' base learning rate")
      ("router-lr", po::value(&st.router_lr)->default_value(1e-2), "LIMe's routers' base learning rate");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    if (vm.count("help")) {
      std::cout << opts;
      return 0;
    }
    po::notify(vm);
    st.schedule = parse_schedule(schedule);
    Model model = load_checkpoint(checkpoint);
    const srbench::TokenBatch batch = srbench::read_token_batch(batch_path, model.config().vocab, model.config().max_len);
    AdamW opt(model.layout());
    for (int64_t s = 0; s < run; ++s) {
      const StepResult r = train_step(model, opt, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, s, st,
                                      batch.rows());
      std::printf("step %lld loss %.17g grad_norm %.17g lr %.17g finite %d\n", static_cast<long long>(s), r.loss,
                  r.grad_norm, r.lr, r.finite ? 1 : 0);
      if (!r.finite) {
        std::fprintf(stderr, "parity_train: step %lld is not finite\n", static_cast<long long>(s));
        return 1;
      }
    }
    save_checkpoint(model, out);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity_train: %s\n", e.what());
    return 2;
  }
}
