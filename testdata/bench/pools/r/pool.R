# R pool of the bench program (mids 11..14): the functions `make bench`
# (cmd/nexus-bench) measures nexus with, as pools/py/pool.py and
# pools/cpp/pool.cpp have them. Arguments arrive as the runtime's natural R
# values (docs/pools.md, "Values"): [Int] as an integer
# vector, [[Real]] as a list of double vectors, one per row.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

add <- function(a, b) a + b
sleep <- function(ms) {
  nexus_sleep(ms / 1000) # cancellable, unlike Sys.sleep
  ms
}
# I(): a list of length 1 must stay a list, not become a scalar.
echo <- function(xs) I(xs)
# Each row too: a one-column matrix has rows of length 1.
echoMatrix <- function(m) lapply(m, I)

nexus_serve(list("11" = add, "12" = sleep, "13" = echo, "14" = echoMatrix))
