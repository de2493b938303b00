//===- DecodeAttention.cpp - one query row over the cache, split by slots -===//
//
// A decode step's attention reads the whole filled cache once and does a
// few operations per byte, so it should run at memory bandwidth. The
// general lowering (AttentionToLinalg.cpp: linalg ops per step of online
// softmax over blocks of slots) writes partial sums per slot to memory and
// runs each op alone; this is flash-decoding written in the vector dialect:
//
// - Tasks: (KV head g, block of up to kBlockSlots filled slots), an
//   scf.forall over G x blocks that the runtime runs on its threads. A
//   task computes, for each of the R = H / G query heads of g, the
//   maximum, sum of exponentials and weighted values of its block, and
//   writes them as partials. Its work is three passes over the block (the
//   second run inside the third's first loop), so that no loop keeps
//   more than half the vector registers live (one loop carrying all
//   R x D / 16 accumulators spilled them on every slot):
//   1. scores, 16 slots at a time, every head in one loop. Tiled keys
//      (an i8 cache, hasTiledKeys) hold four dimensions of 16 slots in
//      64 bytes: byte dot products against a head's four query codes
//      broadcast (int8_query), or f32 FMAs of 16 bytes converted against
//      its four values repeated, leave slot j's partial sums in lane j
//      (four lanes per slot in f32, summed by two in-lane levels). Key
//      rows (an f32 or f16 cache, or i8 without tiles) give a vector of
//      partial sums per slot and head; a tree of shuffles and adds turns
//      16 such vectors into one whose lane j is slot j's score. Masked
//      (-inf where not visible) and scaled, the scores go to a stack buffer
//      [R, block]; the value rows of these slots and the next key rows
//      are prefetched.
//   2. exponentials against the block's exact maximum, in place (times
//      the value scales), their sums 16 lanes wide. They run inside the
//      first group's loop of pass 3, one step of 16 slots ahead of its
//      weighted values, so that the next task's reads stay in flight
//      meanwhile (a loop of their own sent nothing to DRAM).
//   3. weighted values, a group of chunks at a time (R x group
//      accumulators within half the target's vector registers: 4 chunks
//      of 3 heads in zmm, 1 in ymm), 16 slots a step and within it slot
//      by slot over exactly the filled slots: each chunk of a value row
//      read once for all heads, each probability broadcast from the
//      buffer. Passes 2 and 3 work from cache, so pass 3 also prefetches
//      the next task's key and value rows (a row a slot) and scales (a
//      line of 16 a step), keys during its first half of groups and
//      values during the second: a task's own reads then mostly hit, and
//      the memory does not idle while it computes. (int8-KV decode at
//      4096 positions, 1 thread: 0.71 -> 0.35 ms;
//      docs/bench/attention-decode-zen5.txt.)
//      Their locality hint is the target's readOncePrefetch.locality: the
//      rows are read by one task and never again in the step. With the
//      target's readOncePrefetch.spacing, once a layer's filled keys and
//      values reach its sparseFromBytes, only one row every that
//      many bytes is prefetched and the L2 streamer those start fetches
//      the rest: on Granite Rapids every 1 KiB of int8 rows took the
//      step at 4096 slots from 53-55% of the read limit to 64-66% on 1
//      and 2 threads (each software prefetch likely holds an L1 fill
//      buffer until DRAM answers, which capped the step near 10-11 GB/s);
//      below 6 MiB (the 3B's 3072 slots) the whole model measured faster
//      with every row in one hour and slower in another. On Zen 5
//      the non-temporal hint (prefetchnta) beat the L2 one by 3-10% on 1
//      thread (docs/bench/attention-decode-zen5.txt); on Zen 4 prefetcht2
//      beat prefetchnta by 10% on 1 thread and 13% on 2
//      (docs/bench/attention-decode-zen4.txt). Anything sent to DRAM from
//      pass 1 stalls it, even with its keys already in L1: the next
//      task's values from there made a step 1.7x slower (on Zen 4, a
//      quarter of the next task's lines from there, with either hint,
//      1.25x slower).
// - Combine: a task per KV head; per query head, the blocks' partials
//   folded in order (the online-softmax step), then the row's own key
//   and value, then the division by the sum of exponentials.
//
// An i8 cache's scales multiply once per score and once per probability:
// scale * (q . codes) and (p * scale) * codes, the general lowering's
// scale * code products up to f32 rounding.
//
// With `int8_query`, each query head is rounded to int8 codes once, before
// the tasks (as the general lowering's buildInt8RoundTrip rounds it), and a
// score is exact in i32: afm_cpu.dot_bytes (vpdpbusd) of the key codes
// + 128 (unsigned: the sign bits flipped) against the query codes
// (signed), minus 128 * the query codes' sum, one constant per head. On
// targets whose instruction takes unsigned bytes below 128 only
// (vpmaddubsw on AVX2, AttentionCodegen::smallUnsignedDots) the key codes'
// magnitudes multiply the query codes with the keys' signs instead
// (vpsignb); the query's magnitudes against the keys with its signs were
// already 1.3x faster steps on Zen 3 than the integer expansion the
// flipped keys need there (docs/bench/attention-decode-zen3.txt).
//
//===----------------------------------------------------------------------===//

#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/Conversion/AttentionSpec.h"

#include "passes/CodeGen/GEMMTiles.h"
#include "passes/Conversion/CompressedKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::afm;

