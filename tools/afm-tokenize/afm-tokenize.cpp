//===- afm-tokenize.cpp - encode and decode with a tokenizer.json ---------===//
//
// The path a compiled model takes: the tokenizer.json is converted by the
// compiler (lib/Tokenizer) into the runtime's binary form, in memory, and
// the C runtime (afm/tokenizer.h) loads it and encodes or decodes. Input
// and output are JSON lines, printed as JavaScript's JSON.stringify prints
// them, so the output compares byte for byte with a reference written by
// Node (scripts/hf-tokenizer-reference.mjs).
//
//===----------------------------------------------------------------------===//

#include "afm/Tokenizer/JsonImport.h"
#include "afm/Tokenizer/Serialize.h"
#include "afm/tokenizer.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>

using namespace llvm;

static cl::OptionCategory category("afm-tokenize options");

static cl::opt<std::string>
    tokenizerPath("tokenizer", cl::desc("Hugging Face tokenizer.json"),
                  cl::value_desc("path"), cl::Required, cl::cat(category));
static cl::opt<std::string> encodePath(
    "encode",
    cl::desc("JSON lines of strings: print each one's ids as a JSON array "
             "(no special tokens added)"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> decodePath(
    "decode",
    cl::desc("JSON lines of id arrays: print each one's text as a JSON "
             "string"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> skipSpecial("skip-special",
                                 cl::desc("Decode without special tokens"),
                                 cl::cat(category));
static cl::opt<std::string>
    binaryPath("write-binary",
               cl::desc("Also write the runtime's binary form of the tokenizer "
                        "(runtime/proto/tokenizer.proto) to this file"),
               cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> stream(
    "stream",
    cl::desc("Decode through the streaming detokenizer, one id at a time, "
             "and print the concatenated pieces"),
    cl::cat(category));

namespace {

struct TokenizerDeleter {
  void operator()(afm_tokenizer *t) const { afm_tokenizer_free(t); }
};
using TokenizerPtr = std::unique_ptr<afm_tokenizer, TokenizerDeleter>;

Error runtimeError(const Twine &what) {
  return createStringError(what + ": " + afm_last_error());
}

/// `text` as JSON.stringify writes a string.
void printJsonString(raw_ostream &os, StringRef text) {
  os << '"';
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      os << "\\\"";
      break;
    case '\\':
      os << "\\\\";
      break;
    case '\b':
      os << "\\b";
      break;
    case '\f':
      os << "\\f";
      break;
    case '\n':
      os << "\\n";
      break;
    case '\r':
      os << "\\r";
      break;
    case '\t':
      os << "\\t";
      break;
    default:
      if (c < 0x20)
        os << format("\\u%04x", c);
      else
        os << static_cast<char>(c);
    }
  }
  os << '"';
}

Expected<TokenizerPtr> loadTokenizer(StringRef path) {
  Expected<mlir::afm::tokenizer::TokenizerDescription> description =
      mlir::afm::tokenizer::importTokenizerJsonFile(path);
  if (!description)
    return description.takeError();
  std::string bytes = mlir::afm::tokenizer::serializeTokenizer(*description);
  if (!binaryPath.empty()) {
    std::error_code error;
    raw_fd_ostream out(binaryPath, error);
    if (error)
      return createStringError(error, binaryPath + ": " + error.message());
    out << bytes;
  }
  afm_tokenizer *tokenizer = nullptr;
  if (afm_tokenizer_load(bytes.data(), bytes.size(), &tokenizer) != AFM_OK)
    return runtimeError(path);
  return TokenizerPtr(tokenizer);
}

/// Calls `perLine` with each non-empty line of `path` parsed as JSON.
Error forEachJsonLine(
    StringRef path, function_ref<Error(const json::Value &, size_t)> perLine) {
  auto buffer = MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return createStringError(buffer.getError(),
                             path + ": " + buffer.getError().message());
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].trim().empty())
      continue;
    Expected<json::Value> value = json::parse(lines[i]);
    if (!value)
      return createStringError(path + ":" + Twine(i + 1) + ": " +
                               toString(value.takeError()));
    if (Error e = perLine(*value, i + 1))
      return e;
  }
  return Error::success();
}

Error encodeLines(afm_tokenizer *tokenizer, StringRef path) {
  return forEachJsonLine(
      path, [&](const json::Value &value, size_t line) -> Error {
        auto text = value.getAsString();
        if (!text)
          return createStringError(path + ":" + Twine(line) +
                                   ": not a JSON string");
        int32_t *ids = nullptr;
        size_t count = 0;
        if (afm_tokenizer_encode(tokenizer, text->data(), text->size(), &ids,
                                 &count) != AFM_OK)
          return runtimeError(path + ":" + Twine(line));
        outs() << '[';
        for (size_t i = 0; i < count; ++i)
          outs() << (i ? "," : "") << ids[i];
        outs() << "]\n";
        std::free(ids);
        return Error::success();
      });
}

Expected<std::string> decodeStreaming(afm_tokenizer *tokenizer,
                                      ArrayRef<int32_t> ids) {
  afm_detokenizer *detokenizer = nullptr;
  if (afm_detokenizer_create(tokenizer, skipSpecial, &detokenizer) != AFM_OK)
    return runtimeError("detokenizer");
  std::string text;
  const char *piece;
  size_t length;
  for (int32_t id : ids) {
    if (afm_detokenizer_push(detokenizer, id, &piece, &length) != AFM_OK) {
      afm_detokenizer_free(detokenizer);
      return runtimeError("detokenizer");
    }
    text.append(piece, length);
  }
  afm_status status = afm_detokenizer_flush(detokenizer, &piece, &length);
  if (status == AFM_OK)
    text.append(piece, length);
  afm_detokenizer_free(detokenizer);
  if (status != AFM_OK)
    return runtimeError("detokenizer");
  return text;
}

Error decodeLines(afm_tokenizer *tokenizer, StringRef path) {
  return forEachJsonLine(
      path, [&](const json::Value &value, size_t line) -> Error {
        const json::Array *array = value.getAsArray();
        std::vector<int32_t> ids;
        for (size_t i = 0; array && i < array->size(); ++i) {
          auto id = (*array)[i].getAsInteger();
          if (!id || *id < INT32_MIN || *id > INT32_MAX)
            array = nullptr;
          else
            ids.push_back(static_cast<int32_t>(*id));
        }
        if (!array)
          return createStringError(path + ":" + Twine(line) +
                                   ": not a JSON array of ids");
        std::string text;
        if (stream) {
          Expected<std::string> streamed = decodeStreaming(tokenizer, ids);
          if (!streamed)
            return streamed.takeError();
          text = std::move(*streamed);
        } else {
          char *decoded = nullptr;
          size_t length = 0;
          if (afm_tokenizer_decode(tokenizer, ids.data(), ids.size(),
                                   skipSpecial, &decoded, &length) != AFM_OK)
            return runtimeError(path + ":" + Twine(line));
          text.assign(decoded, length);
          std::free(decoded);
        }
        printJsonString(outs(), text);
        outs() << '\n';
        return Error::success();
      });
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-tokenize: encode or decode JSON lines with a Hugging Face "
      "tokenizer.json,\nthrough the compiler's conversion and the C "
      "runtime's tokenizer\n\n"
      "  afm-tokenize --tokenizer tokenizer.json --encode strings.jsonl\n"
      "  afm-tokenize --tokenizer tokenizer.json --decode ids.jsonl "
      "[--stream]\n"
      "  afm-tokenize --tokenizer tokenizer.json --write-binary tok.bin\n\n"
      "Unsupported tokenizer.json components are errors naming them.\n");
  ExitOnError exitOnErr("afm-tokenize: error: ");
  if (!encodePath.empty() && !decodePath.empty())
    exitOnErr(createStringError("give at most one of --encode and --decode"));
  if (encodePath.empty() && decodePath.empty() && binaryPath.empty())
    exitOnErr(
        createStringError("give one of --encode, --decode and --write-binary"));
  TokenizerPtr tokenizer = exitOnErr(loadTokenizer(tokenizerPath));
  if (!encodePath.empty())
    exitOnErr(encodeLines(tokenizer.get(), encodePath));
  else if (!decodePath.empty())
    exitOnErr(decodeLines(tokenizer.get(), decodePath));
  return 0;
}
