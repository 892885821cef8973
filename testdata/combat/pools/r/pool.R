# The R pool of the combat program: the seed's intro function (mid 14).
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

intro <- function(name) paste0("A wild ", name, " appears!")

nexus_serve(list("14" = intro))