namespace {
/// Slots per vector of scores, and f32 lanes per chunk of a row.
constexpr int64_t kLanes = 16;
/// Most slots per task.
constexpr int64_t kBlockSlots = 256;
/// Passes over a block's value rows when they outgrow L1
/// (DecodeAttention::valueGroupChunks).
constexpr int64_t kMostValuePasses = 2;
/// Bytes of codes per vector of 16 i32 lanes (integer scores).
constexpr int64_t kWordBytes = 4 * kLanes;

class DecodeAttention {
public:
  DecodeAttention(OpBuilder &b, Location loc, const AttentionSpec &spec);
  Value build(Value newKeys, Value newValues);

private:
  /// Scalars of the mask, computed once before the tasks (i32).
  struct SlotFacts {
    Value filledSlots, last, lastSlot, query;
  };
  /// One query head as the scores read it.
  struct QueryHead {
    /// D / 16 f32 vectors: the query as attention multiplies it (rounded
    /// to int8 and scaled back with int8_query), used against the row's
    /// own key.
    SmallVector<Value> chunks;
    /// What multiplies the cached keys in f32: `chunks`, or with
    /// int8_query the codes as floats (exact products and sums).
    SmallVector<Value> scoreChunks;
    /// The f32 scalar a score is multiplied by (besides the key scale):
    /// the attention scale, times the query's step with int8_query.
    Value scoreScale;
    /// Integer scores only: D / 16 vectors of 16 bytes, the codes (the
    /// signed operand of vpdpbusd, against the key codes + 128), and 128
    /// times their sum (i32), which that + 128 adds to every score; null
    /// with spec.codegen.smallUnsignedDots, whose scores have no excess.
    SmallVector<Value> codes;
    Value keyFlipExcess;
    /// The head's row of the query.
    Value row;
  };
  /// The online-softmax state of one query head.
  struct Running {
    Value max, sum;
    SmallVector<Value> acc; // D / 16 vectors
  };

  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(Value indexValue) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), indexValue);
  }
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({kLanes}, scalar.getType()), scalar);
  }
  Value minusInfinity() {
    return f32(-std::numeric_limits<double>::infinity());
  }
  /// The state before any slot: max -inf, sum 0, accumulators 0.
  Running emptyState() {
    Running state{minusInfinity(), f32(0.0), {}};
    Value zeros = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vf, b.getF32FloatAttr(0.0)));
    state.acc.assign(chunks, zeros);
    return state;
  }
  /// States as loop-carried values (per head: max, sum, accumulators),
  /// and back.
  static SmallVector<Value> pack(ArrayRef<Running> states) {
    SmallVector<Value> values;
    for (const Running &state : states) {
      values.push_back(state.max);
      values.push_back(state.sum);
      llvm::append_range(values, state.acc);
    }
    return values;
  }
  SmallVector<Running> unpack(ValueRange values) {
    SmallVector<Running> states;
    for (int64_t at = 0; at < static_cast<int64_t>(values.size());
         at += 2 + chunks)
      states.push_back(
          Running{values[at], values[at + 1],
                  SmallVector<Value>(values.slice(at + 2, chunks))});
    return states;
  }

  /// Chunk c (16 values) of the row at `slot` of half `half` (0 keys,
  /// 1 values) of KV head g, in f32.
  Value cacheChunk(int64_t half, Value g, Value slot, int64_t c);
  /// Software prefetch of the key rows of slots [slot0 + 16, slot0 + 32)
  /// and the value rows of [slot0, slot0 + 16) of head g.
  void prefetchRows(Value g, Value slot0);
  /// Software prefetch (with the target's readOncePrefetch.locality), from
  /// the loop over a block's values (`groupIndex` of `groups` passes over
  /// it), of the next task's row at `offset` of its block (`rows`), or of
  /// the line of 16 scales there: keys during the first half of the
  /// passes, values during the second (both with one pass), each half's
  /// rows and lines dealt out over its passes in turn. The task's own
  /// reads are from cache then, and the memory would idle.
  void prefetchNextTask(int64_t groupIndex, int64_t groups, Value offset,
                        bool rows);
  /// Software prefetch of every cache line of the row at `slot` (within
  /// the cache) of half `half` of head g.
  void prefetchRow(int64_t half, Value g, Value slot, int64_t localityHint);
  /// The scales of slots [slot0, slot0 + 16) of half `half` of head g.
  Value cacheScales(int64_t half, Value g, Value slot0);
  /// 16-lane chunks of a [1, heads, D] tensor's row `row`.
  SmallVector<Value> rowChunks(Value tensor, Value row);
  /// Query head `headRow` as the scores read it.
  QueryHead queryHead(Value headRow);
  /// One key row's partial products with every query head: f32 vectors
  /// of 16 lanes.
  SmallVector<Value> slotProducts(Value g, Value slot,
                                  ArrayRef<QueryHead> queries);
  /// Vectors (one per head) whose lanes, kLanes / count of them each,
  /// sum the partial products of leaves [first, first + count) (`leaf`:
  /// one vector per head of a slot's products); at the top (count =
  /// kLanes, first = 0) lane j holds slot j.
  SmallVector<Value>
  scoreTree(Value slot0, int64_t first, int64_t count,
            llvm::function_ref<SmallVector<Value>(Value)> leaf);
  /// The 64 bytes of tiled keys holding dimensions 4i..4i+3 of slots
  /// [slot0, slot0 + 16) of head g (slot0 a multiple of 16), or 16 of them
  /// from byte `offset`.
  Value keyTilePiece(Value g, Value slot0, int64_t i, int64_t bytes,
                     int64_t offset = 0);
  /// Scores of slots [slot0, slot0 + 16) (lane j: slot j's q . k, exact
  /// in i32, as f32) for every query head of the task, from tiled keys:
  /// vpdpbusd of the key codes + 128 (sign bits flipped) against each
  /// head's four codes at a time broadcast from `queryWords` ([H, D / 4]
  /// i32), minus the head's excess.
  SmallVector<Value> tiledIntegerScores(Value g, Value slot0,
                                        ArrayRef<QueryHead> queries,
                                        Value queryWords);
  /// The same in f32 (int8 codes of the keys against an f32 query): each
  /// head's four dimensions at a time repeated across the lanes from
  /// `queryQuads` ([R, D / 4, 16] f32) times the keys converted 16 bytes
  /// at a time, then four lanes summed per slot.
  SmallVector<Value> tiledScores(Value g, Value slot0, int64_t count,
                                 Value queryQuads);
  /// Which of slots [slot0, slot0 + 16) the query sees.
  Value visible(const SlotFacts &facts, Value slot0);
  /// An scf.for over slots [begin, end), `step` at a time, carrying
  /// `init`: `body(slot, slot - begin, carried)` returns the next carried
  /// values.
  scf::ForOp slotLoop(
      Value begin, Value end, int64_t step, ValueRange init,
      llvm::function_ref<SmallVector<Value>(Value, Value, ValueRange)> body);
  /// One task: the state of each query head of KV head g over slots
  /// [begin, end), 16 at a time.
  /// The weighted values go into `weighted` ([R, D], this task's slice
  /// of the partials) as each group of chunks is done, not into the
  /// states' `acc`.
  SmallVector<Running> runBlock(Value g, Value begin, Value end,
                                const SlotFacts &facts,
                                ArrayRef<QueryHead> queries, Value &weighted);
  /// The tasks' partials folded for query head r of KV head g, then the
  /// row's own key and value; the normalized result's chunks.
  SmallVector<Value> combine(Value g, int64_t r, Value blocks, Value maxima,
                             Value sums, Value weighted, Value newKeys,
                             Value newValues);
  /// The new running maximum m' = max(`oldMax`, `max`), the shift the
  /// exponents are taken against (m', or 0 while m' = -inf) and the
  /// correction exp(oldMax - shift) of what was summed before.
  std::tuple<Value, Value, Value> rescale(Value oldMax, Value max);
  /// Folds a score (or block maximum) `max` with sum `sum` and weighted
  /// values `acc` into `state`.
  Running fold(const Running &state, Value max, Value sum, ArrayRef<Value> acc);

  OpBuilder &b;
  Location loc;
  const AttentionSpec &spec;
  /// The KV head and first slot of the task after this one (this one's
  /// own at the last), whose key and value rows pass 3 prefetches.
  Value nextHead, nextBegin;
  /// i1: prefetch every row of the next task, not one every
  /// readOncePrefetch.spacing bytes (the filled cache is below
  /// readOncePrefetch.sparseFromBytes); null when the target spaces none.
  Value everyNextRow;
  /// everyNextRow for `filledSlots` filled slots.
  Value everyNextRowBelow(Value filledSlots);
  /// Rows of the cache per readOncePrefetch.spacing bytes (1: every row).
  int64_t nextRowsApart() const;
  /// Bytes of one row of the cache: one slot of one KV head's keys (or
  /// values).
  int64_t cacheRowBytes() const;
  /// Chunks of a value row pass 3 takes at a time: the most (a divisor of
  /// D / 16) whose R x that accumulators fill at most half the target's
  /// vector registers.
  int64_t valueGroupChunks() const;
  /// Integer scores: every query head's codes as [H, D / 4] i32, four
  /// codes a word (rounded once, before the tasks).
  Value queryWords;
  int64_t heads, headDim, kvHeads, capacity, group, chunks, block;
  bool quantized;
  /// Keys stored in tiles of 16 slots (hasTiledKeys).
  bool tiledKeys;
  /// Scores as i32 dot products of codes: int8_query over tiled keys.
  bool integerScores;
  VectorType vf;
};
} // namespace

bool afm::isDecodeAttention(const AttentionSpec &spec) {
  auto queryType = cast<RankedTensorType>(spec.query.getType());
  std::optional<KVCacheShape> cache = getKVCacheShape(spec.cache.getType());
  return cache && queryType.getDimSize(0) == 1 &&
         cache->headDim % kLanes == 0 && cache->capacity % kLanes == 0 &&
         (cache->elementType.isF32() || cache->elementType.isF16() ||
          (cache->elementType.isSignlessInteger(8) && spec.scales));
}

