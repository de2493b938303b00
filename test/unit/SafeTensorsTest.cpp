//===- SafeTensorsTest.cpp - .safetensors writer, reader, validation ------===//

#include "ModelTestSupport.h"

#include "afm/Model/HalfFloat.h"
#include "afm/Model/SafeTensors.h"

#include "llvm/Support/FileSystem.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
SafeTensor rawTensor(llvm::StringRef name, DType dtype,
                     std::vector<int64_t> shape, std::vector<uint8_t> data) {
  return SafeTensor{name.str(), dtype, std::move(shape), std::move(data)};
}

/// Tensors of every dtype, a scalar and an empty tensor.
std::vector<SafeTensor> sampleTensors() {
  return {
      SafeTensor::fromF32("weight", {2, 3}, {1, -2, 3.5f, 0, 1e-30f, -7}),
      // F16 1.0, -2.0; BF16 1.0, -5.0 (little-endian bit patterns).
      rawTensor("half", DType::F16, {2}, {0x00, 0x3c, 0x00, 0xc0}),
      rawTensor("brain", DType::BF16, {1, 2}, {0x80, 0x3f, 0xa0, 0xc0}),
      SafeTensor::fromF32("scalar", {}, {42}),
      SafeTensor::fromF32("empty", {0, 5}, {}),
  };
}

TEST(SafeTensors, RoundTripKeepsNamesDtypesShapesBytesAndMetadata) {
  std::vector<SafeTensor> tensors = sampleTensors();
  llvm::Expected<std::string> bytes =
      serializeSafeTensors(tensors, {{"format", "pt"}});
  ASSERT_TRUE(bool(bytes)) << errorText(bytes);
  llvm::Expected<SafeTensorsFile> file = openBytes(*bytes);
  ASSERT_TRUE(bool(file)) << errorText(file);

  EXPECT_THAT(file->names(),
              ElementsAre("weight", "half", "brain", "scalar", "empty"));
  EXPECT_EQ(file->metadata().at("format"), "pt");
  for (const SafeTensor &tensor : tensors) {
    const TensorInfo *info = file->lookup(tensor.name);
    ASSERT_NE(info, nullptr) << tensor.name;
    EXPECT_EQ(info->dtype, tensor.dtype) << tensor.name;
    EXPECT_EQ(info->shape, tensor.shape) << tensor.name;
    llvm::ArrayRef<uint8_t> data = file->bytes(*info);
    EXPECT_EQ(std::vector<uint8_t>(data.begin(), data.end()), tensor.data)
        << tensor.name;
  }
  EXPECT_EQ(file->lookup("nothing"), nullptr);
  EXPECT_THAT(*file->toF32("weight"), ElementsAre(1, -2, 3.5f, 0, 1e-30f, -7));
  EXPECT_THAT(*file->toF32("half"), ElementsAre(1.0f, -2.0f));
  EXPECT_THAT(*file->toF32("brain"), ElementsAre(1.0f, -5.0f));
  EXPECT_THAT(*file->toF32("scalar"), ElementsAre(42.0f));
  EXPECT_TRUE(file->toF32("empty")->empty());
}

TEST(SafeTensors, HeaderIsPaddedWithSpacesToAMultipleOf8) {
  for (size_t nameLength = 1; nameLength <= 8; ++nameLength) {
    llvm::Expected<std::string> bytes = serializeSafeTensors(
        {SafeTensor::fromF32(std::string(nameLength, 'w'), {1}, {1})});
    ASSERT_TRUE(bool(bytes)) << errorText(bytes);
    uint64_t headerSize = llvm::support::endian::read64le(bytes->data());
    EXPECT_EQ(headerSize % 8, 0u);
    EXPECT_EQ(bytes->size(), 8 + headerSize + 4);
    llvm::StringRef header = llvm::StringRef(*bytes).substr(8, headerSize);
    EXPECT_TRUE(header.rtrim(' ').ends_with("}"));
  }
}

