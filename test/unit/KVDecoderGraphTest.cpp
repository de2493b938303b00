//===- KVDecoderGraphTest.cpp - exported decoders with a KV cache ---------===//
//
// recognizeKVDecoder and bindKVDecoderDims on graph signatures written
// here: what an exporter's graph looks like, and the forms refused.
//
//===----------------------------------------------------------------------===//

#include "afm/Compiler/KVDecoderGraph.h"

#include "gtest/gtest.h"

using namespace mlir::afm;

namespace {

using Dim = ONNXValueSignature::Dim;

ONNXValueSignature value(const std::string &name, const std::string &type,
                         std::vector<Dim> dims) {
  ONNXValueSignature v;
  v.name = name;
  v.elementType = type;
  v.hasShape = true;
  v.dims = std::move(dims);
  return v;
}

Dim sym(const std::string &name) { return Dim{-1, name}; }
Dim size(int64_t n) { return Dim{n, ""}; }

/// optimum's Llama export with `layers` layers, 2 KV heads of 16.
ONNXGraphSignature exported(int layers = 2) {
  ONNXGraphSignature s;
  s.inputs.push_back(
      value("input_ids", "INT64", {sym("batch_size"), sym("sequence_length")}));
  s.inputs.push_back(value("attention_mask", "INT64",
                           {sym("batch_size"), sym("total_sequence_length")}));
  s.inputs.push_back(value("position_ids", "INT64",
                           {sym("batch_size"), sym("sequence_length")}));
  s.outputs.push_back(value(
      "logits", "FLOAT",
      {sym("batch_size"), sym("sequence_length"), size(256)}));
  for (int layer = 0; layer < layers; ++layer)
    for (const char *part : {".key", ".value"}) {
      std::string suffix = std::to_string(layer) + part;
      s.inputs.push_back(value("past_key_values." + suffix, "FLOAT",
                               {sym("batch_size"), size(2),
                                sym("past_sequence_length"), size(16)}));
      s.outputs.push_back(value("present." + suffix, "FLOAT",
                                {sym("batch_size"), size(2),
                                 sym("total_sequence_length"), size(16)}));
    }
  return s;
}

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : std::string();
}

std::string recognizeError(const ONNXGraphSignature &s) {
  auto r = recognizeKVDecoder(s);
  return r ? std::string() : llvm::toString(r.takeError());
}

TEST(KVDecoderGraph, RecognizesTheExportersForm) {
  auto r = recognizeKVDecoder(exported());
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_TRUE(r->has_value());
  const KVDecoderInterface &iface = **r;
  EXPECT_EQ(iface.inputIds, 0u);
  EXPECT_EQ(iface.attentionMask, 1u);
  EXPECT_EQ(iface.positionIds, 2u);
  EXPECT_EQ(iface.vocab, 256);
  ASSERT_EQ(iface.caches.size(), 4u);
  EXPECT_EQ(iface.caches[0].pastInput, 3u);
  EXPECT_EQ(iface.caches[0].presentOutput, 1u);
  EXPECT_EQ(iface.caches[3].pastInput, 6u);
  EXPECT_EQ(iface.caches[3].presentOutput, 4u);
  // 4 buffers of 2 heads x 64 slots x 16 floats.
  EXPECT_EQ(iface.arenaBytes(64), 4 * 2 * 64 * 16 * 4);
  // Sizes a hostile graph or option can give overflow to -1.
  EXPECT_EQ(iface.arenaBytes(int64_t(1) << 60), -1);
}

TEST(KVDecoderGraph, AStatelessGraphIsNotOne) {
  ONNXGraphSignature s;
  s.inputs.push_back(value("input_ids", "INT64", {size(1), size(8)}));
  s.outputs.push_back(value("logits", "FLOAT", {size(1), size(8), size(9)}));
  auto r = recognizeKVDecoder(s);
  ASSERT_TRUE(bool(r));
  EXPECT_FALSE(r->has_value());
}

TEST(KVDecoderGraph, BindsEachEntryPoint) {
  ONNXGraphSignature s = exported();
  auto iface = **recognizeKVDecoder(s);
  auto prefill = bindKVDecoderDims(s, iface, 8, 64, {});
  ASSERT_TRUE(bool(prefill)) << llvm::toString(prefill.takeError());
  EXPECT_EQ(prefill->lookup("batch_size"), 1);
  EXPECT_EQ(prefill->lookup("sequence_length"), 8);
  EXPECT_EQ(prefill->lookup("past_sequence_length"), 64);
  EXPECT_EQ(prefill->lookup("total_sequence_length"), 72);
  auto decode = bindKVDecoderDims(s, iface, 1, 64, {{"unrelated", 3}});
  ASSERT_TRUE(bool(decode)) << llvm::toString(decode.takeError());
  EXPECT_EQ(decode->lookup("sequence_length"), 1);
  EXPECT_EQ(decode->lookup("total_sequence_length"), 65);
  EXPECT_EQ(decode->lookup("unrelated"), 3);
}