DecodeAttention::DecodeAttention(OpBuilder &b, Location loc,
                                 const AttentionSpec &spec)
    : b(b), loc(loc), spec(spec) {
  AttentionShape shape = spec.shape();
  heads = shape.heads;
  headDim = shape.headDim;
  kvHeads = shape.kvHeads;
  capacity = shape.capacity;
  group = shape.group;
  chunks = headDim / kLanes;
  // Whole vectors of slots per task; capacity is a multiple of 16.
  block = kLanes * divisorAtMost(capacity / kLanes, kBlockSlots / kLanes);
  quantized = static_cast<bool>(spec.scales);
  tiledKeys = hasTiledKeys(spec);
  integerScores = spec.int8Query && tiledKeys;
  vf = VectorType::get({kLanes}, b.getF32Type());
}

Value DecodeAttention::cacheChunk(int64_t half, Value g, Value slot,
                                  int64_t c) {
  auto cacheType = cast<MemRefType>(spec.cache.getType());
  Value load = vector::LoadOp::create(
      b, loc, VectorType::get({kLanes}, cacheType.getElementType()), spec.cache,
      ValueRange{index(half), g, slot, index(c * kLanes)});
  if (!quantized)
    return widenHalf(b, loc, load);
  Value wide = arith::ExtSIOp::create(
      b, loc, VectorType::get({kLanes}, b.getI32Type()), load);
  return arith::SIToFPOp::create(b, loc, vf, wide);
}

void DecodeAttention::prefetchRows(Value g, Value slot0) {
  // Keys of the next group of slots (the cache's last group at its end:
  // one clamp for the group, so that each row's address is the group's
  // plus a constant; a tile takes the bytes of its 16 rows) and values of
  // this group (read by pass 3).
  Value nextKeys = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, slot0, index(kLanes)),
      index(capacity - kLanes));
  for (int64_t j = 0; j < kLanes; ++j)
    prefetchRow(0, g, arith::AddIOp::create(b, loc, nextKeys, index(j)),
                /*localityHint=*/3);
  for (int64_t j = 0; j < kLanes; ++j)
    prefetchRow(1, g, arith::AddIOp::create(b, loc, slot0, index(j)),
                /*localityHint=*/3);
}

void DecodeAttention::prefetchRow(int64_t half, Value g, Value slot,
                                  int64_t localityHint) {
  int64_t lineElements = std::max<int64_t>(1, headDim * 64 / cacheRowBytes());
  for (int64_t e = 0; e < headDim; e += lineElements)
    memref::PrefetchOp::create(b, loc, spec.cache,
                               ValueRange{index(half), g, slot, index(e)},
                               /*isWrite=*/false, localityHint,
                               /*isDataCache=*/true);
}

int64_t DecodeAttention::cacheRowBytes() const {
  auto cacheType = cast<MemRefType>(spec.cache.getType());
  return headDim * static_cast<int64_t>(cacheType.getElementTypeBitWidth()) /
         8;
}

int64_t DecodeAttention::nextRowsApart() const {
  int64_t spacing =
      static_cast<int64_t>(spec.codegen.readOncePrefetch.spacing);
  return std::max<int64_t>(1, spacing / cacheRowBytes());
}

int64_t DecodeAttention::valueGroupChunks() const {
  // Half the file for the accumulators leaves room for the group's value
  // chunks, the broadcast probability and the addresses. A chunk of 16
  // f32 lanes takes one zmm register, two ymm (AVX2) or four NEON q: on
  // AVX2 with 3 query heads per KV head, 4 chunks (24 ymm accumulators
  // in 16 registers, as the zmm count gave) spilled 19 of them to the
  // stack on every slot, whose store and reload then bounded the loop;
  // 1 chunk (6 accumulators) ran int8-KV steps 10-25% faster
  // (docs/bench/attention-value-groups-zen3-2026-12-06.txt).
  int64_t chunkRegisters = std::max<int64_t>(
      1, llvm::divideCeil(kLanes * 32,
                          static_cast<int64_t>(spec.codegen.vectorBits)));
  int64_t most = static_cast<int64_t>(spec.codegen.vectorRegisters) / 2 /
                 (group * chunkRegisters);
  // f16 and f32 rows outgrow L1 (a block of 256 rows of 128 lanes is 64
  // or 128 KiB; of int8 32 KiB), and every pass after the first reads them
  // again from L2: there two passes beat eight whatever the spills. On
  // x86-64-v3, 24/8 heads, an f16 cache at 4096 positions took a median
  // 1.83 ms a step on 1 thread with 4 chunks (24 ymm accumulators, 2
  // passes) against 2.34 with 1, 2.31 with 2 and 2.64 with 8 (1 pass, 48
  // accumulators), faster than 1 chunk in 8 of 9 alternated rounds; on 2
  // threads 1.27 against 1.21, within the spread (1.08-1.49 against
  // 1.15-1.54 ms). An f32 cache: 2.90 against 3.34 ms on 1 thread, 1.74
  // against 2.12 on 2, faster in each of 3 rounds
  // (docs/bench/attention-value-groups-zen3-2026-12-06.txt).
  if (block * cacheRowBytes() > static_cast<int64_t>(spec.codegen.l1dBytes))
    most = std::max<int64_t>(most, chunks / kMostValuePasses);
  return divisorAtMost(chunks, std::max<int64_t>(1, most));
}

Value DecodeAttention::everyNextRowBelow(Value filledSlots) {
  if (nextRowsApart() == 1)
    return Value();
  // Bytes of keys and values a filled slot adds to the layer's reads.
  uint64_t slotBytes =
      2 * static_cast<uint64_t>(kvHeads) * uint64_t(cacheRowBytes());
  uint64_t fromSlots = llvm::divideCeil(
      spec.codegen.readOncePrefetch.sparseFromBytes, slotBytes);
  if (fromSlots > static_cast<uint64_t>(capacity))
    return Value(); // never reached: every row, as without spacing
  if (fromSlots == 0)
    return arith::ConstantIntOp::create(b, loc, /*value=*/0, /*width=*/1);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, filledSlots,
                               index(static_cast<int64_t>(fromSlots)));
}

void DecodeAttention::prefetchNextTask(int64_t groupIndex, int64_t groups,
                                       Value offset, bool rows) {
  // The passes of the first half (one more with an odd count) prefetch
  // keys, the others values; one pass prefetches both. A half's rows (or
  // its steps' lines of scales) go to its `span` passes in turn, so that
  // the memory works through every pass, not the first two only.
  int64_t keyPasses = groups == 1 ? 1 : (groups + 1) / 2;
  SmallVector<int64_t> halves;
  if (groups == 1)
    halves = {0, 1};
  else
    halves.push_back(groupIndex < keyPasses ? 0 : 1);
  int64_t span = groups == 1 ? 1
                 : halves.front() == 0 ? keyPasses
                                       : groups - keyPasses;
  int64_t phase = halves.front() == 0 ? groupIndex : groupIndex - keyPasses;
  // `offset` advances by 1 a row, by 16 a step of scales.
  int64_t stride = rows ? 1 : kLanes;
  // offset / stride % span == phase: the rows (steps) of this pass.
  auto dealt = [&](int64_t apart) -> Value {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, offset, index(apart * span * stride)),
        index(apart * phase * stride));
  };
  // Rows every nextRowsApart() rows only, once the cache is long enough
  // (everyNextRow false; the L2 streamer fetches the rows between): at the
  // task's offsets that are multiples of it, dealt out in turn likewise.
  int64_t rowsApart = nextRowsApart();
  Value due;
  if (rows && everyNextRow)
    due = span == 1 ? arith::OrIOp::create(b, loc, everyNextRow,
                                           dealt(rowsApart))
                          .getResult()
                    : arith::SelectOp::create(b, loc, everyNextRow, dealt(1),
                                              dealt(rowsApart))
                          .getResult();
  else if (span > 1)
    due = dealt(1);
  std::optional<OpBuilder::InsertionGuard> guard;
  if (due) {
    auto onlyThen = scf::IfOp::create(b, loc, TypeRange(), due,
                                      /*withElseRegion=*/false);
    guard.emplace(b);
    b.setInsertionPointToStart(onlyThen.thenBlock());
  }
  Value slot = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, nextBegin, offset),
      index(capacity - 1));
  for (int64_t half : halves) {
    if (rows)
      prefetchRow(half, nextHead, slot, spec.codegen.readOncePrefetch.locality);
    else if (quantized)
      memref::PrefetchOp::create(b, loc, spec.scales,
                                 ValueRange{index(half), nextHead, slot},
                                 /*isWrite=*/false,
                                 spec.codegen.readOncePrefetch.locality,
                                 /*isDataCache=*/true);
  }
}