TEST(SafeTensors, WriteThenOpenAFile) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("afm-test", "safetensors",
                                                  path));
  ASSERT_EQ(errorText(writeSafeTensors(path, sampleTensors())), "");
  llvm::Expected<SafeTensorsFile> file = SafeTensorsFile::open(path);
  ASSERT_TRUE(bool(file)) << errorText(file);
  EXPECT_EQ(file->path(), path);
  EXPECT_EQ(file->tensors().size(), 5u);
  EXPECT_TRUE(file->metadata().empty());
  llvm::sys::fs::remove(path);
}

TEST(SafeTensors, OpenNamesAMissingFile) {
  llvm::Expected<SafeTensorsFile> file =
      SafeTensorsFile::open("/nonexistent/model.safetensors");
  EXPECT_THAT(errorText(file),
              HasSubstr("/nonexistent/model.safetensors: cannot read"));
}

TEST(SafeTensorsWriter, RejectsBadTensors) {
  llvm::Expected<std::string> repeated =
      serializeSafeTensors({SafeTensor::fromF32("a", {1}, {1}),
                            SafeTensor::fromF32("a", {1}, {2})});
  EXPECT_EQ(errorText(repeated), "tensor 'a' is given twice");
  llvm::Expected<std::string> reserved =
      serializeSafeTensors({SafeTensor::fromF32("__metadata__", {1}, {1})});
  EXPECT_THAT(errorText(reserved), HasSubstr("'__metadata__' is reserved"));
  llvm::Expected<std::string> wrongSize =
      serializeSafeTensors({SafeTensor::fromF32("a", {2, 2}, {1, 2, 3})});
  EXPECT_EQ(errorText(wrongSize),
            "tensor 'a' has 12 bytes of data but shape [2, 2] of F32 needs 16");
}

/// The specs of `tensors`, for the stream writer.
std::vector<SafeTensorSpec> specsOf(const std::vector<SafeTensor> &tensors) {
  std::vector<SafeTensorSpec> specs;
  for (const SafeTensor &t : tensors)
    specs.push_back({t.name, t.dtype, t.shape});
  return specs;
}

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

// Streamed in pieces of 3 bytes (across tensor boundaries), a file is the
// bytes serializeSafeTensors makes of the same tensors and metadata.
TEST(SafeTensorsStreamWriter, PiecesGiveTheSerializedFile) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("afm-stream", "safetensors",
                                                  path));
  std::vector<SafeTensor> tensors = sampleTensors();
  std::map<std::string, std::string> metadata = {{"k", "v"}};
  auto writer = SafeTensorsStreamWriter::create(path, specsOf(tensors),
                                                metadata);
  ASSERT_TRUE(bool(writer)) << errorText(writer);
  std::vector<uint8_t> data;
  for (const SafeTensor &t : tensors)
    data.insert(data.end(), t.data.begin(), t.data.end());
  for (size_t i = 0; i < data.size(); i += 3)
    ASSERT_EQ(errorText((*writer)->append(llvm::ArrayRef<uint8_t>(data).slice(
                  i, std::min<size_t>(3, data.size() - i)))),
              "");
  ASSERT_EQ(errorText((*writer)->finish()), "");
  llvm::Expected<std::string> expected = serializeSafeTensors(tensors, metadata);
  ASSERT_TRUE(bool(expected));
  EXPECT_EQ(readFile(path), *expected);
  llvm::sys::fs::remove(path);
}

// Bad specs, too much data and an incomplete tensor are errors naming the
// file; a writer that did not finish leaves no file behind.
TEST(SafeTensorsStreamWriter, RejectsBadSpecsAndData) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("afm-stream", dir));
  std::string path = (dir + "/m.safetensors").str();
  auto twice = SafeTensorsStreamWriter::create(
      path, {{"a", DType::F32, {1}}, {"a", DType::F32, {1}}});
  EXPECT_EQ(errorText(twice), path + ": tensor 'a' is given twice");
  auto reserved =
      SafeTensorsStreamWriter::create(path, {{"__metadata__", DType::F32, {1}}});
  EXPECT_THAT(errorText(reserved), HasSubstr("'__metadata__' is reserved"));
  {
    auto writer = SafeTensorsStreamWriter::create(path, {{"a", DType::F32, {1}}});
    ASSERT_TRUE(bool(writer));
    std::vector<uint8_t> five(5, 0);
    EXPECT_EQ(errorText((*writer)->append(five)),
              path + ": more data than the 1 tensors of the header hold");
  }
  {
    auto writer =
        SafeTensorsStreamWriter::create(path, {{"a", DType::F32, {2}}});
    ASSERT_TRUE(bool(writer));
    std::vector<uint8_t> four(4, 0);
    EXPECT_EQ(errorText((*writer)->append(four)), "");
    EXPECT_EQ(errorText((*writer)->finish()),
              path + ": tensor 'a' is incomplete");
  }
  EXPECT_FALSE(llvm::sys::fs::exists(path));
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(dir, ec);
  EXPECT_EQ(it, llvm::sys::fs::directory_iterator()) << "a temporary file is left";
  llvm::sys::fs::remove_directories(dir);
}

