func.func private @q4_group(!afm.q4<16x64, group = 5>)
