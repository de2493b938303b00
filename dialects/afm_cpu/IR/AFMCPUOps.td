//===- AFMCPUOps.td - afm_cpu dialect and ops --------------*- tablegen -*-===//
//
// The afm_cpu dialect: the few ops the afm code generator emits below the
// model level, for CPU targets. They live apart from the model-level afm
// dialect so that leaving `afm` is a real conversion target (no afm op may
// survive afm-lower-to-linalg) while these are still to come:
//   - `afm_cpu.dot_bytes`, the int8 dot product of the kernels' bodies,
//     and `afm_cpu.sign_bytes`, bytes times the signs of others (x86's
//     psignb), lowered after vectorization (afm-lower-dot-bytes);
//   - `afm_cpu.parallel_call`, a task run on the runtime's threads, and
//     `afm_cpu.track_allreduce`, a track block's sum completed across
//     processes, lowered after the conversion to the LLVM dialect
//     (afm-lower-parallel-calls).
//
//===----------------------------------------------------------------------===//

#ifndef AFMCPU_OPS_TD
#define AFMCPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def AFMCPU_Dialect : Dialect {
  let name = "afm_cpu";
  let cppNamespace = "::mlir::afm_cpu";
  let summary = "CPU-level ops of the afm code generator";
  let description = [{
    Ops the afm code generator creates while lowering to a CPU target, below
    the model level of the `afm` dialect: an int8 dot product over packed
    byte lanes and bytes times the signs of others (its operand on AVX2),
    a parallel call of an outlined task on the runtime's threads, and the
    reduction that completes a PT-MoE track block's sum across processes.
    Each has one lowering pass of its own.
  }];
}

class AFMCPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<AFMCPU_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Integer kernels
//===----------------------------------------------------------------------===//

def AFMCPU_I32OrVector : AnyTypeOf<[I32, VectorOfAnyRankOf<[I32]>]>;

def AFMCPU_DotBytesOp : AFMCPU_Op<"dot_bytes", [Pure, ElementwiseMappable,
    AllTypesMatch<["acc", "lhs", "rhs", "result"]>]> {
  let summary = "acc + the four byte products of each 32-bit lane";
  let description = [{
    Per 32-bit lane: `acc + sum_{m < 4} zext(lhs byte m) * sext(rhs byte
    m)`, wrapping. The lanes of packed bytes are what an int8 dot-product
    instruction sums (vpdpbusd, vpmaddubsw + vpmaddwd, sdot):
    `afm-lower-dot-bytes` selects the target's, or integer arithmetic.
    Element-wise, so it may sit in a linalg body that the vectorizer turns
    into vectors (the ASTC int8 kernel, CompressedKernels.cpp).

    ```mlir
    %d = afm_cpu.dot_bytes %acc, %codes, %activations : vector<16xi32>
    ```
  }];
  let arguments = (ins AFMCPU_I32OrVector:$acc, AFMCPU_I32OrVector:$lhs,
                       AFMCPU_I32OrVector:$rhs);
  let results = (outs AFMCPU_I32OrVector:$result);
  let assemblyFormat =
      "$acc `,` $lhs `,` $rhs attr-dict `:` type($result)";
}

def AFMCPU_I8OrVector : AnyTypeOf<[I8, VectorOfAnyRankOf<[I8]>]>;

def AFMCPU_SignBytesOp : AFMCPU_Op<"sign_bytes", [Pure, ElementwiseMappable,
    AllTypesMatch<["value", "signs", "result"]>]> {
  let summary = "each byte of value times the sign of the byte of signs";
  let description = [{
    Per byte: `-value` where `signs` is negative, `0` where it is zero,
    `value` where it is positive, wrapping (-(-128) is -128): x86's
    `psignb`. With it a dot product takes the magnitudes of one operand
    as its unsigned bytes and the other with their signs, exact for
    vpmaddubsw when the magnitudes are below 128 (decode attention's
    integer scores on AVX2: the key codes' magnitudes, shared by every
    query head, against each head's codes with the keys' signs).
    `afm-lower-dot-bytes` selects `vpsignb` on x86 (32-byte pieces), or
    compares and selects.

    ```mlir
    %q = afm_cpu.sign_bytes %query, %keys : vector<64xi8>
    ```
  }];
  let arguments = (ins AFMCPU_I8OrVector:$value, AFMCPU_I8OrVector:$signs);
  let results = (outs AFMCPU_I8OrVector:$result);
  let assemblyFormat = "$value `,` $signs attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Runtime threads
//===----------------------------------------------------------------------===//

def AFMCPU_ParallelCallOp : AFMCPU_Op<"parallel_call",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Run an outlined task for every iteration on the runtime's threads";
  let description = [{
    Calls `task(i, captures...)` for every `i` in `[0, count)`, in any order
    and possibly concurrently, on the threads of the runtime whose
    `afm_host_api` is `host` (`include/afm/kernel_abi.h`), and returns when
    all calls have returned. The task is a function taking an `index` and
    the captures; iterations must not depend on each other.

    `afm-outline-parallel-loops` creates these from parallel tile loops;
    `afm-lower-parallel-calls` turns them into a call of the host's
    `parallel_for` with a trampoline and a context holding the captures.

    Example:

    ```mlir
    afm_cpu.parallel_call @linear_task(%n) host %host
        captures(%x, %w : memref<16x64xf32>, memref<128x64xf32>) : !llvm.ptr
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$task, Index:$count, AnyType:$host,
                       Variadic<AnyType>:$captures);
  let assemblyFormat = [{
    $task `(` $count `)` `host` $host
      (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
      `:` type($host)
  }];
}

def AFMCPU_TrackAllReduceOp : AFMCPU_Op<"track_allreduce"> {
  let summary = "Complete a track block's sum across the processes sharing its tracks";
  let description = [{
    `buffer` holds the sum of the tracks of one PT-MoE track block this
    process computed (`afm_host_api.track_begin` to `track_end`); after the
    op it holds the sum over every track. Lowered to one call of the
    host's `track_allreduce` with the buffer's `f32` elements in place
    (`include/afm/kernel_abi.h`): one reduction per track block per call
    of an entry point. `afm-lower-tracks` emits it in entry points.

    Example:

    ```mlir
    afm_cpu.track_allreduce %sum host %host : memref<1x64xf32>, !llvm.ptr
    ```
  }];
  let arguments = (ins Arg<MemRefOf<[F32]>, "the partial sum, in place",
                           [MemRead, MemWrite]>:$buffer,
                       AnyType:$host);
  let assemblyFormat = [{
    $buffer `host` $host attr-dict `:` type($buffer) `,` type($host)
  }];
  let hasVerifier = 1;
}

#endif // AFMCPU_OPS_TD