Value DecodeAttention::cacheScales(int64_t half, Value g, Value slot0) {
  return vector::LoadOp::create(b, loc, vf, spec.scales,
                                ValueRange{index(half), g, slot0});
}

SmallVector<Value> DecodeAttention::rowChunks(Value tensor, Value row) {
  SmallVector<Value> result;
  for (int64_t c = 0; c < chunks; ++c)
    result.push_back(vector::TransferReadOp::create(
        b, loc, vf, tensor, ValueRange{index(0), row, index(c * kLanes)},
        f32(0.0), ArrayRef<bool>{true}));
  return result;
}

DecodeAttention::QueryHead DecodeAttention::queryHead(Value headRow) {
  QueryHead head;
  head.row = headRow;
  head.chunks = rowChunks(spec.query, headRow);
  head.scoreScale = f32(spec.scale);
  if (!spec.int8Query) {
    head.scoreChunks = head.chunks;
    return head;
  }
  // buildInt8RoundTrip's operations, on vectors: the codes of
  // buildInt8Code, and the value attention multiplies, code * (amax / 127).
  Value amax = math::AbsFOp::create(b, loc, head.chunks[0]);
  for (int64_t c = 1; c < chunks; ++c)
    amax = arith::MaximumFOp::create(
        b, loc, amax, math::AbsFOp::create(b, loc, head.chunks[c]));
  amax = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXIMUMF,
                                     amax);
  Value step = arith::DivFOp::create(b, loc, amax, f32(127.0));
  SmallVector<Value> codes;
  for (Value &chunk : head.chunks) {
    Value narrow = buildInt8Code(b, loc, chunk, amax);
    Value code = arith::SIToFPOp::create(b, loc, vf, narrow);
    head.scoreChunks.push_back(code);
    chunk = arith::MulFOp::create(b, loc, code, splat(step));
    codes.push_back(narrow);
  }
  head.scoreScale = arith::MulFOp::create(b, loc, head.scoreScale, step);
  if (!integerScores)
    return head;
  head.codes = codes;
  // Signed keys against the codes' magnitudes: no flip, no excess.
  if (spec.codegen.smallUnsignedDots)
    return head;
  auto vi32 = VectorType::get({kLanes}, b.getI32Type());
  Value sum = arith::ExtSIOp::create(b, loc, vi32, codes.front());
  for (Value code : ArrayRef(codes).drop_front())
    sum = arith::AddIOp::create(b, loc, sum,
                                arith::ExtSIOp::create(b, loc, vi32, code));
  head.keyFlipExcess = arith::MulIOp::create(
      b, loc,
      vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, sum),
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(128)));
  return head;
}

SmallVector<Value> DecodeAttention::slotProducts(Value g, Value slot,
                                                 ArrayRef<QueryHead> queries) {
  SmallVector<Value> parts;
  SmallVector<Value> key;
  for (int64_t c = 0; c < chunks; ++c)
    key.push_back(cacheChunk(0, g, slot, c));
  for (const QueryHead &query : queries) {
    ArrayRef<Value> q = query.scoreChunks;
    Value sum = arith::MulFOp::create(b, loc, q[0], key[0]);
    for (int64_t c = 1; c < chunks; ++c)
      sum = vector::FMAOp::create(b, loc, q[c], key[c], sum);
    parts.push_back(sum);
  }
  return parts;
}

Value DecodeAttention::keyTilePiece(Value g, Value slot0, int64_t i,
                                    int64_t bytes, int64_t offset) {
  // Byte 64 i + offset of the tile is in row slot0 + (64 i + offset) / D.
  int64_t at = kKeyTileSlots * kKeyTileBytes * i + offset;
  return vector::LoadOp::create(
      b, loc, VectorType::get({bytes}, b.getI8Type()), spec.cache,
      ValueRange{index(0), g,
                 arith::AddIOp::create(b, loc, slot0, index(at / headDim)),
                 index(at % headDim)});
}

SmallVector<Value>
DecodeAttention::tiledIntegerScores(Value g, Value slot0,
                                    ArrayRef<QueryHead> queries,
                                    Value queryWords) {
  // vpdpbusd's unsigned operand is the key codes + 128 (their sign bits
  // flipped, an in-lane op beside the multiplier), its signed one the
  // query codes: the + 128 adds 128 * (the query codes' sum), one
  // constant per head. Two sums per head, alternating over the key's
  // quads, halve the chain of dependent vpdpbusd.
  //
  // A target whose instruction takes unsigned bytes below 128 only
  // (vpmaddubsw: it saturates the sum of two products of bytes above)
  // multiplies the key codes' magnitudes, masked below 128 so that
  // afm-lower-dot-bytes can prove it, once per tile for every head, by
  // each head's query codes with the keys' signs (afm_cpu.sign_bytes:
  // vpsignb): exact, since both codes are in [-127, 127] (the cache's
  // codes are clamped there, and -128 has no negation in a byte), and no
  // excess to subtract. Per 32 bytes and head that is vpsignb,
  // vpmaddubsw, vpmaddwd and vpaddd, plus vpabsb and vpand per tile,
  // where the query's magnitudes against the keys with its signs, (k ^ m)
  // - m, took vpxor, vpsubb and a vpand of the word besides and a second
  // broadcast (docs/bench/attention-scores-psign-zen3-2026-12-06.txt),
  // and the flipped keys the integer expansion, about ten instructions.
  auto vi32 = VectorType::get({kLanes}, b.getI32Type());
  auto vi8 = VectorType::get({kWordBytes}, b.getI8Type());
  // Each form's constant: the sign-bit flip of the keys, or the mask of
  // their magnitudes.
  Value flip, below128;
  if (spec.codegen.smallUnsignedDots)
    below128 = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(vi32, b.getI32IntegerAttr(0x7f7f7f7f)));
  else
    flip = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vi8, b.getI8IntegerAttr(-128)));
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vi32, b.getI32IntegerAttr(0)));
  SmallVector<std::array<Value, 2>> sums(queries.size(), {zero, zero});
  for (int64_t i = 0; i < headDim / kKeyTileBytes; ++i) {
    Value tile = keyTilePiece(g, slot0, i, kWordBytes);
    // The unsigned operand: the flipped keys, or the keys' magnitudes.
    Value keys =
        spec.codegen.smallUnsignedDots
            ? arith::AndIOp::create(
                  b, loc,
                  vector::BitCastOp::create(
                      b, loc, vi32, math::AbsIOp::create(b, loc, tile)),
                  below128)
                  .getResult()
            : vector::BitCastOp::create(
                  b, loc, vi32, arith::XOrIOp::create(b, loc, tile, flip))
                  .getResult();
    for (auto [r, query] : llvm::enumerate(queries)) {
      Value word = splat(memref::LoadOp::create(
          b, loc, queryWords, ValueRange{query.row, index(i)}));
      Value &sum = sums[r][i % 2];
      if (spec.codegen.smallUnsignedDots)
        word = vector::BitCastOp::create(
            b, loc, vi32,
            afm_cpu::SignBytesOp::create(
                b, loc, vi8, vector::BitCastOp::create(b, loc, vi8, word),
                tile));
      sum = afm_cpu::DotBytesOp::create(b, loc, vi32, sum, keys, word);
    }
  }
  SmallVector<Value> scores;
  for (auto [r, query] : llvm::enumerate(queries)) {
    Value raw = arith::AddIOp::create(b, loc, sums[r][0], sums[r][1]);
    if (query.keyFlipExcess)
      raw = arith::SubIOp::create(b, loc, raw, splat(query.keyFlipExcess));
    scores.push_back(arith::SIToFPOp::create(b, loc, vf, raw));
  }
  return scores;
}