/// The error of opening `bytes` as "m.safetensors".
std::string openError(llvm::StringRef bytes) {
  llvm::Expected<SafeTensorsFile> file = openBytes(bytes, "m.safetensors");
  return errorText(file);
}

/// A header holding one tensor 't' with the given JSON fields.
std::string oneTensor(llvm::StringRef dtype, llvm::StringRef shape,
                      llvm::StringRef offsets) {
  return (R"({"t": {"dtype": ")" + dtype + R"(", "shape": )" + shape +
          R"(, "data_offsets": )" + offsets + "}}")
      .str();
}

TEST(SafeTensorsReader, TruncatedHeaderLength) {
  EXPECT_EQ(openError(llvm::StringRef("\x08\0\0\0", 4)),
            "m.safetensors: truncated: 4 bytes is too short for the 8-byte "
            "header length");
}

TEST(SafeTensorsReader, HeaderLengthPastTheEndOfTheFile) {
  std::string bytes = rawSafeTensors("{}");
  llvm::support::endian::write64le(bytes.data(), 1000);
  EXPECT_EQ(openError(bytes), "m.safetensors: header length 1000 runs past "
                              "the end of the file (2 bytes follow the "
                              "length field)");
  llvm::support::endian::write64le(bytes.data(), ~uint64_t(0));
  EXPECT_THAT(openError(bytes), HasSubstr("runs past the end of the file"));
}

TEST(SafeTensorsReader, HeaderThatIsNotAJSONObject) {
  EXPECT_THAT(openError(rawSafeTensors("{\"a\": ")),
              HasSubstr("m.safetensors: header is not valid JSON"));
  EXPECT_EQ(openError(rawSafeTensors("[]")),
            "m.safetensors: header is not a JSON object");
}

TEST(SafeTensorsReader, EmptyHeaderObjectIsAnEmptyFile) {
  llvm::Expected<SafeTensorsFile> file = openBytes(rawSafeTensors("{}  "));
  ASSERT_TRUE(bool(file)) << errorText(file);
  EXPECT_TRUE(file->tensors().empty());
}

TEST(SafeTensorsReader, UnsupportedDtypeNamesTensorAndDtype) {
  EXPECT_EQ(openError(rawSafeTensors(oneTensor("I8", "[2]", "[0, 2]"), "ab")),
            "m.safetensors: tensor 't': dtype 'I8' is not supported "
            "(supported: F32, F16, BF16)");
}

TEST(SafeTensorsReader, MalformedEntries) {
  EXPECT_THAT(openError(rawSafeTensors(R"({"t": 3})")),
              HasSubstr("tensor 't': expected an object"));
  EXPECT_THAT(openError(rawSafeTensors(
                  R"({"t": {"shape": [1], "data_offsets": [0, 4]}})", "abcd")),
              HasSubstr("tensor 't': missing string 'dtype'"));
  EXPECT_THAT(
      openError(rawSafeTensors(oneTensor("F32", "[-1]", "[0, 4]"), "abcd")),
      HasSubstr("tensor 't': 'shape' must be an array of non-negative "
                "integers"));
  EXPECT_THAT(
      openError(rawSafeTensors(oneTensor("F32", "[1]", "[0]"), "abcd")),
      HasSubstr("tensor 't': 'data_offsets' must be [begin, end]"));
  EXPECT_THAT(openError(rawSafeTensors(R"({"__metadata__": {"k": 1}})")),
              HasSubstr("'__metadata__' entry 'k' is not a string"));
}

