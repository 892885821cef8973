echo <- function(x) x

bigStr <- function(n) {
  paste0(letters[(seq_len(n) - 1) %% 26 + 1], collapse = "")
}

bigReals <- function(n) {
  (seq_len(n) - 1) * 0.5 - 3.25
}

bigInts <- function(n) {
  as.integer((seq_len(n) - 1) * 7 - 1000)
}

bigPeople <- function(n) {
  lapply(seq_len(n) - 1, function(i) {
    list(name = paste0("p", i), age = as.integer(i), height = 1.5 + i / 1000,
         nick = if (i %% 3 == 0) NULL else paste0("n", i))
  })
}

boom <- function(n) stop(paste("boom", n))