namespace {
/// One level of the score tree: two shuffles of its inputs (l ++ r, 2 x
/// kLanes lanes) whose sum halves the lanes each leaf spans.
struct TreeLevel {
  SmallVector<int64_t> first, second;
};
} // namespace

/// The level that combines two vectors of `count` / 2 leaves each. The
/// wide levels, with the most vectors, stay inside 128-bit lanes (unpack
/// low / high of dwords, then of qwords) and the two narrow ones cross
/// them (a blend and a 128-bit shuffle, then two 128-bit shuffles): on
/// Zen 5 an in-lane unpack or a blend does not compete with vpdpbusd for
/// its two pipes, while vpermt2d does fully and vshufi64x2 half.
static TreeLevel treeLevel(int64_t count) {
  TreeLevel level;
  for (int64_t lane = 0; lane < kLanes; ++lane) {
    int64_t chunk = lane / 4, x = lane % 4, base = 4 * chunk;
    switch (count) {
    case 2: // Any lanes: dwords 0 1 (low) and 2 3 (high) of l, r interleaved.
      level.first.push_back((x % 2 ? kLanes : 0) + base + x / 2);
      level.second.push_back((x % 2 ? kLanes : 0) + base + 2 + x / 2);
      break;
    case 4: // Leaves on dwords {0, 2} and {1, 3}: qwords 0 (low), 1 (high).
      level.first.push_back((x / 2 ? kLanes : 0) + base + x % 2);
      level.second.push_back((x / 2 ? kLanes : 0) + base + 2 + x % 2);
      break;
    case 8: // Leaves on one dword per chunk: chunks 0 1 of l, 2 3 of r in
            // place; l's 2 3 and r's 0 1 moved onto them.
      level.first.push_back(chunk < 2 ? lane : kLanes + lane);
      level.second.push_back(chunk < 2 ? 4 * (chunk + 2) + x
                                       : kLanes + 4 * (chunk - 2) + x);
      break;
    default: // Leaves on chunks {0, 1} and {2, 3}: chunks 0 2 | 1 3.
      level.first.push_back((chunk / 2 ? kLanes : 0) + 8 * (chunk % 2) + x);
      level.second.push_back((chunk / 2 ? kLanes : 0) + 8 * (chunk % 2) + 4 +
                             x);
      break;
    }
  }
  return level;
}

/// For each lane of the score tree's result, the leaf whose sum it holds:
/// the levels simulated on sets of (leaf, lane) terms. Every lane must end
/// with the whole of one leaf (checked once, in every build: a wrong mask
/// would silently mix slots' scores).
static SmallVector<int64_t> treeLeafOfLane() {
  using Terms = SmallVector<std::pair<int64_t, int64_t>>;
  std::function<SmallVector<Terms>(int64_t, int64_t)> simulate =
      [&](int64_t first, int64_t count) {
        SmallVector<Terms> lanes(kLanes);
        if (count == 1) {
          for (int64_t lane = 0; lane < kLanes; ++lane)
            lanes[lane].push_back({first, lane});
          return lanes;
        }
        SmallVector<Terms> both = simulate(first, count / 2);
        both.append(simulate(first + count / 2, count / 2));
        TreeLevel level = treeLevel(count);
        for (int64_t lane = 0; lane < kLanes; ++lane) {
          lanes[lane] = both[level.first[lane]];
          lanes[lane].append(both[level.second[lane]]);
        }
        return lanes;
      };
  SmallVector<int64_t> leafOfLane;
  for (Terms &terms : simulate(0, kLanes)) {
    llvm::sort(terms);
    bool whole = static_cast<int64_t>(terms.size()) == kLanes;
    for (auto [i, term] : llvm::enumerate(terms))
      whole = whole && term.first == terms.front().first &&
              term.second == static_cast<int64_t>(i);
    if (!whole)
      llvm::report_fatal_error("decode attention: a score tree lane does not "
                               "sum one whole slot");
    leafOfLane.push_back(terms.front().first);
  }
  return leafOfLane;
}

SmallVector<Value>
DecodeAttention::scoreTree(Value slot0, int64_t first, int64_t count,
                           llvm::function_ref<SmallVector<Value>(Value)> leaf) {
  if (count == 1) {
    // Leaf k reads the slot whose lane holds k at the top.
    static const SmallVector<int64_t> leafOfLane = treeLeafOfLane();
    int64_t slot = llvm::find(leafOfLane, first) - leafOfLane.begin();
    return leaf(arith::AddIOp::create(b, loc, slot0, index(slot)));
  }
  SmallVector<Value> left = scoreTree(slot0, first, count / 2, leaf);
  SmallVector<Value> right =
      scoreTree(slot0, first + count / 2, count / 2, leaf);
  TreeLevel level = treeLevel(count);
  SmallVector<Value> result;
  for (auto [l, r] : llvm::zip(left, right)) {
    Value a = vector::ShuffleOp::create(b, loc, l, r, level.first);
    Value c = vector::ShuffleOp::create(b, loc, l, r, level.second);
    result.push_back(arith::AddFOp::create(b, loc, a, c));
  }
  return result;
}

SmallVector<Value> DecodeAttention::tiledScores(Value g, Value slot0,
                                                int64_t count,
                                                Value queryQuads) {
  // Sums per head and quarter q of a tile's 64 bytes (slots 4q..4q+3):
  // lane 4s + k holds slot 4q + s's products of dimensions 4i + k.
  auto vi32 = VectorType::get({kLanes}, b.getI32Type());
  SmallVector<std::array<Value, 4>> sums(count);
  for (int64_t i = 0; i < headDim / kKeyTileBytes; ++i) {
    SmallVector<Value> keys;
    for (int64_t q = 0; q < 4; ++q)
      keys.push_back(arith::SIToFPOp::create(
          b, loc, vf,
          arith::ExtSIOp::create(
              b, loc, vi32, keyTilePiece(g, slot0, i, kLanes, q * kLanes))));
    for (int64_t r = 0; r < count; ++r) {
      Value quad = vector::LoadOp::create(b, loc, vf, queryQuads,
                                          ValueRange{index(r), index(i), index(0)});
      for (int64_t q = 0; q < 4; ++q)
        sums[r][q] =
            i == 0 ? arith::MulFOp::create(b, loc, keys[q], quad).getResult()
                   : vector::FMAOp::create(b, loc, keys[q], quad, sums[r][q])
                         .getResult();
    }
  }
  // The tree's two in-lane levels sum each slot's four lanes: 128-bit
  // lane c of the result holds slots c, 4 + c, 8 + c, 12 + c, which one
  // permutation puts in order.
  auto level = [&](int64_t leaves, Value l, Value r) {
    TreeLevel masks = treeLevel(leaves);
    return arith::AddFOp::create(
               b, loc, vector::ShuffleOp::create(b, loc, l, r, masks.first),
               vector::ShuffleOp::create(b, loc, l, r, masks.second))
        .getResult();
  };
  SmallVector<int64_t> inOrder;
  for (int64_t j = 0; j < kLanes; ++j)
    inOrder.push_back(4 * (j % 4) + j / 4);
  SmallVector<Value> scores;
  for (const std::array<Value, 4> &quarters : sums) {
    Value lanes = level(4, level(2, quarters[0], quarters[1]),
                        level(2, quarters[2], quarters[3]));
    scores.push_back(vector::ShuffleOp::create(b, loc, lanes, lanes, inOrder));
  }
  return scores;
}

