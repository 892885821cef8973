rneg <- function(x) -x
