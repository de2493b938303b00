func.func @dot_bytes_type(%a: i64) {
  %d = "afm_cpu.dot_bytes"(%a, %a, %a) : (i64, i64, i64) -> i64
  return
}
