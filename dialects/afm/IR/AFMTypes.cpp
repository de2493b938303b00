//===- AFMTypes.cpp - afm enums, attributes and types ---------------------===//

#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::afm;

//===----------------------------------------------------------------------===//
// Custom directives: `RxC` and `GxCxD` static shapes
//===----------------------------------------------------------------------===//

static ParseResult parseStaticDims(AsmParser &parser,
                                   SmallVectorImpl<int64_t> &dims,
                                   size_t expected, StringRef what) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return failure();
  if (dims.size() != expected)
    return parser.emitError(loc) << "expected " << what << " with "
                                 << expected << " dimensions, got "
                                 << dims.size();
  return success();
}

static ParseResult parseMatrix(AsmParser &parser, int64_t &rows,
                               int64_t &cols) {
  SmallVector<int64_t, 2> dims;
  if (parseStaticDims(parser, dims, 2, "a matrix shape"))
    return failure();
  rows = dims[0];
  cols = dims[1];
  return success();
}

static void printMatrix(AsmPrinter &printer, int64_t rows, int64_t cols) {
  printer << rows << 'x' << cols;
}

static ParseResult parseCacheShape(AsmParser &parser, int64_t &kvHeads,
                                   int64_t &capacity, int64_t &headDim) {
  SmallVector<int64_t, 3> dims;
  if (parseStaticDims(parser, dims, 3,
                      "a cache shape (kv heads x capacity x head dim)"))
    return failure();
  kvHeads = dims[0];
  capacity = dims[1];
  headDim = dims[2];
  return success();
}

static void printCacheShape(AsmPrinter &printer, int64_t kvHeads,
                            int64_t capacity, int64_t headDim) {
  printer << kvHeads << 'x' << capacity << 'x' << headDim;
}

#include "dialects/afm/IR/AFMEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/afm/IR/AFMAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/afm/IR/AFMTypes.cpp.inc"

void AFMDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/afm/IR/AFMAttrs.cpp.inc"
      >();
}

void AFMDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/afm/IR/AFMTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static LogicalResult verifyMatrixDims(function_ref<InFlightDiagnostic()> emitError,
                                      int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return emitError() << "weight shape must be positive, got " << rows << "x"
                       << cols;
  return success();
}

std::optional<std::array<int64_t, 2>> mlir::afm::getWeightMatrixShape(Type type) {
  return llvm::TypeSwitch<Type, std::optional<std::array<int64_t, 2>>>(type)
      .Case<RankedTensorType>(
          [](RankedTensorType t) -> std::optional<std::array<int64_t, 2>> {
            if (t.getRank() != 2)
              return std::nullopt;
            return std::array<int64_t, 2>{t.getDimSize(0), t.getDimSize(1)};
          })
      .Case<Q2WeightType, Q4WeightType, ASTCWeightType>(
          [](auto t) -> std::optional<std::array<int64_t, 2>> {
            return std::array<int64_t, 2>{t.getRows(), t.getCols()};
          })
      .Default([](Type) { return std::nullopt; });
}

std::optional<KVCacheShape> mlir::afm::getKVCacheShape(Type type) {
  if (auto cache = dyn_cast<KVCacheType>(type))
    return KVCacheShape{cache.getKvHeads(), cache.getCapacity(),
                        cache.getHeadDim(), cache.getElementType()};
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || memref.getRank() != 4 || !memref.hasStaticShape() ||
      memref.getDimSize(0) != 2)
    return std::nullopt;
  return KVCacheShape{memref.getDimSize(1), memref.getDimSize(2),
                      memref.getDimSize(3), memref.getElementType()};
}

bool mlir::afm::isCompressedWeight(Type type) {
  return isa<Q2WeightType, Q4WeightType, ASTCWeightType>(type);
}

SmallVector<WeightPart> mlir::afm::getBoundWeightParts(Type type) {
  MLIRContext *ctx = type.getContext();
  auto i8 = IntegerType::get(ctx, 8);
  auto f32 = Float32Type::get(ctx);
  auto f16 = Float16Type::get(ctx);
  auto tensor = [](ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  };
  if (auto q2 = dyn_cast<Q2WeightType>(type))
    return {{"codes", tensor({q2.getRows(), int64_t(q2RowBytes(q2.getCols()))}, i8)},
            {"scales", tensor({q2.getNumScales()}, f32)}};
  if (auto q4 = dyn_cast<Q4WeightType>(type))
    return {{"codes", tensor({q4.getRows(), int64_t(q4RowBytes(q4.getCols()))}, i8)},
            {"scales",
             tensor({q4.getRows(), q4.getCols() / q4.getGroup()}, f32)}};
  if (auto astc = dyn_cast<ASTCWeightType>(type)) {
    if (astc.getBlockRows() != kASTCBlockDim ||
        astc.getBlockCols() != kASTCBlockDim)
      return {};
    int64_t nb = astcBlocks(astc.getRows());
    int64_t kb = astcStoredBlockColumns(astc.getCols());
    int64_t pairs = kASTCBlockDim / 2;
    // By row pairs (lib/Compress/ASTCTranscode.h): byte m of lane
    // [nb, i, kb] holds column m (of the codes: 0..3; of the tail codes:
    // 4 + m) of rows 2i, low nibble, and 2i + 1 of block (nb, kb).
    return {{"codes", tensor({nb, pairs, kb}, IntegerType::get(ctx, 32))},
            {"tail_codes", tensor({nb, pairs, kb}, IntegerType::get(ctx, 16))},
            {"scales", tensor({nb, kb}, f16)},
            {"biases", tensor({nb, kb}, f16)}};
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// Checks that `attr` is a 1-D tensor of element type `elementType`.
static LogicalResult verifyPayload(function_ref<InFlightDiagnostic()> emitError,
                                   ElementsAttr attr, Type elementType,
                                   StringRef what) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || type.getRank() != 1 || type.getElementType() != elementType)
    return emitError() << what << " must be a 1-D tensor of " << elementType
                       << ", got " << attr.getType();
  return success();
}

