echo_r <- function(s) s
