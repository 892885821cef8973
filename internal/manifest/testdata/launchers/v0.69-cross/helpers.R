rSummary <- function(xs) {
  v <- unlist(xs)
  sprintf("%d numbers, sum %g", length(v), sum(v))
}
