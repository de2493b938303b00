//===- AFMBWriter.h - writing .afmb binaries --------------------*- C++ -*-===//
//
// The compiler's side of docs/afmb-format.md: packs a manifest, the weights
// and the code into one .afmb file. The manifest message is generated from
// runtime/proto/manifest.proto (protobuf lite), the schema the runtime reads.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_BINARY_AFMBWRITER_H
#define AFM_BINARY_AFMBWRITER_H

#include "runtime/proto/manifest.pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace afm {

/// FNV-1a 64 of `bytes`, the checksum of every .afmb header and section.
uint64_t fnv1a64(llvm::ArrayRef<uint8_t> bytes);

/// Writes an .afmb (version 1.1): header, section table, manifest, weights
/// at a 4096-byte aligned offset, code, and the serialized runtime
/// tokenizer when `tokenizer` is not empty, with every checksum filled in.
/// The manifest is written as given (its offsets must already describe
/// `weights`); fails only if it cannot be serialized.
llvm::Error writeAFMB(llvm::raw_ostream &os,
                      const afm::manifest::Manifest &manifest,
                      llvm::ArrayRef<uint8_t> weights,
                      llvm::ArrayRef<uint8_t> code,
                      llvm::ArrayRef<uint8_t> tokenizer = {});

/// The layout of `writeAFMB` around manifest bytes as they are, serialized
/// or not: for tools that write hostile files on purpose (the loader
/// fuzzer's mutator).
void writeAFMBSections(llvm::raw_ostream &os,
                       llvm::ArrayRef<uint8_t> manifestBytes,
                       llvm::ArrayRef<uint8_t> weights,
                       llvm::ArrayRef<uint8_t> code,
                       llvm::ArrayRef<uint8_t> tokenizer = {});

} // namespace afm

#endif // AFM_BINARY_AFMBWRITER_H
