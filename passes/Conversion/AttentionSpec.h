//===- AttentionSpec.h - what attention over a bound cache lowers from ----===//
//
// Shared by the general lowering (AttentionToLinalg.cpp: linalg over blocks
// of the cache, any number of query rows) and the decode kernel
// (DecodeAttention.cpp: one query row, split across threads over cache
// positions).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_CONVERSION_ATTENTIONSPEC_H
#define AFM_PASSES_CONVERSION_ATTENTIONSPEC_H

#include "afm/Target/TargetDescription.h"
#include "dialects/afm/IR/AFMOps.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::afm {

/// The static sizes of an attention: query [tokens, heads, headDim], a
/// cache of kvHeads x capacity slots, `group` query heads per KV head.
struct AttentionShape {
  int64_t tokens, heads, headDim, kvHeads, capacity, group;
};

/// Facts of the module's target that shape the code attention lowers to,
/// never its results; without a target (afm-opt alone), these defaults.
struct AttentionCodegen {
  /// TargetDescription::readOncePrefetch: how decode attention prefetches
  /// its next task's rows.
  ReadOncePrefetch readOncePrefetch;
  /// The target's int8 dot product takes unsigned bytes below 128 only
  /// (vpmaddubsw, whose i16 pair sums saturate above). Integer scores then
  /// multiply the key codes' magnitudes by the query codes with the keys'
  /// signs, instead of the key codes + 128 by the query codes.
  bool smallUnsignedDots = false;
  /// The vector register file (TargetDescription::vectorRegisters,
  /// vectorBits), which sizes decode attention's groups of accumulators;
  /// AVX-512's 32 x 512 bits without a target.
  unsigned vectorRegisters = 32;
  unsigned vectorBits = 512;
  /// TargetDescription::l1dBytes: whether a decode task's value rows stay
  /// in L1 between its passes over them; x86-64-v4's without a target.
  uint64_t l1dBytes = 48 * 1024;
};

/// What both attention ops lower from.
struct AttentionSpec {
  Value query;          // [T, H, D]
  Value key, value;     // [T, G, D], null for shared-KV attention
  Value cache;          // memref<2 x G x C x D>
  Value scales;         // memref<2 x G x C> of an i8 cache, else null
  Value position;       // index of query row 0
  Value count;          // real rows (index)
  AttentionKind kind;
  std::optional<int64_t> window;
  double scale;
  /// Each query head vector is rounded to int8 before the scores
  /// (`int8_query`; an i8 cache).
  bool int8Query = false;
  /// How to lower, from the module's target (not what is computed).
  AttentionCodegen codegen;

  /// How many positions the cache holds when attention reads it: before
  /// the append for attention that owns its cache, after the owner's
  /// append for shared-KV attention.
  Value filledPositions(OpBuilder &b, Location loc) const;
  AttentionShape shape() const;
};

/// Slots per key tile, and bytes of a slot's key side by side in one.
constexpr int64_t kKeyTileSlots = 16;
constexpr int64_t kKeyTileBytes = 4;

/// True when the cache of `spec` keeps its keys in tiles: an i8 cache
/// whose capacity is a multiple of 16 slots and head dimension of 64.
/// Slots [16t, 16t + 16) of a KV head take the 16 x D bytes their rows
/// would, ordered [D / 4][16][4]: dimensions 4i..4i+3 of the tile's 16
/// slots side by side. One 64-byte load then holds four dimensions of 16
/// slots, so a byte dot product (vpdpbusd) against a query's four codes
/// broadcast leaves slot j's partial score in lane j: no reduction across
/// lanes per slot. Values keep their rows ([G, C, D]).
bool hasTiledKeys(const AttentionSpec &spec);

/// `value` (a scalar or a vector) widened to f32 when its elements are
/// f16, as an f16 cache's are read (exact); otherwise `value` itself.
Value widenHalf(OpBuilder &b, Location loc, Value value);

/// Whether cache slot `slot` holds a position the query at `query` sees,
/// given `filled` (the filled positions, or slots), the newest filled
/// position `last` and its slot `lastSlot` of a ring buffer of `capacity`:
/// the slot holds last - ((lastSlot - slot) mod capacity) when slot <
/// filled; visible if causal and, for local attention, within the window.
/// The operands are all index values or all vectors of i32.
Value cachedSlotVisible(OpBuilder &b, Location loc, const AttentionSpec &spec,
                        int64_t capacity, Value slot, Value filled, Value last,
                        Value lastSlot, Value query);

/// `valid` and, for local attention, keyPosition + window > query (the key
/// is among the window's latest positions). Operands as above.
Value withinWindow(OpBuilder &b, Location loc, const AttentionSpec &spec,
                   Value valid, Value keyPosition, Value query);

/// True when buildDecodeAttention handles `spec`: one query row, a head
/// dimension and a capacity that are whole multiples of 16, an f32, f16
/// or i8 cache.
bool isDecodeAttention(const AttentionSpec &spec);

/// One query row's attention over the filled part of the cache, then over
/// the row's own key and value (`newKeys`, `newValues`: [1, G, D] f32 as
/// attention reads them, null for shared-KV attention). Returns [1, H, D].
/// Does not append to the cache.
Value buildDecodeAttention(OpBuilder &b, Location loc,
                           const AttentionSpec &spec, Value newKeys,
                           Value newValues);

} // namespace mlir::afm

#endif // AFM_PASSES_CONVERSION_ATTENTIONSPEC_H
