//===- AFMTypes.td - afm weight and cache types ------------*- tablegen -*-===//

#ifndef AFM_TYPES_TD
#define AFM_TYPES_TD

include "dialects/afm/IR/AFMAttrs.td"

class AFM_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<AFM_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def AFM_Q2WeightType : AFM_Type<"Q2Weight", "q2"> {
  let summary = "2-bit balanced-level weight codes with their scale";
  let description = [{
    A weight matrix `[rows, cols]` (`[N, K]`, output features by input
    features) whose entries are `s * level(q)` with 2-bit codes `q` mapping
    to the balanced levels `{-1.5, -0.5, 0.5, 1.5}`. The scale `s` is one
    per tensor or one per output channel (row).

    Example:

    ```mlir
    !afm.q2<4096x4096, per_tensor>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols,
                        "ScaleGranularity":$granularity);
  let assemblyFormat =
      "`<` custom<Matrix>($rows, $cols) `,` $granularity `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of f32 scales the weight carries.
    int64_t getNumScales() const;
    /// Bytes of packed codes: each row padded to a whole byte.
    int64_t getCodeBytes() const;
  }];
}

def AFM_Q4WeightType : AFM_Type<"Q4Weight", "q4"> {
  let summary = "4-bit weight codes with one scale per group of a row";
  let description = [{
    A table `[rows, cols]` (e.g. the embedding table, `[V, d]`) stored as
    symmetric 4-bit codes `q in [-8, 7]`, with one f32 scale per `group`
    consecutive entries of a row: `W = scale * q`. `group` must divide
    `cols`.

    Example:

    ```mlir
    !afm.q4<32000x2048, group = 32>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols, "int64_t":$group);
  let assemblyFormat =
      "`<` custom<Matrix>($rows, $cols) `,` `group` `=` $group `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumScales() const;
    int64_t getCodeBytes() const;
  }];
}

def AFM_ASTCWeightType : AFM_Type<"ASTCWeight", "astc"> {
  let summary = "ASTC HDR-compressed weight with a per-block f16 offset";
  let description = [{
    A weight matrix `[rows, cols]` cut into `blockRows x blockCols` blocks
    (rows by columns; the paper uses 6x6, 36 weights per 128-bit block).
    Each block stores one ASTC HDR block `D` and one f16 offset `m`; the
    weight is `D + m`. `offset` records how `m` was chosen: `min` (the
    block minimum, as in the paper) or `linear_segment` (the data lies in
    the linear segment of ASTC's HDR curve). Partial blocks at the right
    and bottom edges are padded. The block footprint must be one ASTC
    defines for 2D textures.

    Example:

    ```mlir
    !afm.astc<4096x4096, block = 6x6, offset = linear_segment>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols,
                        "int64_t":$blockRows, "int64_t":$blockCols,
                        "ASTCOffset":$offset);
  let assemblyFormat = [{
    `<` custom<Matrix>($rows, $cols) `,` `block` `=`
        custom<Matrix>($blockRows, $blockCols) `,` `offset` `=` $offset `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of blocks, counting the padded edge blocks.
    int64_t getNumBlocks() const;
  }];
}

def AFM_KVCacheType : AFM_Type<"KVCache", "kv_cache"> {
  let summary = "A layer's key/value cache, owned by the runtime";
  let description = [{
    Keys and values of `kvHeads` heads of dimension `headDim`, for up to
    `capacity` positions. Global layers need the full context length; local
    layers never need more than their window (the cache is a ring buffer).
    The element type is `f32`, `f16`, `bf16`, or `i8`; an `i8` cache holds
    symmetric int8 values with one f32 scale per token per head.

    Example:

    ```mlir
    !afm.kv_cache<8x4096x128, i8>
    ```
  }];
  let parameters = (ins "int64_t":$kvHeads, "int64_t":$capacity,
                        "int64_t":$headDim, "::mlir::Type":$elementType);
  let assemblyFormat = [{
    `<` custom<CacheShape>($kvHeads, $capacity, $headDim) `,` $elementType `>`
  }];
  let genVerifyDecl = 1;
}

def AFM_CompressedWeight : AnyTypeOf<[AFM_Q2WeightType, AFM_Q4WeightType,
                                      AFM_ASTCWeightType]>;

#endif // AFM_TYPES_TD