Value DecodeAttention::visible(const SlotFacts &facts, Value slot0) {
  auto vi32 = VectorType::get({kLanes}, b.getI32Type());
  SmallVector<int32_t> laneIds;
  for (int64_t j = 0; j < kLanes; ++j)
    laneIds.push_back(static_cast<int32_t>(j));
  Value lanes = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(vi32, ArrayRef<int32_t>(laneIds)));
  Value slot = arith::AddIOp::create(b, loc, splat(i32(slot0)), lanes);
  return cachedSlotVisible(b, loc, spec, capacity, slot,
                           splat(facts.filledSlots), splat(facts.last),
                           splat(facts.lastSlot), splat(facts.query));
}

std::tuple<Value, Value, Value> DecodeAttention::rescale(Value oldMax,
                                                         Value max) {
  // Exponents against m' = max(m, max), or 0 while everything so far is
  // masked (m' = -inf), so that exp(-inf) = 0 and never NaN.
  Value next = arith::MaximumFOp::create(b, loc, oldMax, max);
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, next,
                                     minusInfinity());
  Value shift = arith::SelectOp::create(b, loc, none, f32(0.0), next);
  Value correction =
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, oldMax, shift));
  return {next, shift, correction};
}

DecodeAttention::Running DecodeAttention::fold(const Running &state, Value max,
                                               Value sum, ArrayRef<Value> acc) {
  auto [next, shift, oldScale] = rescale(state.max, max);
  Value newScale =
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, max, shift));
  Running result;
  result.max = next;
  result.sum = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, state.sum, oldScale),
      arith::MulFOp::create(b, loc, sum, newScale));
  Value oldSplat = splat(oldScale), newSplat = splat(newScale);
  for (auto [mine, theirs] : llvm::zip(state.acc, acc))
    result.acc.push_back(
        vector::FMAOp::create(b, loc, theirs, newSplat,
                              arith::MulFOp::create(b, loc, mine, oldSplat)));
  return result;
}

Value DecodeAttention::build(Value newKeys, Value newValues) {
  Type f32Type = b.getF32Type();
  Value filled = spec.filledPositions(b, loc);
  Value filledSlots = arith::MinUIOp::create(b, loc, filled, index(capacity));
  Value last = arith::SubIOp::create(b, loc, filled, index(1));
  SlotFacts facts{i32(filledSlots), i32(last),
                  i32(arith::RemUIOp::create(b, loc, last, index(capacity))),
                  i32(spec.position)};
  Value blocks = arith::CeilDivUIOp::create(b, loc, filledSlots, index(block));
  int64_t maxBlocks = capacity / block;

  // Partials of every (KV head, block): maxima and sums [G, blocks, R],
  // weighted values [G, blocks, R, D]. Only the filled blocks are written
  // and read.
  Value maxima = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{kvHeads, maxBlocks, group}, f32Type);
  Value sums = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{kvHeads, maxBlocks, group}, f32Type);
  Value weighted = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{kvHeads, maxBlocks, group, headDim}, f32Type);
  Value tasks = arith::MulIOp::create(b, loc, blocks, index(kvHeads));
  // Integer scores: every query head rounded once, before the tasks (a
  // task per block would round its R heads again), into [H, D / 4] words
  // of codes and per head the score scale and the key-flip excess.
  Value hoistedScales, hoistedExcess;
  if (integerScores) {
    auto wordsType =
        MemRefType::get({heads, headDim / kKeyTileBytes}, b.getI32Type());
    queryWords = memref::AllocaOp::create(b, loc, wordsType);
    hoistedScales = memref::AllocaOp::create(
        b, loc, MemRefType::get({heads}, f32Type));
    if (!spec.codegen.smallUnsignedDots)
      hoistedExcess = memref::AllocaOp::create(
          b, loc, MemRefType::get({heads}, b.getI32Type()));
    auto each = scf::ForOp::create(b, loc, index(0), index(heads), index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(each.getBody());
    Value h = each.getInductionVar();
    QueryHead head = queryHead(h);
    auto store = [&](Value bytes, Value words, int64_t c) {
      vector::StoreOp::create(
          b, loc,
          vector::BitCastOp::create(
              b, loc,
              VectorType::get({kLanes / kKeyTileBytes}, b.getI32Type()),
              bytes),
          words, ValueRange{h, index(c * kLanes / kKeyTileBytes)});
    };
    for (auto [c, code] : llvm::enumerate(head.codes))
      store(code, queryWords, c);
    memref::StoreOp::create(b, loc, head.scoreScale, hoistedScales,
                            ValueRange{h});
    if (hoistedExcess)
      memref::StoreOp::create(b, loc, head.keyFlipExcess, hoistedExcess,
                              ValueRange{h});
  }
  auto forall =
      scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{tasks},
                            ValueRange{maxima, sums, weighted}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value task = forall.getInductionVar(0);
    Value g = arith::DivUIOp::create(b, loc, task, blocks);
    Value blockIndex = arith::RemUIOp::create(b, loc, task, blocks);
    Value begin = arith::MulIOp::create(b, loc, blockIndex, index(block));
    Value end = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, begin, index(block)),
        filledSlots);
    Value next = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, task, index(1)),
        arith::SubIOp::create(b, loc, tasks, index(1)));
    nextHead = arith::DivUIOp::create(b, loc, next, blocks);
    nextBegin = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, next, blocks), index(block));
    everyNextRow = everyNextRowBelow(filledSlots);
    SmallVector<QueryHead> queries;
    for (int64_t r = 0; r < group; ++r) {
      Value h = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, g, index(group)), index(r));
      if (!integerScores) {
        queries.push_back(queryHead(h));
        continue;
      }
      QueryHead head;
      head.row = h;
      head.scoreScale =
          memref::LoadOp::create(b, loc, hoistedScales, ValueRange{h});
      if (hoistedExcess)
        head.keyFlipExcess =
            memref::LoadOp::create(b, loc, hoistedExcess, ValueRange{h});
      queries.push_back(head);
    }
    // This task's slices of the partials, written in place.
    auto [maxOut, sumOut, weightedOut] =
        std::tuple(forall.getRegionIterArgs()[0], forall.getRegionIterArgs()[1],
                   forall.getRegionIterArgs()[2]);
    SmallVector<OpFoldResult> rowOffsets = {g, blockIndex, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> rowSizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                          b.getIndexAttr(group)};
    SmallVector<OpFoldResult> ones3(3, b.getIndexAttr(1));
    SmallVector<OpFoldResult> accOffsets = {g, blockIndex, b.getIndexAttr(0),
                                            b.getIndexAttr(0)};
    SmallVector<OpFoldResult> accSizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                          b.getIndexAttr(group),
                                          b.getIndexAttr(headDim)};
    SmallVector<OpFoldResult> ones4(4, b.getIndexAttr(1));
    auto rowType = RankedTensorType::get({group}, f32Type);
    auto accType = RankedTensorType::get({group, headDim}, f32Type);
    Value accSlice = tensor::ExtractSliceOp::create(
        b, loc, accType, weightedOut, accOffsets, accSizes, ones4);
    // The task's stack buffers are at the entry of its outlined function
    // (runBlock); afm-outline-parallel-loops moves those of a task that
    // stays a sequential loop to the function's entry.
    SmallVector<Running> states =
        runBlock(g, begin, end, facts, queries, accSlice);
    auto writeRow = [&](Value out, auto field) -> Value {
      Value slice = tensor::ExtractSliceOp::create(b, loc, rowType, out,
                                                   rowOffsets, rowSizes, ones3);
      SmallVector<Value> values;
      for (const Running &state : states)
        values.push_back(field(state));
      Value vector = vector::FromElementsOp::create(
          b, loc, VectorType::get({group}, f32Type), values);
      return vector::TransferWriteOp::create(b, loc, vector, slice,
                                             ValueRange{index(0)},
                                             ArrayRef<bool>{true})
          .getResult();
    };
    Value maxSlice = writeRow(maxOut, [](const Running &s) { return s.max; });
    Value sumSlice = writeRow(sumOut, [](const Running &s) { return s.sum; });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, maxSlice, maxOut, rowOffsets,
                                          rowSizes, ones3);
    tensor::ParallelInsertSliceOp::create(b, loc, sumSlice, sumOut, rowOffsets,
                                          rowSizes, ones3);
    tensor::ParallelInsertSliceOp::create(b, loc, accSlice, weightedOut,
                                          accOffsets, accSizes, ones4);
  }

  // Per KV head (a task each), per query head of it: the blocks' partials
  // in order, the row's own key and value, the division; written into the
  // [1, H, D] result.
  Value result = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{1, heads, headDim}, f32Type);
  auto combineAll = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(kvHeads)},
      ValueRange{result}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(combineAll.getBody());
    Value g = combineAll.getInductionVar(0);
    Value out = combineAll.getRegionIterArgs()[0];
    SmallVector<OpFoldResult> offsets = {
        b.getIndexAttr(0),
        arith::MulIOp::create(b, loc, g, index(group)).getResult(),
        b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(group),
                                       b.getIndexAttr(headDim)};
    SmallVector<OpFoldResult> ones(3, b.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({group, headDim}, f32Type), out, offsets,
        sizes, ones);
    for (int64_t r = 0; r < group; ++r) {
      SmallVector<Value> row =
          combine(g, r, blocks, forall.getResult(0), forall.getResult(1),
                  forall.getResult(2), newKeys, newValues);
      for (auto [c, chunk] : llvm::enumerate(row))
        slice =
            vector::TransferWriteOp::create(
                b, loc, chunk, slice, ValueRange{index(r), index(c * kLanes)},
                ArrayRef<bool>{true})
                .getResult();
    }
    b.setInsertionPointToStart(combineAll.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, slice, out, offsets, sizes,
                                          ones);
  }
  return combineAll.getResult(0);
}

