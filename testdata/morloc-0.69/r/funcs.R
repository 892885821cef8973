addInt <- function(x, y) x + y

scale <- function(k, xs) k * xs

greet <- function(name) paste0("hello, ", name, "!")

isEven <- function(n) n %% 2L == 0L

pairUp <- function(n, s) list(n, s)

older <- function(years, p) list(name = p$name, age = p$age + years, height = p$height)

safeHead <- function(xs) if (length(xs) == 0) NULL else xs[[1]]

cohorts <- function(people) {
  if (length(people) == 0) return(list())
  decades <- sapply(people, function(p) p$age %/% 10L)
  lapply(sort(unique(decades)), function(d) people[decades == d])
}

fail <- function(msg) stop(paste0("refused: ", msg))

die <- function(code) quit(save = "no", status = 3)

bigText <- function(n) strrep("x", n)

echoReals <- function(xs) xs

sleepFor <- function(seconds) {
  Sys.sleep(seconds)
  seconds
}
