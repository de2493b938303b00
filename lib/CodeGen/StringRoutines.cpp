//===- StringRoutines.cpp - number <-> string for ONNX STRING casts -------===//
//
// An ONNX STRING element is 16 NUL-padded bytes in compiled code (see
// kStringBytes in lib/FrontEnd/ONNX). Casts between strings and numbers call
// these routines, which a model's library carries (hidden, inlined where
// used) when it declares them. They call the C library the library is
// loaded next to, as malloc and free are:
//
//   afm_rt_string_to_f32(i8 x 16) -> float     strtof/strtod: correctly
//   afm_rt_string_to_f64(i8 x 16) -> double    rounded, "NaN", "INF" and
//       "-INF" too; NaN when the string is not one number (compiled code
//       has no error channel).
//   afm_rt_f32_to_string_byte(float, i64 j) -> i8
//       byte j of x with the fewest significant digits (at most 9) that
//       read back as the same float, as the ONNX test data (numpy)
//       prints: positional for decimal exponents -4..8 ("100", "0.1",
//       "0.039187793"), else scientific ("1e-05", "3.4028235e+38"); NaN,
//       INF and -INF as the Cast specification spells them. At most 15
//       bytes.
//
//===----------------------------------------------------------------------===//

#include "afm/CodeGen/ObjectEmitter.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

using namespace mlir;

static constexpr llvm::StringLiteral kRoutineNames[] = {
    "afm_rt_string_to_f32", "afm_rt_string_to_f64",
    "afm_rt_f32_to_string_byte"};

/// `define ... @<name>(i8 %b0, ..., i8 %b15)`: the bytes and a NUL into a
/// buffer, parsed by `parser` (strtof/strtod); NaN unless the whole
/// string is one number.
static std::string parseRoutine(llvm::StringRef name, llvm::StringRef type,
                                llvm::StringRef parser) {
  std::string params, stores;
  for (int i = 0; i < 16; ++i) {
    params += llvm::formatv("{0}i8 %b{1}", i ? ", " : "", i).str();
    stores += llvm::formatv("  %p{0} = getelementptr i8, ptr %buf, i64 {0}\n"
                            "  store i8 %b{0}, ptr %p{0}\n",
                            i)
                  .str();
  }
  return llvm::formatv(
             "define linkonce_odr hidden {0} @{1}({2}) {{\n"
             "  %buf = alloca [17 x i8]\n"
             "  %endp = alloca ptr\n"
             "{3}"
             "  %last = getelementptr i8, ptr %buf, i64 16\n"
             "  store i8 0, ptr %last\n"
             "  %v = call {0} @{4}(ptr %buf, ptr %endp)\n"
             "  %end = load ptr, ptr %endp\n"
             "  %c = load i8, ptr %end\n"
             "  %rest = icmp eq i8 %c, 0\n"
             "  %moved = icmp ne ptr %end, %buf\n"
             "  %ok = and i1 %rest, %moved\n"
             "  %r = select i1 %ok, {0} %v, {0} 0x7FF8000000000000\n"
             "  ret {0} %r\n"
             "}\n",
             type, name, params, stores, parser)
      .str();
}