TEST(KVDecoderGraph, RefusesANameWithTwoSizes) {
  // The past and the total share a name: they differ by the rows.
  ONNXGraphSignature s = exported(1);
  s.inputs[1].dims[1] = sym("past_sequence_length");
  auto iface = **recognizeKVDecoder(s);
  EXPECT_EQ(errorOf(bindKVDecoderDims(s, iface, 1, 64, {}).takeError()),
            "ONNX decoder with a KV cache: the symbolic dimension "
            "'past_sequence_length' is both 65 (attention_mask dimension 1) "
            "and 64 (past_key_values.0.key dimension 2)");
}

TEST(KVDecoderGraph, RefusesAStaticSequenceThatDoesNotFit) {
  ONNXGraphSignature s = exported(1);
  s.inputs[0].dims[1] = size(1); // a decode-only graph
  auto iface = **recognizeKVDecoder(s);
  EXPECT_TRUE(bool(bindKVDecoderDims(s, iface, 1, 64, {})));
  EXPECT_EQ(errorOf(bindKVDecoderDims(s, iface, 8, 64, {}).takeError()),
            "ONNX decoder with a KV cache: input_ids dimension 1 is 1; an "
            "entry of 8 row(s) over a context of 64 needs it symbolic or 8");
}

TEST(KVDecoderGraph, RefusesSymbolicHeads) {
  ONNXGraphSignature s = exported(1);
  s.inputs[3].dims[1] = sym("heads");
  EXPECT_EQ(recognizeError(s),
            "ONNX decoder with a KV cache: input past_key_values.0.key FLOAT "
            "['batch_size', 'heads', 'past_sequence_length', 16]: the "
            "kv_heads and head_dim dimensions must be sizes");
}

TEST(KVDecoderGraph, RefusesAMissingMask) {
  ONNXGraphSignature s = exported(1);
  s.inputs.erase(s.inputs.begin() + 1);
  EXPECT_EQ(recognizeError(s),
            "ONNX decoder with a KV cache: it needs the inputs input_ids and "
            "attention_mask (the mask hides the cache's unfilled slots)");
}

TEST(KVDecoderGraph, RefusesAPastWithoutPresent) {
  ONNXGraphSignature s = exported(1);
  s.outputs.pop_back();
  EXPECT_EQ(recognizeError(s),
            "ONNX decoder with a KV cache: input 'past_key_values.0.value' "
            "has no output 'present.0.value'");
}

TEST(KVDecoderGraph, RefusesAPresentOfOtherHeads) {
  ONNXGraphSignature s = exported(1);
  s.outputs[1].dims[1] = size(4);
  EXPECT_NE(recognizeError(s).find("output present.0.key FLOAT "
                                   "['batch_size', 4, "
                                   "'total_sequence_length', 16] does not "
                                   "extend input past_key_values.0.key"),
            std::string::npos);
}

TEST(KVDecoderGraph, RefusesUnknownInputsAndOutputs) {
  ONNXGraphSignature s = exported(1);
  s.inputs.push_back(value("token_type_ids", "INT64", {sym("b"), sym("s")}));
  EXPECT_NE(recognizeError(s).find("input token_type_ids INT64 ['b', 's']: "
                                   "not an input of a decoder with a KV "
                                   "cache"),
            std::string::npos);
  s = exported(1);
  s.outputs.push_back(value("hidden", "FLOAT", {size(1)}));
  EXPECT_EQ(recognizeError(s),
            "ONNX decoder with a KV cache: output 'hidden' is not the logits "
            "or the present of a past_key_values input");
  s = exported(1);
  std::swap(s.outputs[0], s.outputs[1]);
  EXPECT_EQ(recognizeError(s), "ONNX decoder with a KV cache: its first "
                               "output must be the logits");
}

TEST(KVDecoderGraph, RefusesOtherElementTypes) {
  ONNXGraphSignature s = exported(1);
  s.inputs[3].elementType = "FLOAT16";
  EXPECT_NE(recognizeError(s).find("expected FLOAT [batch, kv_heads, past, "
                                   "head_dim]"),
            std::string::npos);
  s = exported(1);
  s.inputs[1].elementType = "FLOAT";
  EXPECT_NE(recognizeError(s).find("expected INT64 or INT32 [batch, length]"),
            std::string::npos);
}

} // namespace
