//===- ExampleModel.h - small random models for tests and demos -*- C++ -*-===//
//
// Named example configs and reproducible random weights for any config, so
// that tests and demos can build a model without downloading one.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_EXAMPLEMODEL_H
#define AFM_MODEL_EXAMPLEMODEL_H

#include "afm/Model/ModelConfig.h"
#include "afm/Model/SafeTensors.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

/// The names of the example presets, e.g. "tiny-dense".
std::vector<llvm::StringRef> examplePresetNames();

/// The config of preset `name`; an error listing the presets otherwise.
llvm::Expected<ModelConfig> examplePresetConfig(llvm::StringRef name);

/// How one tensor of an example model is drawn: N(mean, stddev^2) values
/// from the seed's stream, starting at its `firstDraw`-th 64-bit draw
/// (each value takes two).
struct ExampleTensorPlan {
  std::string name;
  std::vector<int64_t> shape;
  double mean = 0.0, stddev = 1.0;
  uint64_t firstDraw = 0;

  int64_t numElements() const;
};

/// The tensors of `config` in file order, each with its distribution.
std::vector<ExampleTensorPlan> planExampleTensors(const ModelConfig &config);

/// Elements [begin, begin + out.size()) of `plan`'s tensor: the same
/// values whatever the pieces, so a large tensor can be generated in
/// pieces and on several threads.
void generateExampleValues(const ExampleTensorPlan &plan, uint64_t seed,
                           int64_t begin, llvm::MutableArrayRef<float> out);

/// Random F32 weights for every tensor of `expectedTensors(config)`, in that
/// order, from one SplitMix64 stream seeded with `seed`: the embeddings
/// 0.1 * N(0, 1) (small next to what the layers add, so greedy tokens vary),
/// projection matrices (including an untied LM head, routers and stacked
/// experts) N(0, 1 / fan_in) with fan_in = the last dimension, the input
/// width, and norm weights 1 + 0.1 * N(0, 1). The same config and seed give
/// the same bits on every machine.
std::vector<SafeTensor> generateExampleWeights(const ModelConfig &config,
                                               uint64_t seed);

/// Sets every element of each tensor whose name contains `substring` to
/// zero, leaving the other tensors as they are; returns how many tensors
/// it zeroed. (A zero router sends every token to experts 0..k-1.)
int64_t zeroTensors(std::vector<SafeTensor> &tensors,
                    llvm::StringRef substring);

} // namespace mlir::afm

#endif // AFM_MODEL_EXAMPLEMODEL_H
