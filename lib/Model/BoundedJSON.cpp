//===- BoundedJSON.cpp - JSON parsing that refuses deep nesting -----------===//

#include "afm/Model/BoundedJSON.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir::afm;

llvm::Expected<llvm::json::Value>
mlir::afm::parseBoundedJSON(llvm::StringRef text) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONDepth)
        return llvm::createStringError(llvm::formatv(
            "JSON nested deeper than {0} levels (at byte {1})", kMaxJSONDepth,
            i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

std::optional<std::string>
mlir::afm::repeatedTopLevelKey(llvm::StringRef json) {
  llvm::StringSet<> seen;
  int depth = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < json.size() && json[end] != '"')
        end += json[end] == '\\' ? 2 : 1;
      llvm::StringRef text = json.slice(i + 1, end);
      i = end;
      bool isKey = json.substr(end + 1).ltrim().starts_with(":");
      if (depth == 1 && isKey && !seen.insert(text).second)
        return text.str();
    }
  }
  return std::nullopt;
}

std::string mlir::afm::describeJSON(const llvm::json::Value &value,
                                    bool quoteStrings) {
  switch (value.kind()) {
  case llvm::json::Value::Object:
    return "an object";
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::String:
    if (!quoteStrings)
      return "a string";
    [[fallthrough]];
  default:
    return llvm::formatv("{0}", value).str();
  }
}

llvm::Expected<llvm::json::Object>
mlir::afm::parseTopLevelObject(llvm::StringRef json, llvm::StringRef fileName) {
  llvm::Expected<llvm::json::Value> parsed = parseBoundedJSON(json);
  if (!parsed)
    return llvm::createStringError(fileName + ": invalid JSON: " +
                                   llvm::toString(parsed.takeError()));
  llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError(fileName +
                                   ": expected a JSON object at the top level");
  if (std::optional<std::string> key = repeatedTopLevelKey(json))
    return llvm::createStringError(fileName + ": key '" + *key +
                                   "' is given twice");
  return std::move(*object);
}

llvm::Error mlir::afm::JSONKeyReader::keyError(llvm::StringRef key,
                                               const llvm::Twine &message) const {
  return llvm::createStringError(
      llvm::formatv("{0}: key '{1}': {2}", fileName, key, message.str())
          .str());
}

std::optional<std::vector<int64_t>>
mlir::afm::indexOrIndexList(const llvm::json::Value &value) {
  if (std::optional<int64_t> i = value.getAsInteger())
    return *i < 0 ? std::nullopt
                  : std::optional<std::vector<int64_t>>({*i});
  const llvm::json::Array *list = value.getAsArray();
  if (!list)
    return std::nullopt;
  std::vector<int64_t> indices;
  for (const llvm::json::Value &entry : *list) {
    std::optional<int64_t> i = entry.getAsInteger();
    if (!i || *i < 0)
      return std::nullopt;
    indices.push_back(*i);
  }
  return indices;
}

llvm::Expected<std::string> mlir::afm::readConfigText(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  return (*buffer)->getBuffer().str();
}
