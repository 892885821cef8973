mean_of <- function(na_rm, xs) mean(unlist(xs), na.rm = na_rm)
spread <- function(xs) list(min(unlist(xs)), max(unlist(xs)))
tally <- function(ws, m) {
  t <- table(unlist(ws))
  t <- t[t >= m]
  unname(Map(function(k, n) list(k, n), names(t), as.integer(t)))
}
