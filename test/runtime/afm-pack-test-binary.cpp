//===- afm-pack-test-binary.cpp - .afmb files for the runtime tests -------===//
//
// Packs a code file (normally the fake model, fake_model.c) into an .afmb
// with a manifest made from the flags, then optionally breaks the result:
//   afm-pack-test-binary --code libafm_fake_model.so -o model.afmb
//   afm-pack-test-binary ... --truncate 100 | --flip-byte 70 |
//   --set-version 2.0
//
//===----------------------------------------------------------------------===//

#include "TestBinary.h"

#include "afm/afmb_format.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

static cl::OptionCategory category("afm-pack-test-binary options");

static cl::opt<std::string> codePath("code", cl::Required, cl::cat(category),
                                     cl::desc("Shared library to pack as the "
                                              "code section"),
                                     cl::value_desc("file"));
static cl::opt<std::string> outputPath("o", cl::Required, cl::cat(category),
                                       cl::desc("Output .afmb"),
                                       cl::value_desc("file"));

static afm::test::FakeModelOptions defaults;
static cl::opt<uint32_t> vocab("vocab", cl::init(defaults.vocab),
                               cl::cat(category), cl::desc("vocab_size"));
static cl::opt<uint32_t> context("context", cl::init(defaults.context),
                                 cl::cat(category),
                                 cl::desc("context_length (the KV arena "
                                          "holds one int32 per position)"));
static cl::opt<uint32_t>
    prefillMaxTokens("prefill-max-tokens", cl::init(defaults.prefillMaxTokens),
                     cl::cat(category),
                     cl::desc("max_tokens of the PREFILL entry"));
static cl::opt<uint32_t>
    decodeMaxTokens("decode-max-tokens", cl::init(defaults.decodeMaxTokens),
                    cl::cat(category),
                    cl::desc("max_tokens of the DECODE entry"));
static cl::opt<uint32_t> abiVersion("abi-version",
                                    cl::init(defaults.abiVersion),
                                    cl::cat(category),
                                    cl::desc("Kernel ABI version"));
static cl::opt<std::string> triple("triple", cl::init(defaults.triple),
                                   cl::cat(category),
                                   cl::desc("Target triple (default: host)"));
static cl::opt<std::string> objectFormat(
    "object-format", cl::init(defaults.objectFormat), cl::cat(category),
    cl::desc("Object format of the code: elf or macho (default: host)"));
static cl::opt<std::string> targetName("target-name",
                                       cl::init(defaults.targetName),
                                       cl::cat(category),
                                       cl::desc("Target name"));
static cl::opt<std::string>
    prefillSymbol("prefill-symbol", cl::init(defaults.prefillSymbol),
                  cl::cat(category), cl::desc("Symbol of the PREFILL entry"));
static cl::opt<std::string>
    decodeSymbol("decode-symbol", cl::init(defaults.decodeSymbol),
                 cl::cat(category), cl::desc("Symbol of the DECODE entry"));
static cl::opt<uint64_t> weightsBytes(
    "weights-bytes", cl::init(defaults.weightsBytes), cl::cat(category),
    cl::desc("Size of the weights section (at least 64: the fake model's "
             "config)"));

static cl::opt<uint64_t> truncateAt("truncate", cl::cat(category),
                                    cl::desc("Keep only the first N bytes"),
                                    cl::value_desc("N"));
static cl::list<uint64_t> flipBytes("flip-byte", cl::cat(category),
                                    cl::desc("Invert the byte at OFFSET "
                                             "(repeatable)"),
                                    cl::value_desc("offset"));
static cl::opt<std::string> setVersion(
    "set-version", cl::cat(category),
    cl::desc("Rewrite the format version (keeps the header checksum valid)"),
    cl::value_desc("major.minor"));

static int fail(const Twine &message) {
  WithColor::error(errs(), "afm-pack-test-binary") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "packs .afmb files for the runtime tests\n");

  Expected<std::vector<uint8_t>> code = afm::test::readFile(codePath);
  if (!code)
    return fail(toString(code.takeError()));

  afm::test::FakeModelOptions options;
  options.vocab = vocab;
  options.context = context;
  options.prefillMaxTokens = prefillMaxTokens;
  options.decodeMaxTokens = decodeMaxTokens;
  options.abiVersion = abiVersion;
  options.triple = triple;
  options.objectFormat = objectFormat;
  options.targetName = targetName;
  options.prefillSymbol = prefillSymbol;
  options.decodeSymbol = decodeSymbol;
  options.weightsBytes = weightsBytes;
  if (options.weightsBytes < afm::test::kFakeConfigBytes)
    return fail("--weights-bytes must be at least " +
                Twine(afm::test::kFakeConfigBytes));
  std::vector<uint8_t> file =
      afm::test::packAFMB(afm::test::makeFakeManifest(options),
                          afm::test::makeFakeWeights(options),
                          afm::test::withFacts(
                              *code, afm::test::makeFakeFacts(options)));

  if (!setVersion.empty()) {
    unsigned major, minor;
    StringRef majorText, minorText;
    std::tie(majorText, minorText) = StringRef(setVersion).split('.');
    if (majorText.getAsInteger(10, major) ||
        minorText.getAsInteger(10, minor) || major > UINT16_MAX ||
        minor > UINT16_MAX)
      return fail("--set-version '" + setVersion + "' is not MAJOR.MINOR");
    afm::test::setVersion(file, major, minor);
  }
  for (uint64_t offset : flipBytes) {
    if (offset >= file.size())
      return fail("--flip-byte " + Twine(offset) + " is past the end of the " +
                  Twine(file.size()) + "-byte file");
    file[offset] ^= 0xff;
  }
  if (truncateAt.getNumOccurrences()) {
    if (truncateAt > file.size())
      return fail("--truncate " + Twine(truncateAt) +
                  " is past the end of the " + Twine(file.size()) +
                  "-byte file");
    file.resize(truncateAt);
  }
  if (Error error = afm::test::writeFile(outputPath, file))
    return fail(toString(std::move(error)));
  return 0;
}
