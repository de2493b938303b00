//===- Passes.td - afm passes --------------------------------*- tablegen -*-===//
//
// One pass per file under passes/ (transformations) and passes/Conversion/
// (lowerings out of the afm dialect).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_TD
#define AFM_PASSES_TD

include "mlir/Pass/PassBase.td"

def AFMLowerToLinalgPass : Pass<"afm-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower afm layers on plain weights to linalg on tensors";
  let description = [{
    Rewrites the token-wise afm ops whose weights are plain tensors into
    `linalg` (named contractions and `linalg.generic`), `tensor`, `arith` and
    `math` ops with the semantics of docs/semantics.md sections 2-4: `afm.embedding`,
    `afm.rms_norm` (reduced in f32), `afm.rope`, `afm.linear`, `afm.lora`,
    `afm.swiglu`, `afm.lm_head`, and `afm.track_block` (tracks run one after
    another, then averaged; `a later track lowering makes them parallel).

    Ops this pass does not handle (attention with its KV cache, mixture of
    experts, compressed weights) are left in place for the passes that own
    them; the AOT pipeline reports any afm op that survives lowering.

    With `int8-activations`, linear layers over 2-bit and ASTC weights and
    an LM head over a 4-bit table quantize each row of their input to int8
    (symmetric, scale max|x| / 127, round half to even) and multiply in
    integers, the offsets and the scales applied once per output (the 4-bit
    group scales once per group); the target's integer dot products (VNNI,
    vpmaddubsw, sdot) then run the inner loop. A model imported from a
    config with `linear_activations: "int8"` asks for it in its `afm.model`
    attribute.
  }];
  let options = [
    Option<"int8Activations", "int8-activations", "bool", /*default=*/"false",
           "Quantize the inputs of 2-bit and ASTC linear layers and of a "
           "4-bit LM head to int8 per row and multiply with integer dot "
           "products">,
  ];
  let dependentDialects = [
    "mlir::afm_cpu::AFMCPUDialect",
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::tensor::TensorDialect",
    // The 4-bit head reads its code bytes as i32 words (a memref.view).
    "mlir::bufferization::BufferizationDialect",
    "mlir::memref::MemRefDialect",
  ];
}

def AFMTagOpLocationsPass : Pass<"afm-tag-op-locations", "mlir::ModuleOp"> {
  let summary = "Name each afm op's location after the op, for profiles";
  let description = [{
    Wraps the location of every afm op in a `NameLoc` holding the op's name
    without the dialect prefix (`linear`, `attention`, `lm_head`, ...).
    Lowerings pass an op's location on to the loops they make from it, and
    afm-outline-parallel-loops appends that name to the tasks it outlines
    (`afm_decode_task12_linear`), so the binary's symbols tell which model
    op a sampled instruction belongs to (`afm-run --profile`). Locations
    that already carry the name are left alone; nothing else changes.
  }];
}

def AFMPrefillBypassPass : Pass<"afm-prefill-bypass", "mlir::ModuleOp"> {
  let summary = "Compute the layers after the last KV-writing attention for the last prompt row only";
  let description = [{
    A prefill chunk needs the logits of its last real row only. Every op
    after the last `afm.attention` that appends to a cache works row by row
    (norms, linear layers, SwiGLU, MoE, residual additions, RoPE and
    `afm.shared_kv_attention`, which reads a cache filled by an earlier
    layer). So the final "take row count-1" slice can move above them, and
    they run on one row instead of the chunk. On the on-device model this
    skips Block 2 during prefill (the paper's prefill bypass), and on any
    model the feed-forward half of the last layer.

    The pass hoists a single-row `tensor.extract_slice` above the op that
    produces its source while every use of that op's result is the same
    single-row slice. `afm.rope` and `afm.shared_kv_attention` move to the
    row's position; shared-KV attention is only moved for the last real row
    (`count - 1`), where its view of the cache stays exact.
  }];
}

def AFMSizeKVCachesPass : Pass<"afm-size-kv-caches", "mlir::ModuleOp"> {
  let summary = "Shrink the caches of local-attention layers to ring buffers of their window";
  let description = [{
    A cache only read by local attention never needs positions older than
    the window: its capacity becomes `window` (the attention lowering
    addresses it as a ring buffer). A multi-row `afm.shared_kv_attention`
    reader of `T` rows also needs the `T - 1` positions its chunk appended
    after its first row, so such caches keep `window + T - 1` (prefill
    bypass leaves shared readers with one row). Caches read by any global
    layer keep the full context. Caches are identified across entry points
    by their `afm.layer`, and every entry point gets the same size.
  }];
}

def AFMSVDSplitPass : Pass<"afm-svd-split", "mlir::ModuleOp"> {
  let summary = "Give compressed linear layers a LoRA adapter holding their top singular vectors";
  let description = [{
    The paper's quality-recovery adapters: before a weight `W [N, K]` is
    compressed, its top-`r` singular vectors move into a rank-`r` adapter,
    `W = B A + R`, and only the residual `R` is compressed. For every
    `afm.linear` whose weight is an external compressed `afm.weight`, this
    pass adds the adapter weights `<name>.svd_a [r, K]` and
    `<name>.svd_b [N, r]` and an `afm.lora` on the linear's result, and
    annotates the weights so the packager computes the split from the float
    weight: `afm.svd_residual` on `W`, `afm.svd_factor` on `A` and `B`.

    The rank and alpha come from the options, or (rank -1, the default)
    from the module's `afm.model` `lora_rank`/`lora_alpha` (from the
    config's `lora_rank`); rank 0 does nothing. An `afm.swiglu` over
    compressed weights (a fused FFN with no adapter slot) is first split
    into its gate, up and down linear layers and element-wise ops. Linear
    layers that already have an adapter are left alone.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"-1",
           "Adapter rank (-1: the module's afm.model lora_rank)">,
    Option<"alpha", "alpha", "double", /*default=*/"0.0",
           "Adapter alpha (0: the module's lora_alpha, else the rank)">,
  ];
}

def AFMFuseMinShiftPass : Pass<"afm-fuse-min-shift", "mlir::ModuleOp"> {
  let summary = "Fold ASTC block offsets into the matmul's accumulator init";
  let description = [{
    An ASTC weight is `D + broadcast(m)`: block values plus one offset per
    6x6 block. `afm.linear %x, %w` or `afm.lm_head %x, %w` over such a
    weight (or over `afm.dequantize %w`) becomes

    ```mlir
    %d = afm.astc_decode %w
    %m = afm.astc_offsets %w
    %s = afm.min_shift %x, %m {block = array<i64: 6, 6>}
    %y = afm.linear %x, %d acc(%s : ...)
    ```

    so the offset term is the per-block sums of `x` times the offsets, added
    as the accumulator init, and the linear layer decodes blocks as it
    multiplies: no reconstructed weight is materialized. An existing
    accumulator is added to the offset term; an `afm.lm_head` becomes the
    `afm.linear` of the last line, at the head's location; an `afm.swiglu`
    with an ASTC weight is first split into its three linear layers and
    the gate's element-wise math (as afm-svd-split splits it).

    With `dequantize=true` the pass does the opposite, for testing: every
    ASTC weight of a linear, LM head, SwiGLU or MoE layer is replaced by its materialized
    `afm.dequantize` (the unfused reference math).
  }];
  let options = [
    Option<"dequantize", "dequantize", "bool", /*default=*/"false",
           "Materialize D + m instead of fusing (the unfused math)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def AFMBindEntryABIPass : Pass<"afm-bind-entry-abi", "mlir::ModuleOp"> {
  let summary = "Give entry points the runtime's C ABI: weights, KV caches and logits become memory";
  let description = [{
    Every function with an `afm.entry` attribute (`"prefill"` or
    `"decode"`) must have the model-entry signature

    ```mlir
    func.func @prefill(%tokens: tensor<Cxi32>, %count: index, %pos: index,
                       %kv0: !afm.kv_cache<...> {afm.layer = 0 : i64}, ...)
        -> tensor<Vxf32>     // or tensor<1xVxf32>
        attributes {afm.entry = "prefill"}
    ```

    and becomes `afm_prefill` with the signature of
    `include/afm/kernel_abi.h` (bare pointers once lowered):
    `(memref<Wxi8> weights, memref<Cxi32> tokens, index count,
      index position, memref<Bxi8> kv_arena, memref<Vxf32> logits,
      !llvm.ptr host)`.

    Weights are laid out in the weights section in order of first use,
    64-byte aligned, and each `afm.weight` becomes a `memref.view` of it;
    each layer's cache becomes a view `memref<2 x G x C x D>` of the arena.
    The layouts are recorded on the module as `afm.weights`,
    `afm.kv_layout`, `afm.weights_bytes` and `afm.kv_arena_bytes`, for the
    packager and the manifest. All entries must agree on the caches.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def AFMLowerTracksPass : Pass<"afm-lower-tracks", "mlir::ModuleOp"> {
  let summary = "Run the tracks of each track block as parallel work items";
  let description = [{
    Each `afm.track_block` of `n` tracks becomes an `scf.forall` over the
    tracks whose iteration runs its track's region (an `scf.index_switch`
    on the track index) and stores the track's residual stream in one slice
    of an `[n, ...]` tensor, followed by the mean over tracks. The forall is
    the block's only synchronization point; inside a track nothing waits for
    another. `afm-outline-parallel-loops` later hands the iterations to the
    runtime's threads. Each track writes its stream into its slice itself
    (`bufferization.materialize_in_destination`), so bufferizing the switch
    allocates nothing.

    In an entry point bound to the kernel ABI, the tracks may be split
    between processes: the iteration of a track outside the host's
    `[track_begin, track_end)` yields zeros, and the sum over the stacked
    tracks goes through one `afm_cpu.track_allreduce` (the host's
    reduction, in place) before it is scaled to the mean. The pass records
    the tracks per block as the module's `afm.track_count`.
  }];
  let dependentDialects = [
    "mlir::afm_cpu::AFMCPUDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect",
    "mlir::arith::ArithDialect",
    "mlir::bufferization::BufferizationDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def AFMLowerMoEPass : Pass<"afm-lower-moe", "mlir::ModuleOp"> {
  let summary = "Lower mixture-of-experts layers to top-k routing and a grouped GEMM";
  let description = [{
    `afm.moe` becomes `afm.topk_router` and, for every expert (unrolled:
    each has weights of its own), a loop over the tokens routed to it:
    their indices and gate weights are compacted, the tokens are gathered
    in row tiles of static size, each tile goes through the expert's SwiGLU
    (`afm.swiglu` on the expert's weights, plain or compressed, lowered like
    any dense FFN), and the gated rows are added back to their
    tokens. The loop over a tile count computed at run time means no token
    is ever dropped, whatever the routing, and an expert that receives no
    token costs nothing.

    `afm.topk_router` becomes the router matmul, a scan per token that picks
    the `top_k` largest logits (ties to the lower expert index) and the
    softmax of the selected logits.
  }];
  let options = [
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"4",
           "Tokens per expert GEMM tile (capped at the token count)">,
  ];
  let dependentDialects = [
    "mlir::afm_cpu::AFMCPUDialect",
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def AFMLowerAttentionPass : Pass<"afm-lower-attention", "mlir::ModuleOp"> {
  let summary = "Lower attention over bound KV caches to linalg and cache appends";
  let description = [{
    Rewrites `afm.attention` and `afm.shared_kv_attention` whose cache is
    bound to runtime memory (`memref<2 x G x capacity x headDim>`, see
    `afm-bind-entry-abi`) into linalg on tensors with static shapes:

    - scores of every query row against every cache slot and against the
      new key rows, in a `[T, G, H/G, ...]` index space so that grouped
      query heads share their KV head through plain indexing maps;
    - a mask from positions: slot `j` holds position
      `filled - 1 - ((filled - 1 - j) mod capacity)` when `j < filled`
      (a ring buffer; for global caches the capacity covers the context),
      causal, and for local layers within the window;
    - softmax in f32 over both parts, and the weighted sum of values;
    - for `afm.attention`, an `scf.for` over the `count` real rows that
      stores each key and value row at slot `(position + row) mod capacity`,
      after all reads of the cache.

    One query row (a decode step) with a head dimension and capacity that
    are multiples of 16 lowers instead to flash-decoding in the vector
    dialect: an `scf.forall` over (KV head, block of filled slots) whose
    tasks keep softmax partials, 16 slots per vector of scores, then
    an `scf.forall` over KV heads that folds the partials and the new row.
    A task makes two passes over its block: scores into a stack buffer,
    then weighted values by groups of chunks (the first group also takes
    the exponentials, 16 slots ahead), which prefetch the next task's
    key and value rows and scales non-temporally; with `int8_query`
    the scores are vpdpbusd-style byte dot products (key codes + 128
    against the query codes).

    The keys of an i8 cache whose capacity is a multiple of 16 and head
    dimension of 64 are stored in tiles of 16 slots, dimensions 4i..4i+3
    of the tile's slots side by side (docs/afmb-format.md): the append
    writes them so, the general lowering unpacks a block's tiles to rows,
    and a decode step's 64-byte load holds four dimensions of 16 slots,
    whose products against a head's four query values land in the slots'
    own lanes (no tree of shuffles per slot).

    A cache that is still `!afm.kv_cache` is an error: bind the ABI first.
    So is a cache or scales memref with a non-identity layout (a strided
    view would not address the arena's rows and tiles).
  }];
  let dependentDialects = [
    "mlir::afm_cpu::AFMCPUDialect",
    "mlir::arith::ArithDialect",
    "mlir::bufferization::BufferizationDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
    "mlir::vector::VectorDialect",
  ];
}

def AFMSetTargetPass : Pass<"afm-set-target", "mlir::ModuleOp"> {
  let summary = "Stamp the target on the module (afm.target)";
  let description = [{
    Resolves a target name of lib/Target's table (`host`: this machine)
    and records it on the module as `afm.target = #afm.target<name, os>`.
    This is the one place a target name is resolved: the passes that
    depend on the target (afm-pack-gemm, afm-tile-for-target,
    afm-lower-dot-bytes) read its description from the module. The
    pipelines run it first. An unknown name or OS is an error that lists
    the known ones.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Target name (as afm-compile --target)">,
    Option<"targetOS", "target-os", "std::string", /*default=*/"\"\"",
           "Retarget to another OS: linux or macos">,
  ];
}

def AFMPackGEMMPass : Pass<"afm-pack-gemm", "mlir::ModuleOp"> {
  let summary = "Data-tile big f32 matmuls into register-tile panels for the target";
  let description = [{
    Rewrites each f32 contraction with one M, one N and one K dimension (and
    at most one batch dimension) on tensors, big enough to pay for it, into
    a GEMM over packed operands: A as `[b, M/mr, K, mr]` panels, B as
    `[b, N/nr, K, nr]` panels, C as `[b, M/mr, N/nr, mr, nr]` register
    tiles, with `linalg.transpose` relayouts around it (folded at compile
    time when the operand is a constant). `mr`, `nr` and the cache blocks
    `kc`, `nc` (and `mc`, rows of A, when M's rows over `kc` do not fit a
    quarter of L2) come from the target description's register file and
    L1/L2 sizes of the module's `afm.target`. The packed GEMM carries its choice
    as an `afm.gemm_schedule`, which afm-tile-for-target applies. Operand layouts are free: transposed B
    (`x * W^T`, as afm.linear lowers) packs the same way.
  }];
  let options = [
    Option<"minMultiplyAdds", "min-multiply-adds", "int64_t",
           /*default=*/"4194304",
           "Leave GEMMs with fewer multiply-adds (default 2^22) as they are">,
  ];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def AFMSelectTilesPass : Pass<"afm-select-tiles", "mlir::func::FuncOp"> {
  let summary = "Choose the tiles of every linalg op on buffers for the target (the strategy of afm-tile-for-target)";
  let description = [{
    Records on every linalg op with static loop bounds the tile plan
    afm-tile-for-target applies, as an `afm.tile_plan`: tile sizes, loop
    order and how the tile vectorizes (contraction, element-wise, split-K
    partial sums, int8 dot products, or SME ZA tiles for f32 GEMMs on SME
    targets), derived from the module's `afm.target`
    (passes/CodeGen/TilePlanning.h). `memref.copy` ops are first turned into
    `linalg.copy` so that copies are planned, and vectorized, too and no
    runtime copy function is needed.
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect",
  ];
}

def AFMTileForTargetPass : Pass<"afm-tile-for-target", "mlir::func::FuncOp"> {
  let summary = "Tile and vectorize linalg ops on buffers as their afm.tile_plan or afm.gemm_schedule says";
  let description = [{
    Applies, to every linalg op, the choice an earlier pass recorded: a
    packed GEMM's `afm.gemm_schedule` (afm-pack-gemm), else its
    `afm.tile_plan` (afm-select-tiles): tiles the op with `scf.for` loops
    so that each tile has static shape, and vectorizes the tile. Ops
    without either are left for `convert-linalg-to-loops`. The plans come
    from the target's vector width and register count.
    For a contraction the output's innermost dimension gets
    `nr = 2 x f32 lanes` (16 on AVX2, 32 on AVX-512, 8 on NEON), the row
    dimension `mr` as many rows as fit the accumulator registers
    (`(registers - nr/lanes - 1) / (nr/lanes)`, at most 8), and the
    reduction dimension one vector of lanes. Element-wise and reduction ops
    get one vector of lanes along their innermost dimension. Tile sizes are
    divisors of the static sizes, so no partial tiles arise. Ops that
    cannot be vectorized are left for `convert-linalg-to-loops`.

    Ops with at least `min-parallel-work` loop iterations get their
    outermost tile loop over a parallel dimension (with two or more
    iterations) marked `afm.parallel`: its iterations write disjoint tiles
    and may run on the runtime's threads.
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"::mlir::afm::kDefaultMinParallelWork",
           "Mark the outermost parallel tile loop of ops with at least this "
           "many loop iterations (multiply-adds for a matmul) for "
           "afm-outline-parallel-loops; 0 never marks">,
  ];
  let dependentDialects = [
    "mlir::afm_cpu::AFMCPUDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect",
  ];
}

def AFMAddHostArgumentPass : Pass<"afm-add-host-argument", "mlir::ModuleOp"> {
  let summary = "Give a graph's public functions a leading afm_host_api pointer argument";
  let description = [{
    A graph (afm-graph-codegen) has no entry-point ABI, so it has no
    `afm_host_api` (`include/afm/kernel_abi.h`) to run its parallel tile
    loops on. This pass inserts an `!llvm.ptr` argument first in every
    public function with a body and records its index in the function's
    `afm.host_argument` attribute, which afm-outline-parallel-loops reads.
    First, because bufferization appends the out-parameters of results
    after the existing arguments: index 0 never moves. A public function
    called inside the module is an error (its callers would need the
    argument too).

    Example: `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32>` becomes
    `func.func @main(%host: !llvm.ptr, %x: tensor<4xf32>) -> tensor<4xf32>
    attributes {afm.host_argument = 0 : i64}`.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AFMOutlineParallelLoopsPass
    : Pass<"afm-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Outline loops marked afm.parallel into tasks run on the runtime's threads";
  let description = [{
    Each `scf.for` marked `afm.parallel` inside a function that has a host
    argument becomes a private function `(index iteration, captures...)`
    holding the loop body and an `afm_cpu.parallel_call` of it over the loop's
    trip count, with that `host` argument. The host argument is the
    `!llvm.ptr` argument whose index the function's `afm.host_argument`
    attribute names (graphs, see afm-add-host-argument), or else the last
    argument of an `afm.entry` function (`include/afm/kernel_abi.h`); loops
    of other functions stay sequential. Constants and views are recomputed inside
    the task; scalars and statically shaped identity-layout memrefs are
    captured. A loop that would need any other capture stays sequential.
    A task is named `<function>_task<N>`, followed by `_<name>` when the
    loop's location holds a name (afm-tag-op-locations puts the afm op's
    there), so profiles can attribute the task's time.

    With `outline-serial-loops`, the outermost sequential `scf.for` loops
    left in such a function and in each of its tasks (of at least 8 ops,
    without results, whose inputs can be captured the same way) become
    private functions `<function>_loop<N>[_<name>]` and `func.call`s of
    them, so that afm-merge-equivalent-tasks can merge a layer's serial
    code with the other layers' too. A PT track's task holds its whole
    layer stack: its loops outlined, each distinct one compiles once.

    Last, statically shaped `memref.alloca`s inside the loops that remain
    (all sequential now), the outlined serial loops' included, move to
    their function's entry block, so that they do not take new stack on
    every iteration.
  }];
  let options = [
    Option<"outlineSerialLoops", "outline-serial-loops", "bool",
           /*default=*/"false",
           "Also outline the outermost sequential loops into functions">
  ];
  let dependentDialects = [
    "mlir::afm_cpu::AFMCPUDialect","mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::afm::AFMDialect"];
}


def AFMMergeEquivalentTasksPass
    : Pass<"afm-merge-equivalent-tasks", "mlir::ModuleOp"> {
  let summary = "Merge outlined tasks that differ only in integer constants";
  let description = [{
    Runs after afm-outline-parallel-loops. A model repeats its layers, so
    most of its tasks are copies of one another but for integer constants:
    the byte offsets of their layer's buffers in the arena. Tasks of one
    function and one op kind (the `_<name>` their name ends with) whose
    bodies agree op for op - names, attributes, types, operands and regions
    - once their scalar integer and index constants are set aside are merged
    into the first of them. The constants that differ among them become
    trailing arguments of that task, and each `afm_cpu.parallel_call` passes
    its own task's values as extra captures; constants that agree stay
    constants. Float and vector constants must agree. A task whose symbol
    has any use but its parallel calls, or whose calls sit in more than one
    function, is left alone.

    Everything after this pass, LLVM's optimizer and code generator
    included, then compiles each distinct body once instead of once per
    layer: the paper's 3B model's tasks go from about 1,700 to a few dozen.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}
def AFMExportModelFactsPass
    : Pass<"afm-export-model-facts", "mlir::ModuleOp"> {
  let summary = "Export what the entry points were compiled for, and check afm.model against it";
  let description = [{
    Reads the sizes built into `afm_prefill` and `afm_decode` from their
    argument types (include/afm/kernel_abi.h): the logits they write, their
    tokens buffers, the weights and arena bytes they address. It adds them,
    with `afm.model`'s context length, as the exported constant
    `afm_compiled_facts` (8 u64: ABI version, vocab, context, prefill and
    decode tokens, weights bytes, arena bytes, 0), which the runtime checks
    every manifest field against at load. A module with run-time adapter
    slots (`afm.adapter_layout`) also exports `afm_adapter_slots`: their
    count, then each one's arena offset, rows and columns.

    The module's own description must agree with the types, since the
    manifest is written from it: `afm.model` `vocab_size` and
    `prefill_chunk`, `afm.kv_arena_bytes`, `afm.weights_bytes`, every
    `afm.kv_layout` buffer inside the arena and every global cache holding
    `context_length` positions. A disagreement is an error naming the
    attribute and both values. Modules without entry points are left alone.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AFMPlanStepMemoryPass
    : Pass<"afm-plan-step-memory", "mlir::ModuleOp"> {
  let summary = "Place an entry point's temporary buffers in the session's arena";
  let description = [{
    Runs on bufferized entry points (`afm.entry`), before deallocation.
    Every statically shaped `memref.alloc` of an entry's body, or of
    sequential `scf.for` loops in it whose iterations do not hand the buffer
    on (attention's loop over KV blocks), becomes a
    `memref.view` of a scratch region placed after the KV caches in the
    arena the runtime passes in, at an offset chosen so that buffers whose
    lifetimes overlap never share bytes (a buffer lives from its
    allocation to the last use of it or of any view or alias of it; first
    fit, largest first). Prefill and decode never run at once in a session,
    so they share the region, sized for the larger of the two. The arena
    argument's type and the module's `afm.kv_arena_bytes` grow by it, and
    `afm.scratch_bytes` records it.

    So a decode step allocates nothing and touches no new page in steady
    state: the arena is allocated and zeroed once per session. Buffers with
    dynamic shapes, and those allocated later inside parallel tasks, stay
    heap allocations.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def AFMLowerParallelCallsPass
    : Pass<"afm-lower-parallel-calls", "mlir::ModuleOp"> {
  let summary = "Lower afm_cpu.parallel_call to a call of the runtime's parallel_for";
  let description = [{
    Runs after the conversion to the LLVM dialect. Each `afm_cpu.parallel_call`
    becomes: a stack context holding its captures (memrefs as their aligned
    pointers, as the tasks take bare pointers), a trampoline
    `void(ptr ctx, i64 i)` that unpacks the context and calls the task, and
    an indirect call of `host->parallel_for(host->pool, count, trampoline,
    ctx)` (`include/afm/kernel_abi.h`).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AFMLowerDotBytesPass : Pass<"afm-lower-dot-bytes"> {
  let summary = "Lower afm_cpu.dot_bytes and sign_bytes to the target's int8 instructions";
  let description = [{
    `afm_cpu.sign_bytes` becomes `vpsignb` on 32-byte pieces on x86 with
    AVX2, else compares and selects (LLVM forms no `vpsignb` from those).

    Each 1-D vector of `afm_cpu.dot_bytes` (n-D ones row by row) becomes the
    target's instruction over u8 x s8 bytes summed four to an i32 lane:
    `vpdpbusd` (AVX-512 VNNI), `vpmaddubsw` + `vpmaddwd` (AVX2) or `sdot`
    (Arm dotprod); the last two only when the unsigned bytes are masked
    below 128, where their saturating or signed products are exact. Vectors
    wider than the instruction are split into register-wide pieces.
    Scalars, and vectors no instruction covers, become shifts, masks,
    multiplies and adds with the same wrapping result. The target is the
    module's `afm.target`.

    First, where the instruction takes any unsigned byte (`vpdpbusd`), each
    `scf.for` accumulator that starts at zero and only sums dot products of
    one shifted code plane, `(w >> c) & m`, reads `w & (m << c)` instead,
    and the loop's result is shifted right by `c`: exactly the same sums
    (every product is 2^c times the old one; the trip count bounds the sum
    within i32), without a byte shift per vector, which x86 lacks (2-bit
    GEMV planes).

    Where the dot product goes through i16 pair sums (`vpmaddubsw`, then
    `vpmaddwd` with ones), dot products that add into one sum share one
    widening: their pair sums are added in i16 (`vpaddw`) and widened once.
    That is exact while n * 2 * max(u) * 128 <= 32767, with max(u) the
    largest byte the unsigned operand's mask lets through (42 products of
    2-bit codes, 8 of nibbles per widening; bytes up to 127 keep one each).
    It applies to a chain of dot products in a block (the 4-bit LM head's
    groups), and to the chains of a loop's accumulators that start at zero
    and are added together after it (the code planes and lanes of one GEMV
    output): the first accumulator takes every product of an iteration, the
    others carry their zero through. The 2-bit GEMV's eight dot products
    per 64 code bytes then widen once, not eight times.

    In such a loop, the planes of one byte vector also share shifts: a
    plane `(w >> c) & m` reads `(w >> b) & (m << (c - b))` from the largest
    shift `b` kept for `w` (0 needs none) from which the moved-up mask stays
    a nibble, so the 2-bit planes read `w & 3`, `w & 12`, `(w >> 4) & 3`
    and `(w >> 4) & 12`. The products of each scale widen into an
    accumulator of their own, and the loop's result for a scale `s` is
    shifted right by `s`: exact, since every product of that scale is 2^s
    times the plane's and the trip count bounds the sum within i32. Not
    done when the scales outnumber the accumulators.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::vector::VectorDialect",
  ];
}

def AFMLowerVectorPass : Pass<"afm-lower-vector"> {
  let summary = "Lower n-D vector ops to the 1-D forms the LLVM conversion expects";
  let description = [{
    Contractions become outer products and FMAs, multi-reductions inner
    reductions, transposes, broadcasts, shape casts, masks and gathers their
    element-wise forms, and transfers with permutation maps minor-identity
    transfers. What remains is what `convert-vector-to-scf` and
    `convert-vector-to-llvm` handle.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect",
    "mlir::vector::VectorDialect",
  ];
}

def AFMPrepareArmSMEPass : Pass<"afm-prepare-arm-sme"> {
  let summary = "Lower scalable GEMM tiles to the 2-D outer products ArmSME converts";
  let description = [{
    On an SME target, afm-tile-for-target vectorizes f32 GEMM tiles with
    scalable sizes `[4] x [4] x 1` (one ZA tile, one reduction step).
    This pass puts them in the form `convert-vector-to-arm-sme` expects,
    as upstream's ArmSME matmul recipe does: masked transfers and
    permutation maps lowered, masked multi-reductions turned into
    `vector.contract`, contractions into `vector.outerproduct`, masks
    folded into the outer products and transfers, unit dimensions dropped.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect",
    "mlir::vector::VectorDialect",
  ];
}

def AFMCheckLoweredPass : Pass<"afm-check-lowered", "mlir::ModuleOp"> {
  let summary = "Report every afm op that survived lowering";
  let description = [{
    The afm lowerings leave ops they do not handle (for instance a layer
    over a weight format that is not supported yet) in place, so that each
    lowering stays small. This pass turns any afm op still present before
    bufferization into an error at its location, naming the op, instead of
    a confusing failure later in the pipeline. The afm dialect is an illegal
    dialect of a ConversionTarget here: the CPU-level ops that are lowered
    later (`afm_cpu.dot_bytes`, `afm_cpu.parallel_call`) are another
    dialect's.
  }];
}

def AFMApproximateMathPass : Pass<"afm-approximate-math"> {
  let summary = "Replace exp, sin, cos, tanh and erf by polynomial approximations";
  let description = [{
    Expands transcendental `math` ops into arithmetic (upstream's polynomial
    approximations, accurate to a few ulp in f32), so that they vectorize
    and the compiled model calls no libm function.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::math::MathDialect",
    "mlir::vector::VectorDialect",
  ];
}

#endif // AFM_PASSES_TD
