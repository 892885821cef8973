or_default <- function(x, d) if (is.null(x)) d else x
greet <- function(n) if (is.null(n)) "hello, no one" else paste0("hello, ", n)
nudge <- function(r) { r$value <- r$value + 1; r }
ratio <- function(x, y) if (y == 0) NULL else x / y
