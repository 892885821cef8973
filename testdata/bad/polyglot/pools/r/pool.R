# R pool of the polyglot test program: ok, slow, fail, crash, spawn.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

ok <- function(n) n + 1L

slow <- function(ms) {
  nexus_sleep(ms / 1000)
  ms
}

fail <- function(text) stop(paste0("boom: ", text))

crash <- function(status) {
  message("crashing with status ", status)
  quit(save = "no", status = status, runLast = FALSE)
}

# The child's output goes elsewhere, or system() would wait for it to end.
spawn <- function() as.integer(system("sleep 300 >/dev/null 2>&1 </dev/null & echo $!", intern = TRUE))

block <- function(seconds) {
  Sys.sleep(seconds) # no checkpoint: cancel cannot reach it
  seconds
}

nexus_serve(list("1" = ok, "2" = slow, "3" = fail, "4" = crash, "5" = spawn, "6" = block))
