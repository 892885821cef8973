# R pool of the scientific program: R's own shapes for the
# values pools/py/pool.py and pools/cpp/pool.cpp return, which the runtime
# gives their declared type (docs/internals.md, "Declared types").
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

doubled <- function(xs) xs * 2
count <- function(xs) length(xs)
eye <- function(n) diag(n) # a matrix: a list of rows
one <- function() c(1.5) # length one, declared [Real]: a one-element list
notANumber <- function() NaN
specials <- function() c(1, Inf, -Inf, NaN)
inRecord <- function() list(x = NaN, y = -Inf)
idReal <- function(x) x
ramp <- function(n) {
  v <- (seq_len(n) - 1) * 0.5
  if (n > 5) {
    v[4] <- NaN
    v[6] <- Inf
  }
  v
}
pair <- function() list("a", 1L)
point <- function() list(x = 1.5, y = -2)
tags <- function() "solo" # length one, declared [Str]
noInts <- function() integer(0)
noStrs <- function() character(0)
grid <- function() matrix(1:6, 2)
rows <- function() data.frame(name = c("a", "b"), score = c(0.5, NA))
levels <- function() factor(c("lo", "hi", "lo"))
missing <- function() NA_integer_
tally <- function() c(a = 2L) # a named vector
uniq <- function() sort(unique(c(3L, 1L, 3L, 2L)))
triple <- function() 7:9
scalarFromList <- function() list(1.5)
oneRowFrame <- function() data.frame(x = 1.5, y = -2)
inRecords <- function() data.frame(x = c(NaN, Inf), y = c(1.5, -Inf))
inCloud <- function() list(points = data.frame(x = c(NaN, 1), y = c(0.5, Inf)), scale = NaN)
swap <- function(p) list(x = p$y, y = p$x)

nexus_serve(list(
  "2001" = doubled, "2002" = count, "2003" = eye, "2004" = one, "2005" = notANumber, "2006" = specials,
  "2007" = inRecord, "2008" = idReal, "2009" = ramp, "2010" = pair, "2011" = point, "2012" = tags,
  "2013" = noInts, "2014" = noStrs, "2015" = grid, "2016" = rows, "2017" = levels, "2018" = missing,
  "2019" = tally, "2020" = uniq, "2021" = triple, "2023" = scalarFromList, "2024" = oneRowFrame,
  "2031" = inRecords, "2032" = inCloud, "2033" = swap
))
