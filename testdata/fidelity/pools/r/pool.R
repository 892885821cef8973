# R pool of the fidelity program: the functions pools/py/pool.py and
# pools/cpp/pool.cpp implement too (mids 401..428). Arguments arrive as the
# runtime's natural R values (docs/pools.md, "Values"):
# integers up to 2^31 as integers, larger ones as doubles, lists of scalars
# as vectors, records and maps as named lists.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

# Beyond 2^53 a double skips integers, so a sum there could be silently
# wrong: refuse it instead.
exact <- function(total) {
  if (abs(total) >= 2^53) stop("the sum reaches 2^53, beyond which R's doubles skip integers")
  total
}

idInt <- function(x) x
negInt <- function(x) -x
idReal <- function(x) x
halfReal <- function(x) x / 2
idStr <- function(s) s
strLen <- function(s) nchar(s, type = "chars")
exclaim <- function(s) paste0(s, "!")
idBool <- function(b) b
notBool <- function(b) !b
# I(): a list of length 1 must stay a list, not become a scalar.
idInts <- function(xs) I(xs)
sumInts <- function(xs) exact(sum(as.numeric(xs)))
idReals <- function(xs) I(xs)
# A loop, not sum(): R's sum() adds in extended precision, and the other
# languages add plain doubles from left to right.
sumReals <- function(xs) {
  total <- 0
  for (x in xs) total <- total + x
  total
}
swapPair <- function(pair) list(pair[[2]], pair[[1]])
idTuple <- function(t) t
idPerson <- function(p) p
birthday <- function(p) list(name = p$name, age = p$age + 1L)
idMaybe <- function(x) x
maybeInc <- function(x) if (is.null(x)) NULL else x + 1L
idMap <- function(m) m
mapTotal <- function(m) exact(sum(as.numeric(unlist(m))))
mapInc <- function(m) lapply(m, function(v) v + 1L)
idTeam <- function(team) team
teamAges <- function(team) I(vapply(team$members, function(member) member$age, numeric(1)))
fail <- function(text) stop("boom: ", text)
chatty <- function() {
  # cat, print and a child's output must reach nexus's stderr, never the MCP stream.
  cat("from-r-cat\n")
  print("from-r-print")
  system("echo from-r-child")
  "done"
}
# Wrong on purpose: nexus checks every result against its declared type.
claimsInt <- function() "seven"              # declared Int
claimsRecord <- function() list(name = "Ada") # declared Person: no age

nexus_serve(list(
  "401" = idInt, "402" = negInt, "403" = idReal, "404" = halfReal,
  "405" = idStr, "406" = strLen, "407" = exclaim, "408" = idBool, "409" = notBool,
  "410" = idInts, "411" = sumInts, "412" = idReals, "413" = sumReals,
  "414" = swapPair, "415" = idTuple, "416" = idPerson, "417" = birthday,
  "418" = idMaybe, "419" = maybeInc, "420" = idMap, "421" = mapTotal, "422" = mapInc,
  "423" = idTeam, "424" = teamAges, "425" = fail, "426" = chatty,
  "427" = claimsInt, "428" = claimsRecord
))
