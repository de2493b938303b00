//===- TokenizerTestSupport.h - writing tokenizer.json in tests -*- C++ -*-===//
//
// Pieces for the hand-made tokenizer.json texts of the tokenizer and
// generate tests.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TEST_UNIT_TOKENIZERTESTSUPPORT_H
#define AFM_TEST_UNIT_TOKENIZERTESTSUPPORT_H

#include <string>

namespace afm::test {

/// GPT-2's bytes_to_unicode, as UTF-8: byte b as one printable character.
inline std::string byteLevelChar(unsigned b) {
  unsigned code = b;
  if (b <= 0x20)
    code = 0x100 + b;
  else if (b >= 0x7f && b <= 0xa0)
    code = 0x121 + (b - 0x7f);
  else if (b == 0xad)
    code = 0x143;
  std::string out;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
  return out;
}

/// `s` as a JSON string literal (quotes and backslashes escaped).
inline std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace afm::test

#endif // AFM_TEST_UNIT_TOKENIZERTESTSUPPORT_H