TEST(SafeTensorsReader, OffsetsOutsideTheDataArea) {
  EXPECT_EQ(openError(rawSafeTensors(oneTensor("F32", "[4]", "[0, 16]"),
                                     "12345678")),
            "m.safetensors: tensor 't': data_offsets [0, 16] are outside the "
            "data area (8 bytes)");
  EXPECT_THAT(openError(rawSafeTensors(oneTensor("F32", "[0]", "[8, 4]"),
                                       "12345678")),
              HasSubstr("data_offsets [8, 4] are outside the data area"));
}

TEST(SafeTensorsReader, ByteCountMustMatchShapeAndDtype) {
  EXPECT_EQ(openError(rawSafeTensors(oneTensor("F32", "[3]", "[0, 8]"),
                                     "12345678")),
            "m.safetensors: tensor 't': data_offsets cover 8 bytes but shape "
            "[3] of F32 needs 12");
  EXPECT_THAT(openError(rawSafeTensors(
                  oneTensor("F16", "[4294967296, 4294967296]", "[0, 8]"),
                  "12345678")),
              HasSubstr("needs more than 2^63"));
}

TEST(SafeTensorsReader, OverlappingTensorsAreRejected) {
  EXPECT_EQ(
      openError(rawSafeTensors(
          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
              "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
          "123456789abc")),
      "m.safetensors: tensors 'a' [0, 8] and 'b' [4, 12] overlap");
}

TEST(SafeTensorsReader, FileOrderIsDataOrderAndGapsAreAllowed) {
  llvm::Expected<SafeTensorsFile> file = openBytes(rawSafeTensors(
      R"({"z": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]},
          "a": {"dtype": "F16", "shape": [1], "data_offsets": [4, 6]},
          "e": {"dtype": "F16", "shape": [0], "data_offsets": [4, 4]}})",
      llvm::StringRef("\x00\x3c..\x00\xc0", 6)));
  ASSERT_TRUE(bool(file)) << errorText(file);
  EXPECT_THAT(file->names(), ElementsAre("z", "e", "a"));
  EXPECT_THAT(*file->toF32("a"), ElementsAre(-2.0f));
}

TEST(SafeTensorsReader, ToF32OfAMissingTensorIsAnError) {
  llvm::Expected<SafeTensorsFile> file = openBytes(rawSafeTensors("{}"));
  ASSERT_TRUE(bool(file));
  llvm::Expected<std::vector<float>> values = file->toF32("w");
  EXPECT_EQ(errorText(values), "test.safetensors: no tensor named 'w'");
}

TEST(HalfFloat, F16KnownValuesWidenExactly) {
  EXPECT_EQ(f16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(f16ToF32(0xc000), -2.0f);
  EXPECT_EQ(f16ToF32(0x3555), 0.333251953125f); // 1365 / 4096
  EXPECT_EQ(f16ToF32(0x7bff), 65504.0f);        // Largest finite.
  EXPECT_EQ(f16ToF32(0x0400), std::ldexp(1.0f, -14)); // Smallest normal.
  EXPECT_EQ(f16ToF32(0x0001), std::ldexp(1.0f, -24)); // Smallest subnormal.
  EXPECT_EQ(f16ToF32(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(f16ToF32(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(f16ToF32(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(f16ToF32(0x8000)));
  EXPECT_EQ(f16ToF32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16ToF32(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16ToF32(0x7e00)));
}

TEST(HalfFloat, BF16KnownValuesWidenExactly) {
  EXPECT_EQ(bf16ToF32(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToF32(0xc0a0), -5.0f);
  EXPECT_EQ(bf16ToF32(0x4049), 3.140625f);
  EXPECT_EQ(bf16ToF32(0x0001), std::ldexp(1.0f, -133)); // Subnormal.
  EXPECT_EQ(bf16ToF32(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16ToF32(0x7fc0)));
}
} // namespace