static std::string routinesIR() {
  return R"(
declare float @strtof(ptr, ptr)
declare double @strtod(ptr, ptr)
declare i64 @strtol(ptr, ptr, i32)
declare ptr @strchr(ptr, i32)
declare i32 @snprintf(ptr, i64, ptr, ...)
declare float @llvm.fabs.f32(float)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

@afm.rt.scientific = private unnamed_addr constant [5 x i8] c"%.*e\00"
@afm.rt.positional = private unnamed_addr constant [5 x i8] c"%.*f\00"
@afm.rt.nan = private unnamed_addr constant [4 x i8] c"NaN\00"
@afm.rt.inf = private unnamed_addr constant [4 x i8] c"INF\00"
@afm.rt.minus.inf = private unnamed_addr constant [5 x i8] c"-INF\00"

define linkonce_odr hidden i8 @afm_rt_f32_to_string_byte(float %x, i64 %j) {
entry:
  %buf = alloca [16 x i8]
  call void @llvm.memset.p0.i64(ptr %buf, i8 0, i64 16, i1 false)
  %d = fpext float %x to double
  %isnan = fcmp uno float %x, %x
  br i1 %isnan, label %nan, label %finite.or.inf
nan:
  call void @llvm.memcpy.p0.p0.i64(ptr %buf, ptr @afm.rt.nan, i64 3, i1 false)
  br label %out
finite.or.inf:
  %abs = call float @llvm.fabs.f32(float %x)
  %isinf = fcmp oeq float %abs, 0x7FF0000000000000
  br i1 %isinf, label %inf, label %try
inf:
  %negative = fcmp olt float %x, 0.0
  %spelling = select i1 %negative, ptr @afm.rt.minus.inf, ptr @afm.rt.inf
  call void @llvm.memcpy.p0.p0.i64(ptr %buf, ptr %spelling, i64 4, i1 false)
  br label %out
try:
  ; The fewest significant digits p that read back as x.
  %p = phi i32 [ 1, %finite.or.inf ], [ %next, %retry ]
  %decimals = sub i32 %p, 1
  call void @llvm.memset.p0.i64(ptr %buf, i8 0, i64 16, i1 false)
  %n = call i32 (ptr, i64, ptr, ...) @snprintf(ptr %buf, i64 16, ptr @afm.rt.scientific, i32 %decimals, double %d)
  %back = call float @strtof(ptr %buf, ptr null)
  %same = fcmp oeq float %back, %x
  %enough = icmp uge i32 %p, 9
  %done = or i1 %same, %enough
  br i1 %done, label %choose, label %retry
retry:
  %next = add i32 %p, 1
  br label %try
choose:
  ; Exponents -4..8 print positionally with the same digits.
  %epos = call ptr @strchr(ptr %buf, i32 101)
  %after = getelementptr i8, ptr %epos, i64 1
  %e64 = call i64 @strtol(ptr %after, ptr null, i32 10)
  %e = trunc i64 %e64 to i32
  %small = icmp sge i32 %e, -4
  %large = icmp slt i32 %e, 9
  %positional = and i1 %small, %large
  br i1 %positional, label %fixed, label %out
fixed:
  %fraction = sub i32 %decimals, %e
  %whole = icmp slt i32 %fraction, 0
  %places = select i1 %whole, i32 0, i32 %fraction
  call void @llvm.memset.p0.i64(ptr %buf, i8 0, i64 16, i1 false)
  %m = call i32 (ptr, i64, ptr, ...) @snprintf(ptr %buf, i64 16, ptr @afm.rt.positional, i32 %places, double %d)
  br label %out
out:
  %inside = icmp ult i64 %j, 16
  %k = select i1 %inside, i64 %j, i64 15
  %slot = getelementptr i8, ptr %buf, i64 %k
  %byte = load i8, ptr %slot
  ret i8 %byte
}
)" + parseRoutine("afm_rt_string_to_f32", "float", "strtof") +
         parseRoutine("afm_rt_string_to_f64", "double", "strtod");
}

llvm::Error afm::linkStringRoutines(llvm::Module &module) {
  if (llvm::none_of(kRoutineNames, [&](llvm::StringRef name) {
        const llvm::Function *f = module.getFunction(name);
        return f && f->isDeclaration();
      }))
    return llvm::Error::success();
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> routines = llvm::parseAssemblyString(
      routinesIR(), diagnostic, module.getContext());
  if (!routines)
    return llvm::createStringError("the string routines do not parse: " +
                                   diagnostic.getMessage());
  routines->setTargetTriple(module.getTargetTriple());
  routines->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(routines),
                                llvm::Linker::LinkOnlyNeeded))
    return llvm::createStringError("cannot link the string routines");
  return llvm::Error::success();
}
