# The R test pool of internal/pool (r_test.go): one function per behaviour
# the tests drive. mids follow the order of the table at the end.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

echo <- function(x) x

# describe says how a JSON value arrived in R.
describe <- function(x) {
  if (is.null(x)) {
    return("NULL")
  }
  text <- paste0(typeof(x), "[", length(x), "]")
  if (!is.null(names(x))) text <- paste0(text, " named ", paste(names(x), collapse = ","))
  if (is.atomic(x) && anyNA(x)) text <- paste0(text, " NA at ", paste(which(is.na(x)), collapse = ","))
  if (is.list(x)) text <- paste0(text, " {", paste(vapply(x, describe, ""), collapse = "; "), "}")
  text
}

total <- function(xs) sum(xs)

count_to <- function(n) seq_len(n)

count_to_array <- function(n) I(seq_len(n))

halve <- function(x) x / 2

reverse <- function(s) intToUtf8(rev(utf8ToInt(s)))

monster <- function(name, hp) list(name = name, hp = hp, alive = hp > 0, loot = list())

check_armor <- function(ac) stop(ac)
fail <- function(message) check_armor(message)

square <- function(x) x * x

progress_steps <- function(n) {
  for (i in seq_len(n)) {
    nexus_progress(i, n, sprintf("step %d of %d", i, n))
    nexus_log("info", list(step = i, of = n))
  }
  n
}

wait_for <- function(path, tag) {
  nexus_progress(0)
  while (!file.exists(path)) Sys.sleep(0.005)
  tag
}

pid <- function() Sys.getpid()

# sleep_until_cancelled waits in nexus_sleep and records in marker how it ended.
sleep_until_cancelled <- function(marker) {
  on.exit(writeLines(if (nexus_cancelled()) "cancelled" else "finished", marker))
  nexus_progress(0)
  nexus_sleep(30)
  "never cancelled"
}

# busy_until_cancelled computes, reporting progress, until nexus_progress stops it.
busy_until_cancelled <- function(marker) {
  on.exit(writeLines(if (nexus_cancelled()) "cancelled" else "finished", marker))
  for (i in 1:3000) {
    nexus_progress(i)
    x <- sum(as.numeric(seq_len(10000)))
    Sys.sleep(0.01)
  }
  "never cancelled"
}

# value returns an R value of the kind asked for, to test how it goes out.
value <- function(kind) {
  switch(kind,
    nan = c(1, NaN),
    inf = -Inf,
    fun = function() 1,
    env = new.env(),
    complex = 1i,
    partial = list(a = 1, 2),
    factor = factor(c("goblin", "orc", "goblin")),
    date = as.Date("2025-01-31"),
    time = as.POSIXct("2025-01-31 12:00:00", tz = "UTC"),
    named_vector = c(hp = 7L, ac = 15L),
    boxed_scalar = I(5),
    one_list = list(5),
    as_list = as.list(c(a = 1, b = 2)),
    empty_strings = character(0),
    empty_named = setNames(list(), character(0)),
    na_real = NA_real_,
    whole_double = 3,
    big_double = 2^60,
    stop("no such kind: ", kind)
  )
}

chatty <- function() {
  cat("to stdout\n")
  message("to stderr")
  warning("careful")
  system("echo from-child")
  "done"
}

bytes <- function() as.raw(c(0, 1, 255))

rows <- function() data.frame(x = 1:2, y = c("a", NA))

grid <- function() matrix(1:6, nrow = 2)

nothing <- function() invisible(NULL)

custom_error <- function() stop(structure(class = c("armorError", "error", "condition"), list(message = "too thick", call = NULL)))

add_one <- function(n) n + 1

# spawn_child starts a child that outlives the call and returns its pid.
spawn_child <- function() as.integer(system("sleep 300 >/dev/null 2>&1 & echo $!", intern = TRUE))

nexus_serve(list(
  "1" = echo,
  "2" = describe,
  "3" = total,
  "4" = count_to,
  "5" = count_to_array,
  "6" = halve,
  "7" = reverse,
  "8" = monster,
  "9" = fail,
  "10" = square,
  "11" = progress_steps,
  "12" = wait_for,
  "13" = pid,
  "14" = sleep_until_cancelled,
  "15" = busy_until_cancelled,
  "16" = value,
  "17" = chatty,
  "18" = bytes,
  "19" = rows,
  "20" = grid,
  "21" = nothing,
  "22" = custom_error,
  "23" = add_one,
  "24" = spawn_child
))
