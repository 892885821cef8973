# The R ask test pool of internal/pool (ask_test.go): functions that put
# questions to the client; mids 1..7 as in testdata/pools/ask.py.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

empty_schema <- '{"type":"object","properties":{}}' # a schema as JSON text

greet <- function() {
  schema <- list(type = "object", properties = list(name = list(type = "string")), required = I("name"))
  answer <- nexus_elicit("What is your name?", schema)
  if (answer$action != "accept") {
    return(paste0("no name (", answer$action, ")"))
  }
  paste0("Hello, ", answer$content$name, "!")
}

summarise <- function(text) nexus_sample(paste0("Summarise: ", text), 50, "Be brief.")

chat <- function() {
  nexus_sample(list(
    list(role = "user", content = "hi"),
    list(role = "assistant", content = "hello"),
    list(role = "user", content = list(type = "text", text = "bye"))
  ), max_tokens = 10)
}

root_uris <- function() I(vapply(nexus_roots(), function(r) r$uri, ""))

caught <- function() {
  tryCatch(
    {
      nexus_elicit("Proceed?", empty_schema)
      "no error"
    },
    nexus_ask_error = function(e) paste0("caught: ", conditionMessage(e))
  )
}

wait_cancel <- function(marker) {
  withCallingHandlers(
    nexus_elicit("Wait for ever?", empty_schema),
    nexus_cancelled = function(c) writeLines("cancelled", marker, sep = "")
  )
  "answered"
}

elicit_raw <- function() nexus_elicit("Anything?", empty_schema)

nexus_serve(list(
  "1" = greet,
  "2" = summarise,
  "3" = chat,
  "4" = root_uris,
  "5" = caught,
  "6" = wait_cancel,
  "7" = elicit_raw
))
