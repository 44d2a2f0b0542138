// tinyblock - TinyBlock's training step, run for --steps steps.
//
// The model is samples/tinyblock/tinyblock.hpp (Linear -> LayerNorm -> GELU
// -> Dropout -> Linear, over a temperature buffer), trained with AdamW (lr
// 0.01) and cross entropy on synthetic batches: x = randn(32, 3) from a
// generator seeded with --seed, target = 1 iff x0 + x1 > 0. Each step is the
// seed's sequence: forward, loss, backward, optimizer.step(),
// zero_grad(set_to_none). Every step prints "step k/N loss L"; the summary
// gives the loss of a fixed evaluation batch (dropout off) before and after
// training - "loss decreased: yes" is what the ctest entry matches, since the
// per-step losses are noisy (dropout, a new batch each step). --save PATH
// writes the model's and the optimizer's checkpoints (safetensors). Exit
// status: 0 when the evaluation loss decreased, 1 when not, 2 on an error.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "common/options.hpp"
#include "common/progress.hpp"
#include "tessera/nn.hpp"
#include "tessera/optim.hpp"
#include "tessera/serialize/checkpoint.hpp"
#include "tessera/tessera.hpp"
#include "tinyblock.hpp"

namespace {

using tessera::Tensor;

struct Batch {
  Tensor x;
  Tensor target;
};

// x ~ N(0, 1); target = 1 iff x0 + x1 > 0 (int64 class indices).
Batch make_batch(int64_t size, const tessera::Generator& generator) {
  const Tensor x = tessera::randn({size, 3}, generator);
  const Tensor target = tessera::gt(x.select(1, 0) + x.select(1, 1), 0).to(tessera::kInt64);
  return {x, target};
}

// The optimizer's checkpoint lies next to the model's: model.safetensors ->
// model.optim.safetensors; any other name gets ".optim" appended.
std::string optimizer_path(const std::string& model_path) {
  const std::string ext = ".safetensors";
  if (model_path.size() > ext.size() &&
      model_path.compare(model_path.size() - ext.size(), ext.size(), ext) == 0)
    return model_path.substr(0, model_path.size() - ext.size()) + ".optim" + ext;
  return model_path + ".optim";
}

double eval_loss(tinyblock::TinyBlock& model, const Batch& batch) {
  tessera::autograd::NoGradGuard no_grad;
  model.eval();
  const double loss = tessera::cross_entropy(model(batch.x), batch.target).item<double>();
  model.train();
  return loss;
}

int run(const samples::CommonOptions& common, int64_t steps, const std::string& save_path) {
  const tessera::Device device = samples::apply_common_options(common);
  tessera::Generator generator(common.seed);

  auto model = std::make_shared<tinyblock::TinyBlock>();
  model->to(device);
  tessera::optim::AdamW optimizer(model->parameters(), {.lr = 0.01});

  Batch eval = make_batch(256, generator);
  eval.x = eval.x.to(device);
  eval.target = eval.target.to(device);
  const double eval_before = eval_loss(*model, eval);

  double first_loss = 0;
  double last_loss = 0;
  samples::Progress progress("train", steps, common.quiet, 10);
  samples::Stopwatch clock;
  for (int64_t step = 1; step <= steps; ++step) {
    const Batch batch = make_batch(32, generator);
    const Tensor logits = (*model)(batch.x.to(device));
    Tensor loss = tessera::cross_entropy(logits, batch.target.to(device));
    loss.backward();
    optimizer.step();
    optimizer.zero_grad(/*set_to_none=*/true);
    last_loss = loss.item<double>();
    if (step == 1) first_loss = last_loss;
    progress.print_line(samples::format("step %lld/%lld loss %.4f", static_cast<long long>(step),
                                        static_cast<long long>(steps), last_loss));
    progress.update(step, samples::format("loss %.4f", last_loss));
  }
  tessera::synchronize(device);
  const double seconds = clock.seconds();
  progress.finish();
  const double eval_after = eval_loss(*model, eval);

  samples::Summary summary("tinyblock summary");
  summary.add("device", device.str())
      .add("steps", std::to_string(steps))
      .add("first step loss", samples::format("%.4f", first_loss))
      .add("last step loss", samples::format("%.4f", last_loss))
      .add("eval loss before", samples::format("%.4f", eval_before))
      .add("eval loss after", samples::format("%.4f", eval_after))
      .add("loss decreased", eval_after < eval_before ? "yes" : "no")
      .add("time", samples::format("%.3f s", seconds))
      .add("steps/s", samples::format("%.1f", static_cast<double>(steps) / seconds));
  if (!save_path.empty()) {
    const std::string optim_path = optimizer_path(save_path);
    tessera::serialize::save(*model, save_path);
    tessera::serialize::save(optimizer, optim_path);
    summary.add("saved", save_path + ", " + optim_path);
  }
  summary.print();
  return eval_after < eval_before ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tinyblock: the TinyBlock model trained with AdamW on synthetic batches"};
  samples::CommonOptions common;
  samples::add_common_options(app, common);
  int64_t steps = 50;
  std::string save_path;
  app.add_option("--steps", steps, "Training steps")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
      ->capture_default_str();
  app.add_option("--save", save_path,
                 "Write the model's checkpoint to PATH and the optimizer's next to it "
                 "(PATH.optim, or NAME.optim.safetensors for NAME.safetensors)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(common, steps, save_path);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tinyblock: %s\n", error.what());
    return 2;
  }
}
