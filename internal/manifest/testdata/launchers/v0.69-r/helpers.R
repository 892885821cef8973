total <- function(xs) as.integer(sum(unlist(xs)))

describe <- function(p) paste0(p$name, " is ", p$age, " years old")

topN <- function(n, xs) {
  v <- sort(unlist(xs), decreasing = TRUE)
  as.list(head(v, n))
}

normalize <- function(percent, xs) {
  v <- unlist(xs)
  s <- if (percent) 100 else 1
  as.list(v / sum(v) * s)
}

birthday <- function(p) {
  p$age <- p$age + 1L
  p
}
