func.func @dot_bytes_mixed(%a: i32, %v: vector<16xi32>) {
  %d = "afm_cpu.dot_bytes"(%a, %v, %v) : (i32, vector<16xi32>, vector<16xi32>) -> i32
  return
}
