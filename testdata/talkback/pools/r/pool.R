# R pool of the talkback program: functions that ask the client while they
# run (docs/pools.md, "Functions that talk back"). Mids 711..713.
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

greet <- function() {
  schema <- list(
    type = "object",
    properties = list(name = list(type = "string", description = "Your name")),
    required = I("name")
  )
  answer <- nexus_elicit("What is your name?", schema)
  if (answer$action != "accept") {
    return(paste0("No name given (", answer$action, ")"))
  }
  paste0("Hello, ", answer$content$name, "!")
}

summarise <- function(text) {
  nexus_sample(paste0("Summarise in one line:\n\n", text), max_tokens = 100, system = "You write one-line summaries.")
}

# I(): a list of one root is still a list.
root_uris <- function() I(vapply(nexus_roots(), function(root) root$uri, ""))

nexus_serve(list("711" = greet, "712" = summarise, "713" = root_uris))