LogicalResult
QuantizedDataAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ElementsAttr codes, ElementsAttr scales) {
  Builder b(codes.getContext());
  if (failed(verifyPayload(emitError, codes, b.getI8Type(), "codes")) ||
      failed(verifyPayload(emitError, scales, b.getF32Type(), "scales")))
    return failure();
  return success();
}

LogicalResult ASTCDataAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ElementsAttr blocks, ElementsAttr offsets) {
  Builder b(blocks.getContext());
  if (failed(verifyPayload(emitError, blocks, b.getI8Type(), "blocks")) ||
      failed(verifyPayload(emitError, offsets, b.getF16Type(), "offsets")))
    return failure();
  if (blocks.getNumElements() % 16 != 0)
    return emitError() << "blocks must hold 16 bytes per ASTC block, got "
                       << blocks.getNumElements() << " bytes";
  return success();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

LogicalResult Q2WeightType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t rows, int64_t cols,
                                   ScaleGranularity) {
  return verifyMatrixDims(emitError, rows, cols);
}

int64_t Q2WeightType::getNumScales() const {
  return getGranularity() == ScaleGranularity::PerTensor ? 1 : getRows();
}

int64_t Q2WeightType::getCodeBytes() const {
  return getRows() * int64_t(q2RowBytes(getCols()));
}

LogicalResult Q4WeightType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t rows, int64_t cols, int64_t group) {
  if (failed(verifyMatrixDims(emitError, rows, cols)))
    return failure();
  if (group <= 0 || cols % group != 0)
    return emitError() << "group size " << group
                       << " must be positive and divide the row length "
                       << cols;
  return success();
}

int64_t Q4WeightType::getNumScales() const {
  return getRows() * (getCols() / getGroup());
}

int64_t Q4WeightType::getCodeBytes() const {
  return getRows() * int64_t(q4RowBytes(getCols()));
}

/// The 2D block footprints ASTC defines, as width x height.
static constexpr std::pair<int64_t, int64_t> kASTCFootprints[] = {
    {4, 4},  {5, 4},  {5, 5},  {6, 5},   {6, 6},   {8, 5},   {8, 6},
    {8, 8},  {10, 5}, {10, 6}, {10, 8},  {10, 10}, {12, 10}, {12, 12}};

LogicalResult ASTCWeightType::verify(function_ref<InFlightDiagnostic()> emitError,
                                     int64_t rows, int64_t cols,
                                     int64_t blockRows, int64_t blockCols,
                                     ASTCOffset) {
  if (failed(verifyMatrixDims(emitError, rows, cols)))
    return failure();
  // A block of blockRows weight rows covers blockCols columns: the ASTC
  // footprint is blockCols (width) x blockRows (height).
  if (!llvm::is_contained(kASTCFootprints,
                          std::make_pair(blockCols, blockRows))) {
    InFlightDiagnostic diag = emitError();
    diag << "block " << blockRows << "x" << blockCols
         << " is not an ASTC 2D footprint; valid footprints are";
    llvm::interleave(
        kASTCFootprints, [&](auto f) { diag << " " << f.second << "x" << f.first; },
        [&] { diag << ","; });
    return diag;
  }
  return success();
}

int64_t ASTCWeightType::getNumBlocks() const {
  return ceilDiv(getRows(), getBlockRows()) * ceilDiv(getCols(), getBlockCols());
}

LogicalResult KVCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t kvHeads, int64_t capacity,
                                  int64_t headDim, Type elementType) {
  if (kvHeads <= 0 || capacity <= 0 || headDim <= 0)
    return emitError() << "KV cache shape must be positive, got " << kvHeads
                       << "x" << capacity << "x" << headDim;
  if (!elementType.isF32() && !elementType.isF16() && !elementType.isBF16() &&
      !elementType.isSignlessInteger(8))
    return emitError() << "KV cache element type must be f32, f16, bf16 or i8, "
                          "got "
                       << elementType;
  // Keys and values, plus an f32 scale per position and head for int8:
  // every size derived from the cache stays far from overflowing int64.
  constexpr int64_t kMaxCacheBytes = int64_t(1) << 44; // 16 TiB
  int64_t bytes = 2 * 4; // the widest element, both K and V
  for (int64_t dim : {kvHeads, capacity, headDim + 1}) {
    if (dim > kMaxCacheBytes / bytes)
      return emitError() << "KV cache " << kvHeads << "x" << capacity << "x"
                         << headDim << " is too large: its buffers would "
                         << "exceed 2^44 bytes";
    bytes *= dim;
  }
  return success();
}
