//===- WeightSource.cpp - a model's tensors over one or more files --------===//
//
// A sharded checkpoint is checked against its index in both directions, so
// that a stale or hand-edited index cannot make a tensor silently come from
// the wrong file.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/WeightSource.h"

#include "afm/Model/BoundedJSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

/// The index file of a sharded Hugging Face checkpoint.
static constexpr const char kIndexName[] = "model.safetensors.index.json";
/// The single weights file of an unsharded one.
static constexpr const char kSingleName[] = "model.safetensors";

Error WeightSource::add(const SafeTensorsFile *file) {
  for (const TensorInfo &info : file->tensors()) {
    auto [it, inserted] = byName.try_emplace(info.name, WeightTensor{file, &info});
    if (!inserted)
      return llvm::createStringError(
          llvm::Twine(origin) + ": tensor '" + info.name + "' is in two files: " +
          it->second.file->path() + " and " + file->path());
  }
  list.push_back(file);
  return Error::success();
}

WeightSource WeightSource::borrow(const SafeTensorsFile &file) {
  WeightSource source;
  source.origin = file.path().str();
  // One file cannot hold a name twice (its header is a JSON object).
  llvm::cantFail(source.add(&file));
  return source;
}

Expected<WeightSource>
WeightSource::openFiles(llvm::ArrayRef<std::string> paths) {
  WeightSource source;
  source.origin = paths.size() == 1 ? paths.front() : "the weight files";
  for (const std::string &path : paths) {
    Expected<SafeTensorsFile> file = SafeTensorsFile::open(path);
    if (!file)
      return file.takeError();
    source.owned.push_back(std::make_unique<SafeTensorsFile>(std::move(*file)));
    if (Error err = source.add(source.owned.back().get()))
      return std::move(err);
  }
  return source;
}

Expected<WeightSource> WeightSource::openIndex(StringRef indexPath) {
  auto fail = [&](const llvm::Twine &message) -> Error {
    return llvm::createStringError(indexPath + ": " + message);
  };
  auto buffer = llvm::MemoryBuffer::getFile(indexPath, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read: " + buffer.getError().message());
  Expected<json::Value> parsed = parseBoundedJSON((*buffer)->getBuffer());
  if (!parsed)
    return fail("invalid JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *top = parsed->getAsObject();
  const json::Object *map = top ? top->getObject("weight_map") : nullptr;
  if (!map)
    return fail("expected an object with a 'weight_map' object (tensor name "
                "-> shard file)");
  // Shards in the order of their names: model-00001-of-00003... first.
  std::map<std::string, std::vector<std::string>> tensorsOfShard;
  for (const auto &[name, value] : *map) {
    std::optional<StringRef> shard = value.getAsString();
    if (!shard || shard->empty())
      return fail("weight_map: tensor '" + StringRef(name) +
                  "' must map to a shard file name");
    if (llvm::sys::path::has_parent_path(*shard) || *shard == "." ||
        *shard == "..")
      return fail("weight_map: tensor '" + StringRef(name) + "': shard '" +
                  *shard + "' is not a file name in the index's folder");
    tensorsOfShard[shard->str()].push_back(name.str());
  }
  if (tensorsOfShard.empty())
    return fail("weight_map is empty");

  WeightSource source;
  source.origin = indexPath.str();
  StringRef folder = llvm::sys::path::parent_path(indexPath);
  auto shardPath = [&](StringRef shard) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, shard);
    return path;
  };
  // Every shard first: a missing one is the likeliest problem.
  for (const auto &[shard, names] : tensorsOfShard)
    if (!llvm::sys::fs::exists(shardPath(shard)))
      return fail("shard '" + shard + "' (of tensor '" + names.front() +
                  "') is missing: no file " + shardPath(shard).str());
  for (const auto &[shard, names] : tensorsOfShard) {
    llvm::SmallString<256> path = shardPath(shard);
    Expected<SafeTensorsFile> file = SafeTensorsFile::open(path);
    if (!file)
      return file.takeError();
    for (const std::string &name : names)
      if (!file->lookup(name))
        return fail("weight_map puts tensor '" + name + "' in shard '" +
                    shard + "', which does not hold it");
    for (const TensorInfo &info : file->tensors()) {
      const json::Value *listed = map->get(info.name);
      if (!listed || listed->getAsString() != StringRef(shard))
        return fail("shard '" + shard + "' holds tensor '" + info.name +
                    "', which weight_map " +
                    (listed ? "puts in another shard" : "does not list"));
    }
    source.owned.push_back(std::make_unique<SafeTensorsFile>(std::move(*file)));
    if (Error err = source.add(source.owned.back().get()))
      return std::move(err);
  }
  return source;
}

Expected<WeightSource> WeightSource::open(StringRef path) {
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> index(path), single(path);
    llvm::sys::path::append(index, kIndexName);
    llvm::sys::path::append(single, kSingleName);
    if (llvm::sys::fs::exists(index))
      return openIndex(index);
    if (llvm::sys::fs::exists(single))
      return openFiles({single.str().str()});
    return llvm::createStringError(path + ": holds neither " + kIndexName +
                                   " nor " + kSingleName);
  }
  if (path.ends_with(".index.json"))
    return openIndex(path);
  return openFiles({path.str()});
}

WeightTensor WeightSource::lookup(StringRef name) const {
  auto it = byName.find(name);
  return it == byName.end() ? WeightTensor() : it->second;
}

std::vector<WeightTensor> WeightSource::tensors() const {
  std::vector<WeightTensor> all;
  for (const SafeTensorsFile *file : list)
    for (const TensorInfo &info : file->tensors())
      all.push_back({file, &info});
  return all;
}
