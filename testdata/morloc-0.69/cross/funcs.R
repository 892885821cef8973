rDescribe <- function(xs) {
  v <- unlist(xs)
  if (length(v) == 0) return("no values")
  sprintf("%d values from %g to %g", length(v), min(v), max(v))
}

rStats <- function(xs) {
  v <- as.numeric(unlist(xs))
  list(count = length(v), mean = if (length(v) == 0) 0 else mean(v), total = sum(v))
}
