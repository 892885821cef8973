line_count <- function(path) length(readLines(path))
first_value <- function(xs) xs[[1]]
echo_str <- function(s) s
total <- function(xs) sum(unlist(xs))
