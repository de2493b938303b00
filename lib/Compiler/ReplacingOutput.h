//===- ReplacingOutput.h - an output file replaced, never rewritten -*- C++ -*-===//
//
// afm-compile's output is usually a model a running process may have
// mapped. Truncating and rewriting that file in place (same inode) would
// change the pages under the process, which then dies with SIGBUS at its
// next decode. So the output is written to a temporary file beside the
// target and renamed over it only when everything succeeded: a process
// keeps the old file, and a failed compile leaves the target untouched.
//
// A target that exists and is not a regular file (a pipe, /dev/null) has
// no pages to protect, and renaming over it would replace it: it is
// written directly. (llvm::writeToOutput also renames, but only special-
// cases "/dev/null", and renames a file whose write failed, a full disk,
// into place before its stream's destructor aborts the process.)
//
//===----------------------------------------------------------------------===//

#ifndef AFM_DRIVER_REPLACINGOUTPUT_H
#define AFM_DRIVER_REPLACINGOUTPUT_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::afm {

class ReplacingOutput {
public:
  /// Opens the output for `path`: standard output for "-", `path` itself
  /// when it exists and is not a regular file, else a new temporary file
  /// in `path`'s directory.
  static llvm::Expected<std::unique_ptr<ReplacingOutput>>
  open(llvm::StringRef path);

  /// Removes the temporary file unless commit() renamed it.
  ~ReplacingOutput();

  llvm::raw_ostream &os() { return *stream; }

  /// Flushes and renames the temporary file over the target. An error
  /// (a failed write, or the rename) leaves a regular target as it was.
  llvm::Error commit();

private:
  ReplacingOutput() = default;
  std::string path;
  std::optional<llvm::sys::fs::TempFile> temporary;
  std::unique_ptr<llvm::raw_fd_ostream> file;
  llvm::raw_ostream *stream = nullptr;
};

} // namespace mlir::afm

#endif // AFM_DRIVER_REPLACINGOUTPUT_H
