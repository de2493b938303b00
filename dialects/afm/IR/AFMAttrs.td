//===- AFMAttrs.td - afm enums and attributes --------------*- tablegen -*-===//

#ifndef AFM_ATTRS_TD
#define AFM_ATTRS_TD

include "dialects/afm/IR/AFMDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def AFM_AttentionKind : I32EnumAttr<"AttentionKind",
    "attention kind: local (sliding window, RoPE) or global (NoPE)", [
      I32EnumAttrCase<"Local", 0, "local">,
      I32EnumAttrCase<"Global", 1, "global">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_ScaleGranularity : I32EnumAttr<"ScaleGranularity",
    "how many scales a quantized weight carries", [
      I32EnumAttrCase<"PerTensor", 0, "per_tensor">,
      I32EnumAttrCase<"PerChannel", 1, "per_channel">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_ASTCOffset : I32EnumAttr<"ASTCOffset",
    "how the per-block f16 offset of an ASTC weight is chosen", [
      // The paper: subtract the block minimum.
      I32EnumAttrCase<"Min", 0, "min">,
      // Place the block's data in the linear segment of ASTC's HDR curve.
      I32EnumAttrCase<"LinearSegment", 1, "linear_segment">]> {
  let cppNamespace = "::mlir::afm";
}

//===----------------------------------------------------------------------===//
// Inline payloads of compressed weights
//===----------------------------------------------------------------------===//

class AFM_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<AFM_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def AFM_QuantizedDataAttr : AFM_Attr<"QuantizedData", "quantized"> {
  let summary = "Inline payload of a `!afm.q2` or `!afm.q4` weight";
  let description = [{
    Packed codes and their scales, for small weights kept in the IR (tests,
    toy models). `codes` is a 1-D `i8` tensor of packed codes, row-major,
    each row padded to a whole byte (4 codes per byte for 2-bit, 2 for
    4-bit, lowest bits first); `scales` is a 1-D `f32` tensor. Which sizes
    are valid depends on the weight type and is checked by `afm.weight`.
    Either may be a `dense_resource`.

    Example:

    ```mlir
    #afm.quantized<codes = dense<[27, -28]> : tensor<2xi8>,
                   scales = dense<0.25> : tensor<1xf32>>
    ```
  }];
  let parameters = (ins "::mlir::ElementsAttr":$codes,
                        "::mlir::ElementsAttr":$scales);
  let assemblyFormat = "`<` `codes` `=` $codes `,` `scales` `=` $scales `>`";
  let genVerifyDecl = 1;
}

def AFM_ASTCDataAttr : AFM_Attr<"ASTCData", "astc_blocks"> {
  let summary = "Inline payload of an `!afm.astc` weight";
  let description = [{
    `blocks` is a 1-D `i8` tensor holding 16 bytes (one 128-bit ASTC block)
    per block, blocks in row-major block order; `offsets` is a 1-D `f16`
    tensor with one offset per block. Sizes are checked by `afm.weight`.

    Example:

    ```mlir
    #afm.astc_blocks<blocks = dense_resource<w_blocks> : tensor<16xi8>,
                     offsets = dense<-0.5> : tensor<1xf16>>
    ```
  }];
  let parameters = (ins "::mlir::ElementsAttr":$blocks,
                        "::mlir::ElementsAttr":$offsets);
  let assemblyFormat =
      "`<` `blocks` `=` $blocks `,` `offsets` `=` $offsets `>`";
  let genVerifyDecl = 1;
}

#endif // AFM_ATTRS_TD
