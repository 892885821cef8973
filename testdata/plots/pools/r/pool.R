# R pool of the `plots` program (see ../../README.md): a plot written to a
# PNG file, returned as its path (nexus serves it as a resource and links
# to it), and a sample's summary statistics (the template
# stats://{sample}/summary).
source(file.path(Sys.getenv("NEXUS_RUNTIME_DIR"), "r", "nexus.R"))

# Where the files a function returns go: nexus's output directory
# (NEXUS_OUTPUT_DIR), else R's session directory.
output_dir <- function() {
  dir <- Sys.getenv("NEXUS_OUTPUT_DIR")
  if (dir == "") tempdir() else dir
}

slug <- function(text) {
  s <- gsub("[^A-Za-z0-9]+", "-", tolower(text))
  s <- gsub("^-+|-+$", "", s)
  if (s == "") "plot" else s
}

plot_values <- function(values, title) {
  if (length(values) == 0) stop("nothing to plot: values is empty")
  # png() draws with cairo, which needs no X display (Debian's r-base-core).
  if (!capabilities("png") && !capabilities("cairo")) {
    stop("this R cannot write PNG files (no png or cairo device)")
  }
  path <- file.path(output_dir(), paste0(slug(title), ".png"))
  grDevices::png(path, width = 640, height = 400, type = if (capabilities("cairo")) "cairo" else "Xlib")
  ok <- FALSE
  on.exit(if (!ok) grDevices::dev.off(), add = TRUE)
  graphics::plot(seq_along(values), values, type = "b", pch = 19, main = title,
                 xlab = "measurement", ylab = "value")
  graphics::abline(h = mean(values), lty = 2, col = "grey40")
  grDevices::dev.off()
  ok <- TRUE
  normalizePath(path)
}

sample_summary <- function(sample) {
  path <- file.path("data", "samples", paste0(sample, ".csv"))
  if (grepl("[/\\\\]", sample) || !file.exists(path)) {
    known <- sub("\\.csv$", "", list.files(file.path("data", "samples"), pattern = "\\.csv$"))
    stop(sprintf("no sample named '%s' (the samples: %s)", sample, paste(known, collapse = ", ")))
  }
  x <- utils::read.csv(path)$value
  sprintf("sample %s: n=%d mean=%.3f sd=%.3f min=%.2f max=%.2f", sample, length(x), mean(x), stats::sd(x), min(x), max(x))
}

nexus_serve(list("10" = plot_values, "11" = sample_summary))
