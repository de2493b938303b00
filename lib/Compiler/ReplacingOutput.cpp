//===- ReplacingOutput.cpp - an output file replaced, never rewritten -----===//

#include "ReplacingOutput.h"

#include "llvm/Support/Path.h"

using namespace mlir::afm;

llvm::Expected<std::unique_ptr<ReplacingOutput>>
ReplacingOutput::open(llvm::StringRef path) {
  std::unique_ptr<ReplacingOutput> output(new ReplacingOutput);
  output->path = path.str();
  if (path == "-") {
    output->stream = &llvm::outs();
    return std::move(output);
  }
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
      status.type() != llvm::sys::fs::file_type::regular_file) {
    std::error_code ec;
    output->file = std::make_unique<llvm::raw_fd_ostream>(path, ec);
    if (ec)
      return llvm::createStringError("cannot write '" + path +
                                     "': " + ec.message());
    output->stream = output->file.get();
    return std::move(output);
  }
  // Beside the target, so the rename stays on one file system; the mode
  // is the usual one for a new file (the umask applies).
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  auto temporary = llvm::sys::fs::TempFile::create(
      model, llvm::sys::fs::all_read | llvm::sys::fs::all_write);
  if (!temporary)
    return llvm::createStringError(
        "cannot write '" + path + "': " +
        llvm::toString(temporary.takeError()));
  output->temporary.emplace(std::move(*temporary));
  output->file = std::make_unique<llvm::raw_fd_ostream>(output->temporary->FD,
                                                        /*shouldClose=*/false);
  output->stream = output->file.get();
  return std::move(output);
}

ReplacingOutput::~ReplacingOutput() {
  if (temporary)
    llvm::consumeError(temporary->discard());
}

llvm::Error ReplacingOutput::commit() {
  stream->flush();
  if (file && file->has_error()) {
    std::string reason = file->error().message();
    file->clear_error();
    return llvm::createStringError("cannot write '" + path + "': " + reason);
  }
  if (!temporary)
    return llvm::Error::success();
  file.reset();
  llvm::Error kept = temporary->keep(path);
  temporary.reset();
  if (kept)
    return llvm::createStringError("cannot write '" + path + "': " +
                                   llvm::toString(std::move(kept)));
  return llvm::Error::success();
}
