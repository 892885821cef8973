# The R test pool for arrays (protocol 2) and the R benchmarks
# (arrays_test.go, r_bench_test.go). mids follow the table at the end.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

echo <- function(x) x

add <- function(a, b) a + b

# same says whether two arguments arrived as the same R value, and if not,
# what each was: the tests send one as an array and one as JSON.
same <- function(a, b) {
  if (identical(a, b)) "same" else paste(text(a), "is not", text(b))
}

# text is the exact R value, as dput writes it.
text <- function(x) paste(deparse(x, control = c("keepNA", "keepInteger", "niceNames", "showAttributes", "digits17")), collapse = "")

# same_in compares an array nested in a record with the same array as JSON.
same_in <- function(record, b) same(record$data$xs, b)

# make returns an R value of the kind asked for, n elements long where that
# means something, to test how results go out under ret.
make <- function(kind, n) {
  switch(kind,
    ints = seq_len(n),
    reals = seq_len(n) / 4,
    big_reals = (seq_len(n) - n / 2) * 1e15 + 0.5,
    whole_reals = as.numeric(seq_len(n)),
    asis = I(seq_len(n)), # as testdata/bench's echo returns: I() keeps a list of one a list
    asis_reals = I(seq_len(n) / 4),
    asis_matrix = I(matrix(seq_len(2 * n), nrow = n)),
    asis_rows = lapply(seq_len(n), function(i) I(c(i / 2, -i, i * 1.5))),
    matrix_ints = matrix(seq_len(2 * n), nrow = n),
    matrix_reals = matrix(seq_len(3 * n) / 8, ncol = 3),
    rows = lapply(seq_len(n), function(i) c(i / 2, -i, i * 1.5)),
    mixed_rows = lapply(seq_len(n), function(i) if (i %% 2) c(i, -i) else c(i / 2, 0.25)),
    int_rows = lapply(seq_len(n), function(i) c(i, -i)),
    huge = rep(c(1.5e308, 1.6e308), length.out = n), # finite, but their sum is not
    huge_rows = lapply(seq_len(n), function(i) c(1.5e308, -i)),
    na_ints = c(seq_len(n - 1), NA),
    na_reals = c(seq_len(n - 1) / 4, NA),
    nan = c(seq_len(n - 1) / 4, NaN),
    inf = c(seq_len(n - 1) / 4, Inf),
    na_matrix = matrix(c(seq_len(2 * n - 1), NA), nrow = n),
    ragged = lapply(seq_len(n), function(i) seq_len(1 + i %% 3)),
    one = 5L,
    one_real = 2.5,
    one_na = NA_integer_,
    ones = as.list(seq_len(n)),
    one_by_one = matrix(7L, 1, 1),
    empty = integer(0),
    nothing = NULL,
    named = c(a = 1, b = 2),
    factor = factor(rep(c("x", "y"), length.out = n)),
    strings = as.character(seq_len(n)),
    frame = data.frame(x = seq_len(n), y = seq_len(n) / 2),
    stop("no such kind: ", kind)
  )
}

# jsonlite_floor is R's own JSON floor for a payload: the CPU seconds that
# jsonlite takes to parse the text and write it back.
jsonlite_floor <- function(txt) {
  t0 <- proc.time()
  jsonlite::toJSON(jsonlite::parse_json(txt, simplifyVector = TRUE), digits = NA)
  t1 <- proc.time()
  sum((t1 - t0)[c("user.self", "sys.self")])
}

nexus_serve(list(
  "1" = echo,
  "2" = add,
  "3" = same,
  "4" = text,
  "5" = same_in,
  "6" = make,
  "7" = jsonlite_floor
))