scf::ForOp DecodeAttention::slotLoop(
    Value begin, Value end, int64_t step, ValueRange init,
    llvm::function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, loc, begin, end, index(step), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value slot = loop.getInductionVar();
  scf::YieldOp::create(b, loc,
                       body(slot, arith::SubIOp::create(b, loc, slot, begin),
                            loop.getRegionIterArgs()));
  return loop;
}

SmallVector<DecodeAttention::Running>
DecodeAttention::runBlock(Value g, Value begin, Value end,
                          const SlotFacts &facts, ArrayRef<QueryHead> queries,
                          Value &weighted) {
  // Three passes over the block, so that no pass keeps more than half the
  // vector registers live: carrying every head's D / 16 accumulators
  // through one loop (R x 8 zmm for D = 128) spilled them on every slot.
  // The scores of the block (R x kBlockSlots f32, 4 KiB for R = 4) stay in
  // a stack buffer; the block's maximum is exact, so no rescaling per
  // vector of slots.
  Type f32Type = b.getF32Type();
  Value scoreBuffer = memref::AllocaOp::create(
      b, loc, MemRefType::get({group, block}, f32Type));
  // Pass 2's sums of exponentials and the maxima they are taken against
  // (see below). Every buffer is made here, before the first loop: at
  // the entry of the task's function once outlined, stack taken once.
  Value sumBuffer = memref::AllocaOp::create(
      b, loc, MemRefType::get({group, kLanes}, f32Type));
  Value shiftBuffer =
      memref::AllocaOp::create(b, loc, MemRefType::get({group}, f32Type));
  Value hidden = splat(minusInfinity());

  // Pass 1: scores of 16 slots at a time for every head, masked and
  // scaled (-inf where not visible), stored; the running maximum per lane.
  // Tiled keys give 16 slots' scores a head in the lanes of vpdpbusd
  // (int8_query) or of f32 FMAs; key rows, a tree of shuffles over 16
  // slots' partial products (one key row converted once for all heads).
  Value queryQuads;
  if (tiledKeys && !integerScores) {
    // Dimensions 4i..4i+3 of each head repeated over 16 lanes: the query
    // operand of a tile's 16 bytes (4 slots x 4 dimensions).
    queryQuads = memref::AllocaOp::create(
        b, loc,
        MemRefType::get({group, headDim / kKeyTileBytes, kLanes}, f32Type));
    for (int64_t r = 0; r < group; ++r)
      for (int64_t i = 0; i < headDim / kKeyTileBytes; ++i) {
        Value chunk = queries[r].scoreChunks[i * kKeyTileBytes / kLanes];
        SmallVector<int64_t> quad;
        for (int64_t j = 0; j < kLanes; ++j)
          quad.push_back(i * kKeyTileBytes % kLanes + j % kKeyTileBytes);
        vector::StoreOp::create(
            b, loc, vector::ShuffleOp::create(b, loc, chunk, chunk, quad),
            queryQuads, ValueRange{index(r), index(i), index(0)});
      }
  }
  auto scoreLoop = slotLoop(
      begin, end, kLanes, SmallVector<Value>(group, hidden),
      [&](Value slot0, Value offset, ValueRange runningMax) {
        prefetchRows(g, slot0);
        SmallVector<Value> scores;
        if (integerScores)
          scores = tiledIntegerScores(g, slot0, queries, queryWords);
        else if (tiledKeys)
          scores = tiledScores(g, slot0, group, queryQuads);
        else
          scores = scoreTree(slot0, 0, kLanes, [&](Value slot) {
            return slotProducts(g, slot, queries);
          });
        Value keyScales = quantized ? cacheScales(0, g, slot0) : Value();
        Value valid = visible(facts, slot0);
        SmallVector<Value> maxima;
        for (int64_t r = 0; r < group; ++r) {
          Value scale = splat(queries[r].scoreScale);
          if (keyScales)
            scale = arith::MulFOp::create(b, loc, scale, keyScales);
          Value s = arith::SelectOp::create(
              b, loc, valid, arith::MulFOp::create(b, loc, scores[r], scale),
              hidden);
          vector::StoreOp::create(b, loc, s, scoreBuffer,
                                  ValueRange{index(r), offset});
          maxima.push_back(arith::MaximumFOp::create(b, loc, runningMax[r], s));
        }
        return maxima;
      });
  SmallVector<Value> blockMaxima(scoreLoop.getResults());

  // Exponents against the block's maximum m, or 0 where every slot is
  // masked (m = -inf), so that exp(-inf) = 0 and never NaN.
  SmallVector<Running> results(group);
  SmallVector<Value> shifts;
  for (int64_t r = 0; r < group; ++r) {
    Value max = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXIMUMF, blockMaxima[r]);
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                       minusInfinity());
    shifts.push_back(arith::SelectOp::create(b, loc, none, f32(0.0), max));
    results[r].max = max;
  }

  // Passes 2 and 3. The weighted values go one group of chunks at a time
  // (their accumulators of every head in at most half the vector
  // registers), 16 slots a step and within it slot by slot over exactly
  // the block's filled slots: each chunk of a value row read once for all
  // heads, each probability broadcast once from the buffer. A step
  // prefetches the next task's line of 16 scales, a slot its row. The
  // first group's steps also take the exponentials (pass 2) of the step
  // after theirs: those need the block's maximum, so they cannot join
  // pass 1, and in a loop of their own they ran with no DRAM request in
  // flight. One step ahead: the step's own, right before its broadcasts
  // read them, made the step 7-9% slower from cache (afm-bench, 1
  // thread: 0.234 -> 0.251 ms at 32/8 heads, 0.195 -> 0.212 at 24/8).
  // The sums and shifts stay in memory: live across the slots' loop
  // beside R x groupChunks accumulators, they spilled those.
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vf, b.getF32FloatAttr(0.0)));
  for (int64_t r = 0; r < group; ++r) {
    vector::StoreOp::create(b, loc, zeros, sumBuffer,
                            ValueRange{index(r), index(0)});
    memref::StoreOp::create(b, loc, shifts[r], shiftBuffer, index(r));
  }
  auto exponentials = [&](Value slot0, Value offset0) {
    Value valueScales = quantized ? cacheScales(1, g, slot0) : Value();
    for (int64_t r = 0; r < group; ++r) {
      Value s = vector::LoadOp::create(b, loc, vf, scoreBuffer,
                                       ValueRange{index(r), offset0});
      Value shift =
          splat(memref::LoadOp::create(b, loc, shiftBuffer, index(r)));
      Value p = math::ExpOp::create(b, loc,
                                    arith::SubFOp::create(b, loc, s, shift));
      Value sum = vector::LoadOp::create(b, loc, vf, sumBuffer,
                                         ValueRange{index(r), index(0)});
      vector::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, sum, p),
                              sumBuffer, ValueRange{index(r), index(0)});
      if (valueScales)
        p = arith::MulFOp::create(b, loc, p, valueScales);
      vector::StoreOp::create(b, loc, p, scoreBuffer,
                              ValueRange{index(r), offset0});
    }
  };
  exponentials(begin, index(0));

  int64_t groupChunks = valueGroupChunks();
  int64_t groups = chunks / groupChunks;
  for (int64_t c0 = 0; c0 < chunks; c0 += groupChunks) {
    int64_t groupIndex = c0 / groupChunks;
    auto weightedValues = [&](Value slot, Value offset, ValueRange acc) {
      prefetchNextTask(groupIndex, groups, offset, /*rows=*/true);
      SmallVector<Value> row;
      for (int64_t c = c0; c < c0 + groupChunks; ++c)
        row.push_back(cacheChunk(1, g, slot, c));
      SmallVector<Value> next;
      for (int64_t r = 0; r < group; ++r) {
        Value weight = splat(memref::LoadOp::create(
            b, loc, scoreBuffer, ValueRange{index(r), offset}));
        for (int64_t c = 0; c < groupChunks; ++c)
          next.push_back(vector::FMAOp::create(b, loc, weight, row[c],
                                               acc[r * groupChunks + c]));
      }
      return next;
    };
    auto valueLoop = slotLoop(
        begin, end, kLanes, SmallVector<Value>(group * groupChunks, zeros),
        [&](Value slot0, Value offset0, ValueRange carried) {
          prefetchNextTask(groupIndex, groups, offset0, /*rows=*/false);
          Value nextSlot0 = arith::AddIOp::create(b, loc, slot0, index(kLanes));
          if (groupIndex == 0) {
            auto ahead = scf::IfOp::create(
                b, loc, TypeRange(),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      nextSlot0, end),
                /*withElseRegion=*/false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(ahead.thenBlock());
            exponentials(nextSlot0, arith::AddIOp::create(b, loc, offset0,
                                                          index(kLanes)));
          }
          auto slots = slotLoop(
              slot0, arith::MinUIOp::create(b, loc, nextSlot0, end), 1,
              carried, [&](Value slot, Value inStep, ValueRange acc) {
                return weightedValues(
                    slot, arith::AddIOp::create(b, loc, offset0, inStep), acc);
              });
          return SmallVector<Value>(slots.getResults());
        });
    // Written now: held across the next group's loop, these spilled
    // there on every slot.
    for (int64_t r = 0; r < group; ++r)
      for (int64_t c = 0; c < groupChunks; ++c)
        weighted = vector::TransferWriteOp::create(
                       b, loc, valueLoop.getResult(r * groupChunks + c),
                       weighted, ValueRange{index(r), index((c0 + c) * kLanes)},
                       ArrayRef<bool>{true})
                       .getResult();
  }
  for (int64_t r = 0; r < group; ++r)
    results[r].sum = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD,
        vector::LoadOp::create(b, loc, vf, sumBuffer,
                               ValueRange{index(r), index(0)}));
  return results;
}

