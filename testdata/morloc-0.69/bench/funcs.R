rampR <- function(n, start) start + seq_len(n) - 1