SmallVector<Value> DecodeAttention::combine(Value g, int64_t r, Value blocks,
                                            Value maxima, Value sums,
                                            Value weighted, Value newKeys,
                                            Value newValues) {
  SmallVector<Value> init = pack(emptyState());
  auto loop = scf::ForOp::create(b, loc, index(0), blocks, index(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value blockIndex = loop.getInductionVar();
    Running current = unpack(loop.getRegionIterArgs()).front();
    Value head = index(r);
    Value max = tensor::ExtractOp::create(b, loc, maxima,
                                          ValueRange{g, blockIndex, head});
    Value sum = tensor::ExtractOp::create(b, loc, sums,
                                          ValueRange{g, blockIndex, head});
    SmallVector<Value> acc;
    for (int64_t c = 0; c < chunks; ++c)
      acc.push_back(vector::TransferReadOp::create(
          b, loc, vf, weighted,
          ValueRange{g, blockIndex, head, index(c * kLanes)}, f32(0.0),
          ArrayRef<bool>{true}));
    scf::YieldOp::create(b, loc, pack(fold(current, max, sum, acc)));
  }
  Running state = unpack(loop.getResults()).front();
  if (newKeys) {
    // The row's own key: always visible to itself.
    Value headRow = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, g, index(group)), index(r));
    SmallVector<Value> query = queryHead(headRow).chunks;
    SmallVector<Value> key = rowChunks(newKeys, g);
    Value dot = arith::MulFOp::create(b, loc, query[0], key[0]);
    for (int64_t c = 1; c < chunks; ++c)
      dot = vector::FMAOp::create(b, loc, query[c], key[c], dot);
    Value score = arith::MulFOp::create(
        b, loc,
        vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, dot),
        f32(spec.scale));
    state = fold(state, score, f32(1.0), rowChunks(newValues, g));
  }
  SmallVector<Value> normalized;
  Value sum = splat(state.sum);
  for (Value acc : state.acc)
    normalized.push_back(arith::DivFOp::create(b, loc, acc, sum));
  return normalized;
}

Value afm::buildDecodeAttention(OpBuilder &b, Location loc,
                                const AttentionSpec &spec, Value newKeys,
                                Value newValues) {
  return DecodeAttention(b, loc, spec).build(newKeys, newValues);
}
